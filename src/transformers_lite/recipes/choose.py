"""Which recipe a ``tlite train`` command trains: one entry, ``choose_recipe``.

A run's recipe comes from one of: a preset (``--preset NAME``; default the family's, or its budget
preset when given minutes), a ``--print-config`` printout or a model config file (``--config``),
``--preset auto`` (a race on the user's data within their minutes: ``auto``), or a run to continue
(``--resume``); then ``--set`` changes model fields and the other options training and data settings.
The command line only parses and prints; the Python API asks the same function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..atomic import read_json
from ..budget import Budget
from ..config import load_config
from ..errors import ConfigError
from ..families import FAMILIES, expect
from .auto import PLANS, Choice, auto_choice
from .presets import ORIGINAL, get_preset
from .recipe import Recipe
from .resume import resume_recipe

AUTO_FAMILIES = tuple(PLANS)  # the families --preset auto chooses for


def choose_recipe(
    family: str,
    *,
    preset: str | None = None,
    config_file: str | Path | None = None,
    old_recipe: str | None = None,
    resume: str | Path | None = None,
    model_overrides: Sequence[str] = (),
    settings: dict[str, Any] | None = None,
    budget: Budget | None = None,
    log: Callable[[str], object] = print,
) -> Choice:
    """The recipe a command describes: ``preset`` (``"auto"``: raced within ``budget``, which must then be
    given), ``config_file``, ``old_recipe`` (0.2's ``--recipe``) or ``resume`` (a run directory), with
    ``model_overrides`` (``--set``) and ``settings`` (the options given, by name) applied."""
    settings = dict(settings or {})
    fam = FAMILIES[family]
    if resume:
        if config_file:
            raise ConfigError("--resume continues a run in its own directory; drop --config/--out")
        named = get_preset(preset).model if preset and preset != "auto" else None
        return Choice(resume_recipe(resume, family, model=named, model_overrides=list(model_overrides), **settings))
    if old_recipe == "seed" and family not in ORIGINAL:
        raise ConfigError(f"the posts give no training setup for the {family}; --recipe seed exists for: "
                          f"{', '.join(ORIGINAL)}")  # fmt: skip
    if config_file:
        if preset:
            raise ConfigError("give either --preset or --config, not both")
        recipe = read_recipe_file(Path(config_file), family, settings.get("max_minutes"))
    elif preset == "auto":
        if family not in AUTO_FAMILIES:
            raise ConfigError(
                f"--preset auto chooses for the {', '.join(AUTO_FAMILIES)}, not the {family}; name a preset"
            )
        if budget is None:
            raise ConfigError("--preset auto chooses a model for a time budget: give --max-minutes N")
        choice = auto_choice(family, budget, model_overrides, settings, log)  # measured with the user's settings
        return dataclasses.replace(choice, recipe=choice.recipe.override(list(model_overrides), **settings))
    else:
        name = preset or (ORIGINAL[family] if old_recipe == "seed" else fam.preset_for(settings.get("max_minutes")))
        recipe = get_preset(name)
        expect(f"preset {name!r}", recipe.family, family)
    if old_recipe and (preset or config_file or old_recipe != "seed"):  # another preset's training
        other = get_preset(ORIGINAL[family] if old_recipe == "seed" else old_recipe)
        expect(f"recipe {old_recipe!r}", other.family, family)
        recipe = dataclasses.replace(recipe, train=other.train, data=other.data)
    return Choice(recipe.override(list(model_overrides), **settings))


def read_recipe_file(path: Path, family: str, max_minutes: float | None = None) -> Recipe:
    """A ``--print-config`` printout, or a model config JSON (trained with the preset a run of the family
    starts from when none is named: ``Family.preset_for``)."""
    data = read_json(path, "config file", ConfigError)
    if isinstance(data, dict) and "model" in data:
        recipe = Recipe.from_dict(data, path)
    else:
        start = FAMILIES[family].preset_for(max_minutes)
        recipe = dataclasses.replace(get_preset(start), model=load_config(path), preset=None)
    expect(str(path), recipe.family, family)
    return recipe
