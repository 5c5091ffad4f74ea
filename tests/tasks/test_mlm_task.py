import dataclasses
import json
import random

import pytest
import torch

from transformers_lite import build_model
from transformers_lite.config import EncoderLMConfig
from transformers_lite.data.masking import IGNORE
from transformers_lite.errors import ConfigError, DataError
from transformers_lite.tasks.mlm import MaskedLMSettings, MaskedLMTask
from transformers_lite.training.trainer import TrainConfig, Trainer

SMALL = EncoderLMConfig(dim=32, n_heads=2, dim_hidden=64, n_blocks=1, dropout=0.0, max_length=16)
PHRASES = [
    "the cat sat on the mat",
    "a dog ran in the park",
    "my phone broke after a week",
    "this pen writes very well",
]


def reviews(path, n=400, seed=0, stars="five"):
    """Reviews made of fixed phrases (so every masked word is predictable from its neighbours); the
    ``stars`` field holds junk: the task must never read it."""
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for _ in range(n):
            text = " . ".join(rng.choice(PHRASES) for _ in range(2))
            fh.write(json.dumps({"review_body": text, "stars": stars}) + "\n")
    return path


def make_task(path, **kw):
    settings = MaskedLMSettings(reviews=str(path), min_df=1, batch_size=16, **kw)
    task = MaskedLMTask.prepare(settings, SMALL)
    return task, task.model_config(SMALL)


def test_masking_follows_the_80_10_10_split_and_targets_only_chosen_positions(tmp_path):
    task, _ = make_task(reviews(tmp_path / "r.jsonl", 2000), mask_prob=0.3)
    tok = task.tokenizer
    seqs = task.train_seqs[:512]
    inputs, valid, targets = task.masking.batch(seqs, torch.Generator().manual_seed(1))
    original = torch.where(targets == IGNORE, inputs, targets)
    chosen = targets != IGNORE
    assert not (chosen & ~valid).any()  # padding is never a target
    assert abs(chosen.sum().item() / valid.sum().item() - 0.3) < 0.02
    masked = (inputs == tok.mask_id) & chosen
    kept = (inputs == original) & chosen
    assert abs(masked.sum().item() / chosen.sum().item() - 0.8) < 0.03
    assert 0.07 < kept.sum().item() / chosen.sum().item() < 0.15  # 10 % kept + random picks that hit the word
    assert ((inputs == original) | chosen).all()  # unchosen tokens are untouched
    assert (inputs[chosen & ~masked & ~kept] >= task.masking.first_word).all()  # random words, never specials


def test_batches_and_masks_are_functions_of_seed_and_step(tmp_path):
    path = reviews(tmp_path / "r.jsonl")
    a, _ = make_task(path)
    b, _ = make_task(path)
    for x, y in zip(a.batch(7), b.batch(7)):
        assert torch.equal(x, y)
    assert not torch.equal(a.batch(7)[0], a.batch(8)[0])


def test_labels_are_never_read(tmp_path):
    task, _ = make_task(reviews(tmp_path / "r.jsonl", stars="not a rating"))
    assert len(task.train_seqs) > 300


def test_tiny_corpus_is_learned_to_low_masked_loss(tmp_path):
    task, config = make_task(reviews(tmp_path / "r.jsonl"))
    torch.manual_seed(0)
    model = build_model(config)
    start = task.evaluate(model)["val_loss"]
    state = Trainer(
        model, task, TrainConfig(max_steps=400, lr=3e-3, warmup_steps=20, eval_every=0), log=lambda *_: None
    ).fit()
    final = state.history[-1]
    assert start > 3.0
    assert final["val_loss"] < 0.6  # the phrases are fixed: every masked word follows from its neighbours
    assert final["val_masked_accuracy"] > 0.8
    assert set(task.metrics) == {k for k in final if k.startswith("val_")}  # what --best-metric may name


def test_causal_objective_predicts_the_next_word(tmp_path):
    task, config = make_task(reviews(tmp_path / "r.jsonl"))
    causal = MaskedLMTask.prepare(task.settings, SMALL.replace(objective="causal"))
    inputs, valid, targets = causal.batch(0)
    assert torch.equal(targets[:, :-1][valid[:, 1:]], inputs[:, 1:][valid[:, 1:]])
    scores = causal.evaluate(build_model(causal.model_config(SMALL.replace(objective="causal"))))
    assert "val_next_accuracy" in scores and set(causal.metrics) == set(scores)


def test_clear_errors(tmp_path):
    with pytest.raises(DataError, match="--reviews FILE"):
        MaskedLMTask.prepare(MaskedLMSettings(), SMALL)
    empty = tmp_path / "e.txt"
    empty.write_text("one\n")
    with pytest.raises(DataError, match="validation"):
        MaskedLMTask.prepare(MaskedLMSettings(text=str(empty)), SMALL)
    with pytest.raises(ConfigError, match="mask_prob"):
        MaskedLMSettings(mask_prob=0.0)


def test_frozen_embedding_stays_while_the_blocks_learn(tmp_path):
    task, config = make_task(reviews(tmp_path / "r.jsonl"), freeze_embedding=True)
    torch.manual_seed(0)
    model = build_model(config)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    Trainer(model, task, TrainConfig(max_steps=5, lr=3e-3, warmup_steps=0), log=lambda *_: None).fit()
    assert torch.equal(model.encoder.embedding.weight, start["encoder.embedding.weight"])
    dense1 = "encoder.blocks.0.feed_forward.dense1.weight"
    assert not torch.equal(model.encoder.blocks[0].feed_forward.dense1.weight, start[dense1])


def test_evaluate_a_pretraining_run_on_its_validation_documents_and_on_a_file(tmp_path):
    import transformers_lite as tl

    path = reviews(tmp_path / "r.jsonl")
    recipe = tl.get_preset("mlm").override(reviews=str(path), min_df=1, embedding_init="random", max_steps=20)
    recipe = dataclasses.replace(recipe, model=SMALL)
    run_dir = recipe.run(tmp_path / "run", log=lambda *_: None).run_dir
    history = json.loads((run_dir / "history.json").read_text())
    run = tl.load(run_dir)
    own = run.evaluate()
    assert own["loss"] == pytest.approx(history[-1]["val_loss"], rel=1e-6)  # the same split and masks
    other = tmp_path / "other.txt"
    other.write_text("the cat sat on the mat\nmy phone broke after a week\n")
    scored = run.evaluate(other)
    assert scored["n_sequences"] == 2 and 0 <= scored["masked_accuracy"] <= 1
