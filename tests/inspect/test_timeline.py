"""The training timeline: snapshots at step 0 and at each evaluation, bounded, and invisible to training."""

import json
import shutil

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file

from transformers_lite import GeneratorConfig, Recipe
from transformers_lite.inspect.timeline import PROBE_TOKENS, Timeline, generator_probe
from transformers_lite.models.generator import TransformerGenerator
from transformers_lite.runs.snapshots import SHAPES, read_timeline
from transformers_lite.settings import TrainConfig
from transformers_lite.tasks.generator import GeneratorSettings
from transformers_lite.tokenizers import CharTokenizer

from ..helpers import train_run
from ..reliability.conftest import files, runs  # noqa: F401 - fixtures reused here

TEXT = "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n" * 20
TINY = GeneratorConfig(dim=16, n_heads=2, dim_hidden=32, n_blocks=1, max_length=16)


def test_snapshots_are_taken_at_step_0_and_each_evaluation_and_thinned(tmp_path):
    (tmp_path / "t.txt").write_text(TEXT)
    settings = GeneratorSettings(text=str(tmp_path / "t.txt"), batch_size=4)
    train_run(TINY, settings, tmp_path / "run", max_steps=12, eval_every=2, warmup_steps=1, snapshots=4)
    snaps = read_timeline(tmp_path / "run")
    assert len(snaps) <= 4 and snaps[0]["step"] == 0 and snaps[-1]["step"] == 12  # the first and the last stay
    assert "update_norms" not in snaps[0] and all("update_norms" in s for s in snaps[1:])
    assert all(set(s["grad_norms"]) >= {"embedding", "blocks.0.attention.qkv"} for s in snaps)
    assert len(snaps[0]["attention"][0]) == 2 and len(snaps[0]["attention"][0][0]) == len(snaps[0]["tokens"])
    train_run(TINY, settings, tmp_path / "off", max_steps=4, eval_every=2, warmup_steps=1, snapshots=0)
    assert read_timeline(tmp_path / "off") == [] and not (tmp_path / "off" / "snapshots").exists()


def test_a_run_that_evaluates_once_still_has_its_snapshots_spread_over_training(tmp_path):
    (tmp_path / "t.txt").write_text(TEXT)
    settings = GeneratorSettings(text=str(tmp_path / "t.txt"), batch_size=4)
    train_run(TINY, settings, tmp_path / "run", max_steps=40, eval_every=1000, warmup_steps=1, snapshots=8)
    snaps = read_timeline(tmp_path / "run")
    steps = [s["step"] for s in snaps]
    assert len(steps) == 8 and steps[0] == 0 and steps[-1] == 40 and steps == sorted(set(steps))
    assert max(b - a for a, b in zip(steps, steps[1:])) <= 40 // 8 + 1  # none of training left unseen
    assert snaps[-1]["scores"] and not snaps[3]["scores"]  # between evaluations: the model, no scores


def test_a_paused_and_resumed_run_with_snapshots_ends_bit_for_bit_as_a_straight_one(tmp_path):
    (tmp_path / "t.txt").write_text(TEXT)
    settings = GeneratorSettings(text=str(tmp_path / "t.txt"), batch_size=4)
    train = dict(max_steps=10, eval_every=2, warmup_steps=1, seed=5)
    train_run(TINY, settings, tmp_path / "straight", snapshots=0, **train)
    train_run(TINY, settings, tmp_path / "paused", snapshots=8, stop_at=4, **train)
    taken = tmp_path / "paused" / "snapshots"
    late = json.loads((taken / "step-00000004.json").read_text()) | {"step": 5}
    (taken / "step-00000005.json").write_text(json.dumps(late))  # as a session killed after step 5 leaves it
    recipe = Recipe("generator", TINY, TrainConfig(snapshots=8, **train), settings)
    recipe.run(log=lambda *_: None, resume_dir=tmp_path / "paused")
    straight, resumed = (
        load_file(tmp_path / "straight" / "model.safetensors"),
        load_file(tmp_path / "paused" / "model.safetensors"),
    )
    assert all(torch.equal(straight[k], resumed[k]) for k in straight)
    assert [s["step"] for s in read_timeline(tmp_path / "paused")] == [0, 2, 4, 6, 8, 10]  # 5: taken again, or not


def test_thinning_keeps_the_first_and_the_last(tmp_path):
    timeline = Timeline(tmp_path, None, 3, generator_probe)
    for step in range(0, 100, 10):
        timeline._write({"step": step, "scores": {}})
    timeline._thin()
    steps = [s["step"] for s in read_timeline(tmp_path)]
    assert len(steps) == 3 and steps[0] == 0 and steps[-1] == 90
    (tmp_path / "snapshots" / "step-00000050.json").write_text("{damaged")
    assert [s["step"] for s in read_timeline(tmp_path)] == steps  # an unreadable snapshot is left out


@settings(max_examples=25, deadline=None)
@given(limit=st.integers(3, 16), taken=st.integers(17, 80))
def test_a_long_run_keeps_as_many_snapshots_as_asked_spread_over_it(tmp_path_factory, limit, taken):
    folder = tmp_path_factory.mktemp("thin")
    timeline = Timeline(folder, None, limit, generator_probe)
    for step in range(taken):  # a snapshot every 10 steps, the folder thinned after each
        timeline._write({"step": 10 * step, "scores": {}})
    steps = [s["step"] for s in read_timeline(folder)]
    assert len(steps) == limit and steps[0] == 0 and steps[-1] == 10 * (taken - 1)
    gaps = [b - a for a, b in zip(steps, steps[1:])]
    assert max(gaps) <= 3 * 10 * (taken - 1) / (limit - 1)  # no stretch of training left unseen


def test_the_gradient_norms_are_those_of_the_probe_loss_per_layer_and_leave_grad_alone():
    torch.manual_seed(0)
    model = TransformerGenerator(TINY).eval()
    tokenizer = CharTokenizer.from_text(TEXT)
    ids = torch.tensor(tokenizer.encode(TEXT[:40]))
    task = type("Task", (), {"val_ids": ids, "tokenizer": tokenizer})()
    with torch.no_grad():  # as the snapshot calls it
        norms = generator_probe(model, task)["grad_norms"]
    assert all(p.grad is None for p in model.parameters())  # training's gradients are not touched
    probe = ids[: min(PROBE_TOKENS, TINY.max_length)]
    logits = model(probe[None])[0]
    torch.nn.functional.cross_entropy(logits[:-1], probe[1:]).backward()
    layers: dict[str, float] = {}
    for name, p in model.named_parameters():
        layer = name.rsplit(".", 1)[0]
        layers[layer] = layers.get(layer, 0.0) + float(p.grad.pow(2).sum())
    assert norms.keys() == layers.keys()
    assert all(abs(norms[k] - v**0.5) <= 1e-5 * max(1.0, v**0.5) for k, v in layers.items())


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=st.dictionaries(st.sampled_from(sorted(SHAPES) + ["other"]), JSON, max_size=6), other=JSON)
def test_only_snapshots_of_the_shape_the_page_reads_are_served(tmp_path, fields, other):
    folder = tmp_path / "snapshots"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    good = {"step": 5, "scores": {"val_loss": 1.5}, "tokens": ["a"], "sample": "ab"}
    (folder / "step-00000005.json").write_text(json.dumps(good))
    (folder / "step-00000006.json").write_text(json.dumps(fields))
    (folder / "step-00000007.json").write_text(json.dumps(other))
    served = read_timeline(tmp_path)
    assert served[0] == good
    for snapshot in served[1:]:  # whatever else is served has every field the page reads in its shape
        assert isinstance(snapshot["step"], int) and isinstance(snapshot["scores"], dict)
        assert all(isinstance(snapshot[k], SHAPES[k]) for k in SHAPES if k in snapshot)
        assert all(isinstance(v, (int, float)) for v in snapshot["scores"].values())


def test_a_translators_snapshot_holds_its_cross_attention_and_each_tokens_loss(runs):  # noqa: F811
    """Every decoder block's cross-attention, from each reference token (after BOS) to each source token:
    rows that are distributions over the source; one loss per next reference token and the end."""
    snaps = read_timeline(runs / "seq2seq")
    assert snaps and snaps[0]["step"] == 0
    for snap in snaps:
        source, target = snap["tokens"], snap["target_tokens"]
        assert target[0] == "<bos>" and isinstance(snap["translation"], str) and snap["source"]
        assert len(snap["token_losses"]) == len(target) and all(loss >= 0 for loss in snap["token_losses"])
        weights = torch.tensor(snap["attention"])  # (L, H, T, S)
        assert weights.shape[2:] == (len(target), len(source))
        assert torch.allclose(weights.sum(-1), torch.ones(weights.shape[:3]), atol=0.02)  # rounded to 2 digits
