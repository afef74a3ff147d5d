"""The option part of a search agent's spec: ``pimc:worlds=32,exact=6,rollout=heuristic``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def parse_options(kind: str, text: str, types: Mapping[str, type]) -> dict[str, Any]:
    """``"k=v,k=v"`` -> ``{k: type(v)}`` for the keys of ``types`` (the last key may hold commas
    only if it is ``rollout``: an agent spec such as ``checkpoint:PATH`` is taken as written).

    Raises:
        ValueError: an unknown key, a key without ``=``, a key given twice, or a value of the
            wrong type, with the keys the agent takes.
    """
    out: dict[str, Any] = {}
    text = text.strip()
    if not text:
        return out
    known = ", ".join(f"{k}=<{t.__name__}>" for k, t in types.items())
    parts = text.split(",")
    k = 0
    while k < len(parts):
        key, sep, value = parts[k].partition("=")
        key = key.strip().lower()
        if not sep or key not in types:
            raise ValueError(f"{kind}: unknown option {parts[k].strip()!r}; options: {known}")
        if key in out:
            raise ValueError(f"{kind}: option {key} is given twice")
        if key == "rollout":  # an agent spec may itself contain commas: it runs to the next known key
            while k + 1 < len(parts) and parts[k + 1].partition("=")[0].strip().lower() not in types:
                k += 1
                value += "," + parts[k]
        try:
            out[key] = types[key](value.strip())
        except ValueError:
            article = "an" if types[key].__name__[0] in "aeiou" else "a"
            raise ValueError(f"{kind}: option {key}={value.strip()!r} is not {article} {types[key].__name__}; options: {known}") from None
        k += 1
    return out
