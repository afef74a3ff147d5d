"""The uniform random baseline (DESIGN.md ``agents/``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


class RandomAgent:
    """Plays a legal action drawn uniformly from the observation's ``action_mask``.

    Works for every game and every phase (bids, discards, card play): it reads only the mask.

    Args:
        seed: seed of its own ``numpy.random.Generator`` (``None``: fresh entropy), so a run
            with a fixed seed is reproducible.
    """

    name = "random"
    #: It reads only the observation's action mask (search rollouts may skip the encoding;
    #: :class:`agents.base.ObservationUse`).
    uses_observation_vector = False
    #: Every legal action is equally likely whatever it observes (:class:`agents.base.UniformChoice`).
    chooses_uniformly = True

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        """Restart its generator from ``seed`` (matches do so before every play, so that a play
        does not depend on the plays before it; :class:`agents.base.Reseedable`)."""
        self.rng = np.random.default_rng(seed)

    def random_state(self) -> dict[str, Any]:
        """Its generator's state (:class:`agents.base.RandomState`)."""
        return {"rng": self.rng.bit_generator.state}

    def set_random_state(self, state: Mapping[str, Any]) -> None:
        """Restore a state of :meth:`random_state`."""
        self.rng.bit_generator.state = dict(state["rng"])

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """A uniformly drawn legal action id.

        Args:
            observation: ``{"observation": float32 (D,), "action_mask": int8 (A,)}``.
            info_state: ignored.
        Returns:
            an ``int`` action id whose mask entry is 1.
        Raises:
            ValueError: when the mask has no legal action (the agent is not to act).
        """
        legal = np.flatnonzero(np.asarray(observation["action_mask"]))
        if legal.size == 0:
            raise ValueError("RandomAgent.act: the action mask has no legal action")
        return int(legal[self.rng.integers(legal.size)])

    def __repr__(self) -> str:
        return "RandomAgent()"
