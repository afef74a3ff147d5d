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
  many or few of (``trick_objective``) and whose stock is exhausted: the double-dummy tricks of
  its side from the current trick on, by the compiled solver in every game
  (``agents.search.solving``; fewest tricks best in Minnesota Low). Romanian Whist's card play is
  never solved this way: its objective is an exact bid, not a trick count, so a double-dummy
  trick count would value overtricks as gains; its cards are valued by rollouts of the game's
  own scoring. German Whist's stock phase is valued by rollouts too (the cards it wins are drawn
  from the stock, not tricks); its play after the stock is solved whole, from its first trick;
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

**Policy-based inference** (``inference=SPEC``; Rebstock, Solinas, Buro and Sturtevant, "Policy
Based Inference in Trick-Taking Card Games", IEEE CoG 2019). The worlds above are uniform among
the deals consistent with the agent's knowledge: a bid or a card that only some hands would
have chosen moves nothing. With an inference policy every decision that draws worlds draws
``candidates`` times as many, weighs each by the probability the policy gives, in that world,
to every action the other players took this hand so far (bids, declarations and cards, each
replayed from the player's observation and information state in the world:
:mod:`agents.search.inference`), and keeps as many as it needs by systematic resampling in
proportion to the weights. A deterministic policy (the rule-based players; the learned agents,
whose ``act`` is their argmax) counts ``1 - epsilon`` for its own choice and ``epsilon`` spread
over the other legal actions. The kept worlds' effective sample size is at most the candidates'
(Kish's, :attr:`PIMCAgent.last_ess`): where the history is unlikely under most candidates a
few of them fill the decision. ``inference=none`` (the default) draws exactly the worlds it
drew before the option existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.search.base import PolicyFactory, SearchAgent
from agents.search.inference import WorldWeights, effective_sample_size, systematic_resample
from agents.search.rollout import side_value
from agents.search.solving import card_values, solved_tricks
from agents.search.spec import check_int, check_real
from whist_env.rules.base import PLAY
from whist_env.rules.bid_whist import PASS, bid_of
from whist_env.rules.romanian import deal_points

#: :attr:`PIMCAgent.last_values_kind`: values in tricks (double dummy) or in points (rollouts).
VALUES_TRICKS, VALUES_POINTS = 1, 2


def _exact_option(text: str) -> int | None:
    """``exact=`` of a spec: an int, or ``auto`` (``None``)."""
    return None if text.strip().lower() == "auto" else int(text)


_exact_option.label = "int or auto"  # type: ignore[attr-defined]

#: ``exact=auto`` of each game: the most tricks left at which the compiled solver values every
#: card of a world in about 0.03 s or less at the median on one core (``benchmarks/bench_solver.py``:
#: Classic 0.014 s at 8 tricks and 0.07 s at 9; Minnesota 0.010 s at 8, 0.11 s at 10; Bid Whist
#: 0.025 s at 9, 0.08 s at 10; Cutthroat 0.006 s at 10, 0.034 s at 11). German Whist's play after
#: the stock (13 tricks, 0.003 s) and Romanian Whist's hands (8 cards at most, for its bids) are
#: solved whole.
AUTO_EXACT = {"classic_whist": 8, "minnesota_whist": 8, "german_whist": 13, "romanian_whist": 8, "bid_whist": 9,
              "cutthroat_whist": 10}
#: ``exact=auto`` of a game :data:`AUTO_EXACT` does not list.
SOLVER_EXACT = 6
#: Decisions left to the rule-based heuristic, by game and phase.
HEURISTIC_PHASES = {"minnesota_whist": ("bid_card",)}


class PIMCAgent(SearchAgent):
    """PIMC search for one game (see the module docstring).

    Args:
        game: the game's name (a key of ``whist_env.GAMES``).
        worlds: worlds sampled per decision (K >= 1).
        exact: solve exactly once at most this many tricks remain (0: never); ``None`` or
            ``"auto"``: the game's :data:`AUTO_EXACT` (the whole hand where the compiled solver
            values a world in time: German Whist's play after the stock; see the table there).
        rollouts: at most this many rollouts a decision where actions are valued by rollouts
            (0: no limit, ``worlds`` worlds always).
        z: where actions are valued by rollouts, leave the rollout policy's choice only for a
            mean gain over it of more than ``z`` standard errors (>= 0; 0: the best mean).
        rollout: agent spec of the policy that plays out the hand before that (not a search
            agent).
        seed: seed (>= 0) of the agent's random generator (worlds), ``None`` for fresh entropy.
            Matches (``whist eval``, ``whist league``) reseed it before every play from the
            match seed, the deal and the side (:meth:`reseed`).
        make_policy: builds the rollout policy (and a fallback, and the inference policy) from
            an agent spec, ``make_policy(spec, game, seed)``: :func:`agents.registry.make_agent`.
        inference: agent spec of the policy whose probability of the other players' actions
            this hand weighs the worlds (module docstring; not a search agent; seeded
            ``seed + 2``), or ``"none"`` / ``None``: no inference (uniform worlds).
        candidates: with inference, worlds drawn per world kept (>= 1; the ``worlds`` of a
            decision, or its rollout-limited share, times this many).
        epsilon: with inference, the probability a deterministic policy leaves to the actions
            it would not choose (spread evenly over them), and the floor of a policy's own
            probabilities (``epsilon / (legal - 1)``); ``0 < epsilon < 1``.
    Attributes:
        last_ess: Kish's effective sample size (float, between 1 and the candidates drawn) of
            the candidate worlds' weights at the last decision that weighed them; ``None``
            before one, or where the hand did not replay.
        last_values, last_values_kind: the mean value of every legal action at the last
            decision that searched (teacher datasets store them: ``training.learn.teach``).
    Raises:
        ValueError: an option that is not an int (``exact``: or ``"auto"``), ``worlds < 1``,
            ``exact < 0``, ``rollouts < 0``, ``z`` negative or not finite, ``seed < 0``, a bad rollout spec or a search agent
            as the rollout policy; ``candidates < 1``, ``epsilon`` not in (0, 1), an inference
            spec that is not a string, a bad inference spec, ``random`` (every world alike) or a
            search agent as the inference policy.
    """

    KIND = "pimc"
    #: Options of the spec ``pimc:k=v,...`` and their converters.
    OPTIONS = {"worlds": int, "exact": _exact_option, "rollouts": int, "z": float, "rollout": str, "seed": int,
               "inference": str, "candidates": int, "epsilon": float}
    SPEC_OPTIONS = ("rollout", "inference")
    #: An option whose value turns it off, with the options that count only while it is on: a spec
    #: with it off names the player it named before the option existed
    #: (:func:`agents.registry.canonical_spec` leaves them all out).
    OFF_OPTIONS = {"inference": ("none", ("candidates", "epsilon"))}

    def __init__(self, game: str, worlds: int = 32, exact: int | str | None = None, rollouts: int = 48,
                 z: float = 1.0, rollout: str = "heuristic", seed: int | None = None, *,
                 make_policy: PolicyFactory, inference: str | None = "none", candidates: int = 4,
                 epsilon: float = 0.1) -> None:
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
        self.candidates = check_int("pimc", "candidates", candidates, 1)
        epsilon = check_real("pimc", "epsilon", epsilon, 0.0)
        if not 0.0 < epsilon < 1.0:
            raise ValueError(f"pimc: epsilon must be a number with 0 < epsilon < 1, got {epsilon!r}")
        self.epsilon = epsilon
        if inference is not None and not isinstance(inference, str):
            raise ValueError(f"pimc: inference must be an agent spec or 'none', got {inference!r}")
        self.inference_spec = None if inference is None or inference.strip().lower() == "none" else inference.strip()
        self.inference: WorldWeights | None = None
        #: Kish's effective sample size of the candidate worlds' weights at the last decision
        #: that weighed them (``None``: none yet, or the hand did not replay)
        self.last_ess: float | None = None
        #: the mean value over the worlds of every legal action at the last decision that
        #: searched (float32 ``(A,)``, NaN for the other actions; ``None``: the last decision
        #: was forced or left to the heuristic), in the units of :attr:`last_values_kind`
        self.last_values: np.ndarray | None = None
        #: :data:`VALUES_TRICKS` (tricks the side takes from the current trick on, negated
        #: where it wants few) or :data:`VALUES_POINTS` (the side's points, rollouts)
        self.last_values_kind = VALUES_POINTS
        if self.inference_spec is not None:
            policy = make_policy(self.inference_spec, game, None if seed is None else seed + 2)
            if getattr(policy, "name", None) == "random":
                raise ValueError("pimc: inference=random would weigh every world alike (a uniform policy gives every history "
                                 "the same probability): use inference=none")
            if hasattr(policy, "act_in_env"):
                raise ValueError(f"pimc: inference={self.inference_spec!r} is a search agent; the inference policy must act "
                                 "from its own observation (e.g. heuristic, zoo:GAME, checkpoint:PATH)")
            self.inference = WorldWeights(policy, epsilon)
            self.name += f",inference={self.inference_spec},candidates={self.candidates},epsilon={self.epsilon:g}"

    def act_in_env(self, env: Any, agent: str) -> int:
        """The chosen action of ``agent``, the agent to act at ``env`` (a raw environment).

        Reads ``agent``'s observation and information state, and worlds drawn by
        ``env.resample_from_infostate``; never ``env``'s hidden cards.
        """
        observation = env.observe(agent)
        legal = self._legal(env, agent, observation)
        self.last_values = None
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
        for world in self._draw_worlds(env, agent, worlds):
            key = (tuple(world.game.hands), tuple(world.game.hidden_card_sets()))
            if key not in memo:
                memo[key] = self._values(world, legal, exact)
            rows.append(memo[key])
        values = np.array(rows)
        self._record_values(values.mean(axis=0), legal, observation, VALUES_TRICKS if exact else VALUES_POINTS)
        return self._best(values, legal, observation, info, 0.0 if exact else self.z)

    def _record_values(self, means: np.ndarray, legal: np.ndarray, observation: Mapping[str, np.ndarray], kind: int) -> None:
        """Keep the decision's mean value of each legal action as :attr:`last_values`."""
        values = np.full(len(observation["action_mask"]), np.nan, dtype=np.float32)
        values[legal] = means
        self.last_values, self.last_values_kind = values, kind

    def _draw_worlds(self, env: Any, agent: str, count: int) -> list[Any]:
        """The ``count`` worlds of a decision of ``agent`` at ``env``: raw envs drawn by
        ``env.resample_from_infostate(agent, self.rng)``.

        Without inference, ``count`` draws. With it, ``candidates * count`` draws, weighted by
        :class:`agents.search.inference.WorldWeights` (the inference policy's probability of the
        other players' actions of this hand, Rebstock et al. 2019), of which ``count`` are kept
        by systematic resampling in proportion to their weights: a likely candidate may be kept
        more than once (its values are computed once), an unlikely one not at all. Where the
        hand does not replay from a world's deal (German Whist after the first stock draw) the
        first ``count`` draws are kept unweighted.
        """
        if self.inference is None:
            return [env.resample_from_infostate(agent, self.rng) for _ in range(count)]
        pool = [env.resample_from_infostate(agent, self.rng) for _ in range(count * self.candidates)]
        log_weights = self.inference.log_weights(pool, env.possible_agents.index(agent))
        if log_weights is None:
            self.last_ess = None
            return pool[:count]
        self.last_ess = effective_sample_size(log_weights)
        return [pool[i] for i in systematic_resample(log_weights, count, self.rng)]

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
        return objective != 0 and game.phase == PLAY and tricks_left <= self._exact_limit()

    def _exact_limit(self) -> int:
        """Most tricks left at which a decision is solved exactly: ``exact``, or the game's
        :data:`AUTO_EXACT`."""
        return AUTO_EXACT.get(self.game, SOLVER_EXACT) if self.exact is None else self.exact

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
        for world in self._draw_worlds(env, agent, self.worlds):
            if size <= self._exact_limit():
                took = solved_tricks(world.game, seat)
            else:
                took = self.rollout.final(world).last_hand[1][seat]
            counts += [b == took for b in bids]
            scores += [deal_points(b, took) for b in bids]
        best = max(range(len(legal)), key=lambda i: (counts[i], scores[i], -i))
        self._record_values(scores / self.worlds, legal, env.observe(agent), VALUES_POINTS)
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
        for w, world in enumerate(self._draw_worlds(env, agent, worlds)):
            for mode, calls in by_mode.items():
                probe = min(calls)  # the lowest level: bid ids rise with the level within a mode
                final = self.rollout.final(world, probe)
                if mode is not None and final.last_contract[:3] == (seat, *bid_of(probe)):
                    for a in calls:
                        points = game.contract_points(side, bid_of(a)[0], mode, final.last_contract[3])
                        values[w, column[a]] = points[side] - points[1 - side]
                else:
                    values[w, [column[a] for a in calls]] = side_value(final, seat)
        self._record_values(values.mean(axis=0), legal, observation, VALUES_POINTS)
        return self._best(values, legal, observation, info, self.z)
