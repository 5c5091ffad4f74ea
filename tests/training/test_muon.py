import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformers_lite import GeneratorConfig, build_model
from transformers_lite.training.muon import Muon, newton_schulz, shape_scale
from transformers_lite.training.optim import make_optimizer, muon_matrix, set_lr


@settings(max_examples=25, deadline=None)
@given(m=st.integers(2, 48), n=st.integers(2, 48), seed=st.integers(0, 2**16))
def test_newton_schulz_maps_each_singular_value_by_its_polynomial(m, n, seed):
    """A matrix polynomial acts on each singular value alone: the output's singular values are the
    scalar iteration of the input's (over ‖G‖_F), and every one above 0.3 % of ‖G‖_F ends in [0.68, 1.21]
    (the speedrun's coefficients trade an exact fixed point at 1 for speed)."""
    g = torch.randn(m, n, generator=torch.Generator().manual_seed(seed))
    o = newton_schulz(g)
    assert o.shape == g.shape
    x = torch.linalg.svdvals(g.double()) / g.double().norm()
    y = x.clone()
    for _ in range(5):
        y = 3.4445 * y - 4.7750 * y**3 + 2.0315 * y**5
    got = torch.linalg.svdvals(o.double())
    torch.testing.assert_close(got.sort().values, y.sort().values, rtol=1e-3, atol=1e-4)
    kept = y[x >= 3e-3]
    assert kept.min() > 0.68 and kept.max() < 1.21


def test_newton_schulz_keeps_the_singular_vectors():
    g = torch.randn(24, 16, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    u, _, vh = torch.linalg.svd(g, full_matrices=False)
    o = newton_schulz(g).double()
    inner = u.T @ o @ vh.T  # (16, 16): diagonal when O = U diag(f(σ)) Vᵀ
    off = inner - torch.diag(torch.diagonal(inner))
    assert off.abs().max() < 1e-4
    assert torch.diagonal(inner).min() > 0.5


def test_muon_first_step_is_the_orthogonalised_gradient_times_lr():
    w = nn.Parameter(torch.randn(8, 4))
    start = w.detach().clone()
    g = torch.randn(8, 4)
    w.grad = g.clone()
    Muon([{"params": [w], "muon": True}], lr=0.1, momentum=0.95).step()
    # momentum starts at 0: M = 0.05 g, the Nesterov look-ahead 0.05 g + 0.95 M; orth() ignores the scale
    expected = start - 0.1 * shape_scale(w) * newton_schulz(g)
    torch.testing.assert_close(w.detach(), expected, rtol=1e-5, atol=1e-6)
    assert math.isclose(shape_scale(w), math.sqrt(2))


def test_the_adam_groups_of_muon_step_as_torch_adamw():
    torch.manual_seed(0)
    a, b = nn.Parameter(torch.randn(5)), None
    b = nn.Parameter(a.detach().clone())
    mine = Muon([{"params": [a], "muon": False, "weight_decay": 0.1}], lr=1e-2, betas=(0.9, 0.99))
    ref = torch.optim.AdamW([b], lr=1e-2, betas=(0.9, 0.99), weight_decay=0.1)
    for _ in range(4):
        g = torch.randn(5)
        a.grad, b.grad = g.clone(), g.clone()
        mine.step()
        ref.step()
    torch.testing.assert_close(a.detach(), b.detach(), rtol=1e-5, atol=1e-7)


def test_muon_steps_only_the_blocks_matrices_at_its_own_rate():
    model = build_model(GeneratorConfig(vocab_size=11, max_length=8, dim=8, n_heads=2, dim_hidden=16, n_blocks=2))
    opt = make_optimizer(model, 1e-3, kind="muon", muon_lr=0.02)
    assert isinstance(opt, Muon)
    names = {id(p): n for n, p in model.named_parameters()}
    stepped = {names[id(p)] for g in opt.param_groups if g["muon"] for p in g["params"]}
    assert stepped == {n for n, p in model.named_parameters() if muon_matrix(n, p)}
    assert "embedding.weight" not in stepped and "head.weight" not in stepped
    assert "blocks.0.attention.qkv.weight" in stepped and "blocks.1.feed_forward.dense2.weight" in stepped
    set_lr(opt, 5e-4)
    rates = {g["muon"]: g["lr"] for g in opt.param_groups if g["params"]}
    assert rates[True] == pytest.approx(0.01) and rates[False] == pytest.approx(5e-4)


@pytest.mark.parametrize("preset", ["seq2seq-tiny", "classifier"])
def test_muon_steps_every_matrix_inside_a_block_of_each_family(preset):
    """The translator's decoder blocks and each ensemble member's encoder blocks are blocks too; embedding
    tables and output layers never are."""
    from transformers_lite import get_preset

    model = build_model(get_preset(preset).model)
    stepped = {n for n, p in model.named_parameters() if muon_matrix(n, p)}
    in_blocks = {
        n for n, p in model.named_parameters() if p.dim() == 2 and ("blocks." in n or n.startswith("decoder."))
    }
    assert stepped == in_blocks and stepped
    assert not any("embedding" in n or n.startswith("head") for n in stepped)
    if preset == "seq2seq-tiny":
        assert any(n.startswith("decoder.1.") for n in stepped) and any(
            n.startswith("encoder.blocks.") for n in stepped
        )


def test_muon_refuses_a_vector():
    with pytest.raises(ValueError, match=r"matrices only.*\(3,\)"):
        Muon([{"params": [nn.Parameter(torch.zeros(3))], "muon": True}], lr=0.1)


def test_unknown_optimizer_is_named():
    with pytest.raises(ValueError, match="optimizer='lion'"):
        make_optimizer(nn.Linear(2, 2), 1e-3, kind="lion")
