"""Post 001's warm-up: logistic regression trained by gradient descent with a hand-derived gradient.

The data mimic the post's synthetic classifier: four random features, class 1 when their sum is at
least the median (the post's threshold of 1.0 on ``rand(4)`` would make one class rare). The weights
start uniform in (-1, 1) and the bias at zero; the draft starts both with ``rand``, uniform in [0, 1).
The update uses ``ops.logistic_regression_backward`` only: no autograd.
"""

from __future__ import annotations

import torch

from . import ops


def logistic_regression_data(n: int = 200, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``X (n, 4)`` uniform in [0, 1) and one-hot ``Y (n, 2)``."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 4, generator=g, dtype=torch.float64)
    labels = (x.sum(-1) >= x.sum(-1).median()).long()
    return x, torch.nn.functional.one_hot(labels, 2).to(torch.float64)


def train_logistic_regression(steps: int = 300, lr: float = 2.0, seed: int = 0) -> dict[str, list[float]]:
    """Full-batch gradient descent on the summed cross-entropy; the loss and accuracy after each step."""
    x, y = logistic_regression_data(seed=seed)
    g = torch.Generator().manual_seed(seed + 1)
    w = torch.rand(2, 4, generator=g, dtype=torch.float64) * 2 - 1  # uniform(-1, 1); the draft's rand: [0, 1)
    b = torch.zeros(2, dtype=torch.float64)  # zero; the draft's bias is rand too: uniform in [0, 1)
    history: dict[str, list[float]] = {"loss": [], "accuracy": []}
    for _ in range(steps):
        _, cache = ops.logistic_regression_forward(x, w, b, y)
        dw, db = ops.logistic_regression_backward(cache)
        w, b = w - lr * dw / len(x), b - lr * db / len(x)
        loss, cache = ops.logistic_regression_forward(x, w, b, y)
        history["loss"].append(float(loss) / len(x))
        history["accuracy"].append(float((cache[1].argmax(-1) == y.argmax(-1)).double().mean()))
    return history
