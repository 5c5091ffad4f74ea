"""How a run learned: when each position's loss fell and when each head found its pattern, read from the
snapshots, exact on snapshots made to show it and sound on a trained run's."""

from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.inspect.replay import replay
from transformers_lite.runs.snapshots import read_timeline

from ..reliability.conftest import files, runs  # noqa: F401 - fixtures reused here

TOKENS = list("abcdabcdab")


def _uniform(n):
    return [[1 / (t + 1) if s <= t else 0.0 for s in range(n)] for t in range(n)]


def _previous(n):
    return [[1.0 if s == max(t - 1, 0) else 0.0 for s in range(n)] for t in range(n)]


def _induction(tokens):
    n = len(tokens)
    out = _uniform(n)
    for t in range(n):
        keys = [j + 1 for j in range(t - 1) if tokens[j] == tokens[t]]
        if keys:
            out[t] = [1.0 / len(keys) if s in keys else 0.0 for s in range(n)]
    return out


def _snapshots(formed_at, steps=(0, 100, 200, 300, 400)):
    n = len(TOKENS)
    snaps = []
    for step in steps:
        prev = _previous(n) if step >= formed_at["previous"] else _uniform(n)
        ind = _induction(TOKENS) if step >= formed_at["induction"] else _uniform(n)
        losses = [3.0 if step < 200 and t % 2 else 0.5 if step >= 100 else 3.0 for t in range(n - 1)]
        snaps.append({"step": step, "scores": {}, "tokens": TOKENS, "attention": [[prev, ind]], "token_losses": losses})
    return snaps


@settings(max_examples=20, deadline=None)
@given(prev=st.sampled_from([0, 100, 200, 300, 400]), ind=st.sampled_from([100, 200, 300, 400]))
def test_a_head_is_said_to_form_its_pattern_at_the_snapshot_it_appears(prev, ind):
    out = replay(_snapshots({"previous": prev, "induction": ind}))
    previous_head, induction_head = out["heads"]
    if prev == 0:  # there from the start: it formed at the first snapshot
        assert previous_head["previous"]["formed"] == 0
    else:
        assert previous_head["previous"]["formed"] == prev
    assert induction_head["induction"]["formed"] == ind
    assert previous_head["previous"]["strength"][-1] == 1.0 and induction_head["induction"]["strength"][-1] == 1.0
    assert (
        induction_head["previous"]["formed"] is None
        or induction_head["previous"]["strength"][-1] > (induction_head["previous"]["uniform"])
    )


def test_positions_are_learned_in_the_order_their_loss_fell():
    out = replay(_snapshots({"previous": 0, "induction": 100}))
    assert out["learned"] == [100 if t % 2 == 0 else 200 for t in range(len(TOKENS) - 1)]


def test_a_head_that_stays_uniform_never_forms_and_a_changed_probe_is_left_out():
    snaps = _snapshots({"previous": 10_000, "induction": 10_000})
    out = replay(snaps)
    assert all(h[p]["formed"] is None for h in out["heads"] for p in ("previous", "induction"))
    odd = dict(snaps[1], tokens=list("zzzz"))
    assert replay([snaps[0], odd, *snaps[2:]])["steps"] == [0, 200, 300, 400]


def test_a_trained_runs_replay_covers_its_snapshots_every_head_and_position(runs):  # noqa: F811
    snapshots = read_timeline(runs / "generator")
    out = replay(snapshots)
    assert out["steps"] == [s["step"] for s in snapshots] and len(out["steps"]) >= 2
    assert len(out["learned"]) == len(out["tokens"]) - 1
    layers, heads = len(snapshots[-1]["attention"]), len(snapshots[-1]["attention"][0])
    assert len(out["heads"]) == layers * heads
    for h in out["heads"]:
        for pattern in ("previous", "induction"):
            assert len(h[pattern]["strength"]) == len(out["steps"])
            assert h[pattern]["formed"] is None or h[pattern]["formed"] in out["steps"]
