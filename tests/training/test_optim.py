import math
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite import GeneratorConfig, build_model
from transformers_lite.training.optim import Schedule, make_optimizer, warn_if_cut_short
from transformers_lite.training.state import TrainState

CFG = GeneratorConfig(vocab_size=5, max_length=8, dim=8, n_heads=2, dim_hidden=16, n_blocks=1)
REASONS = ["time budget of 3 minutes used", "time budget used", "limit reached", "early stop"]


def test_schedules():
    cos = Schedule("cosine", lr=1.0, warmup_steps=10, total_steps=110, min_lr_ratio=0.1)
    assert cos(0) == pytest.approx(0.1) and cos(9) == pytest.approx(1.0)
    assert cos(60) == pytest.approx(0.55) and cos(110) == pytest.approx(0.1) and cos(500) == pytest.approx(0.1)
    noam = Schedule("inverse_sqrt", lr=1.0, warmup_steps=100)
    assert noam(99) == pytest.approx(1.0) and noam(399) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="unknown schedule 'linear'"):
        Schedule("linear")


def test_weight_decay_groups_skip_vectors():
    model = build_model(CFG)
    opt = make_optimizer(model, 1e-3, weight_decay=0.1)
    decay, no_decay = opt.param_groups
    assert decay["weight_decay"] == 0.1 and all(p.dim() >= 2 for p in decay["params"])
    assert no_decay["weight_decay"] == 0.0 and all(p.dim() == 1 for p in no_decay["params"])


def test_time_budget_progress_decays_over_the_budget_after_warmup():
    s = Schedule("cosine", lr=1.0, warmup_steps=10, total_steps=None, min_lr_ratio=0.1, budget_s=100.0)
    assert s.progress(5, elapsed=3.0) == 0.0  # still warming up
    # warmup ended at 20 s: the decay spans the remaining 80 s of the budget
    assert s.progress(50, elapsed=60.0, warmup_end_s=20.0) == pytest.approx(0.5)
    assert s(50, 0.5) == pytest.approx(0.55)
    assert s.progress(900, elapsed=100.0, warmup_end_s=20.0) == 1.0 and s(900, 1.0) == pytest.approx(0.1)
    both = Schedule("cosine", lr=1.0, warmup_steps=0, total_steps=100, budget_s=100.0)
    assert both.progress(20, elapsed=70.0, warmup_end_s=0.0) == pytest.approx(0.7)  # whichever is further along
    assert both.progress(90, elapsed=10.0, warmup_end_s=0.0) == pytest.approx(0.9)
    assert math.isclose(Schedule("constant", lr=0.5, warmup_steps=0)(7, 0.9), 0.5)


def test_wsd_holds_the_peak_then_decays_linearly_over_the_cooldown():
    s = Schedule("wsd", lr=1.0, warmup_steps=10, total_steps=110, min_lr_ratio=0.0, cooldown=0.4)
    assert s(4) == pytest.approx(0.5)  # warmup
    assert s(10, 0.0) == 1.0 and s(70, 0.6) == 1.0  # stable until the last 40 %
    assert s(90, 0.8) == pytest.approx(0.5) and s(110, 1.0) == pytest.approx(0.0)
    timed = Schedule("wsd", lr=2.0, warmup_steps=0, total_steps=None, min_lr_ratio=0.1, budget_s=60.0, cooldown=0.5)
    assert timed(999, timed.progress(999, elapsed=45.0, warmup_end_s=0.0)) == pytest.approx(0.2 + 1.8 * 0.5)


@given(step=st.integers(0, 2_000), epoch=st.integers(1, 1_000), reason=st.sampled_from(REASONS), warm=st.booleans())
def test_a_run_cut_short_is_warned_about_once_for_each_reason(step, epoch, reason, warm):
    state = TrainState(step=step, warmup_end_s=None if warm else 1.0, stop_reason=reason)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_if_cut_short(state, 100, 1e-3, epoch)
    said = [str(w.message) for w in caught]
    assert any("still warming up" in line for line in said) == warm
    short = reason.startswith("time budget") and step < epoch  # the budget ran out inside the first epoch
    assert any(f"{step / epoch:.0%} of one epoch ({epoch:,} steps)" in line for line in said) == short
    assert len(said) == warm + short
