"""The referee of each game: its RULES.md section written again, independently of
``whist_env.rules`` (the deck and deal sizes, the first leader and the trump, the ranking, the
legal calls before card play, and the points of a hand), one module per game.

A game's referee is a :class:`~soak_checks.referee.Referee` subclass whose ``GAME`` names the game,
in a module of this package of its own (``referees/<game>.py``); :data:`REFEREES` collects them,
so that a new game's referee is a new module and nothing else. A game without one is soaked with
the checks that need no rule (masks, copies, views, rewards outside hand ends).
"""

from __future__ import annotations

import importlib
import pkgutil

from ..referee import Referee


def _collect() -> dict[str, type[Referee]]:
    """Game name -> its referee, from every module of this package.

    Raises:
        ValueError: two referees name the same game.
    """
    found: dict[str, type[Referee]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Referee) and value.__module__ == module.__name__ and value.GAME:
                if value.GAME in found:
                    raise ValueError(f"two referees of {value.GAME!r}: {found[value.GAME].__name__} and {value.__name__}")
                found[value.GAME] = value
    return found


#: game name -> its referee (a game missing here gets the checks that need no rule)
REFEREES: dict[str, type[Referee]] = _collect()

__all__ = ["REFEREES"]
