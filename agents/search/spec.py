"""The option part of a search agent's spec: ``pimc:worlds=32,exact=6,rollout=heuristic``."""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Mapping
from typing import Any


def parse_options(kind: str, text: str, types: Mapping[str, Callable[[str], Any]]) -> dict[str, Any]:
    """``"k=v,k=v"`` -> ``{k: types[k](v)}`` for the keys of ``types`` (a value may hold
    commas only if its key is ``rollout`` or ``inference``: an agent spec such as
    ``checkpoint:PATH`` runs to the next known key, taken as written). A converter is a type
    (``int``, ``float``, ``str``) or a function with a ``label`` attribute naming what it
    accepts (e.g. "int or auto").

    Raises:
        ValueError: an unknown key, an empty option (a stray comma), a key without a value, a
            key given twice, or a value of the wrong type, with the keys the agent takes.
    """
    out: dict[str, Any] = {}
    text = text.strip()
    if not text:
        return out
    known = ", ".join(f"{k}=<{_label(t)}>" for k, t in types.items())
    parts = text.split(",")
    k = 0
    while k < len(parts):
        key, sep, value = parts[k].partition("=")
        key = key.strip().lower()
        if not key and not sep:
            raise ValueError(f"{kind}: empty option in {text!r} (a stray comma?); options: {known}")
        if key not in types:
            raise ValueError(f"{kind}: unknown option {parts[k].strip()!r}; options: {known}")
        if not sep:
            raise ValueError(f"{kind}: option {key} needs a value: {key}=<{_label(types[key])}>")
        if key in out:
            raise ValueError(f"{kind}: option {key} is given twice")
        if key in ("rollout", "inference"):  # an agent spec may itself contain commas: it runs to the next known key
            while k + 1 < len(parts) and parts[k + 1].partition("=")[0].strip().lower() not in types:
                k += 1
                value += "," + parts[k]
        try:
            out[key] = types[key](value.strip())
        except ValueError:
            label = _label(types[key])
            article = "an" if label[0] in "aeiou" else "a"
            raise ValueError(f"{kind}: option {key}={value.strip()!r} is not {article} {label}; options: {known}") from None
        k += 1
    return out


def _label(convert: Callable[[str], Any]) -> str:
    return str(getattr(convert, "label", getattr(convert, "__name__", "value")))


def check_int(kind: str, name: str, value: Any, minimum: int) -> int:
    """``value`` as an int, if it is one (not a float or a string) and at least ``minimum``.

    Raises:
        ValueError: naming the agent kind and the option.
    """
    try:
        number = operator.index(value) if not isinstance(value, bool) else None
    except TypeError:
        number = None
    if number is None or number < minimum:
        raise ValueError(f"{kind}: {name} must be an int >= {minimum}, got {value!r}")
    return int(number)


def check_real(kind: str, name: str, value: Any, minimum: float) -> float:
    """``value`` as a float, if it is a finite real number at least ``minimum``.

    Raises:
        ValueError: naming the agent kind and the option.
    """
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value >= minimum
    if not ok:
        raise ValueError(f"{kind}: {name} must be a finite number >= {minimum:g}, got {value!r}")
    return float(value)
