"""The policy protocol every agent implements (DESIGN.md ``agents/``).

An agent acts from what its seat may know: the observation dict of the environment
(``{"observation": float32 (D,), "action_mask": int8 (A,)}``) and, optionally, the
``information_state`` mapping of the raw env. It never reads the environment's private state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    """An agent that picks one legal action.

    ``act(observation, info_state)`` returns an action id whose ``observation["action_mask"]``
    entry is 1. ``info_state`` is ``raw_env.information_state(agent)`` for the acting agent
    (agents that only need the observation may ignore it). ``name`` labels the agent in tables.
    """

    name: str

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int: ...


@runtime_checkable
class RandomState(Protocol):
    """An agent whose choices draw random numbers and whose generators can be read and restored,
    so that a stopped training run in which it plays continues bit for bit.

    ``random_state()`` returns plain types only (dicts, lists, ints, str); ``set_random_state``
    takes what it returned.
    """

    def random_state(self) -> dict[str, Any]: ...

    def set_random_state(self, state: Mapping[str, Any]) -> None: ...

