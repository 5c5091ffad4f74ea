"""Recipes: everything one training run needs (``Recipe``), the named ones (``PRESETS``), and resuming a run."""

from .presets import ALIASES, ORIGINAL, PRESETS, get_preset, presets_of
from .recipe import Recipe, TrainResult
from .resume import recorded_recipe, resume_recipe

__all__ = [
    "ALIASES",
    "ORIGINAL",
    "PRESETS",
    "Recipe",
    "TrainResult",
    "get_preset",
    "presets_of",
    "recorded_recipe",
    "resume_recipe",
]
