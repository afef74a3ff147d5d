"""αμ search (Cazenave and Ventos, "The αμ Search Algorithm for the Game of Bridge", 2020): PIMC
without strategy fusion over the agent's next ``depth`` moves.

PIMC values a card in each world as if the agent will know that world's hidden cards at its next
decisions: it may take a finesse one way in one world and the other way in another, a plan it
cannot follow, since it will not know which world it is in (strategy fusion; Frank and Basin
1998). αμ searches the worlds together. At each of the agent's own moves (a *Max* node) it plays
one card in every world the node holds, as it must; the other seats play as the double-dummy
search lets them, a card per world (they are taken to know the world, as in PIMC). A node's
value is a **Pareto front**: a set of vectors, one entry per world, each the outcome of one plan
of the agent's from that node (the tricks its side takes from the decision's trick on, negated
where it wants few), keeping only the plans no other plan beats in every world:

* a Max node's front is the union of its moves' fronts, reduced to the non-dominated vectors;
* at another seat's node each card is legal in some of the node's worlds only; the seat picks a
  card per world, so the front is the product of the cards' fronts, entry by entry the least
  (an opponent) or the most (a partner), over each world's legal cards, then reduced;
* after ``depth`` moves of the agent (or at the end of the hand) each world is solved double
  dummy with the compiled solver (the last Max node values all its cards at once,
  :meth:`~whist_env.engine.compiled_double_dummy.CompiledDoubleDummySolver.card_values`).

The agent plays the root move whose front holds the vector of the best mean over the worlds
(worlds drawn twice count twice); among equal means the ``rollout`` policy's choice if it is
one of them, else the lowest action id. ``depth=1`` is PIMC's exact solve, move for move.

The front grows with the other seats' branching in every world, so αμ runs only once at most
``horizon`` tricks remain in a hand whose tricks the side simply wants many or few of (the game's
``"solve"`` decisions, ``trick_objective`` not 0); every other decision is ``pimc``'s with the same
worlds, exactness, rollouts, ``z`` and rollout policy.

Simplifications against the paper, both on the side of cost: no transposition table and no
early cut at the root (the search is exact for its model, only slower).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.search.base import PolicyFactory, SearchAgent
from agents.search.pimc import VALUES_TRICKS, PIMCAgent, _exact_option
from agents.search.solving import solver_applies, solver_of
from agents.search.spec import check_int, check_real
from whist_env import games
from whist_env.engine.cards import cards_of


def pareto_front(vectors: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """The non-dominated rows of ``vectors`` on ``columns``.

    Args:
        vectors: float ``(n, W)``: outcome vectors, one entry per world.
        columns: bool ``(W,)``: the worlds that count (the node's); other entries are ignored.
    Returns:
        float ``(m, W)``, ``m <= n``: each distinct row (on ``columns``) that no other row equals
        or beats in every counted world, in order of decreasing sum over ``columns``.
    """
    if len(vectors) <= 1:
        return vectors
    counted = vectors[:, columns]
    _, first = np.unique(counted, axis=0, return_index=True)
    rows = vectors[first]
    counted = rows[:, columns]
    order = np.argsort(-counted.sum(axis=1), kind="stable")
    kept: list[int] = []
    for i in order:
        if not any(np.all(counted[k] >= counted[i]) for k in kept):
            kept.append(int(i))
    return rows[kept]


def front_product(front: np.ndarray, child: np.ndarray, columns: np.ndarray, least: bool) -> np.ndarray:
    """Every pairing of a row of ``front`` with a row of ``child``, combined entry by entry on
    ``columns`` (the child's worlds) by the least (``least``) or the most, ``front``'s entries kept
    elsewhere: float ``(len(front) * len(child), W)``."""
    out = np.repeat(front, len(child), axis=0)
    paired = np.tile(child[:, columns], (len(front), 1))
    out[:, columns] = np.minimum(out[:, columns], paired) if least else np.maximum(out[:, columns], paired)
    return out


def card_classes(ctx: Any, legal: int, live: int) -> list[tuple[int, int]]:
    """The classes of equivalent cards of ``legal`` (DDS's equivalent cards): a run of one ranking
    group's legal cards with no other ``live`` card between them plays alike in every line, so one
    card per class is searched. A suitless or super card is a class of its own.

    Args:
        ctx: the hand's ``whist_env.engine.tricks.TrickContext`` (effective suits, power, super
            cards).
        legal: the seat's legal cards (a bitmask).
        live: every card not yet played to an earlier trick (all hands and the current trick's
            cards); for a class that must hold in several worlds, those of all of them.
    Returns:
        ``(card, class)`` pairs: the class's strongest card and its bitmask, the classes covering
        ``legal``.
    """
    out: list[tuple[int, int]] = []
    supers = ctx.super_mask
    for suit in range(4):
        rep, group = -1, 0
        for c in sorted(cards_of(live & ctx.suit_masks[suit] & ~supers), key=lambda c: -ctx.power[c]):
            if legal >> c & 1:
                rep = c if rep < 0 else rep
                group |= 1 << c
            elif rep >= 0:
                out.append((rep, group))
                rep, group = -1, 0
        if rep >= 0:
            out.append((rep, group))
    suited = ctx.suit_masks[0] | ctx.suit_masks[1] | ctx.suit_masks[2] | ctx.suit_masks[3]
    out.extend((c, 1 << c) for c in cards_of((legal & ~suited) | (legal & supers)))
    return out


def _live(*worlds: Any) -> int:
    """The cards not yet played to an earlier trick, held in any of ``worlds`` (rules objects at
    the same public position): their hands and the current trick's cards. A hidden discard (Bid
    Whist's kitty) is live in the worlds whose hands hold it."""
    live = 0
    for game in worlds:
        for hand in game.hands:
            live |= hand
    for _, card in worlds[0].trick:
        live |= 1 << card
    return live


class AlphaMuAgent(SearchAgent):
    """αμ search for one game (see the module docstring).

    Args:
        game: the game's name (a key of ``whist_env.GAMES``).
        depth: the agent's moves searched together (M >= 1; 1: PIMC's choice).
        worlds: worlds sampled per decision (W >= 1), here and in the ``pimc`` it falls back to
            (default 32, as ``pimc``'s: the two differ only where αμ searches).
        horizon: αμ once at most this many tricks remain (>= 1), and no more than ``pimc``
            solves (``exact``); else ``pimc``.
        exact, rollouts, z, rollout: those of the ``pimc`` it falls back to
            (:class:`agents.search.pimc.PIMCAgent`); ``rollout`` also breaks αμ's ties.
        seed: seed (>= 0) of the worlds' generators, ``None`` for fresh entropy; matches reseed
            it before every play (:meth:`reseed`).
        make_policy: builds the policies, ``make_policy(spec, game, seed)``
            (:func:`agents.registry.make_agent`).
    Attributes:
        last_values: the best mean of every legal action's front at the last αμ decision (float32
            ``(A,)``, NaN elsewhere), or ``pimc``'s values where it decided; ``None`` where the
            last decision was forced or the heuristic's.
        last_fronts: action -> its front (float ``(m, W)``) at the last αμ decision.
    Raises:
        ValueError: ``depth < 1``, ``worlds < 1``, ``horizon < 1``, or an option ``pimc`` refuses.
    """

    KIND = "alphamu"
    #: Options of the spec ``alphamu:k=v,...`` and their converters.
    OPTIONS = {"depth": int, "worlds": int, "horizon": int, "exact": _exact_option, "rollouts": int, "z": float,
               "rollout": str, "seed": int}

    def __init__(self, game: str, depth: int = 2, worlds: int = 32, horizon: int = 3, exact: int | str | None = None,
                 rollouts: int = 48, z: float = 1.0, rollout: str = "heuristic", seed: int | None = None, *,
                 make_policy: PolicyFactory) -> None:
        self.depth = check_int("alphamu", "depth", depth, 1)
        self.worlds = check_int("alphamu", "worlds", worlds, 1)
        self.horizon = check_int("alphamu", "horizon", horizon, 1)
        check_real("alphamu", "z", z, 0.0)
        self.pimc = PIMCAgent(game, worlds=worlds, exact=exact, rollouts=rollouts, z=z, rollout=rollout,
                              seed=None if seed is None else seed + 3, make_policy=make_policy)
        self._start_search(game, rollout, seed, make_policy)
        self.game_spec = games.spec(game)
        self.name = f"alphamu:depth={self.depth},worlds={self.worlds},horizon={self.horizon}," + self.pimc.name.partition(",")[2]
        self.last_values: np.ndarray | None = None
        self.last_values_kind = VALUES_TRICKS
        self.last_fronts: dict[int, np.ndarray] = {}

    def reseed(self, seed: int) -> None:
        """Restart its generators and its ``pimc``'s from ``seed``."""
        super().reseed(seed)
        self.pimc.reseed(int(np.random.SeedSequence(seed).generate_state(4)[3]))

    def random_state(self) -> dict[str, Any]:
        """The state of its generators and of its ``pimc``'s (:class:`agents.base.RandomState`)."""
        return {**super().random_state(), "pimc": self.pimc.random_state()}

    def set_random_state(self, state: Mapping[str, Any]) -> None:
        """Restore a state of :meth:`random_state`."""
        super().set_random_state(state)
        self.pimc.set_random_state(state["pimc"])

    def act_in_env(self, env: Any, agent: str) -> int:
        """The chosen action of ``agent``, the agent to act at ``env`` (a raw environment).

        Reads ``agent``'s observation and information state and worlds drawn by
        ``env.resample_from_infostate``; never ``env``'s hidden cards.
        """
        observation = env.observe(agent)
        legal = self._legal(env, agent, observation)
        self.last_values, self.last_fronts = None, {}
        if len(legal) == 1:
            return int(legal[0])
        info = env.information_state(agent)
        seat = env.possible_agents.index(agent)
        tricks_left = len(info["hand"]) + (1 if info["trick"] else 0)
        searched = (self.game_spec.decision(info["phase"]).search == "solve" and env.game.trick_objective(seat) != 0
                    and solver_applies(env.game))
        if not (searched and tricks_left <= min(self.horizon, self.pimc._exact_limit())):
            action = self.pimc.act_in_env(env, agent)
            self.last_values, self.last_values_kind = self.pimc.last_values, self.pimc.last_values_kind
            return action
        drawn = [env.resample_from_infostate(agent, self.rng).game for _ in range(self.worlds)]
        self.last_fronts = self.root_fronts(drawn, seat, legal)
        means = np.array([self._best_mean(self.last_fronts[int(a)]) for a in legal])
        values = np.full(len(observation["action_mask"]), np.nan, dtype=np.float32)
        values[legal] = means
        self.last_values, self.last_values_kind = values, VALUES_TRICKS
        best = legal[means >= means.max() - 1e-9]
        choice = int(self.rollout.policy.act(observation, info))
        return choice if choice in best else int(best[0])

    @staticmethod
    def _best_mean(front: np.ndarray) -> float:
        return float(front.mean(axis=1).max())

    def root_fronts(self, worlds: Sequence[Any], seat: int, legal: Sequence[int]) -> dict[int, np.ndarray]:
        """The front of each of ``legal`` (the root's moves) over ``worlds``.

        Args:
            worlds: rules objects (``TrickTakingGame``) with every hand known, all at the same
                decision of ``seat`` (its hand and the public history alike); left untouched.
            seat: the seat to play.
            legal: its legal cards (the same in every world).
        Returns:
            action -> float ``(m, W)``: the non-dominated outcome vectors of that move, each
            entry the tricks ``seat``'s side takes in that world from the current trick on
            (negated where it wants few).
        """
        objective = worlds[0].trick_objective(seat)
        search = _Search(seat, worlds[0].side_of(seat), objective, len(worlds), solver_of(worlds[0]))
        fronts = search.agent_fronts([(w, game, 0) for w, game in enumerate(worlds)], self.depth)
        out = {}
        for card, group in card_classes(worlds[0].ctx, worlds[0].legal_actions(), _live(*worlds)):
            out.update({a: fronts[card] for a in cards_of(group)})
        return {int(a): out[int(a)] for a in legal}


class _Search:
    """One αμ decision: the root seat, its side and objective (1 or -1), the number of worlds, the
    hand's double-dummy solver (the same in every world: the trump, the seating and the deck are
    public). A node's worlds are ``states``: ``(world index, rules object, the side's tricks since the
    decision times the objective)``, all at the same public position."""

    def __init__(self, seat: int, side: int, objective: int, width: int, solver: Any) -> None:
        self.seat, self.side, self.objective, self.width, self.solver = seat, side, objective, width, solver

    def columns(self, states: Sequence[tuple[int, Any, int]]) -> np.ndarray:
        mask = np.zeros(self.width, dtype=bool)
        mask[[w for w, _, _ in states]] = True
        return mask

    def agent_fronts(self, states: Sequence[tuple[int, Any, int]], moves_left: int) -> dict[int, np.ndarray]:
        """The front of each class of the agent's equivalent cards (its strongest card) at one of
        its nodes, ``moves_left`` of its moves to search (this one included): solved in every
        world at the last."""
        first = states[0][1]
        legal = [card for card, _ in card_classes(first.ctx, first.legal_actions(), _live(*(game for _, game, _ in states)))]
        if moves_left > 1:
            return {a: self.after_move(states, a, moves_left - 1) for a in legal}
        out = {a: np.zeros((1, self.width)) for a in legal}
        for w, game, gained in states:
            values = self.solver.card_values(game.hands, game.leader, game.trick, misere=self.objective < 0)
            for a in legal:
                out[a][0, w] = gained + self.objective * values[a]
        return out

    def after_move(self, states: Sequence[tuple[int, Any, int]], action: int, moves_left: int) -> np.ndarray:
        """The front once ``action`` is played in each of ``states``, ``moves_left`` of the
        agent's moves still to search."""
        children = []
        ended = False
        for w, game, gained in states:
            child = game.clone()
            outcome = child.apply(action)
            if outcome.last_trick is not None and child.side_of(outcome.last_trick["winner"]) == self.side:
                gained += self.objective
            ended = outcome.hand_points is not None or child.done or child.truncated
            children.append((w, child, gained))
        if ended:  # the hand's last trick: every world ends it together
            out = np.zeros((1, self.width))
            for w, _, gained in children:
                out[0, w] = gained
            return out
        return self.node(children, moves_left)

    def node(self, states: Sequence[tuple[int, Any, int]], moves_left: int) -> np.ndarray:
        """The front of a node: the union of the agent's cards' fronts at its own node; at another
        seat's, the product of its cards' fronts, each card in the worlds where it is legal."""
        columns = self.columns(states)
        player = states[0][1].current_player
        if player == self.seat:
            return pareto_front(np.concatenate(list(self.agent_fronts(states, moves_left).values())), columns)
        least = states[0][1].side_of(player) != self.side
        front = np.full((1, self.width), np.inf if least else -np.inf)
        by_card: dict[int, list[tuple[int, Any, int]]] = {}
        for state in states:  # the seat knows its world: its classes are that world's
            for card, _ in card_classes(state[1].ctx, state[1].legal_actions(), _live(state[1])):
                by_card.setdefault(card, []).append(state)
        for card, subset in by_card.items():
            child = self.after_move(subset, card, moves_left)
            front = pareto_front(front_product(front, child, self.columns(subset), least), columns)
        return front
