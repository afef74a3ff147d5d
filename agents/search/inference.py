"""Policy-based inference for search: weight sampled worlds by how likely a policy makes the
actions the other players took this hand (Rebstock, Solinas, Buro and Sturtevant, "Policy Based
Inference in Trick-Taking Card Games", IEEE CoG 2019).

:meth:`WorldWeights.log_weights` replays each world's hand from its deal (the world's
``current_deal()``, which :meth:`whist_env.rules.base.TrickTakingGame.resample` fills in from the
world's own cards) through the world's history of the hand
(:meth:`~whist_env.rules.base.TrickTakingGame.history`), and at every action of another player
asks the policy, from that player's observation and information state *in the replayed world*
(what it saw at that moment had the world been the table), how likely it was. The world's
weight is the product of those probabilities over the hand so far (bids, declarations and card
play); only the world is read, never the table's hidden cards.

A world's history is the table's public history with the world's own choices in place of the
ones the observer did not see (a Bid Whist kitty discard, Minnesota Whist's face-down bid card:
``public_history`` shows them as ``None``). Those are replayed as the world has them and not
weighted: the world holds those cards, but not the order in which they were chosen.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from whist_env.envs.encoding import mask_to_int8
from whist_env.envs.policy_protocols import ActionProbabilities, reads_mask_only


class ReplayError(ValueError):
    """A world's hand that does not replay from its deal through the table's actions (German
    Whist once a card has been drawn from the stock: a world does not rebuild the stock's
    order, see its ``_world_deal_extras``)."""


def softened_log_prob(chosen: bool, legal: int, epsilon: float) -> float:
    """Log-probability of an action under a deterministic policy softened by ``epsilon``:
    ``1 - epsilon`` for the policy's own choice, ``epsilon`` spread evenly over the other
    ``legal - 1`` legal actions; ``0.0`` (probability 1) when ``legal == 1``."""
    if legal <= 1:
        return 0.0
    return math.log1p(-epsilon) if chosen else math.log(epsilon / (legal - 1))


def effective_sample_size(log_weights: np.ndarray) -> float:
    """Kish's effective sample size ``(sum w)^2 / sum w^2`` of weights given as logs (float
    ``[n]``): ``n`` for equal weights, 1 when one world holds all the weight; ``n`` where no
    weight is finite (resampled as uniform, :func:`systematic_resample`)."""
    w = _relative_weights(log_weights)
    return float(w.sum() ** 2 / (w * w).sum())


def _relative_weights(log_weights: np.ndarray) -> np.ndarray:
    """Weights (float ``[n]``, the largest 1) of weights given as logs: all equal where no
    weight is finite, 0 for a weight that is not finite among finite ones."""
    logw = np.asarray(log_weights, dtype=float)
    top = np.max(logw) if len(logw) else -np.inf
    if not np.isfinite(top):
        return np.ones(len(logw))
    w = np.exp(logw - top)
    w[~np.isfinite(w)] = 0.0
    return w


def systematic_resample(log_weights: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """Indices (int64 ``[count]``, ascending) of ``count`` draws among ``len(log_weights)``
    candidates in proportion to their weights, by systematic resampling (one uniform draw of
    ``rng``; each candidate is drawn ``floor(count * p)`` or one more times, ``p`` its
    normalised weight). Weights that are all ``-inf`` or not finite count as equal."""
    w = _relative_weights(log_weights)
    total = w.sum()
    if not total > 0:  # every weight underflowed: uniform
        w, total = np.ones(len(w)), float(len(w))
    edges = np.cumsum(w / total)
    edges[-1] = 1.0
    points = (rng.random() + np.arange(count)) / count
    return np.searchsorted(edges, points, side="right").astype(np.int64)


class WorldWeights:
    """Weights worlds by the probability ``policy`` gives to the other players' actions of this
    hand (see the module docstring).

    Args:
        policy: an agent acting from its observation and information state (not a search
            agent). One with ``action_probabilities(observation, info_state) -> float [A]``
            is asked for its probabilities, floored at ``epsilon / (legal - 1)`` so that no
            world gets weight 0 (the project's networks, ``agents.learned.neural``: their
            softmax); any other (the rule-based players; SB3 and RLlib agents, whose ``act`` is
            their argmax) gets ``1 - epsilon`` for its own choice and ``epsilon`` spread over
            the other legal actions.
        epsilon: the softening, ``0 < epsilon < 1``.
    Raises:
        ValueError: ``epsilon`` not in (0, 1).
    """

    def __init__(self, policy: Any, epsilon: float) -> None:
        if not (isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool) and 0.0 < epsilon < 1.0):
            raise ValueError(f"epsilon must be a number with 0 < epsilon < 1, got {epsilon!r}")
        self.policy = policy
        self.epsilon = float(epsilon)
        # a policy reading only the mask is asked on the rules object, as rollouts are played
        self.mask_only = reads_mask_only(policy)
        self.probabilities: Callable[[Mapping[str, np.ndarray], Mapping[str, Any]], np.ndarray] | None = (
            policy.action_probabilities if isinstance(policy, ActionProbabilities) else None)

    def log_weights(self, worlds: Sequence[Any], observer: int) -> np.ndarray | None:
        """The log-weight (float64 ``[len(worlds)]``) of each world: the sum over this hand's
        actions of the players other than ``observer`` of the log-probability the policy gives
        them in that world (0 for a world of a hand without such actions).

        Args:
            worlds: raw envs drawn by ``env.resample_from_infostate(agent, rng)`` at one
                decision (the same point of the game, ``agent`` at seat ``observer``).
            observer: the seat whose knowledge the worlds keep; its own actions are replayed,
                not weighted.
        Returns:
            the log-weights, or ``None`` when a world's hand does not replay from its deal
            (:class:`ReplayError`): then no inference is possible at this decision.
        """
        out = np.zeros(len(worlds))
        try:
            for i, world in enumerate(worlds):
                out[i] = self._log_likelihood(world, observer)
        except ReplayError:
            return None
        return out

    def _log_likelihood(self, world: Any, observer: int) -> float:
        """The world's log-weight: its hand replayed from its deal through its history."""
        game = world.game
        history = game.history()
        if not history:
            return 0.0
        seen = game.public_history(observer)
        replay_env = None if self.mask_only else world.clone()
        replay = game.clone() if replay_env is None else replay_env.game
        try:
            replay.rewind_hand()
        except ValueError as err:
            raise ReplayError(f"the world's deal does not replay: {err}") from None
        truth = game.events
        total = 0.0
        for k, (seat, action) in enumerate(history):
            if replay.current_player != seat:
                raise ReplayError(f"action {k} of the hand: seat {seat} acted, the replay has {replay.current_player} to act")
            if seat != observer and seen[k][1] is not None:
                total += self._log_prob(replay, replay_env, seat, action)
            pos = len(replay.events)
            try:
                replay.apply(action)
            except ValueError as err:
                raise ReplayError(f"action {k} of the hand is illegal in the world: {err}") from None
            n = len(replay.events)
            if n > len(truth) or replay.events[pos:] != truth[pos:n]:
                raise ReplayError(f"action {k} of the hand gives other public events in the world")
        self._check_same(replay, game)
        return total

    def _log_prob(self, replay: Any, replay_env: Any, seat: int, action: int) -> float:
        """Log-probability of ``action`` by the policy at ``seat`` of ``replay`` (the rules object,
        or that of ``replay_env`` for a policy that reads the observation vector)."""
        mask = replay.legal_actions()
        legal = mask.bit_count()
        if legal <= 1:
            return 0.0
        if replay_env is None:
            observation = {"action_mask": mask_to_int8(mask, replay.num_actions)}
            info = replay.information_state(seat)
        else:
            agent = replay_env.possible_agents[seat]
            observation, info = replay_env.observe(agent), replay_env.information_state(agent)
        if self.probabilities is not None:
            p = float(np.asarray(self.probabilities(observation, info), dtype=float)[action])
            return math.log(max(p, self.epsilon / (legal - 1)))
        return softened_log_prob(int(self.policy.act(observation, info)) == action, legal, self.epsilon)

    @staticmethod
    def _check_same(replay: Any, game: Any) -> None:
        """Raise :class:`ReplayError` unless the replay reached the world's position: its hands,
        plays, trick, phase, player to act, events and every seat's public and private state."""
        def view(g: Any) -> tuple:
            return (g.hands, g.played, g.trick, g.tricks_won, g.phase, g.current_player, g.events,
                    dict(g.public_state()), [dict(g.private_state(s)) for s in range(g.num_players)])

        if view(replay) != view(game):
            raise ReplayError("the replayed hand does not reach the world's position")
