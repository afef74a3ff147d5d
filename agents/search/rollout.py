"""Rollouts of search agents: a world's hand played out to its end by a fixed policy, valued by
the game's own scoring."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from whist_env.envs.encoding import mask_to_int8
from whist_env.envs.policy_action import policy_action
from whist_env.envs.policy_protocols import reads_mask_only


def side_value(game: Any, seat: int) -> float:
    """The points of the last finished hand (``game.last_hand_points``, per side) of ``seat``'s
    side minus the mean of the other sides' (RULES.md scoring of each game, exact bids
    included)."""
    points = game.last_hand_points
    side = game.side_of(seat)
    others = [p for s, p in enumerate(points) if s != side]
    return float(points[side] - (sum(others) / len(others) if others else 0.0))


def hand_over(game: Any, hand: int) -> bool:
    """Whether hand number ``hand`` of ``game`` (a rules object) has ended (or the game has)."""
    return game.done or game.truncated or game.hand_number != hand


class Rollout:
    """Plays a world's hand to its end with ``policy`` in every seat.

    A policy that reads only the action mask of its observation (``uses_observation_vector =
    False``: the rule-based and random agents) is stepped on the rules object alone, skipping
    the observation encoding and the environment's bookkeeping; any other policy (a neural
    agent) through the environment, as in a match. A greedy policy with ``act_batch`` (a policy
    network, :class:`agents.learned.neural.NeuralAgent` with ``greedy=True``) plays many rollouts
    in lockstep in :meth:`values`, one forward pass for all of them at each step.

    Args:
        policy: an agent acting from its own observation and information state (not a search
            agent).
    """

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.mask_only = reads_mask_only(policy)
        # a greedy network's choices are its argmax: the same batched as one by one
        self.batched = not self.mask_only and getattr(policy, "greedy", False) is True and callable(getattr(policy, "act_batch", None))

    def values(self, worlds: Sequence[Any], seat: int, actions: Sequence[int]) -> np.ndarray:
        """:meth:`value` of ``seat`` for every world and action: float64 ``(len(worlds),
        len(actions))``, entry ``[i, j]`` the value once ``actions[j]`` and then the policy have
        played ``worlds[i]``'s hand to its end (each world a raw env, left untouched). Equal to
        calling :meth:`value` for each pair; a greedy policy network plays them all in lockstep."""
        if not self.batched:
            return np.array([[self.value(world, seat, int(a)) for a in actions] for world in worlds], dtype=float).reshape(len(worlds), len(actions))
        plays, hands = [], []
        for world in worlds:
            for a in actions:
                copy = world.clone()
                copy.step(int(a))
                plays.append(copy)
                hands.append(world.game.hand_number)
        while live := [copy for copy, hand in zip(plays, hands) if not hand_over(copy.game, hand)]:
            for copy, action in zip(live, self.policy.act_batch([copy.observe(copy.agent_selection) for copy in live])):
                copy.step(int(action))
        out = np.array([side_value(copy.game, seat) for copy in plays], dtype=float)
        return out.reshape(len(worlds), len(actions))

    def value(self, env: Any, seat: int, action: int | None = None) -> float:
        """:func:`side_value` of ``seat`` once ``action`` (if given) and then the policy have
        played ``env``'s hand (a raw env: a world, never the real table) to its end; ``env`` is
        left untouched."""
        return side_value(self.final(env, action), seat)

    def final(self, env: Any, action: int | None = None) -> Any:
        """The rules object (``TrickTakingGame``) of a copy of ``env`` (a raw env: a world,
        never the real table) once ``action`` (if given) and then the policy in every seat have
        played its hand to the end; ``env`` is left untouched."""
        if self.mask_only:
            game = env.game.clone()
            hand = game.hand_number
            if action is not None:
                game.apply(action)
            act, n = self.policy.act, game.num_actions
            while not hand_over(game, hand):
                player = game.current_player
                game.apply(act({"action_mask": mask_to_int8(game.legal_actions(), n)}, game.information_state(player)))
            return game
        world = env.clone()
        hand = world.game.hand_number
        if action is not None:
            world.step(action)
        game = world.game
        while not hand_over(game, hand):
            world.step(policy_action(self.policy, world, world.agent_selection))
        return game
