"""The path through the exercises (``EXERCISES``, in the order the posts derive the steps)."""

from __future__ import annotations

from .blocks_path import BLOCKS
from .exercise import Exercise
from .layers_path import LAYERS
from .variants_path import VARIANTS

EXERCISES: tuple[Exercise, ...] = LAYERS + BLOCKS + VARIANTS
BY_NAME = {e.name: e for e in EXERCISES}
