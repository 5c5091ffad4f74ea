"""How a run learned, at the token level: what its training snapshots (``timeline``) show when read
across time, for the replay in the inspector.

For the probe text of every snapshot (the same tokens each time):

* ``learned``: for each position, the first snapshot at which the loss of its next token fell at least
  halfway from where it started to where it ended (``None``: it never fell), so the positions can be read
  in the order the model learned them — spaces and common letters first, then words;
* ``heads`` (a model's own attention; not a translator's cross-attention): for each block and head, how
  strongly it attends in two patterns a learner can name, per snapshot, and ``formed``: the step at which
  each first rose halfway from a uniform head's strength to its final one (``None`` when its final
  strength is not clearly above a uniform head's: by ``MARGIN``, and by half a uniform head's own):

  - ``previous``: the weight a query gives the token just before it (a previous-token head);
  - ``induction``: the weight a query gives the token after an earlier copy of its own token (an
    induction head: it reads what followed this token last time).

Both are means over the queries where the pattern can occur, and a uniform head scores the mean of
1/(t + 1) over the same queries (``uniform``), the line a pattern must rise above. Shapes: L blocks, H
heads, T probe tokens.
"""

from __future__ import annotations

from typing import Any

Snapshot = dict[str, Any]
MARGIN = 0.05  # a pattern formed: its final strength at least this much (and half again) above a uniform head's


def replay(snapshots: list[Snapshot]) -> dict[str, Any]:
    """The replay of ``snapshots`` (``timeline.read_timeline``, in step order), as JSON-ready data."""
    usable = [s for s in snapshots if s.get("tokens") and s.get("tokens") == snapshots[-1].get("tokens")]
    out: dict[str, Any] = {"steps": [s["step"] for s in usable]}
    if not usable:
        return out
    tokens = usable[-1]["tokens"]
    out["tokens"] = tokens
    if all(isinstance(s.get("token_losses"), list) for s in usable):
        out["learned"] = learned(usable)
    own = not any("target_tokens" in s for s in usable)  # a translator's snapshots hold cross-attention
    if own and all(isinstance(s.get("attention"), list) and s["attention"] for s in usable):
        out["heads"] = head_patterns(usable, tokens)
    return out


def learned(snapshots: list[Snapshot]) -> list[int | None]:
    """Per position, the step at which its loss first fell halfway from its first value to its last."""
    losses = [s["token_losses"] for s in snapshots]
    out: list[int | None] = []
    for t in range(len(losses[-1])):
        first, last = losses[0][t], losses[-1][t]
        if last >= first:
            out.append(None)
            continue
        half = (first + last) / 2
        out.append(next(s["step"] for s, row in zip(snapshots, losses) if row[t] <= half))
    return out


def _queries(tokens: list[str]) -> dict[str, list[tuple[int, list[int]]]]:
    """For each pattern, its queries and the keys that make it: (t, [keys])."""
    previous = [(t, [t - 1]) for t in range(1, len(tokens))]
    induction = []
    for t in range(2, len(tokens)):
        keys = [j + 1 for j in range(t - 1) if tokens[j] == tokens[t]]  # after an earlier copy, before t
        if keys:
            induction.append((t, keys))
    return {"previous": previous, "induction": induction}


def _strength(weights: list[list[float]], queries: list[tuple[int, list[int]]]) -> float:
    """The mean over the queries of the weight on their pattern's keys (a causal ``(T, T)`` map)."""
    if not queries:
        return 0.0
    return sum(sum(weights[t][k] for k in keys) for t, keys in queries) / len(queries)


def head_patterns(snapshots: list[Snapshot], tokens: list[str]) -> list[dict[str, Any]]:
    """Each head's strength in each pattern per snapshot, and when it formed (see the module docstring)."""
    patterns = _queries(tokens)
    steps = [s["step"] for s in snapshots]
    out = []
    for block, heads in enumerate(snapshots[-1]["attention"]):
        for head in range(len(heads)):
            entry: dict[str, Any] = {"block": block, "head": head}
            for pattern, queries in patterns.items():
                curve = [round(_strength(s["attention"][block][head], queries), 4) for s in snapshots]
                uniform = sum(len(keys) / (t + 1) for t, keys in queries) / len(queries) if queries else 0.0
                final = curve[-1]
                formed = None
                if queries and final - uniform >= max(MARGIN, uniform / 2):  # clearly above a uniform head
                    formed = next(step for step, v in zip(steps, curve) if v >= uniform + (final - uniform) / 2)
                entry[pattern] = {"strength": curve, "uniform": round(uniform, 4), "formed": formed}
            out.append(entry)
    return out
