"""The model zoo: one trained agent per game, shipped in the package (agent spec ``zoo:<game>``).

Each game's agent is two files in the package data folder ``agents/zoo/``: ``<game>.pt``, a whist-env checkpoint holding the
actor only (it loads with ``weights_only=True`` like every checkpoint, :mod:`agents.learned.checkpoint`),
and ``<game>.json``, its manifest: the training config, seed, commit, steps, wall time on the
machine that trained it and the evaluation table measured after training. Both are written by
``whist zoo-export RUN_DIR --out <this folder> --force`` from a finished ``whist train`` run (without
``--out`` it writes into ``RUN_DIR/zoo`` and leaves this folder alone).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: The folder of the shipped agents (package data of ``agents.zoo``).
ZOO_DIR = Path(__file__).resolve().parents[1] / "zoo"


def available() -> list[str]:
    """Games that have a zoo agent, sorted."""
    return sorted(p.stem for p in ZOO_DIR.glob("*.pt"))


def zoo_path(game: str) -> Path:
    """The checkpoint file of ``game``'s zoo agent.

    Raises:
        ValueError: the zoo holds no agent for ``game`` (the message lists the games it holds).
    """
    path = ZOO_DIR / f"{game}.pt"
    if not path.is_file():
        held = ", ".join(available()) or "none yet"
        raise ValueError(f"the model zoo holds no agent for {game!r} (it holds: {held})")
    return path


def manifest(game: str) -> dict[str, Any]:
    """The manifest of ``game``'s zoo agent (an empty dict when it has none).

    Raises:
        ValueError: the zoo holds no agent for ``game``.
    """
    path = zoo_path(game).with_suffix(".json")
    return json.loads(path.read_text()) if path.is_file() else {}
