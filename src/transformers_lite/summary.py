"""A parameter table in the style of the posts' printed models.

Each row is one layer: its path in the model, what it is (``Dense(32 => 128, relu)``), and its
trainable parameter count; the last line is ``Total: N trainable parameters (+M non-trainable)``.
Tied weights are counted once. Non-trainable values are buffers such as the sinusoidal table.

Each layer of ``layers`` says what its rows are (``summary_rows(count)``: ``(level, name, description,
trainable, fixed)`` rows, level 0 at the layer's own path, 1 nested under it, ``count`` the parameters
not counted yet); PyTorch's own layers are described here, and containers list their children.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from torch import Tensor, nn

Row = tuple[int, str, str, int, int]  # (level, name, description, trainable, fixed)
Count = Callable[[Iterable[Tensor]], int]


def dense_title(m: nn.Linear, act: str | None = None) -> str:
    extra = "" if m.bias is not None else "; bias=false"
    return f"Dense({m.in_features} => {m.out_features}{', ' + act if act else ''}{extra})"


def _torch_rows(module: nn.Module, count: Count) -> list[Row] | None:
    """The rows of PyTorch's own layers (``None``: a container)."""
    if isinstance(module, nn.Linear):
        return [(0, "", dense_title(module), count(module.parameters()), 0)]
    if isinstance(module, nn.LayerNorm):
        return [(0, "", f"LayerNorm({module.normalized_shape[0]})", count(module.parameters()), 0)]
    if isinstance(module, nn.Dropout):
        return [(0, "", f"Dropout({module.p})", 0, 0)] if module.p > 0 else []
    if isinstance(module, nn.Identity):
        return []  # an absent layer (a final norm that post-norm blocks do not need)
    return None


def summary_rows(model: nn.Module) -> list[tuple[str, str, int, int]]:
    """``(path, description, trainable, non_trainable)`` for every layer that holds numbers."""
    rows: list[tuple[str, str, int, int]] = []
    seen: set[int] = set()

    def count(params: Iterable[Tensor]) -> int:
        n = 0
        for p in params:
            if id(p) not in seen and p.requires_grad:
                seen.add(id(p))
                n += p.numel()
        return n

    def visit(module: nn.Module, path: str, depth: int) -> None:
        own: Callable[[Count], list[Row]] | None = getattr(module, "summary_rows", None)
        found = own(count) if own is not None else _torch_rows(module, count)
        if found is not None:
            for level, name, what, n, fixed in found:
                label = path + name if not name or name.startswith(".") else name
                rows.append(("  " * (depth + level) + label, what, n, fixed))
            return
        if path:  # a container; parameters of its own (none in this library's layers) are counted here
            rows.append(("  " * depth + path, type(module).__name__, count(module.parameters(recurse=False)), 0))
        for name, child in module.named_children():
            visit(child, name, depth + (1 if path else 0))

    visit(model, "", 1)
    return rows


def summary(model: nn.Module) -> str:
    """The whole table as text, ending with the ``Total:`` line."""
    rows = summary_rows(model)
    trainable = sum(r[2] for r in rows)
    fixed = sum(r[3] for r in rows)
    width = max(len(r[0]) for r in rows) + 2
    dwidth = max(len(r[1]) for r in rows) + 2
    lines = [f"{type(model).__name__}("]
    for path, desc, n, m in rows:
        count = f"{n:,}" if n else ""
        if m:
            count = (count + " " if count else "") + f"(+{m:,} non-trainable)"
        lines.append(f"{path:<{width}}{desc:<{dwidth}}{count:>12}".rstrip())
    lines.append(")")
    lines.append(f"Total: {trainable:,} trainable parameters (+{fixed:,} non-trainable)")
    return "\n".join(lines)


def count_parameters(model: nn.Module) -> tuple[int, int]:
    """``(trainable, non_trainable)`` as in the summary's total line."""
    rows = summary_rows(model)
    return sum(r[2] for r in rows), sum(r[3] for r in rows)
