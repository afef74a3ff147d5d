"""Single-observer Information Set Monte Carlo Tree Search (SO-ISMCTS; Cowling, Powley and
Whitehouse, IEEE TCIAIG 2012; Whitehouse et al. used it in Spades).

One tree of action histories is grown from the acting agent's information set; every node is
an information set of the player to act there (who that is follows from the public history
alone in these games). Each iteration:

1. **determinise**: draw one world consistent with what the agent knows
   (``env.resample_from_infostate(agent, rng)``);
2. **select**: from the root, while every action legal *in this world* has a child, step the
   child maximising UCB1 with availability counts,
   ``Q / n + c * sqrt(ln(available) / n)``, ``Q`` being the player's own value (Q normalised
   by the span of the values seen so far in the search, so ``c`` is free of the game's points);
3. **expand**: step one untried legal action (drawn at random) and add its node;
4. **simulate**: the ``rollout`` policy in every seat to the end of the hand;
5. **back-propagate**: every node on the path gets the hand's value
   (:func:`agents.search.rollout.side_value`: the points of the side of the player who chose
   the node's action, minus the other sides' mean; the game's own scoring, exact bids included).

The tree covers the rest of the hand, every kind of decision alike: bids, the auction, discards,
declarations and card play; it uses only the env's public API, ``clone`` and
``resample_from_infostate``. The agent plays the root's most visited legal action (ties: the
lowest action id).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from agents.search.base import PolicyFactory, SearchAgent
from agents.search.rollout import hand_over, side_value
from agents.search.spec import check_int, check_real
from whist_env.envs.encoding import mask_to_int8


class _Node:
    """Statistics of one action history: ``visits``, ``total`` (sum of the values of the
    player whose action led here), ``available`` (iterations in which this action was legal
    while its parent was visited), and the children by action id."""

    __slots__ = ("visits", "total", "available", "children")

    def __init__(self) -> None:
        self.visits = 0
        self.total = 0.0
        self.available = 0
        self.children: dict[int, _Node] = {}


class ISMCTSAgent(SearchAgent):
    """SO-ISMCTS for one game (see the module docstring).

    Args:
        game: the game's name (a key of ``whist_env.GAMES``).
        iters: iterations (determinisations) per decision (>= 1).
        seconds: if > 0, also stop once this many seconds of wall time have passed, before
            ``iters`` iterations (for a pure time budget give a large ``iters``; the decision
            then depends on the machine's speed: leave 0 for reproducible runs).
        c: UCB1 exploration constant on values normalised to [0, 1] (>= 0).
        rollout: agent spec of the simulation policy (not a search agent).
        seed: seed (>= 0) of the agent's random generator (worlds, expansion order), ``None``
            for fresh entropy. Matches (``whist eval``, ``whist league``) reseed it before every
            play from the match seed, the deal and the side (:meth:`reseed`).
        make_policy: builds the rollout policy (and a fallback) from an agent spec,
            ``make_policy(spec, game, seed)``: :func:`agents.registry.make_agent`.
    Raises:
        ValueError: ``iters`` not an int >= 1, ``seconds`` or ``c`` not a finite number >= 0,
            ``seed < 0``, a bad rollout spec or a search agent as the rollout policy.
    """

    KIND = "ismcts"
    #: Options of the spec ``ismcts:k=v,...`` and their converters.
    OPTIONS = {"iters": int, "seconds": float, "c": float, "rollout": str, "seed": int}

    def __init__(self, game: str, iters: int = 200, seconds: float = 0.0, c: float = 0.7, rollout: str = "heuristic",
                 seed: int | None = None, *, make_policy: PolicyFactory) -> None:
        iters = check_int("ismcts", "iters", iters, 1)
        seconds = check_real("ismcts", "seconds", seconds, 0.0)
        c = check_real("ismcts", "c", c, 0.0)
        self.game, self.iters, self.seconds, self.c = game, iters, seconds, c
        self._start_search(game, rollout, seed, make_policy)
        self.name = f"ismcts:iters={self.iters},c={self.c:g},rollout={rollout}" + (f",seconds={self.seconds:g}" if self.seconds else "")

    def act_in_env(self, env: Any, agent: str) -> int:
        """The chosen action of ``agent``, the agent to act at ``env`` (a raw environment).

        Reads ``agent``'s observation and the worlds drawn by ``env.resample_from_infostate``;
        never ``env``'s hidden cards.
        """
        legal = self._legal(env, agent, env.observe(agent))
        if len(legal) == 1:
            return int(legal[0])
        root = _Node()
        self._span = [math.inf, -math.inf]
        deadline = time.perf_counter() + self.seconds if self.seconds else math.inf
        for _ in range(self.iters):
            self._iterate(root, env.resample_from_infostate(agent, self.rng))
            if time.perf_counter() >= deadline:
                break
        visits = [root.children[int(a)].visits if int(a) in root.children else -1 for a in legal]
        return int(legal[int(np.argmax(visits))])

    def _iterate(self, root: _Node, world: Any) -> None:
        """One determinised descent, expansion, rollout and back-propagation in ``world``."""
        game = world.game
        hand = game.hand_number
        node, path = root, []  # path: (node, seat whose action led to it)
        while not hand_over(game, hand):
            seat = game.current_player
            legal = np.flatnonzero(mask_to_int8(game.legal_actions(), game.num_actions))
            for a in legal:
                child = node.children.get(int(a))
                if child is not None:
                    child.available += 1
            untried = [int(a) for a in legal if int(a) not in node.children]
            if untried:
                action = untried[int(self.rng.integers(len(untried)))]
                node.children[action] = child = _Node()
                child.available = 1
                world.step(action)
                path.append((child, seat))
                break
            action = self._select(node, legal)
            world.step(action)
            node = node.children[action]
            path.append((node, seat))
        final = game if hand_over(game, hand) else self.rollout.final(world)
        values = {}
        for child, seat in path:
            side = final.side_of(seat)
            if side not in values:
                values[side] = side_value(final, seat)
            child.visits += 1
            child.total += values[side]
        if values:
            self._span[0] = min(self._span[0], *values.values())
            self._span[1] = max(self._span[1], *values.values())

    def _select(self, node: _Node, legal: np.ndarray) -> int:
        """The legal child maximising UCB1 with availability counts (ties: lowest action id)."""
        low, high = self._span
        scale = high - low if high > low else 1.0
        best, best_score = -1, -math.inf
        for a in legal:
            child = node.children[int(a)]
            score = (child.total / child.visits - low) / scale + self.c * math.sqrt(math.log(child.available) / child.visits)
            if score > best_score:
                best, best_score = int(a), score
        return best
