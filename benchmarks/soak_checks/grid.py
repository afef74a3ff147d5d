"""The grid of rule options a soak plays, and the options of each soak game (the package
docstring: "Its options come from the game's option grid")."""

from __future__ import annotations

import dataclasses
import functools
import json
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from whist_env import games
from whist_env.rules.options import is_bool

#: Values of options that several games share, cut short so that random games stay short, for
#: every game whose options do not declare their own (an option's ``samples``,
#: :func:`whist_env.rules.options.option`): option name -> values.
SMALL_VALUES: dict[str, tuple] = {
    "max_hands": (3, 40),
    "num_hands": (None, 1, 2),
    "best_of": (1, 3),
    "target_score": (1, 3),
}

#: How far from 0 :func:`option_grid` looks for a second value of an int option whose check lists
#: nothing (a custom check).
_PROBE = 100


@functools.cache
def option_grid(game: str) -> Mapping[str, tuple]:
    """The values the soak plays of every rule option of ``game`` (its options dataclass: RULES.md's
    "Options" tables and §1.9), in the dataclass's order: the option's own ``samples`` where its
    options declare them, else :data:`SMALL_VALUES` where it names the option, else what its check
    says: both values of a bool, every value of a ``one_of``, ``None`` and seat 0 of a seat option,
    the two lowest values of an int (and ``None`` where allowed); an option whose check lists
    nothing (a custom check) plays its default and, for an int default, the int nearest 0 (1
    before -1) that the check accepts. Every value passes the option's own check.

    Raises:
        ValueError: ``game`` is unknown, an option has values none of these give, or its check
            refuses a value.
    """
    grid = {}
    for field in dataclasses.fields(games.spec(game).options):
        check = field.metadata["check"]
        values = field.metadata.get("samples") or SMALL_VALUES.get(field.name)
        if values is None:
            if check is is_bool:
                values = (False, True)
            elif hasattr(check, "values"):
                values = tuple(check.values)
            elif hasattr(check, "num_seats"):
                values = (None, 0)
            elif hasattr(check, "low"):
                values = (check.low, check.low + (2 if check.odd else 1)) + ((None,) if check.optional else ())
            elif field.default is not dataclasses.MISSING and check(field.default) is None:
                values = (field.default,)
                if isinstance(field.default, int) and not isinstance(field.default, bool):
                    near = [0] + [v for k in range(1, _PROBE) for v in (k, -k)]
                    values += tuple(v for v in near if v != field.default and check(v) is None)[:1]
            else:
                raise ValueError(f"{game}: the soak cannot list the values of option {field.name!r}; "
                                 "declare them (the option's samples)")
        for value in values:
            problem = check(value)
            if problem is not None:
                raise ValueError(f"{game}: soak value {value!r} of option {field.name!r} is invalid: expected {problem}")
        grid[field.name] = tuple(values)
    return grid


def text_checksum(text: str) -> int:
    """CRC-32 of ``text`` (UTF-8): a seed part per game and option name, and the grids' checksum."""
    return zlib.crc32(text.encode())


def draw_options(game: str, ordinal: int) -> dict[str, Any]:
    """The rule options of the ``ordinal``-th soak game of ``game``: one value of each option of
    :func:`option_grid`, such that every run of m consecutive ordinals (m: the option's number of
    values, runs starting at multiples of m) plays each value once, in an order shuffled per run and
    option so that the combinations vary. Tuple values are given as lists, as a user would."""
    options = {}
    for name, values in option_grid(game).items():
        m = len(values)
        order = np.random.default_rng([ordinal // m, text_checksum(game), text_checksum(name)]).permutation(m)
        value = values[int(order[ordinal % m])]
        options[name] = list(value) if isinstance(value, tuple) else value
    return options


def value_key(value: Any) -> str:
    """An option value as the coverage tables key it: its JSON text (``null``, ``"red"``, ``[...]``)."""
    return json.dumps(list(value) if isinstance(value, tuple) else value)


def all_options(game: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with every other option of ``game`` at its default."""
    full = {f.name: f.default for f in dataclasses.fields(games.spec(game).options)}
    full.update(options)
    return full

