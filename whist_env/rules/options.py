"""Rule options: frozen dataclasses with validation (RULES.md §1.9 and each game's "Options").

Every field may carry a ``check`` in its metadata: a function returning ``None`` when the value
is valid, or a text describing the allowed values; and ``samples``: values that tools playing
many option combinations (the random-game soak, ``benchmarks/soak_checks``) play of an option
whose check does not list its values (an int, a custom check), kept few and small so that random
games stay short. :func:`build_options` turns keyword arguments into an options object and raises
``ValueError`` naming the option and its allowed values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")
Check = Callable[[Any], "str | None"]


def option(default: Any, check: Check, doc: str = "", samples: tuple | None = None) -> Any:
    """A dataclass field for a rule option with a default, a validity check, a description and,
    optionally, the values tools play of it (``samples``, a tuple; module docstring).

    Raises:
        TypeError: a mutable default, or ``samples`` not a tuple.
        ValueError: a sample the check refuses (naming it and what the check expects).
    """
    if isinstance(default, (list, dict, set)):
        raise TypeError("option defaults must be immutable")
    if samples is not None:
        if not isinstance(samples, tuple):
            raise TypeError(f"option samples must be a tuple, got {samples!r}")
        for value in samples:
            problem = check(value)
            if problem is not None:
                raise ValueError(f"option sample {value!r} is invalid: expected {problem}")
    return dataclasses.field(default=default, metadata={"check": check, "doc": doc, "samples": samples})


def one_of(*values: Any) -> Check:
    """Check: the value is one of ``values``."""
    def check(v: Any) -> str | None:
        if any(v == x and type(v) is type(x) for x in values):
            return None
        if not isinstance(v, str) and str(v) in values:  # 52 for "52": a number where the text is meant
            return f"one of {list(values)} (the text {str(v)!r}, not the number {v!r}: quote it)"
        return f"one of {list(values)}"
    check.values = values  # what it allows, for tools that enumerate options
    return check


def int_at_least(low: int, *, optional: bool = False, odd: bool = False) -> Check:
    """Check: an int ≥ ``low`` (bools excluded); ``None`` allowed when ``optional``; odd when ``odd``."""
    def check(v: Any) -> str | None:
        if v is None and optional:
            return None
        ok = isinstance(v, int) and not isinstance(v, bool) and v >= low and (not odd or v % 2 == 1)
        if ok:
            return None
        text = f"{'an odd' if odd else 'an'} int >= {low}"
        return text + (" or None" if optional else "")
    check.low, check.optional, check.odd = low, optional, odd  # what it allows, for tools that enumerate options
    return check


def is_bool(v: Any) -> str | None:
    """Check: a bool."""
    return None if isinstance(v, bool) else "True or False"


def seat_or_none(num_seats: int) -> Check:
    """Check: ``None`` or a seat index 0..num_seats-1."""
    def check(v: Any) -> str | None:
        if v is None or (isinstance(v, int) and not isinstance(v, bool) and 0 <= v < num_seats):
            return None
        return f"None or a seat 0..{num_seats - 1}"
    check.num_seats = num_seats  # what it allows, for tools that enumerate options
    return check


@dataclasses.dataclass(frozen=True)
class CommonOptions:
    """Options every environment has (RULES.md §1.9)."""

    reward: str = option("score_diff", one_of("score_diff", "score", "win_loss"), "what an agent is paid")
    episode: str = option("game", one_of("game", "hand"), "what one episode is")
    max_hands: int = option(200, int_at_least(1), "truncation guard: hands per episode")
    observation: str = option("vector", one_of("vector", "history"),
                              "the observation: the feature vector, or the vector and the hand's actions in order")


def option_names(cls: type) -> list[str]:
    """Names of the options of an options dataclass."""
    return [f.name for f in dataclasses.fields(cls)]


def build_options(cls: type[T], kwargs: Mapping[str, Any]) -> T:
    """Validate ``kwargs`` and build an options object of dataclass ``cls``.

    Sequence values are converted to tuples so that the options stay immutable, and NumPy
    scalars to the Python values they hold (``np.int64(300)`` is the int 300, ``np.str_("hand")``
    the str ``"hand"``).

    Raises:
        ValueError: on an unknown option (naming it and the known ones) or an invalid value
            (naming the option, the value and the allowed values).
    """
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(kwargs) - set(fields))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for {cls.__name__}; known options: {sorted(fields)}")
    values = {}
    for name, value in kwargs.items():
        if isinstance(value, list):
            value = tuple(value)
        elif isinstance(value, np.generic):
            value = value.item()
        problem = fields[name].metadata["check"](value)
        if problem is not None:
            raise ValueError(f"invalid value {value!r} for option {name!r}: expected {problem}")
        values[name] = value
    return cls(**values)


def options_dict(options: Any) -> dict[str, Any]:
    """Plain ``dict`` of an options object (tuples become lists), e.g. for a checkpoint or a record."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(options).items()}


def changed_options(cls: type, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The options of ``kwargs`` whose values differ from the defaults of options dataclass
    ``cls``, as :func:`options_dict` gives them, sorted by name: one form for one set of rules
    (an option given at its default is no change).

    Raises:
        ValueError: an unknown option or an invalid value (:func:`build_options`).
    """
    given, default = options_dict(build_options(cls, kwargs)), options_dict(cls())
    return {k: given[k] for k in sorted(given) if given[k] != default[k]}
