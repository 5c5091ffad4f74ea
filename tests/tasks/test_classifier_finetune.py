"""Fine-tuning a classifier from a pretraining run (``--init-from``)."""

import dataclasses

import pytest
import torch
from safetensors.torch import load_file

from transformers_lite import ClassifierConfig, build_model, get_preset
from transformers_lite.config import EncoderLMConfig
from transformers_lite.errors import ConfigError
from transformers_lite.tasks.classifier import ClassifierSettings, ClassifierTask
from transformers_lite.tokenizers import load_tokenizer
from transformers_lite.training.trainer import Trainer

from .test_classifier_task import synthetic_reviews

SHAPE = dict(dim=16, n_heads=2, dim_hidden=32, n_blocks=2)
QUIET = dict(log_every=1000, eval_every=0)
ENCODER = ("encoder.embedding.", "encoder.blocks.")


def recipe(preset, model, **settings):
    """The preset's recipe with another model and settings (what ``--config`` + options give)."""
    return dataclasses.replace(get_preset(preset).override(**settings), model=model)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("ft")
    train, dev = synthetic_reviews(root / "train.jsonl", 400, 0), synthetic_reviews(root / "dev.jsonl", 100, 1)
    mlm = recipe("mlm", EncoderLMConfig(**SHAPE, max_length=16), reviews=str(train), min_df=1, max_steps=30, **QUIET)
    run = mlm.run(root / "mlm", log=lambda *_: None).run_dir
    return train, dev, run


def finetune(data, out, members=1, **settings):
    train, dev, run = data
    config = ClassifierConfig(head="mean", max_length=16, dropout=0.1, members=members)
    exp = recipe(
        "classifier", config, train=str(train), val=str(dev), min_df=1, init_from=str(run), max_steps=12,
        **QUIET, **settings,
    )  # fmt: skip
    return exp, exp.run(out, log=lambda *_: None).run_dir


def test_fine_tuning_equals_loading_the_weights_by_hand(tmp_path, data):
    exp, run = finetune(data, tmp_path / "ft")
    # by hand: the pretrained tokenizer and shape, a fresh classifier, the encoder tensors copied by name
    pretrained = data[2]
    tokenizer = load_tokenizer(pretrained / "tokenizer.json")
    settings = dataclasses.replace(exp.data, init_from=None, embedding_init="random")
    config = exp.model.replace(**SHAPE)
    task = ClassifierTask.prepare(settings, config, exp.train.seed, {"tokenizer": tokenizer})
    config = task.model_config(config)
    torch.manual_seed(exp.train.seed)
    model = build_model(config)
    stored = load_file(pretrained / "model.safetensors")
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if name.startswith(ENCODER):
                tensor.copy_(stored[name])
    trainer = Trainer(model, task, exp.train, log=lambda *_: None)
    trainer.fit_warmup_to_run()  # as a new run does
    trainer.fit()
    tuned = load_file(run / "model.safetensors")
    assert tuned.keys() == model.state_dict().keys()
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(tuned[name], tensor, rtol=0, atol=0, msg=name)


def test_the_run_keeps_the_pretrained_tokenizer(tmp_path, data):
    _, run = finetune(data, tmp_path / "ft")
    assert load_tokenizer(run / "tokenizer.json").to_dict() == load_tokenizer(data[2] / "tokenizer.json").to_dict()


def test_frozen_encoder_waits_while_the_head_learns(tmp_path, data):
    _, run = finetune(data, tmp_path / "ft", freeze_encoder_steps=12)
    before, after = load_file(data[2] / "model.safetensors"), load_file(run / "model.safetensors")
    for name in after:
        if name.startswith(ENCODER):
            assert torch.equal(before[name], after[name]), name
    head = [k for k in after if k.startswith("head.")]
    assert head and all(k not in before for k in head)  # the head is new: it learned from its own start


def tuning_task(data, **settings):
    train, dev, _ = data
    config = ClassifierConfig(head="mean", max_length=16, **SHAPE)
    return ClassifierTask.prepare(ClassifierSettings(str(train), str(dev), min_df=1, **settings), config)


def test_layer_wise_decay_scales_lower_layers(data):
    task = tuning_task(data, layer_lr_decay=0.5, freeze_encoder_steps=3)
    model = build_model(ClassifierConfig(vocab_size=30, head="mean", **SHAPE))
    plan = task.lr_plan(model)
    assert plan["encoder.embedding.weight"] == (0.125, 3)
    assert {v for k, v in plan.items() if k.startswith("encoder.blocks.0.")} == {(0.25, 3)}
    assert {v for k, v in plan.items() if k.startswith("encoder.blocks.1.")} == {(0.5, 3)}
    assert not any(k.startswith("head") for k in plan)


def test_a_different_vocabulary_is_a_clear_error(tmp_path, data):
    train, dev, run = data
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("good\nbad\n")
    with pytest.raises(ConfigError, match="does not match the vocabulary of --init-from"):
        ClassifierTask.prepare(
            ClassifierSettings(str(train), str(dev), vocab=str(vocab), init_from=str(run)), ClassifierConfig()
        )


def test_only_pretraining_runs_can_be_fine_tuned(tmp_path, data):
    train, dev, _ = data
    exp = recipe(
        "classifier", ClassifierConfig(head="mean", max_length=16, **SHAPE), train=str(train), val=str(dev),
        min_df=1, max_steps=2, **QUIET,
    )  # fmt: skip
    clf_run = exp.run(tmp_path / "clf", log=lambda *_: None).run_dir
    with pytest.raises(ConfigError, match="that is a classifier run"):
        ClassifierTask.prepare(ClassifierSettings(str(train), str(dev), init_from=str(clf_run)), ClassifierConfig())
    with pytest.raises(ConfigError, match="no such run directory"):
        ClassifierTask.prepare(
            ClassifierSettings(str(train), str(dev), init_from=str(tmp_path / "nope")), ClassifierConfig()
        )
    with pytest.raises(ConfigError, match="padding=pad"):
        ClassifierSettings(str(train), init_from="x", padding="unk")


def test_every_ensemble_member_starts_from_the_pretrained_encoder(tmp_path, data):
    _, run = finetune(data, tmp_path / "ens", members=2, freeze_encoder_steps=12)
    before, after = load_file(data[2] / "model.safetensors"), load_file(run / "model.safetensors")
    for k in range(2):
        for name in before:
            if name.startswith(ENCODER):
                assert torch.equal(before[name], after[f"members.{k}.{name}"]), (k, name)


def test_layer_wise_decay_reads_ensemble_members_by_their_own_names(data):
    task = tuning_task(data, layer_lr_decay=0.5)
    model = build_model(ClassifierConfig(vocab_size=30, head="mean", members=2, bigram_buckets=16, **SHAPE))
    plan = task.lr_plan(model)
    assert plan["members.1.encoder.embedding.weight"] == (0.125, 0)
    assert {v for k, v in plan.items() if k.startswith("members.0.encoder.blocks.1.")} == {(0.5, 0)}
    assert not any("bigram" in k or "head" in k for k in plan)
