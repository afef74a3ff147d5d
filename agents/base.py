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
