"""An example input for a run, from its own validation data: what the inspector and ``tlite inspect``
offer before the user types anything, so a model of Python code is shown Python and a ticket
classifier a ticket (not Shakespeare, not a review).

``example_inputs(run)`` returns ``{"text": ..., "prompt": ...}``: a few lines of validation text and
its first line for a generator, the first validation record for a classifier or a translator. A run
whose data cannot be read (moved, edited, imported without data) gets the family's built-in example.
"""

from __future__ import annotations

from typing import Any

from ..evaluation.evaluate import recorded_text, recorded_validation_reviews
from ..evaluation.prediction import class_names
from ..evaluation.translation import recorded_validation_pairs
from ..runs import LoadedRun
from .inspection import InspectedRun

TEXT_CHARS, PROMPT_CHARS = 120, 40


def example_inputs(run: InspectedRun) -> dict[str, Any]:
    """``{"text", "prompt", "source", "label"}``: an input from the run's validation data (``source`` says
    ``"validation"``) or the family's built-in one (``"built-in"``); ``label``: its true class, where
    the family has one (a classifier's validation record), else ``None``."""
    try:
        text = run.family.example(run)
    except (OSError, ValueError, KeyError, IndexError):  # data moved, edited or never recorded
        text = None
    source = "validation"
    if not text or not text.strip():
        text, source = run.family.built_in, "built-in"
    prompt = text.split("\n", 1)[0][:PROMPT_CHARS] or text[:PROMPT_CHARS]
    label = None
    if source == "validation":
        try:
            label = run.family.example_label(run)
        except (OSError, ValueError, KeyError, IndexError):
            label = None
    return {"text": text, "prompt": prompt, "source": source, "label": label}


def generator_example(run: LoadedRun) -> str:
    """Whole lines from the start of the validation split (a paragraph's start where one is near)."""
    text = recorded_text(run)
    start = int(len(text) * (1 - run.hyperparameters.get("data", {}).get("val_fraction", 0.1)))
    paragraph = text.find("\n\n", start, start + 4000)
    line = text.find("\n", start, start + 4000)
    start = paragraph + 2 if paragraph >= 0 else line + 1 if line >= 0 else start
    return _lines(text[start : start + 4 * TEXT_CHARS])


def classifier_example(run: LoadedRun) -> str:
    """The first validation record's whole text: the review the training timeline follows."""
    texts, _ = recorded_validation_reviews(run)
    return texts[0]


def classifier_example_label(run: LoadedRun) -> str | None:
    """The class name of the first validation record (``classifier_example``'s true label)."""
    _, labels = recorded_validation_reviews(run)
    return class_names(run.config)[int(labels[0])]


def classifier_task_title(run: LoadedRun, shown: int = 8) -> dict[str, str]:
    """A classifier's task in words, from its own classes: ``{"title": "Classify a text: 8 classes (art,
    computers, ..., wisdom)", "item": "text"}`` (``"review"`` for the star and sentiment tasks, whose
    classes are not taken from data); the first ``shown`` class names, then how many more."""
    names = class_names(run.config)
    item = "text" if run.config.label_names else "review"
    listed = ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")
    return {"title": f"Classify a {item}: {len(names)} classes ({listed})", "item": item}


def translator_example(run: LoadedRun) -> str:
    """The first validation pair's source."""
    return recorded_validation_pairs(run)[0][0]


def _lines(text: str) -> str:
    """Whole lines up to about ``TEXT_CHARS`` characters (at least the first line, cut if it is long)."""
    out = ""
    for line in text.split("\n"):
        if out and len(out) + len(line) + 1 > TEXT_CHARS:
            break
        out = f"{out}\n{line}" if out else line[: 2 * TEXT_CHARS]
    return out
