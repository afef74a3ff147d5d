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

#: Option values that the options dataclass does not enumerate (ints, custom checks), or that are
#: cut short so that random games stay short: ``(game, option)`` -> values, ``(None, option)``
#: for every game that has the option.
SMALL_VALUES: dict[tuple[str | None, str], tuple] = {
    (None, "max_hands"): (3, 40),
    (None, "num_hands"): (None, 1, 2),
    (None, "best_of"): (1, 3),
    (None, "target_score"): (1, 3),
    ("classic_whist", "target_score"): (1, 2, 5),
    ("classic_whist", "trump_rotation"): (("S", "H", "D", "C"), ("C", "D", "H", "S")),
    ("romanian_whist", "num_players"): (3, 4, 5, 6),
    ("romanian_whist", "first_player"): (None, 0),
    ("romanian_whist", "streak_length"): (1, 2, 5),
    ("romanian_whist", "streak_points"): (0, 10),
    ("bid_whist", "min_bid"): (1, 4, 7),
    ("bid_whist", "wild_deuces"): (("2D", "2S"), ("2C", "2H")),
    ("bid_whist", "boston_multiplier"): (1, 4),
    ("bid_whist", "target_score"): (1, 7),
}


@functools.cache
def option_grid(game: str) -> Mapping[str, tuple]:
    """The values the soak plays of every rule option of ``game`` (its options dataclass: RULES.md's
    "Options" tables and §1.9), in the dataclass's order: both values of a bool, every value of a
    ``one_of``, ``None`` and seat 0 of a seat option, the two lowest values of an int (and ``None``
    where allowed), and :data:`SMALL_VALUES` where it names the option. Every value passes the
    option's own check.

    Raises:
        ValueError: ``game`` is unknown, an option has values neither its check nor
            :data:`SMALL_VALUES` gives, or its check refuses a value.
    """
    grid = {}
    for field in dataclasses.fields(games.spec(game).options):
        check = field.metadata["check"]
        values = SMALL_VALUES.get((game, field.name), SMALL_VALUES.get((None, field.name)))
        if values is None:
            if check is is_bool:
                values = (False, True)
            elif hasattr(check, "values"):
                values = tuple(check.values)
            elif hasattr(check, "num_seats"):
                values = (None, 0)
            elif hasattr(check, "low"):
                values = (check.low, check.low + (2 if check.odd else 1)) + ((None,) if check.optional else ())
            else:
                raise ValueError(f"{game}: the soak cannot list the values of option {field.name!r}; add them to SMALL_VALUES")
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

