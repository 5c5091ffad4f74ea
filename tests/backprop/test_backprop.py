import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from transformers_lite import ClassifierConfig, build_model
from transformers_lite.backprop import composed
from transformers_lite.backprop.autograd_fn import mul4d
from transformers_lite.backprop.check import CHECKS, TOLERANCE
from transformers_lite.layers.attention import scaled_dot_attention


@pytest.mark.parametrize("name", list(CHECKS))
def test_hand_gradient_equals_autograd(name):
    torch.manual_seed(1)
    assert CHECKS[name]() <= TOLERANCE


def test_training_with_hand_gradients_and_hand_adam_matches_torch():
    cfg = ClassifierConfig(vocab_size=30, max_length=8, dim=8, n_heads=2, dim_hidden=16, n_labels=5, dropout=0.0)
    torch.manual_seed(0)
    hand_model = build_model(cfg).double()
    auto_model = build_model(cfg).double()
    auto_model.load_state_dict(hand_model.state_dict())
    params = dict(hand_model.named_parameters())
    hand_opt = composed.HandAdam(params, lr=1e-2)
    auto_opt = torch.optim.Adam(auto_model.parameters(), lr=1e-2)
    hand_losses, auto_losses = [], []
    ids, labels = torch.randint(0, 30, (6, 8)), torch.randint(0, 5, (6,))  # one batch: the loss must fall
    for _ in range(5):
        loss, cache = composed.post_classifier_forward(hand_model, ids, labels)
        hand_opt.step(composed.post_classifier_backward(cache))
        hand_losses.append(float(loss))
        auto_loss = F.cross_entropy(auto_model(ids), labels)
        auto_opt.zero_grad()
        auto_loss.backward()
        auto_opt.step()
        auto_losses.append(auto_loss.item())
    assert hand_losses == pytest.approx(auto_losses, abs=1e-10)
    assert hand_losses[-1] < hand_losses[0]


def test_mul4d_inside_attention_equals_torch_matmul():
    q, k, v = (torch.randn(2, 3, 5, 4, dtype=torch.float64, requires_grad=True) for _ in range(3))
    out_hand, w_hand = scaled_dot_attention(q, k, v, matmul=mul4d)
    grads_hand = torch.autograd.grad(out_hand.sum(), [q, k, v])
    out, w = scaled_dot_attention(q, k, v)
    grads = torch.autograd.grad(out.sum(), [q, k, v])
    assert torch.allclose(out_hand, out) and all(torch.allclose(a, b) for a, b in zip(grads_hand, grads))
    assert torch.autograd.gradcheck(mul4d, (q.detach().requires_grad_(), k.detach().transpose(-2, -1).requires_grad_()))


def test_cli_prints_the_table_and_the_summary_line():
    result = subprocess.run(
        [sys.executable, "-m", "transformers_lite", "backprop", "check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith(f"{len(CHECKS)}/{len(CHECKS)} operations match autograd")
    assert "encoder block (composed)" in result.stdout


def test_the_posts_layer_norm_differs_from_pytorchs_only_by_where_epsilon_sits():
    from transformers_lite.backprop import ops

    x, g, b = (
        torch.randn(3, 8, dtype=torch.float64),
        torch.ones(8, dtype=torch.float64),
        torch.zeros(8, dtype=torch.float64),
    )
    seed_zero, _ = ops.layer_norm_posts_forward(x, g, b, eps=0.0)
    torch_zero, _ = ops.layer_norm_forward(x, g, b, eps=0.0)
    assert torch.allclose(seed_zero, torch_zero, atol=1e-12)  # (x - μ)/σ either way
    seed_eps, _ = ops.layer_norm_posts_forward(x, g, b, eps=0.1)
    torch_eps, _ = ops.layer_norm_forward(x, g, b, eps=0.1)
    sigma = x.std(-1, unbiased=False, keepdim=True)
    assert torch.allclose(seed_eps, torch_eps * torch.sqrt(sigma**2 + 0.1) / (sigma + 0.1), atol=1e-12)


def test_seed_001s_logistic_regression_learns_with_its_hand_gradient():
    from transformers_lite.backprop.logistic import train_logistic_regression

    history = train_logistic_regression(steps=300)
    assert history["loss"][-1] < 0.5 * history["loss"][0]
    assert history["accuracy"][-1] >= 0.95 and history["accuracy"][0] < 0.7


def test_cli_trains_the_logistic_regression():
    result = subprocess.run(
        [sys.executable, "-m", "transformers_lite", "backprop", "logreg", "--steps", "60"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and "step    60" in result.stdout and "accuracy 0.9" in result.stdout
