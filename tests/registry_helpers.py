"""Test helpers over the game registry (whist_env.games): a game's descriptor replaced for one test."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pytest

from whist_env import games


def set_version(monkeypatch: pytest.MonkeyPatch, game: str, version: int, retired: Mapping[int, str] | None = None) -> games.GameSpec:
    """Make ``game``'s registered descriptor say its env is at ``version``, with ``retired``
    (retired version -> the release that retired it; none by default), as a real bump would
    (docs/versioning.md); ``monkeypatch`` puts the original back after the test.

    Only the descriptor changes: the env module, the PettingZoo and the Gymnasium registrations
    stay as they were. Returns the descriptor now registered.

    Raises:
        ValueError: ``game`` is not registered, or ``retired`` names a version not below ``version``.
    """
    replaced = dataclasses.replace(games.spec(game), version=version, retired=dict(retired or {}))
    monkeypatch.setitem(games._SPECS, game, replaced)
    return replaced
