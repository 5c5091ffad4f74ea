"""A parameter table in the style of the posts' printed models.

Each row is one layer: its path in the model, what it is (``Dense(32 => 128, relu)``), and its
trainable parameter count; the last line is ``Total: N trainable parameters (+M non-trainable)``.
Tied weights are counted once. Non-trainable values are buffers such as the sinusoidal table.
"""

from __future__ import annotations

from torch import nn

from .layers import (
    Attention,
    BigramEmbedding,
    FeedForward,
    LearnedPositionEmbedding,
    Residual,
    RotaryEmbedding,
    SinusoidalPositionEncoding,
    TokenEmbedding,
)


def _dense(m: nn.Linear, act: str | None = None) -> str:
    extra = "" if m.bias is not None else "; bias=false"
    return f"Dense({m.in_features} => {m.out_features}{', ' + act if act else ''}{extra})"


def summary_rows(model: nn.Module) -> list[tuple[str, str, int, int]]:
    """``(path, description, trainable, non_trainable)`` for every layer that holds numbers."""
    rows: list[tuple[str, str, int, int]] = []
    seen: set[int] = set()

    def count(params) -> int:  # noqa: ANN001
        n = 0
        for p in params:
            if id(p) not in seen and p.requires_grad:
                seen.add(id(p))
                n += p.numel()
        return n

    def visit(module: nn.Module, path: str, depth: int) -> None:
        indent = "  " * depth
        if isinstance(module, Attention):
            rows.append((indent + path, f"{type(module).__name__}({module.extra_repr()})", 0, 0))
            count(p for name, p in module.named_parameters() if not name.startswith("rope."))
            for name, what, n in module.summary_rows():
                rows.append((indent + "  " + name, what, n, 0))
            if module.rope is not None:
                visit(module.rope, "rope", depth + 1)
            return
        if isinstance(module, Residual):
            drop = f", Dropout({module.dropout.p})" if module.dropout.p > 0 else ""
            rows.append(
                (
                    indent + path,
                    f"Residual(LayerNorm({module.norm.normalized_shape[0]}){drop}, {module.extra_repr()})",
                    count(module.parameters()),
                    0,
                )
            )
            return
        if isinstance(module, FeedForward):
            rows.append(
                (
                    indent + path + ".dense1",
                    _dense(module.dense1, module.activation),
                    count(module.dense1.parameters()),
                    0,
                )
            )
            rows.append((indent + path + ".dense2", _dense(module.dense2), count(module.dense2.parameters()), 0))
            return
        desc: str | None = None
        if isinstance(module, TokenEmbedding):
            desc = f"Embedding({module.vocab_size} => {module.dim})"
        elif isinstance(module, BigramEmbedding):
            desc = f"BigramEmbedding({module.buckets} pairs => {module.dim})"
        elif isinstance(module, LearnedPositionEmbedding):
            desc = f"Embedding({module.max_length} => {module.dim})"
        elif isinstance(module, SinusoidalPositionEncoding):
            desc = f"PositionEncoding({module.dim}, max_length={module.max_length})"
        elif isinstance(module, RotaryEmbedding):
            desc = f"RotaryEmbedding({module.dim}, max_length={module.max_length})"
        elif isinstance(module, nn.Linear):
            desc = _dense(module)
        elif isinstance(module, nn.LayerNorm):
            desc = f"LayerNorm({module.normalized_shape[0]})"
        elif isinstance(module, nn.Identity):
            return  # an absent layer (a final norm that post-norm blocks do not need)
        elif isinstance(module, nn.Dropout):
            if module.p > 0:
                rows.append((indent + path, f"Dropout({module.p})", 0, 0))
            return
        if desc is not None:
            buffers = sum(b.numel() for b in module.buffers(recurse=False))
            buffers += sum(p.numel() for p in module.parameters(recurse=False) if not p.requires_grad)
            rows.append((indent + path, desc, count(module.parameters()), buffers))
            return
        children = list(module.named_children())
        if path:  # a container; parameters of its own (none in this library's layers) are counted here
            rows.append((indent + path, type(module).__name__, count(module.parameters(recurse=False)), 0))
        for name, child in children:
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
