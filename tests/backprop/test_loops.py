"""Post 000's loop-written products equal the built-in batched product."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite.backprop.loops import mul2d, mul3d, mul4d

sizes = st.integers(1, 5)


@given(sizes, sizes, sizes)
def test_mul2d_loops_equal_matmul(n, m, p):
    a, b = torch.randn(n, m, dtype=torch.float64), torch.randn(m, p, dtype=torch.float64)
    assert torch.allclose(mul2d(a, b), a @ b, atol=1e-12)


@given(sizes, sizes, sizes, sizes, sizes)
def test_mul3d_and_mul4d_equal_batched_matmul(k, h, n, m, p):
    a3, b3 = torch.randn(k, n, m), torch.randn(k, m, p)
    assert torch.allclose(mul3d(a3, b3), torch.matmul(a3, b3), atol=1e-6)
    a4, b4 = torch.randn(k, h, n, m), torch.randn(k, h, m, p)
    assert torch.allclose(mul4d(a4, b4), torch.matmul(a4, b4), atol=1e-6)


def test_shapes_that_do_not_multiply_are_errors():
    with pytest.raises(ValueError, match="do not multiply"):
        mul2d(torch.zeros(2, 3), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="mul4d needs 4-D tensors"):
        mul4d(torch.zeros(2, 3, 3), torch.zeros(2, 3, 3))
