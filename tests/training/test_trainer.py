import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from transformers_lite import GeneratorConfig, Recipe, build_model, load_config
from transformers_lite.runs import latest_checkpoint
from transformers_lite.tasks.generator import GeneratorSettings, GeneratorTask
from transformers_lite.training.callbacks import Callback, Checkpointer
from transformers_lite.training.checkpoint import load_checkpoint
from transformers_lite.training.state import TrainState
from transformers_lite.training.trainer import NonFiniteLoss, TrainConfig, Trainer

from ..helpers import TINY_GPT

TEXT = "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n" * 40
TINY = GeneratorConfig(vocab_size=1, max_length=16, dim=16, n_heads=2, dim_hidden=32, n_blocks=1, dropout=0.1)
KILL_SCRIPT = Path(__file__).with_name("kill_at_step.py")


def make_task(text_file, seed=0, cls=GeneratorTask, config=TINY):
    return cls.prepare(GeneratorSettings(text=str(text_file), batch_size=4), config, seed=seed)


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text(TEXT)
    return path


def train(run_dir, text_file, resume=False, task_cls=GeneratorTask, callbacks=(), clock=None, **kw):
    """The trainer with the run directory's ``Checkpointer``, as a recipe runs it (a resumed run starts
    from its checkpoint); returns the final state."""
    task = make_task(text_file, 3, task_cls)
    config = task.model_config(TINY)
    torch.manual_seed(3)
    model = build_model(config)
    settings = dict(max_steps=12, eval_every=4, warmup_steps=2, seed=3, lr=3e-3)
    settings.update(kw)
    cfg = TrainConfig(**settings)
    hooks = [Checkpointer(run_dir, cfg.checkpoint_every), *callbacks]
    timing = {} if clock is None else {"clock": clock}
    trainer = Trainer(model, task, cfg, callbacks=hooks, log=lambda *_: None, **timing)
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    state = TrainState.from_dict(load_checkpoint(run_dir, model, trainer.optimizer)) if resume else None
    return trainer.fit(state)


def weights(run_dir):
    return load_file(Path(run_dir) / "model.safetensors")


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(
    "kw",
    [{}, {"optimizer": "muon", "ema": 0.9, "schedule": "wsd"}],
    ids=["adamw", "muon-ema-wsd"],
)
def test_straight_equals_pause_and_resume_bitwise(tmp_path, text_file, kw):
    train(tmp_path / "a", text_file, **kw)
    train(tmp_path / "b", text_file, stop_at=6, **kw)
    assert latest_checkpoint(tmp_path / "b").name == "step-00000006"
    train(tmp_path / "b", text_file, resume=True, **kw)
    assert same(weights(tmp_path / "a"), weights(tmp_path / "b"))
    ha = json.loads((tmp_path / "a" / "history.json").read_text())
    hb = json.loads((tmp_path / "b" / "history.json").read_text())
    by_step = {h["step"]: h["val_loss"] for h in hb}  # b also evaluated at the pause
    assert [h["val_loss"] for h in ha] == [by_step[h["step"]] for h in ha]


def test_resume_after_sigkill_between_checkpoints(tmp_path, text_file):
    common = ["--text", text_file, *TINY_GPT, "--max-steps", "12", "--eval-every", "4", "--warmup-steps", "2"]
    common = [*map(str, common), "--seed", "5"]
    cmd = [sys.executable, "-m", "transformers_lite", "train", "generator"]
    subprocess.run(cmd + common + ["--out", str(tmp_path / "a")], check=True, capture_output=True)
    # checkpoints at 4 and 8: killed in between, by a test callback
    killed = subprocess.run(
        [sys.executable, str(KILL_SCRIPT), "kill:7:0", "train", "generator", *common, "--out", str(tmp_path / "b")],
        capture_output=True,
    )
    assert killed.returncode == -signal.SIGKILL
    assert latest_checkpoint(tmp_path / "b").name == "step-00000004"
    subprocess.run(cmd + ["--resume", str(tmp_path / "b")], check=True, capture_output=True)
    assert same(weights(tmp_path / "a"), weights(tmp_path / "b"))


def test_run_directory_files_and_documented_keys(tmp_path, text_file):
    train_config = TrainConfig(max_steps=4, eval_every=4, seed=3, warmup_steps=1)
    recipe = Recipe("generator", TINY, train_config, GeneratorSettings(text=str(text_file), batch_size=4))
    run = recipe.run(tmp_path / "r", log=lambda *_: None).run_dir
    for name in ("config.json", "hyperparameters.json", "history.json", "model.safetensors", "tokenizer.json"):
        assert (run / name).is_file(), name
    hyper = json.loads((run / "hyperparameters.json").read_text())
    for key in ("family", "seed", "train", "model", "data", "parameters", "versions"):
        assert key in hyper
    recorded = Recipe.from_dict(hyper, strict=False)  # the recipe as trained: data-derived fields included
    assert recorded.model == load_config(run / "config.json") == recipe.resolved().model
    assert recorded.model.vocab_size == len(set(TEXT)) + 1 and recorded.train == train_config
    assert hyper["data"]["text_sha256"] and hyper["versions"]["torch"] == torch.__version__
    assert hyper["parameters"]["trainable"] > 0
    [record] = json.loads((run / "history.json").read_text())
    assert {"step", "epoch", "wall_s", "train_loss", "val_loss", "val_perplexity"} <= record.keys()
    folder = latest_checkpoint(run)
    assert {p.name for p in folder.iterdir()} == {"model.safetensors", "optimizer.safetensors", "state.json"}
    state = json.loads((folder / "state.json").read_text())
    assert state["step"] == 4 and state["format"] == 1 and {"python", "numpy"} <= state["rng"].keys()


def test_nan_loss_stops_and_keeps_the_last_good_checkpoint(tmp_path, text_file):
    class Exploding(GeneratorTask):
        def loss(self, model, batch):
            loss = super().loss(model, batch)
            self.calls = getattr(self, "calls", 0) + 1
            return loss * float("nan") if self.calls == 6 else loss

    with pytest.raises(NonFiniteLoss, match="loss became nan at step 6"):
        train(tmp_path / "n", text_file, task_cls=Exploding, max_steps=10, eval_every=4)
    assert latest_checkpoint(tmp_path / "n").name == "step-00000004"


def test_early_stopping_and_time_budget(tmp_path, text_file):
    task = make_task(text_file)
    config = task.model_config(TINY)
    t = Trainer(
        build_model(config),
        task,
        TrainConfig(max_steps=50, eval_every=1, patience=1, lr=1e-9, warmup_steps=0),
        log=lambda *_: None,
    )
    state = t.fit()
    assert state.stop_reason.startswith("early stopping") and state.step < 50
    ticks = iter(range(10**6))  # a fake clock: one second per reading
    state = train(tmp_path / "m", text_file, max_minutes=0.05, max_steps=None, clock=lambda: float(next(ticks)))
    assert 1 <= state.step <= 3 and "time budget of 0.05 minutes used" in state.stop_reason
    assert latest_checkpoint(tmp_path / "m") is not None


def test_gradient_accumulation_matches_a_larger_batch(tmp_path, text_file):
    """Two micro-batches of 4 with accumulate=2 give the same first update as their mean loss."""
    task = make_task(text_file, 1)
    config = task.model_config(TINY.replace(dropout=0.0))
    torch.manual_seed(0)
    model = build_model(config)
    reference = build_model(config)
    reference.load_state_dict(model.state_dict())
    Trainer(model, task, TrainConfig(max_steps=1, accumulate=2, warmup_steps=0, grad_clip=0), log=lambda *_: None).fit()
    from transformers_lite.training.optim import make_optimizer

    opt = make_optimizer(reference, 1e-3, 0.01, (0.9, 0.99))
    loss = (task.loss(reference, task.batch(0)) + task.loss(reference, task.batch(1))) / 2
    loss.backward()
    opt.step()
    for (n, a), b in zip(model.state_dict().items(), reference.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-6), n


def test_ctrl_c_saves_a_checkpoint_and_exits_cleanly(tmp_path, text_file):
    import time

    cmd = [sys.executable, "-m", "transformers_lite", "train", "generator", "--text", str(text_file), *TINY_GPT]
    cmd += ["--max-steps", "100000", "--eval-every", "50", "--out", str(tmp_path / "c")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while latest_checkpoint(tmp_path / "c") is None and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err  # 128 + SIGINT: scripts can tell an interrupted run from a finished one
    assert "interrupted at step" in out
    step = int(out.split("interrupted at step ")[1].split()[0])
    assert 0 < step < 100000 and latest_checkpoint(tmp_path / "c").name == f"step-{step:08d}"


def test_init_model_runs_once_for_a_new_run_and_never_on_resume(tmp_path, text_file):
    calls = []

    class Initialised(GeneratorTask):
        def init_model(self, model):
            calls.append(model)
            with torch.no_grad():
                model.embedding.weight.fill_(0.5)

    def fit(run, resume=False, **kw):
        train(tmp_path / run, text_file, resume, Initialised, max_steps=6, eval_every=3, warmup_steps=1, **kw)

    fit("a")
    assert len(calls) == 1
    fit("b", stop_at=3)
    fit("b", resume=True)
    assert len(calls) == 2  # once per new run, not again on resume
    assert same(weights(tmp_path / "a"), weights(tmp_path / "b"))
    # the run started from the task's 0.5s (not the N(0, 0.02) init) and six small steps moved it a little
    assert (weights(tmp_path / "a")["embedding.weight"] - 0.5).abs().max() < 0.1


class FakeClock:
    """One second per reading: wall time becomes a pure function of the trainer's steps."""

    def __init__(self):
        self.now = -1.0

    def __call__(self):
        self.now += 1.0
        return self.now


class RecordLR(Callback):
    def __init__(self):
        self.lrs = []

    def on_step_end(self, trainer, state, loss):
        self.lrs.append(trainer.last_lr)


def budgeted(run_dir, text_file, resume=False, **kw):
    lrs = RecordLR()
    settings = dict(max_minutes=0.5, max_steps=None, eval_every=10, warmup_steps=3, min_lr_ratio=0.1)
    settings.update(kw)
    state = train(run_dir, text_file, resume, callbacks=[lrs], clock=FakeClock(), **settings)
    return state, lrs.lrs


def test_a_time_budget_spans_the_schedule_and_ends_at_the_floor(tmp_path, text_file):
    state, lrs = budgeted(tmp_path / "t", text_file)
    assert "time budget of 0.5 minutes used" in state.stop_reason and state.step == 30  # 30 one-second steps
    assert lrs[:3] == pytest.approx([1e-3, 2e-3, 3e-3])  # warmup, then cosine over the rest of the 30 s
    assert all(a >= b for a, b in zip(lrs[3:], lrs[4:]))
    # the last step starts at 29 s of 30: it trains just above the floor (0.1 x peak), which the budget's end reaches
    assert lrs[-1] == pytest.approx(3e-4, rel=0.05) and lrs[-1] >= 3e-4
    schedule = Trainer(
        build_model(TINY), make_task(text_file), TrainConfig(max_minutes=0.5, warmup_steps=3, lr=3e-3)
    ).schedule
    assert schedule(31, schedule.progress(31, elapsed=30.0, warmup_end_s=3.0)) == pytest.approx(3e-4)


def test_a_warmup_longer_than_the_budget_buys_is_fitted_to_the_first_steps_speed(tmp_path, text_file):
    # one second per step and 30 s: the budget buys ~30 steps, so 20 warmup steps become 3 (a tenth)
    with pytest.warns(UserWarning, match=r"warmup_steps=20 would spend 67% of the about 30 steps this run's time"):
        state, lrs = budgeted(tmp_path / "fit", text_file, warmup_steps=20)
    assert state.warmup_steps == 3 and lrs[5] == pytest.approx(3e-3)  # at the peak from step 6 on
    assert lrs[:5] == pytest.approx([i * 3e-3 / 20 for i in range(1, 6)])  # the first 5 under the set warmup
    # paused before its fifth step and resumed, a run fits its warmup the same way and keeps it
    budgeted(tmp_path / "b", text_file, warmup_steps=20, stop_at=8)
    state_b, lrs_b = budgeted(tmp_path / "b", text_file, warmup_steps=20, resume=True)
    assert state_b.warmup_steps == 3 and lrs_b == pytest.approx(lrs[8:])


def test_a_run_that_ends_still_warming_up_says_so(tmp_path, text_file):
    with pytest.warns(UserWarning, match=r"training ended at step 3, still warming up \(warmup: 10 steps\)"):
        train(tmp_path / "w", text_file, max_steps=None, max_minutes=0.05, warmup_steps=10, clock=FakeClock())


def test_a_budget_that_runs_out_inside_the_first_epoch_says_so(tmp_path, text_file):
    epoch = make_task(text_file, 3).steps_per_epoch()  # batches of 4 windows: more than the budget's 30 steps
    with pytest.warns(UserWarning, match=rf"the time budget ran out at step 30, {30 / epoch:.0%} of one epoch"):
        state, _ = budgeted(tmp_path / "short", text_file)
    assert state.step == 30 < epoch


def test_resuming_mid_budget_is_bitwise_exact(tmp_path, text_file):
    budgeted(tmp_path / "a", text_file)
    budgeted(tmp_path / "b", text_file, stop_at=14)
    _, lrs = budgeted(tmp_path / "b", text_file, resume=True)
    assert len(lrs) == 16  # the rest of the budget: elapsed time is checkpointed with the step
    assert same(weights(tmp_path / "a"), weights(tmp_path / "b"))


def test_evaluation_at_start_and_on_the_training_split(tmp_path, text_file):
    train(tmp_path / "run", text_file, max_steps=8, eval_every=4, eval_at_start=True, eval_train=True)
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert [row["step"] for row in history] == [0, 4, 8]
    first = history[0]
    assert first["train_loss"] is None and first["val_loss"] > 0 and "train_full_loss" in first
    assert all(row["train_full_perplexity"] > 1 for row in history)
    assert history[-1]["train_full_loss"] < history[0]["train_full_loss"]  # it learned, on its training split


class SignalAt(GeneratorTask):
    """Sends this process SIGTERM while reading micro-batch 10 (step 3's second of three)."""

    def batch(self, index):
        if index == 10 and not getattr(self, "sent", False):
            self.sent = True
            os.kill(os.getpid(), signal.SIGTERM)
        return super().batch(index)


def test_a_signal_between_micro_batches_abandons_the_step_and_resumes_exactly(tmp_path, text_file):
    train(tmp_path / "a", text_file, max_steps=6, accumulate=3, eval_every=3)
    stopped = train(tmp_path / "b", text_file, task_cls=SignalAt, max_steps=6, accumulate=3, eval_every=3)
    assert stopped.stop_reason == "interrupted" and stopped.step == 3  # step 4 was not taken
    assert latest_checkpoint(tmp_path / "b").name == "step-00000003"
    train(tmp_path / "b", text_file, resume=True, max_steps=6, accumulate=3, eval_every=3)
    assert same(weights(tmp_path / "a"), weights(tmp_path / "b"))


def test_a_spent_budget_stops_between_micro_batches(tmp_path, text_file):
    ticks = (0.1 * i for i in range(10**6))  # ~12 s a step at 200 micro-batches, budget 24 s
    state = train(
        tmp_path / "run", text_file, max_steps=None, max_minutes=0.4, accumulate=200, clock=lambda: next(ticks)
    )
    assert state.step >= 1 and state.stop_reason.startswith("time budget")
    assert state.elapsed < 25  # when the budget ran out, not at the end of the step in progress (~12 s later)


def test_a_step_longer_than_the_whole_budget_is_named_once(tmp_path, text_file):
    ticks = iter(range(0, 10**9, 100))  # every reading of the clock 100 s later: one step outlasts 30 s
    with pytest.warns(UserWarning, match="one optimizer step took .* longer than the whole --max-minutes 0.5 budget"):
        state = train(tmp_path / "run", text_file, max_steps=None, max_minutes=0.5, clock=lambda: next(ticks))
    assert state.step == 1 and state.stop_reason.startswith("time budget")


def test_metrics_csv_has_one_training_loss_per_step_and_one_row_per_step():
    """A log row and an evaluation at one step make one row; its training loss is the log row's (the
    evaluation's averages over a longer window: the two drew a sawtooth)."""
    from transformers_lite.training.metrics_log import metrics_rows

    log = [{"step": s, "epoch": s / 10, "wall_s": s, "lr": 0.1, "train_loss": 3.0 - s / 100} for s in (50, 100, 150)]
    history = [{"step": 100, "epoch": 10.0, "wall_s": 100, "lr": 0.1, "train_loss": 9.9, "val_loss": 2.5}]
    rows = metrics_rows(history, log)
    assert [r["step"] for r in rows] == [50, 100, 150]
    assert rows[1] == {"step": 100, "epoch": 10.0, "wall_s": 100, "lr": 0.1, "train_loss": 2.0, "val_loss": 2.5}
    assert [r["train_loss"] for r in metrics_rows(history, [])] == [9.9]  # evaluations only: theirs
    odd = [{**history[0], "step": 120}]  # an evaluation between log rows gives no training loss of its own
    assert "train_loss" not in metrics_rows(odd, log)[2]


@pytest.mark.parametrize(
    ("warmup", "total", "fitted"),
    [(300, 300, 30), (100, 2, 1), (1, 3, 1), (100, 400, 100), (101, 400, 40), (50, None, 50)],
)
def test_a_warmup_longer_than_a_quarter_of_the_run_becomes_a_tenth_with_a_warning(warmup, total, fitted):
    import warnings

    from transformers_lite.training.optim import fitted_warmup

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert fitted_warmup(warmup, total) == fitted
    assert bool(caught) == (fitted != warmup)
    if caught:
        assert f"warming up for {fitted} steps instead" in str(caught[0].message)


def test_piped_output_gets_a_progress_line_every_thirty_seconds(text_file):
    """Not a terminal: no bar, but a plain line with the step, its limit and the mean loss every 30 s
    of training (a fake clock: ten seconds per reading)."""
    ticks = iter(range(0, 10**7, 10))
    lines = []
    task = make_task(text_file, 3)
    torch.manual_seed(3)
    trainer = Trainer(
        build_model(task.model_config(TINY)),
        task,
        TrainConfig(max_steps=20, eval_every=0, warmup_steps=2, seed=3),
        log=lines.append,
        clock=lambda: float(next(ticks)),
    )
    trainer.fit()
    progress = [line for line in lines if line.startswith("step ") and " of 20 | train_loss " in line]
    assert len(progress) >= 3 and all("steps/s" in line for line in progress)
    steps = [int(line.split()[1]) for line in progress]
    assert steps == sorted(steps) and steps[-1] < 20


def test_a_new_run_records_its_fitted_warmup_so_resuming_keeps_it(tmp_path, text_file):
    import json
    import warnings

    from transformers_lite.tasks.generator import GeneratorSettings

    from ..helpers import train_run

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_run(TINY, GeneratorSettings(text=str(text_file)), tmp_path / "run", max_steps=40, warmup_steps=200)
    recorded = json.loads((tmp_path / "run" / "hyperparameters.json").read_text())["train"]
    assert recorded["warmup_steps"] == 4 and any("warming up for 4 steps" in str(w.message) for w in caught)
