"""``KeepBest``: the best evaluation by a metric, its weights kept in checkpoints and restored at the end."""

import contextlib
import json
import os

import pytest
import torch
from safetensors.torch import load_file

from transformers_lite import build_model
from transformers_lite.errors import ConfigError
from transformers_lite.runs import latest_checkpoint
from transformers_lite.settings import TrainConfig, from_record
from transformers_lite.tasks.generator import GeneratorTask
from transformers_lite.training.callbacks import KeepBest, lower_is_better, weights_copy
from transformers_lite.training.state import TrainState
from transformers_lite.training.trainer import Trainer

from .test_trainer import TINY, make_task, same, text_file, train, weights  # noqa: F401 (text_file: a fixture)


def closest_to(target: float) -> type[GeneratorTask]:
    """A generator task that also scores ``val_closeness``: how near its validation loss is to ``target``,
    so the best evaluation is the one whose loss was ``target`` (chosen in the middle of a run)."""

    class Closest(GeneratorTask):
        metrics = (*GeneratorTask.metrics, "val_closeness")

        def evaluate(self, model, split="val"):  # noqa: ANN001
            out = super().evaluate(model, split)
            if split == "val":
                out["val_closeness"] = -abs(out["val_loss"] - target)
            return out

    return Closest


@pytest.fixture
def middle_best(tmp_path, text_file):  # noqa: F811
    """The task class whose best evaluation, by val_closeness, is step 4 of 12 (evaluations at 4, 8, 12)."""
    train(tmp_path / "probe", text_file)
    history = json.loads((tmp_path / "probe" / "history.json").read_text())
    return closest_to(history[0]["val_loss"])


def test_the_best_weights_are_kept_and_a_paused_run_ends_bitwise_identical(tmp_path, text_file, middle_best):  # noqa: F811
    kw = dict(task_cls=middle_best, best_metric="closeness")  # the val_ may be left out
    straight = train(tmp_path / "a", text_file, **kw)
    assert (straight.best_step, straight.best_metric, straight.best) == (4, "val_closeness", 0.0)
    train(tmp_path / "b", text_file, stop_at=6, **kw)  # paused after the best, before the next evaluation
    paused = latest_checkpoint(tmp_path / "b")
    assert (paused / "best-step-00000004.safetensors").is_file()
    resumed = train(tmp_path / "b", text_file, resume=True, **kw)
    assert same(weights(tmp_path / "a"), weights(tmp_path / "b"))
    assert resumed.best_step == 4 and resumed.to_dict().keys() == straight.to_dict().keys()
    for run in ("a", "b"):
        last = latest_checkpoint(tmp_path / run)
        assert last.name == "step-00000012"
        kept = load_file(last / "best-step-00000004.safetensors")
        assert same(weights(tmp_path / run), kept)  # model.safetensors: step 4's weights
        assert not same(load_file(last / "model.safetensors"), kept)  # the checkpoint: the last step's
        record = json.loads((tmp_path / run / "kept.json").read_text())
        assert record["weights"] == "best" and record["step"] == 4 and record["last_step"] == 12
        assert record["metric"] == "val_closeness" and record["best_value"] == 0.0 > record["last_value"]
    # later checkpoints link to the best weights instead of writing them again
    a8, a12 = (tmp_path / "a" / "checkpoint" / f"step-{s:08d}" / "best-step-00000004.safetensors" for s in (8, 12))
    assert os.stat(a8).st_ino == os.stat(a12).st_ino


def test_a_pauses_own_evaluation_never_becomes_the_best(tmp_path, text_file):  # noqa: F811
    train(tmp_path / "probe", text_file, stop_at=6)
    at_pause = json.loads((tmp_path / "probe" / "history.json").read_text())[-1]
    assert at_pause["step"] == 6  # only a paused run evaluates there: let it be the best by far
    kw = dict(task_cls=closest_to(at_pause["val_loss"]), best_metric="val_closeness")
    straight = train(tmp_path / "a", text_file, **kw)
    paused = train(tmp_path / "b", text_file, stop_at=6, **kw)
    assert paused.best_step == 4 and paused.history[-1]["val_closeness"] == 0.0
    resumed = train(tmp_path / "b", text_file, resume=True, **kw)
    assert resumed.best_step == straight.best_step and resumed.bad_evals == straight.bad_evals
    assert same(weights(tmp_path / "a"), weights(tmp_path / "b"))


def test_a_tie_goes_to_the_lower_validation_loss():
    keep, state = KeepBest("val_accuracy"), TrainState()
    trainer = type("T", (), {"model": torch.nn.Linear(2, 2), "final_weights": lambda self: contextlib.nullcontext()})()
    keep.on_train_start(trainer, state)
    for step, accuracy, loss in ((1, 0.5, 0.9), (2, 0.5, 0.7), (3, 0.5, 0.8)):
        state.step = step
        record = {"step": step, "val_accuracy": accuracy, "val_loss": loss}
        state.history.append(record)
        keep.on_evaluate(trainer, state, record)
    assert (state.best_step, state.bad_evals) == (2, 1)


def test_the_model_in_memory_is_the_best_and_the_user_is_told(tmp_path, text_file, middle_best):  # noqa: F811
    task = make_task(text_file, 3, middle_best)
    torch.manual_seed(3)
    lines = []
    config = TrainConfig(max_steps=12, eval_every=4, warmup_steps=2, seed=3, lr=3e-3, best_metric="val_closeness")
    trainer = Trainer(build_model(task.model_config(TINY)), task, config, log=lines.append)
    state = trainer.fit()
    assert same(weights_copy(trainer.model), state.best_weights)
    [told] = [line for line in lines if line.startswith("kept the weights of step 4: val_closeness 0.0000; ")]
    assert "the last step's (12) was -" in told
    hint = lines[lines.index(told) + 1]
    assert "no evaluation of the last 8 steps (67% of the run) beat step 4's," in hint and "--patience N ends" in hint


def test_a_run_stopped_by_patience_is_not_told_to_use_patience(text_file, middle_best):  # noqa: F811
    task = make_task(text_file, 3, middle_best)
    torch.manual_seed(3)
    lines = []
    config = TrainConfig(
        max_steps=16, eval_every=4, warmup_steps=2, seed=3, lr=3e-3, best_metric="val_closeness", patience=2
    )
    Trainer(build_model(task.model_config(TINY)), task, config, log=lines.append).fit()
    [hint] = [line for line in lines if line.startswith("no evaluation of the last 8 steps")]
    assert "--patience" not in hint


def test_no_keep_best_keeps_the_last_weights(tmp_path, text_file, middle_best):  # noqa: F811
    train(tmp_path / "a", text_file, task_cls=middle_best, best_metric="val_closeness", keep_best=False)
    last = latest_checkpoint(tmp_path / "a")
    assert same(weights(tmp_path / "a"), load_file(last / "model.safetensors"))
    record = json.loads((tmp_path / "a" / "kept.json").read_text())
    assert record["weights"] == "last" and record["step"] == 12 and record["best_step"] == 4


def test_patience_watches_the_named_metric(tmp_path, text_file, middle_best):  # noqa: F811
    kw = dict(task_cls=middle_best, best_metric="val_closeness", max_steps=16)
    state = train(tmp_path / "a", text_file, patience=2, **kw)
    assert state.stop_reason == "early stopping: val_closeness did not improve for 2 evaluations"
    assert state.step == 12 and state.best_step == 4
    state = train(tmp_path / "b", text_file, patience=1, **kw)
    assert state.step == 8 and state.stop_reason.startswith("early stopping")


def test_an_unknown_metric_is_refused_before_the_first_step(text_file):  # noqa: F811
    task = make_task(text_file)
    with pytest.raises(ConfigError, match="--best-metric bleu: the evaluations of this run report val_loss, val_perp"):
        Trainer(build_model(task.model_config(TINY)), task, TrainConfig(max_steps=2, best_metric="bleu"))
    with pytest.raises(ConfigError, match="--best-metric train_full_loss is a score of the training split, which only"):
        Trainer(build_model(task.model_config(TINY)), task, TrainConfig(max_steps=2, best_metric="train_full_loss"))
    with pytest.raises(ConfigError, match="best_metric must be a metric's name"):
        TrainConfig(max_steps=2, best_metric="Val Loss")


@pytest.mark.parametrize(
    ("metric", "lower"),
    [("val_loss", True), ("val_perplexity", True), ("val_mae", True), ("val_macro_f1", False), ("val_bleu", False)],
)
def test_which_way_is_better(metric, lower):
    assert lower_is_better(metric) is lower


def test_a_tie_keeps_the_earlier_step_and_nan_is_never_best():
    keep, state = KeepBest("val_accuracy"), TrainState()
    model = torch.nn.Linear(2, 2)
    trainer = type("T", (), {"model": model, "final_weights": lambda self: contextlib.nullcontext()})()
    keep.on_train_start(trainer, state)
    for step, value in ((1, 0.5), (2, 0.5), (3, float("nan")), (4, 0.25)):
        state.step = step
        keep.on_evaluate(trainer, state, {"step": step, "val_accuracy": value})
    assert (state.best_step, state.best, state.bad_evals) == (1, 0.5, 3)


def test_a_record_from_before_the_settings_existed_means_what_that_release_did():
    train, _ = from_record({"max_steps": 3, "patience": 2}, None, TrainConfig, "old run")
    assert train.keep_best is False and train.best_metric == "val_loss"
    assert TrainConfig(max_steps=3).keep_best is True and TrainConfig(max_steps=3).best_metric is None


def test_a_copy_of_the_weights_names_tied_ones_as_the_saved_file_does(tmp_path):
    from transformers_lite import GeneratorConfig
    from transformers_lite.runs.files import save_weights

    config = GeneratorConfig(
        vocab_size=11, max_length=8, dim=8, n_heads=2, dim_hidden=16, n_blocks=1, tie_embeddings=True
    )
    model = build_model(config)
    save_weights(model, tmp_path / "m.safetensors")
    saved, copied = load_file(tmp_path / "m.safetensors"), weights_copy(model)
    assert same(saved, copied) and len(copied) < len(model.state_dict())  # the tied table once
