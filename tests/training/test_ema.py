import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformers_lite.training.ema import KEY, averaged, decay_at, update_average


@settings(max_examples=20, deadline=None)
@given(decay=st.floats(0.5, 0.999), steps=st.integers(1, 12), seed=st.integers(0, 1000))
def test_the_average_equals_its_definition(decay, steps, seed):
    gen = torch.Generator().manual_seed(seed)
    p = nn.Parameter(torch.randn(3, generator=gen))
    opt = torch.optim.SGD([p], lr=0.1)
    expected = None
    for t in range(1, steps + 1):
        p.grad = torch.randn(3, generator=gen)
        opt.step()
        update_average(opt, decay, t)
        w = p.detach()
        expected = w.clone() if expected is None else decay_at(decay, t) * expected + (1 - decay_at(decay, t)) * w
    torch.testing.assert_close(opt.state[p][KEY], expected, rtol=1e-5, atol=1e-6)


def test_decay_warms_up_then_holds():
    assert decay_at(0.999, 1) == pytest.approx(2 / 11)
    assert decay_at(0.9, 10_000) == 0.9


def test_averaged_swaps_in_and_back():
    p = nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=1.0)
    opt.state[p][KEY] = torch.full((2,), 5.0)
    with averaged(opt):
        assert p.tolist() == [5.0, 5.0]
    assert p.tolist() == [1.0, 1.0]
    with averaged(opt, enabled=False):
        assert p.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError), averaged(opt):
        raise RuntimeError("the weights come back on errors too")
    assert p.tolist() == [1.0, 1.0]
