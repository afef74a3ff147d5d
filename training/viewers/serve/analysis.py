"""Analysis for a human seat: what search would play now, and after a hand what each card was
worth with every card known and what a learned opponent's network thought.

* :meth:`Analyst.pimc_values`, at any decision of the human: ``pimc``'s mean value of each legal
  action (:class:`agents.search.PIMCAgent`, a few worlds drawn from the human's own information
  only: ``env.resample_from_infostate``), in tricks (double dummy over the worlds, a trick
  objective) or points (rollouts, or the points of the double-dummy tricks where the side's
  trick total decides them: Spades), as ``last_values`` holds them.
* :meth:`Analyst.review`, once a hand is over (never during it: the values depend on the hidden
  cards): each card's double-dummy value in the real deal at each of the human's card-play
  decisions (the compiled solver, :func:`agents.search.solving.card_values`, on a copy of the
  environment made at that decision), where the game's rules give the side a trick objective
  (``trick_objective(seat) != 0``) or points that rise with its tricks
  (:func:`agents.search.solving.solved_points`: Spades) and the phase is one that search solves,
  no lead may still be restricted and at most the solver depth of tricks remain; and the action
  probabilities of the network of each learned seat at its decisions
  (:meth:`agents.learned.neural.NeuralAgent.action_probabilities`), for the decisions whose
  cards the human has all seen by then.

Every call is bounded in time: ``pimc`` with few worlds (a bid of a trick count plays out every
legal bid on each of them, a second or two in Spades); the solver only where at most
``dd_depth`` tricks remain, the decisions with fewest tricks left first, until
``review_seconds`` have passed. The methods are plain functions of their arguments, meant to be
run off the event loop (a thread), on copies of the environment that nothing else steps.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from training.viewers.serve.seat_view import card_texts


@dataclass
class SolveDecision:
    """A human's decision kept for the review: the environment copied just before it.

    Attributes:
        step: index of the action in the game (from 0).
        hand_number: the hand (from 0).
        agent: the seat that decided.
        label: the action it took.
        before: a copy of the raw env at the decision (``env.clone()``); it holds the real
            deal and never leaves the server.
    """

    step: int
    hand_number: int
    agent: str
    label: str
    before: Any = field(repr=False)


@dataclass
class NetworkDecision:
    """A learned seat's decision kept for the review: what that seat saw.

    Attributes:
        step, hand_number, agent, label: as :class:`SolveDecision`.
        phase: the phase of the decision.
        spec: the seat's agent spec.
        observation: ``env.observe(agent)`` at the decision (``observation`` float32 ``(D,)``,
            ``action_mask`` int8 ``(A,)``).
        info: ``env.information_state(agent)`` at the decision (that seat's own cards: it never
            leaves the server; only probabilities of actions whose cards the human has seen do).
        labels: action id -> label, for the legal actions.
    """

    step: int
    hand_number: int
    agent: str
    label: str
    phase: str
    spec: str
    observation: Mapping[str, np.ndarray] = field(repr=False)
    info: Mapping[str, Any] = field(repr=False)
    labels: Mapping[int, str] = field(repr=False)


def network_of(agent: Any, game: str) -> tuple[Any, bool]:
    """``(network, wrapped)``: the policy of ``agent`` that gives action probabilities (the agent
    itself, or the network inside the wrapper that plays ``game``'s open phase exactly,
    :data:`agents.heuristics.EXACT_OPEN_PLAY`), ``None`` for an agent without them (rule-based,
    random, search), and whether it was so wrapped."""
    from agents.base import ActionProbabilities
    from agents.heuristics import EXACT_OPEN_PLAY

    wrapper = EXACT_OPEN_PLAY.get(game)
    wrapped = wrapper is not None and isinstance(agent, wrapper)
    inner = agent.policy if wrapped else agent
    return (inner if isinstance(inner, ActionProbabilities) else None), wrapped


def _tricks_left(info: Mapping[str, Any]) -> int:
    """Tricks still to be played in the hand at a seat's decision in card play, the current one
    included: the cards the seat holds (from its information state)."""
    return len(info["hand"])


class Analyst:
    """Analysis for the human seats of one game (module docstring).

    Args:
        game: the game's name (a key of ``whist_env.GAMES``).
        worlds: worlds ``pimc`` draws per decision (>= 1).
        rollouts: at most this many rollouts a decision where ``pimc`` values actions by rollouts.
        dd_depth: solve a past decision double dummy only where at most this many tricks remain;
            ``None``: the game's ``solver_depth`` (``whist_env.games``: where the solver values a
            position in about 0.03 s).
        review_seconds: time budget of one review's double-dummy solving (seconds, > 0).
        seed: seed of ``pimc``'s worlds (each decision is seeded from it and the step).
    Raises:
        ValueError: an unknown game, ``worlds < 1``, ``rollouts < 0``, ``dd_depth < 0`` or
            ``review_seconds <= 0``.
    """

    def __init__(self, game: str, worlds: int = 16, rollouts: int = 32, dd_depth: int | None = None,
                 review_seconds: float = 10.0, seed: int = 0) -> None:
        from whist_env import games

        self.game = game
        self.spec = games.spec(game)  # raises ValueError for an unknown game
        if worlds < 1 or rollouts < 0:
            raise ValueError(f"analysis needs worlds >= 1 and rollouts >= 0, got worlds={worlds}, rollouts={rollouts}")
        if dd_depth is not None and dd_depth < 0:
            raise ValueError(f"dd_depth must be >= 0 tricks, got {dd_depth}")
        if not review_seconds > 0:
            raise ValueError(f"review_seconds must be > 0, got {review_seconds}")
        self.worlds, self.rollouts, self.seed = int(worlds), int(rollouts), int(seed)
        self.dd_depth = self.spec.solver_depth if dd_depth is None else int(dd_depth)
        self.review_seconds = float(review_seconds)
        self._networks: dict[str, Any] = {}

    # ------------------------------------------------------------------ now: pimc
    def pimc_values(self, env: Any, agent: str, step: int = 0) -> dict[str, Any]:
        """``pimc``'s value of each legal action of ``agent``, the seat to act at ``env``.

        Args:
            env: a copy of the table's raw env (it is read, and worlds are drawn from
                ``agent``'s information only).
            agent: the seat to act.
            step: the decision's index in the game (seeds the worlds).
        Returns:
            ``{"kind": "pimc", "agent", "values": {label: mean value} (legal actions, best
            first), "best": [labels], "unit": "tricks" | "points", "worlds", "seconds",
            "note": str}``; ``values`` is empty where ``pimc`` does not search (one legal
            action, or a decision it leaves to the rule-based player: ``note`` says which).
        Raises:
            ValueError: ``agent`` is not the seat to act.
        """
        from agents.registry import make_agent
        from agents.search.pimc import VALUES_TRICKS

        if env.agent_selection != agent or env.game.done or env.game.truncated:
            raise ValueError(f"{agent} is not to act")
        start = time.perf_counter()
        pimc = make_agent(f"pimc:worlds={self.worlds},rollouts={self.rollouts}", self.game, seed=self.seed + step)
        pimc.act_in_env(env, agent)
        seconds = time.perf_counter() - start
        out: dict[str, Any] = {"kind": "pimc", "agent": agent, "values": {}, "best": [], "unit": "", "worlds": self.worlds,
                               "seconds": round(seconds, 2), "note": ""}
        values = pimc.last_values
        legal = [int(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])]
        if values is None:
            out["note"] = ("one legal action" if len(legal) == 1 else
                           "pimc leaves this decision to the rule-based player")
            return out
        tricks = pimc.last_values_kind == VALUES_TRICKS
        pairs = sorted(((env.action_label(a), float(values[a])) for a in legal if np.isfinite(values[a])), key=lambda p: -p[1])
        out["values"] = {label: round(v, 2) for label, v in pairs}
        top = max(v for _, v in pairs)
        out["best"] = [label for label, v in pairs if v >= top - 1e-9]
        if tricks:
            misere = env.game.trick_objective(env.possible_agents.index(agent)) < 0
            out["unit"] = "tricks"
            out["note"] = (f"mean double-dummy tricks of your side from this trick on, over {self.worlds} deals drawn from what you know"
                           + (" (negated: your side wants few tricks)" if misere else ""))
        else:
            out["unit"] = "points"
            out["note"] = ("mean points of your side minus the others', over deals drawn from what you know: by rollouts of the "
                           "rule-based player, or double dummy where the deals are solved and your side's tricks decide the points")
        return out

    # ------------------------------------------------------------------ after the hand
    def solvable(self, env: Any, agent: str) -> str:
        """Why the decision of ``agent`` at ``env`` cannot be valued double dummy (``""``: it
        can): a phase search does not solve, a lead the rules may still restrict
        (``leads_restricted``: Spades before spades are broken), neither a trick objective nor a
        points table of the side's tricks (``side_trick_points``: an exact bid, a nil), or too
        many tricks left."""
        from agents.search.solving import solved_points, solver_applies

        g = env.game
        if self.spec.decision(g.phase).search != "solve":
            return f"no double-dummy value in the {g.phase.replace('_', ' ')} phase"
        if not solver_applies(g):
            return "no double-dummy value yet: the rules may still restrict a lead beyond follow suit, which the solver does not know"
        seat = env.possible_agents.index(agent)
        if g.trick_objective(seat) == 0 and solved_points(g) is None:
            return ("no double-dummy value: the side wants neither many nor few tricks (an exact bid, a nil, "
                    "or bags near their penalty)")
        left = _tricks_left(env.information_state(agent))
        if left > self.dd_depth:
            return f"not solved: {left} tricks left (at most {self.dd_depth} are solved)"
        return ""

    def double_dummy(self, decision: SolveDecision) -> dict[str, Any]:
        """Each legal card's double-dummy value at ``decision`` in the real deal.

        Returns:
            ``{"kind": "double dummy", "step", "hand_number", "agent", "played", "trick" (its
            number in the hand, from 1), "values": {label: tricks of the side from this trick
            on}, "best": [labels], "objective": 1 (most tricks best) or -1 (fewest), "note"}``;
            ``values`` empty where :meth:`solvable` says why in ``note``.
        """
        from agents.search.solving import card_values

        env, agent = decision.before, decision.agent
        info = env.information_state(agent)
        out = {"kind": "double dummy", "step": decision.step, "hand_number": decision.hand_number, "agent": agent,
               "played": decision.label, "trick": int(sum(int(t) for t in info["tricks_won"]) + 1), "values": {}, "best": [],
               "objective": 0, "note": ""}
        why = self.solvable(env, agent)
        if why:
            out["note"] = why
            return out
        g = env.game
        # a side whose trick total decides its points (Spades without a nil) fights for every trick
        objective = g.trick_objective(env.possible_agents.index(agent)) or 1
        values = card_values(g, misere=objective < 0)
        pairs = sorted(((env.action_label(int(c)), int(v)) for c, v in values.items()), key=lambda p: -objective * p[1])
        out["values"] = dict(pairs)
        target = pairs[0][1]
        out["best"] = [label for label, v in pairs if v == target]
        out["objective"] = int(objective)
        out["note"] = "tricks your side takes from this trick on, every card known, best play by all" + (
            " (your side wants few)" if objective < 0 else "")
        return out

    def network(self, spec: str) -> tuple[Any, bool]:
        """``(network, wrapped)`` of the agent spec ``spec``: a copy of its network for analysis
        (built once; ``None`` when the agent has no action probabilities: not a learned agent),
        and whether the agent plays its game's open phase exactly instead of by the network
        (:data:`agents.heuristics.EXACT_OPEN_PLAY`)."""
        from agents.registry import make_agent

        if spec not in self._networks:
            self._networks[spec] = network_of(make_agent(spec, self.game, seed=self.seed), self.game)
        return self._networks[spec]

    def network_probabilities(self, decision: NetworkDecision) -> dict[str, Any]:
        """The probabilities the network of ``decision.spec`` gave each legal action there.

        Returns:
            ``{"kind": "network", "step", "hand_number", "agent", "spec", "phase", "played",
            "probabilities": {label: p} (legal actions, most likely first), "exact_open_play":
            bool (the agent plays its game's open phase exactly, not by this network)}``.
        Raises:
            ValueError: the spec is not a learned agent.
        """
        net, wrapped = self.network(decision.spec)
        if net is None:
            raise ValueError(f"{decision.spec} has no network")
        probs = np.asarray(net.action_probabilities(decision.observation, decision.info), dtype=float)
        pairs = sorted(((decision.labels[a], float(probs[a])) for a in decision.labels), key=lambda p: -p[1])
        return {"kind": "network", "step": decision.step, "hand_number": decision.hand_number, "agent": decision.agent,
                "spec": decision.spec, "phase": decision.phase, "played": decision.label,
                "probabilities": {label: round(p, 3) for label, p in pairs}, "exact_open_play": bool(wrapped)}

    def review(self, hand_number: int, agent: str, solve: Iterable[SolveDecision], networks: Iterable[NetworkDecision],
               known: set[str]) -> dict[str, Any]:
        """The review of a finished hand for the human ``agent``.

        Args:
            hand_number: the hand (from 0).
            agent: the human seat asking.
            solve: its decisions of that hand (:class:`SolveDecision`).
            networks: the learned seats' decisions of that hand (:class:`NetworkDecision`).
            known: the card texts ``agent`` has seen by now; a learned seat's decision is shown
                only when every card of that seat's hand then, and of its legal actions, is
                among them (a Bid Whist discard, say, stays hidden).
        Returns:
            ``{"kind": "review", "hand_number", "agent", "double_dummy": [per decision, in
            game order: :meth:`double_dummy`], "network": [:meth:`network_probabilities`],
            "seconds", "notes": [str]}``.
        """
        start = time.perf_counter()
        mine = [d for d in solve if d.agent == agent and d.hand_number == hand_number]
        order = sorted(mine, key=lambda d: _tricks_left(d.before.information_state(d.agent)))  # cheapest first
        results: dict[int, dict[str, Any]] = {}
        notes: list[str] = []
        for d in order:
            if time.perf_counter() - start > self.review_seconds:
                results[d.step] = {"kind": "double dummy", "step": d.step, "hand_number": d.hand_number, "agent": d.agent,
                                   "played": d.label, "trick": None, "values": {}, "best": [], "objective": 0,
                                   "note": f"not solved: the review's {self.review_seconds:g} s were spent"}
                continue
            results[d.step] = self.double_dummy(d)
        shown, hidden = [], 0
        for d in networks:
            if d.hand_number != hand_number or d.agent == agent:
                continue
            if self.network(d.spec)[0] is None:
                continue
            cards = card_texts(list(d.info["hand"])) | card_texts(list(d.labels.values()))
            if not cards <= known:
                hidden += 1
                continue
            shown.append(self.network_probabilities(d))
        if hidden:
            notes.append(f"{hidden} decision(s) of learned seats not shown: they involve cards you have not seen")
        return {"kind": "review", "hand_number": hand_number, "agent": agent,
                "double_dummy": [results[s] for s in sorted(results)], "network": shown,
                "seconds": round(time.perf_counter() - start, 2), "notes": notes}


__all__ = ["Analyst", "NetworkDecision", "SolveDecision", "network_of"]
