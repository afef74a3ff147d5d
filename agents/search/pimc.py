"""Perfect Information Monte Carlo (PIMC): sample worlds, solve each with every card open, play
the best average (GIB and Ben in bridge; Long et al., AAAI 2010, on why it works in trick-taking
games).

Every decision draws ``worlds`` deals consistent with what the agent knows
(``env.resample_from_infostate(agent, rng)``), or fewer where its actions are valued by rollouts:
at most ``rollouts`` rollouts a decision (``rollouts // legal actions`` worlds, at least one), so
that a lead from 13 cards costs no more than a choice between 2 (a bid of a trick count excepted,
below). Worlds that come out identical
(e.g. German Whist once the stock is gone, when every card is known) are valued once.

How each decision is searched is the game's descriptor's (``whist_env.games``): the phase's
:class:`~whist_env.games.Decision` says ``"solve"``, ``"rollout"``, ``"contract"`` or
``"heuristic"``, and ``solver_depth`` is ``exact=auto``. What a bid means and what a contract
scores the rules say (``bid_meaning``, ``contract_value``, ``last_hand_contract``): search
imports no game's rules.

**Card play** (``"solve"`` and ``"rollout"``). In each world every legal action is valued

* **exactly** (``"solve"``), once at most ``exact`` tricks remain in a hand whose tricks the side
  simply wants many or few of (``trick_objective``): the double-dummy tricks of its side from the
  current trick on, by the compiled solver in every game (``agents.search.solving``; fewest
  tricks best in Minnesota Low). Romanian Whist's card play is ``"rollout"``: its objective is
  an exact bid, not a trick count, so a double-dummy trick count would value overtricks as
  gains. German Whist's stock phase is ``"rollout"`` too (the cards it wins are drawn from the
  stock, not tricks); its play after the stock is solved whole, from its first trick. Where
  the side wants neither many nor few tricks but its trick total alone decides the hand's
  points, and those never fall as it takes more of the tricks left
  (:func:`agents.search.solving.solved_points`: Spades with no nil bid and no bag penalty in
  reach), a world's value is those points at the side's tricks so far plus its double-dummy
  tricks to come: then fighting for every trick is both sides' best play. All of this only
  where no lead may still be restricted (``leads_restricted``: Spades once spades are broken);
* else by a **rollout**: the action, then the ``rollout`` policy in every seat to the end of the
  hand; the value is the hand's points of the agent's side minus the mean of the other sides'
  (the game's own scoring, exact bids included; :func:`agents.search.rollout.side_value`).

The card with the best mean value is played when the cards are valued exactly; among equal
values (double-dummy trick counts tie often) the ``rollout`` policy's own choice if it is one of
them, else the lowest action id. Where actions are valued by rollouts (one playout a world,
a few worlds a decision) the best mean is mostly the luckiest: the agent plays the ``rollout``
policy's own choice unless another action beats it, on the paired differences over the same
worlds, by more than ``z`` standard errors (default 1; ``z=0``: the best mean): with a few
worlds per action and many actions (Bid Whist's 18 candidate discards) the best mean is mostly
the luckiest one.

**Bids of a trick count** (``"rollout"`` decisions of kind ``"bid"``: Romanian Whist, Spades).
Each legal bid (the rules allow: Romanian's hook rule, Spades' combined limit) is valued as a
card is by rollouts: the bid, then the ``rollout`` policy in every seat, the agent's own play
aiming at that bid, to the end of the hand, scored by the game (an exact bid's deal score, a
side's contract, nil, bags). A bid comes once a hand, so it gets ``worlds`` worlds for every
legal bid whatever the ``rollouts`` budget; the ``rollout`` policy's own bid stands unless
another beats it by ``z`` standard errors. (Bidding the trick count most often seen in rollouts
of the policy's own bid, as pimc once did, misses what another bid changes in the play and the
payoff's asymmetry: a set Spades contract costs ten times what an overtrick gains.)

**An auction** (``"contract"``: the Bid Whist auction). In each world one rollout follows a pass
and one each mode's lowest legal bid (its probe); where the probe becomes the contract, every
level of that mode is valued by the books that rollout made (``contract_value``: made or set,
doubled in no-trump, Boston), else by the rollout's points. Levels of a mode share their sample,
so a higher level is never chosen for its own luck; the call is then chosen as rollout-valued
cards are (``z``).

**Other decisions** (``"rollout"``: Bid Whist kitty discards and declaration): each legal action
is valued by rollouts over the worlds, as cards are before the exact solve (a discard greedily,
card by card). ``"heuristic"`` decisions (Minnesota Whist's bid cards) are the game's rule-based
player's.

**Policy-based inference** (``inference=SPEC``; Rebstock, Solinas, Buro and Sturtevant, "Policy
Based Inference in Trick-Taking Card Games", IEEE CoG 2019). The worlds above are uniform among
the deals consistent with the agent's knowledge: a bid or a card that only some hands would
have chosen moves nothing. With an inference policy every decision that draws worlds draws
``candidates`` times as many, weighs each by the probability the policy gives, in that world,
to every action the other players took this hand so far (bids, declarations and cards, each
replayed from the player's observation and information state in the world:
:mod:`agents.search.inference`), and keeps as many as it needs by systematic resampling in
proportion to the weights. The project's networks (``zoo:GAME``, ``checkpoint:PATH``) give their
softmax probabilities (``action_probabilities``), floored at ``epsilon / (legal - 1)``; a policy
without probabilities (the rule-based players; SB3 and RLlib agents, whose ``act`` is their
argmax) counts ``1 - epsilon`` for its own choice and ``epsilon`` spread over the other legal
actions. The kept worlds' effective sample size is at most the candidates'
(Kish's, :attr:`PIMCAgent.last_ess`): where the history is unlikely under most candidates a
few of them fill the decision. ``inference=none`` (the default) draws uniform worlds, unweighted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.search.base import PolicyFactory, SearchAgent
from agents.search.inference import WorldWeights, effective_sample_size, systematic_resample
from agents.search.rollout import side_value
from agents.search.solving import card_values, solved_points, solver_applies
from agents.search.spec import check_int, check_real
from whist_env import games
from whist_env.envs.policy_protocols import ActsInEnv, UniformChoice

#: :attr:`PIMCAgent.last_values_kind`: values in tricks (double dummy, a trick objective) or in points
#: (rollouts, or the points of the double-dummy tricks where the side's trick total decides them).
VALUES_TRICKS, VALUES_POINTS = 1, 2


def _exact_option(text: str) -> int | None:
    """``exact=`` of a spec: an int, or ``auto`` (``None``)."""
    return None if text.strip().lower() == "auto" else int(text)


_exact_option.label = "int or auto"  # type: ignore[attr-defined]


class PIMCAgent(SearchAgent):
    """PIMC search for one game (see the module docstring).

    Args:
        game: the game's name (a key of ``whist_env.GAMES``).
        worlds: worlds sampled per decision (K >= 1).
        exact: in ``"solve"`` decisions, solve exactly once at most this many tricks remain (0:
            never); ``None`` or ``"auto"``: the game's ``solver_depth`` (``whist_env.games``: the
            most tricks left at which the compiled solver values a world in about 0.03 s; German
            Whist's whole play after the stock).
        rollouts: at most this many rollouts a decision where actions are valued by rollouts
            (0: no limit, ``worlds`` worlds always); a bid of a trick count, once a hand, gets
            ``worlds`` worlds for every legal bid.
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
    #: with it off names the same player as a spec without them
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
        #: the game's descriptor: how each phase's decision is searched, and ``exact=auto``
        self.game_spec = games.spec(game)
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
        #: where it wants few) or :data:`VALUES_POINTS` (the side's points: rollouts, or solved
        #: and scored by ``solved_points``)
        self.last_values_kind = VALUES_POINTS
        if self.inference_spec is not None:
            policy = make_policy(self.inference_spec, game, None if seed is None else seed + 2)
            if isinstance(policy, UniformChoice) and policy.chooses_uniformly:
                raise ValueError("pimc: inference=random would weigh every world alike (a uniform policy gives every history "
                                 "the same probability): use inference=none")
            if isinstance(policy, ActsInEnv):
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
        decision = self.game_spec.decision(info["phase"])
        search = decision.search
        if search == "heuristic":
            return int(self.fallback.act(observation, info))
        if search == "contract":
            return self._contract_bid(env, agent, legal, observation, info)
        tricks_left = len(info["hand"]) + (1 if info["trick"] else 0)
        exact = search == "solve" and self._solves(env.game, env.possible_agents.index(agent), tricks_left)
        worlds = self.worlds if exact or decision.kind == games.BID else self._rollout_worlds(len(legal))
        drawn = self._draw_worlds(env, agent, worlds)
        keys = [(tuple(world.game.hands), tuple(world.game.hidden_card_sets())) for world in drawn]
        distinct: dict[tuple, Any] = {}
        for key, world in zip(keys, drawn):
            distinct.setdefault(key, world)
        if exact:
            memo = {key: self._solved_values(world, legal) for key, world in distinct.items()}
        else:  # every rollout of the decision at once (a policy network plays them in lockstep)
            memo = dict(zip(distinct, self.rollout.values(list(distinct.values()), env.game.current_player, legal)))
        values = np.array([memo[key] for key in keys])
        tricks = exact and env.game.trick_objective(env.game.current_player) != 0
        self._record_values(values.mean(axis=0), legal, observation, VALUES_TRICKS if tricks else VALUES_POINTS)
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
        """Whether a ``"solve"`` decision of ``seat`` is valued double dummy now (from public
        facts: the objective or a points table of the side's tricks, the tricks left, and whether
        the solver knows the leads still to come)."""
        return ((game.trick_objective(seat) != 0 or solved_points(game) is not None)
                and tricks_left <= self._exact_limit() and solver_applies(game))

    def _exact_limit(self) -> int:
        """Most tricks left at which a decision is solved exactly: ``exact``, or the game's
        ``solver_depth``."""
        return self.game_spec.solver_depth if self.exact is None else self.exact

    def _solved_values(self, world: Any, legal: np.ndarray) -> np.ndarray:
        """Exact value of each legal action in ``world``: the double-dummy tricks of the side,
        negated where it wants few; where the side wants neither (``trick_objective`` 0) but its
        trick total decides the hand and its points never fall with more tricks
        (:func:`~agents.search.solving.solved_points`, Spades without a nil), the hand's points of
        that total: the tricks taken so far plus the double-dummy tricks to come."""
        game = world.game
        seat = game.current_player
        objective = game.trick_objective(seat)
        if objective == 0:
            points = solved_points(game)
            taken = game.tricks_by_side()[game.side_of(seat)]
            values = card_values(game)
            return np.array([points[taken + values[int(a)]] for a in legal], dtype=float)
        values = card_values(game, misere=objective < 0)
        return np.array([objective * values[int(a)] for a in legal], dtype=float)

    def _contract_bid(self, env: Any, agent: str, legal: np.ndarray, observation: Mapping[str, np.ndarray],
                      info: Mapping[str, Any]) -> int:
        """The call chosen by :meth:`_best` (gated by ``z``) from its values over the worlds (an
        auction; module docstring).

        One rollout a world for a pass and one for each mode's lowest legal bid (the probe);
        where the probe becomes the contract, every level of its mode is valued by the books
        that rollout made (``contract_value``), else by the rollout's points. Every level of a
        mode shares the same sample, so a higher level is not chosen for its luck alone.
        """
        game = env.game
        seat = env.possible_agents.index(agent)
        side = game.side_of(seat)
        meanings = {int(a): game.bid_meaning(int(a)) for a in legal}
        by_mode: dict[tuple[str, Any], list[int]] = {}  # ("bid", mode): the bids of a mode; ("call", a): a pass
        for a, meaning in meanings.items():
            by_mode.setdefault(("call", a) if meaning is None else ("bid", meaning.mode), []).append(a)
        column = {int(a): i for i, a in enumerate(legal)}
        worlds = self._rollout_worlds(len(by_mode))
        values = np.zeros((worlds, len(legal)))
        for w, world in enumerate(self._draw_worlds(env, agent, worlds)):
            for (kind, _), calls in by_mode.items():
                probe = min(calls, key=lambda a: meanings[a].tricks) if kind == "bid" else calls[0]
                final = self.rollout.final(world, probe)
                contract = final.last_hand_contract() if kind == "bid" else None
                if contract is not None and contract[:2] == (seat, probe):
                    for a in calls:
                        values[w, column[a]] = game.contract_value(seat, a, contract[2][side])
                else:
                    values[w, [column[a] for a in calls]] = side_value(final, seat)
        self._record_values(values.mean(axis=0), legal, observation, VALUES_POINTS)
        return self._best(values, legal, observation, info, self.z)
