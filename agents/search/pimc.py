"""Perfect Information Monte Carlo (PIMC): sample worlds, solve each with every card open, play
the best average (GIB and Ben in bridge; Long et al., AAAI 2010, on why it works in trick-taking
games).

Every decision draws ``worlds`` deals consistent with what the agent knows
(``env.resample_from_infostate(agent, rng)``), or fewer where its actions are valued by rollouts:
at most ``rollouts`` rollouts a decision (``rollouts // legal actions`` worlds, at least one), so
that a lead from 13 cards costs no more than a choice between 2. Worlds that come out identical
(e.g. German Whist once the stock is gone, when every card is known) are valued once.

**Card play.** In each world every legal card is valued

* **exactly**, once at most ``exact`` tricks remain in a hand whose tricks the side simply wants
  many or few of (``trick_objective``: not Romanian Whist's exact bids) and whose stock is
  exhausted: the double-dummy tricks of its side from the current trick on
  (``agents.search.solving``: DDS for Classic and Minnesota High, the project's solver
  otherwise; fewest tricks best in Minnesota Low);
* else by a **rollout**: the card, then the ``rollout`` policy in every seat to the end of the
  hand; the value is the hand's points of the agent's side minus the mean of the other sides'
  (the game's own scoring, exact bids included; :func:`agents.search.rollout.side_value`).

The card with the best mean value is played when the cards are valued exactly; among equal
values (double-dummy trick counts tie often) the ``rollout`` policy's own choice if it is one of
them, else the lowest action id. Where actions are valued by rollouts (one playout a world,
a few worlds a decision) the best mean is mostly the luckiest: the agent plays the ``rollout``
policy's own choice unless another action beats it, on the paired differences over the same
worlds, by more than ``z`` standard errors (default 1; ``z=0``: the best mean). Without this, in
Bid Whist, the best-mean discards (18 candidates, 2 worlds each) and declarations lost 1.4
points a hand against the heuristic's own (50 duplicate deals, card play by the heuristic).

**Exact bids** (Romanian Whist). In each world the agent's tricks are counted: double dummy with
every other player against it once the hand has at most ``exact`` cards, else by a rollout of the
``rollout`` policy (its own bid included). The agent bids the count most often seen that the
hook rule allows; ties go to the best mean deal score (RULES.md §5.7, streaks left out) over the
worlds, then to the lowest bid.

**The Bid Whist auction.** In each world one rollout follows a pass and one each mode's lowest
legal bid (its probe); where the probe becomes the contract, every level of that mode is valued
by the books that rollout made (``contract_points``: made or set, doubled in no-trump, Boston),
else by the rollout's points. Levels of a mode share their sample, so a higher level is never
chosen for its own luck; the call is then chosen as rollout-valued cards are (``z``).

**Other decisions** (Bid Whist kitty discards and declaration): each legal action is valued by
rollouts over the worlds, as cards are before the exact solve (a discard greedily, card by
card). Minnesota Whist's bid cards fall back to the game's rule-based heuristic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.search.base import PolicyFactory, SearchAgent
from agents.search.rollout import side_value
from agents.search.solving import card_values, dds_serves, solved_tricks
from agents.search.spec import check_int, check_real
from whist_env.rules.base import PLAY
from whist_env.rules.bid_whist import PASS, bid_of
from whist_env.rules.romanian import deal_points


def _exact_option(text: str) -> int | None:
    """``exact=`` of a spec: an int, or ``auto`` (``None``)."""
    return None if text.strip().lower() == "auto" else int(text)


_exact_option.label = "int or auto"  # type: ignore[attr-defined]

#: ``exact`` when not given: where the project's solver serves (DDS solves any size).
SOLVER_EXACT = 4
#: Decisions left to the rule-based heuristic, by game and phase.
HEURISTIC_PHASES = {"minnesota_whist": ("bid_card",)}


class PIMCAgent(SearchAgent):
    """PIMC search for one game (see the module docstring).

    Args:
        game: the game's name (a key of ``whist_env.GAMES``).
        worlds: worlds sampled per decision (K >= 1).
        exact: solve exactly once at most this many tricks remain (0: never); ``None`` or
            ``"auto"``: every hand DDS serves (Classic, Minnesota High: a few ms a world at any
            size), else
            :data:`SOLVER_EXACT`. The project's solver takes about 0.1 s a world at 5 tricks
            and grows about 5x per trick (keep ``exact`` <= 6 there).
        rollouts: at most this many rollouts a decision where actions are valued by rollouts
            (0: no limit, ``worlds`` worlds always).
        z: where actions are valued by rollouts, leave the rollout policy's choice only for a
            mean gain over it of more than ``z`` standard errors (>= 0; 0: the best mean).
        rollout: agent spec of the policy that plays out the hand before that (not a search
            agent).
        seed: seed (>= 0) of the agent's random generator (worlds), ``None`` for fresh entropy.
            Matches (``whist eval``, ``whist league``) reseed it before every play from the
            match seed, the deal and the side (:meth:`reseed`).
        make_policy: builds the rollout policy (and a fallback) from an agent spec,
            ``make_policy(spec, game, seed)``: :func:`agents.registry.make_agent`.
    Raises:
        ValueError: an option that is not an int (``exact``: or ``"auto"``), ``worlds < 1``,
            ``exact < 0``, ``rollouts < 0``, ``z`` negative or not finite, ``seed < 0``, a bad rollout spec or a search agent
            as the rollout policy.
    """

    KIND = "pimc"
    #: Options of the spec ``pimc:k=v,...`` and their converters.
    OPTIONS = {"worlds": int, "exact": _exact_option, "rollouts": int, "z": float, "rollout": str, "seed": int}

    def __init__(self, game: str, worlds: int = 8, exact: int | str | None = None, rollouts: int = 48,
                 z: float = 1.0, rollout: str = "heuristic", seed: int | None = None, *,
                 make_policy: PolicyFactory) -> None:
        worlds = check_int("pimc", "worlds", worlds, 1)
        if isinstance(exact, str) and exact.strip().lower() == "auto":
            exact = None
        exact = None if exact is None else check_int("pimc", "exact (an int or 'auto')", exact, 0)
        rollouts = check_int("pimc", "rollouts", rollouts, 0)
        z = check_real("pimc", "z", z, 0.0)
        self.game, self.worlds, self.exact, self.rollouts, self.z = game, worlds, exact, rollouts, z
        self._start_search(game, rollout, seed, make_policy)
        self.fallback = make_policy("heuristic", game, None)
        self.heuristic_phases = HEURISTIC_PHASES.get(game, ())
        self.name = f"pimc:worlds={self.worlds},exact={'auto' if exact is None else exact},rollouts={self.rollouts},z={self.z:g},rollout={rollout}"

    def act_in_env(self, env: Any, agent: str) -> int:
        """The chosen action of ``agent``, the agent to act at ``env`` (a raw environment).

        Reads ``agent``'s observation and information state, and worlds drawn by
        ``env.resample_from_infostate``; never ``env``'s hidden cards.
        """
        observation = env.observe(agent)
        legal = self._legal(env, agent, observation)
        if len(legal) == 1:
            return int(legal[0])
        info = env.information_state(agent)
        phase = info["phase"]
        if phase in self.heuristic_phases:
            return int(self.fallback.act(observation, info))
        rules = type(env.game)
        if phase == "auction" and hasattr(env.game, "contract_points"):
            return self._contract_bid(env, agent, legal, observation, info)
        if phase in rules.BIDDING_PHASES and env.game.trick_objective(env.possible_agents.index(agent)) == 0:
            return self._exact_bid(env, agent, legal)
        tricks_left = len(info["hand"]) + (1 if info["trick"] else 0)
        card_play = phase in rules.CARD_PLAY_PHASES
        exact = card_play and self._solves(env.game, env.possible_agents.index(agent), tricks_left)
        worlds = self.worlds if exact else self._rollout_worlds(len(legal))
        rows = []
        memo: dict[tuple, np.ndarray] = {}
        for _ in range(worlds):
            world = env.resample_from_infostate(agent, self.rng)
            key = (tuple(world.game.hands), tuple(world.game.hidden_card_sets()))
            if key not in memo:
                memo[key] = self._values(world, legal, exact)
            rows.append(memo[key])
        return self._best(np.array(rows), legal, observation, info, 0.0 if exact else self.z)

    def _rollout_worlds(self, choices: int) -> int:
        """Worlds of a decision between ``choices`` options valued by rollouts: ``worlds``, at
        most ``rollouts // choices`` (at least 1) under a rollout budget."""
        return min(self.worlds, max(1, self.rollouts // choices)) if self.rollouts else self.worlds

    def _best(self, values: np.ndarray, legal: np.ndarray, observation: Mapping[str, np.ndarray],
              info: Mapping[str, Any], z: float) -> int:
        """The legal action to play from ``values`` (float [worlds, len(legal)]).

        The rollout policy's own choice, unless another action beats it on average over the
        worlds by more than ``z`` standard errors of the paired differences (the worlds are
        shared by all actions; ``z > 0`` needs at least 2 worlds to leave the policy's choice);
        then the best such action by mean, the lowest id among equals. With ``z = 0`` this is
        the best mean, ties to the policy's choice.
        """
        choice = int(self.rollout.policy.act(observation, info))
        mine = np.flatnonzero(legal == choice)
        if len(mine) == 0:
            means = values.mean(axis=0)
            return int(legal[np.flatnonzero(means >= means.max())[0]])
        gains = values - values[:, mine[0]][:, None]
        mean = gains.mean(axis=0)
        if z > 0:
            n = len(values)
            if n < 2:
                return choice
            spread = gains.std(axis=0, ddof=1) / np.sqrt(n)
            mean = np.where(mean > z * spread, mean, 0.0)
        if mean.max() <= 0:
            return choice
        return int(legal[np.flatnonzero(mean >= mean.max())[0]])

    def _solves(self, game: Any, seat: int, tricks_left: int) -> bool:
        """Whether a card-play decision of ``seat`` is valued double dummy (from public facts:
        the phase, the ranking, the objective and the tricks left)."""
        objective = game.trick_objective(seat)
        return objective != 0 and game.phase == PLAY and tricks_left <= self._exact_limit(game, objective < 0)

    def _exact_limit(self, game: Any, misere: bool) -> float:
        if self.exact is not None:
            return self.exact
        return float("inf") if dds_serves(game, misere) else SOLVER_EXACT

    def _values(self, world: Any, legal: np.ndarray, exact: bool) -> np.ndarray:
        """Value of each legal action in ``world``: exact tricks or the rollouts' points."""
        game = world.game
        seat = game.current_player
        if exact:
            objective = game.trick_objective(seat)
            values = card_values(game, misere=objective < 0)
            return np.array([objective * values[int(a)] for a in legal], dtype=float)
        return np.array([self.rollout.value(world, seat, int(a)) for a in legal])

    def _exact_bid(self, env: Any, agent: str, legal: np.ndarray) -> int:
        """The bid of the most often seen trick count that is legal (module docstring)."""
        seat = env.possible_agents.index(agent)
        size = env.game.hands[seat].bit_count()
        bids = [int(env.game.action_label(int(a)).split(":")[1]) for a in legal]
        counts = np.zeros(len(legal))
        scores = np.zeros(len(legal))
        for _ in range(self.worlds):
            world = env.resample_from_infostate(agent, self.rng)
            if size <= self._exact_limit(world.game, False):
                took = solved_tricks(world.game, seat)
            else:
                took = self.rollout.final(world).last_hand[1][seat]
            counts += [b == took for b in bids]
            scores += [deal_points(b, took) for b in bids]
        best = max(range(len(legal)), key=lambda i: (counts[i], scores[i], -i))
        return int(legal[best])

    def _contract_bid(self, env: Any, agent: str, legal: np.ndarray, observation: Mapping[str, np.ndarray],
                      info: Mapping[str, Any]) -> int:
        """The call chosen by :meth:`_best` (gated by ``z``) from its values over the worlds (Bid
        Whist auction; module docstring).

        One rollout a world for a pass and one for each mode's lowest legal bid (the probe);
        where the probe becomes the contract, every level of its mode is valued by the books
        that rollout made (``contract_points``), else by the rollout's points. Every level of a
        mode shares the same sample, so a higher level is not chosen for its luck alone.
        """
        game = env.game
        seat = env.possible_agents.index(agent)
        side = game.side_of(seat)
        by_mode: dict[str | None, list[int]] = {}  # the legal calls by mode, None: pass
        for a in legal:
            by_mode.setdefault(None if a == PASS else bid_of(int(a))[1], []).append(int(a))
        column = {int(a): i for i, a in enumerate(legal)}
        worlds = self._rollout_worlds(len(by_mode))
        values = np.zeros((worlds, len(legal)))
        for w in range(worlds):
            world = env.resample_from_infostate(agent, self.rng)
            for mode, calls in by_mode.items():
                probe = min(calls)  # the lowest level: bid ids rise with the level within a mode
                final = self.rollout.final(world, probe)
                if mode is not None and final.last_contract[:3] == (seat, *bid_of(probe)):
                    for a in calls:
                        points = game.contract_points(side, bid_of(a)[0], mode, final.last_contract[3])
                        values[w, column[a]] = points[side] - points[1 - side]
                else:
                    values[w, [column[a] for a in calls]] = side_value(final, seat)
        return self._best(values, legal, observation, info, self.z)
