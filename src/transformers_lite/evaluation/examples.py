"""An example input for a run, from its own validation data: what the inspector and ``tlite inspect``
offer before the user types anything, so a model of Python code is shown Python and a ticket
classifier a ticket (not Shakespeare, not a review).

``example_inputs(run)`` returns ``{"text": ..., "prompt": ...}``: a few lines of validation text and
its first line for a generator, the first validation record for a classifier or a translator. A run
whose data cannot be read (moved, edited, imported without data) gets the family's built-in example.
"""

from __future__ import annotations

from typing import Any

from ..runs import LoadedRun
from .evaluate import recorded_text, recorded_validation_reviews
from .translation import recorded_validation_pairs

BUILT_IN = {
    "generator": "ROMEO:\nBut soft, what light through yonder window breaks?",
    "classifier": "The coffee maker broke after two days and the seller never answered my emails.",
    "seq2seq": "Zwei Hunde spielen im Schnee.",
    "mlm": "the coffee was great and the delivery fast",
}
TEXT_CHARS, PROMPT_CHARS = 120, 40


def example_inputs(run: LoadedRun) -> dict[str, Any]:
    """``{"text", "prompt", "source"}``: an input from the run's validation data (``source`` says
    ``"validation"``) or the family's built-in one (``"built-in"``)."""
    family = run.config.family
    try:
        text = _from_validation(run, family)
    except (OSError, ValueError, KeyError, IndexError):  # data moved, edited or never recorded
        text = None
    source = "validation"
    if not text or not text.strip():
        text, source = BUILT_IN.get(family, "Hello"), "built-in"
    prompt = text.split("\n", 1)[0][:PROMPT_CHARS] or text[:PROMPT_CHARS]
    return {"text": text, "prompt": prompt, "source": source}


def _from_validation(run: LoadedRun, family: str) -> str | None:
    data = run.hyperparameters.get("data", {})
    if family == "generator":
        text = recorded_text(run)
        start = int(len(text) * (1 - data.get("val_fraction", 0.1)))  # where the validation split begins
        paragraph = text.find("\n\n", start, start + 4000)
        line = text.find("\n", start, start + 4000)
        start = paragraph + 2 if paragraph >= 0 else line + 1 if line >= 0 else start
        return _lines(text[start : start + 4 * TEXT_CHARS])
    if family == "classifier":
        texts, _ = recorded_validation_reviews(run)
        return texts[0][: 4 * TEXT_CHARS]
    if family == "seq2seq":
        return recorded_validation_pairs(run)[0][0]
    return None


def _lines(text: str) -> str:
    """Whole lines up to about ``TEXT_CHARS`` characters (at least the first line, cut if it is long)."""
    out = ""
    for line in text.split("\n"):
        if out and len(out) + len(line) + 1 > TEXT_CHARS:
            break
        out = f"{out}\n{line}" if out else line[: 2 * TEXT_CHARS]
    return out
