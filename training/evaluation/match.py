"""Duplicate-deal matches between agents, with confidence intervals, and the ``whist eval`` command.

A *deal* is one set of dealt cards (hands, dealer and the game's extras such as Classic Whist's
turn-up). With duplicate deals (the default) every deal is played once per side: agent A takes
the seats of side 0 and agent B all other seats, then A takes side 1, and so on (in a
partnership game: A on {0, 2} against B on {1, 3}, then the sides swapped with the same cards).
Averaging over the plays of a deal cancels most of the card luck, so far fewer deals are needed
to separate two agents.

By default one play is one hand (``episode="hand"``); rule options given by the caller are
merged on top (``episode="game"`` plays whole games from the fixed first deal; later hands come
from the deal's seed, so they are also the same in every play of the deal).

Statistics (all from A's point of view, over the ``deals`` per-deal values, 95% level):

* ``points_per_hand``: A's side's points minus B's (the mean of the other sides' points in
  games with more than two sides) per hand played; t-interval and a one-sample t-test of
  "mean = 0" (``p_value``; ``significant`` when ``p < 0.05``). Below
  :data:`~training.evaluation.stats.MIN_DEALS` deals, or when every deal gave the same value,
  there is no interval and no test (``interval_note`` says why; :mod:`training.evaluation.stats`).
* ``win_rate``: share of plays in which A's side scored more points than B's (a tie counts
  half; with more than two sides, the mean over the other sides); t-interval over the deals,
  clipped to [0, 1], or Wilson's score interval over the deals where there is no t-interval
  (conservative: a deal's share varies no more than one win or loss).
* ``truncated``: plays cut by the rules' ``max_hands`` guard before their episode ended (e.g.
  with ``allow_revoke``, where a hand annulled by a revoke does not end a hand episode, RULES.md
  §2.9). Such a play has no winner: it is left out of the win rate (not counted as a tie); its
  hands and points still count in ``points_per_hand``.

Deals are drawn one at a time as they are played (deal ``i``'s seed derives from the match seed
and ``i``), so a match's memory does not grow with its number of deals.

Statistics come from :mod:`training.evaluation.stats`. Command line (:func:`run_eval`):
``whist eval --game classic_whist --agents heuristic random --deals 2000``.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import ChecksFit, Named, Policy, Reseedable, TrainedEnvVersion, TrainedOptions
from training.errors import CommandError, Interrupted
from training.evaluation.parallel import played_units
from training.evaluation.stats import mean_summary, wilson_interval
from training.progress import progress_bar
from whist_env.envs.policy_action import policy_action
from whist_env.records import GameRecorder, write_records


@dataclass
class PairResult:
    """Result of a match between two agents (all values from agent A's point of view).

    Attributes:
        agent_a, agent_b: agent labels.
        game: game name (a key of ``whist_env.GAMES``).
        deals: number of deals played.
        hands: number of hands played in all (``deals × plays per deal`` with ``episode="hand"``).
        win_rate: share of the plays that ended (not ``truncated``) won by A's side (ties count
            half), in [0, 1]; ``nan`` when no play ended.
        win_rate_ci: 95% confidence interval ``(low, high)`` of ``win_rate`` (over the deals with
            at least one play that ended).
        points_per_hand: mean points per hand of A's side minus B's side.
        points_per_hand_ci: 95% t-interval ``(low, high)`` of ``points_per_hand`` over deals.
        p_value: two-sided p-value of "A and B score the same" (one-sample t-test on the per-deal
            means); ``nan`` (and ``points_per_hand_ci`` too) with fewer than
            :data:`~training.evaluation.stats.MIN_DEALS` deals or when every deal gave the same value.
        significant: ``p_value < 0.05`` (``False`` when there is no test).
        games: number of plays (episodes): ``deals × sides`` with duplicate deals, else ``deals``.
        duplicate: whether each deal was replayed with the sides swapped.
        seed: the seed the deals were drawn from.
        options: rule options the games were played with.
        seconds: wall-clock time of the match.
        interval_note: ``""`` when the t-intervals and the test are given, else why not
            (``"too few deals (3 < 15)"``, ``"no spread (every deal -1)"``).
        deals_requested: deals the match was to play (``num_deals`` less the skipped ones;
            ``None`` given: ``deals``).
        complete: whether every requested deal was played (``False``: the match was interrupted
            and the statistics cover the ``deals`` played before).
        truncated: plays cut by the ``max_hands`` guard before their episode ended (of ``games``);
            they are left out of ``win_rate`` and counted in ``hands`` and ``points_per_hand``.
    """

    agent_a: str
    agent_b: str
    game: str
    deals: int
    hands: int
    win_rate: float
    win_rate_ci: tuple[float, float]
    points_per_hand: float
    points_per_hand_ci: tuple[float, float]
    p_value: float
    significant: bool
    games: int = 0
    duplicate: bool = True
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    interval_note: str = ""
    deals_requested: int | None = None
    complete: bool = True
    truncated: int = 0

    def __post_init__(self) -> None:
        if self.deals_requested is None:
            self.deals_requested = self.deals

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (tuples become lists, ``nan`` becomes ``None``)."""
        out = asdict(self)
        for key, value in out.items():
            if isinstance(value, tuple):
                out[key] = [_finite_or_none(v) for v in value]
            elif isinstance(value, float):
                out[key] = _finite_or_none(value)
        return out


def _finite_or_none(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v


class MatchInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, which the command line turns into it) stopped :func:`evaluate_pair`.

    A :class:`KeyboardInterrupt`, so code that stops on Ctrl-C still does.

    Attributes:
        result: the :class:`PairResult` of the deals finished before the interruption
            (``complete`` false, ``deals`` of ``deals_requested``; every statistic over those
            deals only).
    """

    def __init__(self, result: PairResult) -> None:
        super().__init__(f"{result.agent_a} vs {result.agent_b} interrupted after {result.deals} of "
                         f"{result.deals_requested} deals")
        self.result = result


@dataclass(frozen=True)
class PlayOutcome:
    """One play of a deal: agent A sat on side ``side_a``, every other seat was agent B.

    Attributes:
        side_a: A's side index (0 … sides-1).
        points: points per side summed over the play's hands (length = number of sides).
        hands: hands played.
        truncated: the rules' ``max_hands`` guard cut the play before its episode ended, so it
            has no winner.
    """

    side_a: int
    points: tuple[int, ...]
    hands: int
    truncated: bool = False


@dataclass(frozen=True)
class DealOutcome:
    """Every play of one deal, as passed to ``evaluate_pair(on_deal=...)`` once the deal is finished.

    Attributes:
        index: deal index within the match (0 … num_deals-1).
        seed: the deal's seed (derived from the match seed and ``index``).
        plays: one :class:`PlayOutcome` per play, in play order (one per side with duplicate deals).
    """

    index: int
    seed: int
    plays: tuple[PlayOutcome, ...]


def deal_values(plays: Sequence[PlayOutcome], num_sides: int) -> tuple[float, float, int]:
    """A's per-deal statistics from the plays of one deal.

    Args:
        plays: the deal's plays (at least one).
        num_sides: number of sides of the game (≥ 2).
    Returns:
        ``(points_per_hand, win_share, hands)``: A's side's points minus the mean of the other
        sides' per hand played (every play), A's share of the plays that ended won (ties count
        half, averaged over the other sides) in [0, 1] (``nan`` when every play was truncated:
        a play cut by ``max_hands`` has no winner), and the number of hands played.
    """
    diff_sum = 0  # in units of 1 / (sides - 1) points, kept integer so that equal play nets exactly 0
    hands_sum = 0
    half_wins = 0
    ended = 0
    for play in plays:
        points = play.points
        diff_sum += (num_sides - 1) * points[play.side_a] - (sum(points) - points[play.side_a])
        hands_sum += play.hands
        if not play.truncated:
            half_wins += _half_wins(points, play.side_a)
            ended += 1
    win_share = half_wins / (2 * (num_sides - 1) * ended) if ended else math.nan
    return (diff_sum / ((num_sides - 1) * max(hands_sum, 1)), win_share, hands_sum)


def summarize_pair(diff_per_deal: Sequence[float], win_per_deal: Sequence[float], **fields: Any) -> PairResult:
    """A :class:`PairResult` from per-deal values (:func:`deal_values`).

    Args:
        diff_per_deal: A's points per hand minus B's, one value per deal.
        win_per_deal: A's win share, one value per deal, in [0, 1], or ``nan`` for a deal whose
            every play was truncated (:func:`deal_values`); such deals are left out of the win
            rate and its interval.
        fields: the other :class:`PairResult` fields (``agent_a``, ``agent_b``, ``game``,
            ``hands``, ``games``, ``truncated``, ...); ``deals`` defaults to the number of
            ``diff_per_deal`` values.
    Returns:
        the result with means, 95% t-intervals (win rate clipped to [0, 1]) and p-value; below
        :data:`~training.evaluation.stats.MIN_DEALS` deals or with no spread, no points interval
        and no test (``nan``, ``significant`` false, ``interval_note`` saying why) and Wilson's
        interval of the win rate over the deals (``(nan, nan)`` and a ``nan`` win rate for no
        deals with a win share).
    """
    diffs = np.asarray(diff_per_deal, dtype=float)
    wins = np.asarray(win_per_deal, dtype=float)
    if wins.ndim == 1:  # other shapes are refused by mean_summary below
        wins = wins[~np.isnan(wins)]
    points = mean_summary(diffs)
    share = mean_summary(wins - 0.5)
    wr = share.mean + 0.5
    if share.note:
        # too few deals, or every deal the same share (e.g. 100% or all split pairs): a
        # t-interval says nothing about the next deals; Wilson's score interval does
        wr_ci = wilson_interval(wr, len(wins)) if len(wins) else (math.nan, math.nan)
    else:
        wr_ci = (max(0.0, share.ci[0] + 0.5), min(1.0, share.ci[1] + 0.5))
    fields.setdefault("deals", len(diffs))
    return PairResult(
        win_rate=wr,
        win_rate_ci=wr_ci,
        points_per_hand=points.mean,
        points_per_hand_ci=points.ci,
        p_value=points.p_value,
        significant=points.significant,
        interval_note=points.note,
        **fields,
    )


# ---------------------------------------------------------------------------------- dealing
def _game_module(game: str):
    from whist_env import GAMES

    try:
        return GAMES[game]
    except KeyError:
        raise ValueError(f"unknown game {game!r}; games: {sorted(GAMES)}") from None


def deal_options(raw_env: Any, seed: int) -> dict[str, Any]:
    """The first deal of ``raw_env.reset(seed=seed)``, as reset options that replay it.

    Args:
        raw_env: an unwrapped game env (``<game>_v0.raw_env(...)``); it is reset by this call.
        seed: the deal's seed.
    Returns:
        ``{"hands": {agent: [card text, ...]}, "dealer": agent, <extra>: ...}``
        (``raw_env.current_deal()``: the extras are the game's, e.g. ``"turn_up"``, ``"kitty"``,
        ``"stock"``, ``"deal_index"``).
    """
    raw_env.reset(seed=seed)
    return raw_env.current_deal()


def _deal_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


class AgentError(ValueError):
    """An agent failed during play: it chose an illegal action or its code raised. ``whist eval``,
    ``league`` and ``benchmark`` report it in one line naming the pair."""


def _agent_name(policy: Any) -> str:
    return str(policy.name) if isinstance(policy, Named) else type(policy).__name__


def _where(err: BaseException) -> str:
    """``"RuntimeError: text (file.py:12 in act)"``: an exception, the first line of its text and
    the innermost line of Python source it came from outside the standard library and installed
    packages (numpy's or torch's own frames name no line the agent's author can act on)."""
    import sysconfig
    import traceback

    libraries = {str(Path(sysconfig.get_path(k)).resolve()) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    frames = traceback.extract_tb(err.__traceback__)
    own = [f for f in frames if f.filename.endswith(".py")
           and not any(str(Path(f.filename).resolve()).startswith(lib + os.sep) for lib in libraries)]
    frame = (own or frames or [None])[-1]
    at = f" ({Path(frame.filename).name}:{frame.lineno} in {frame.name})" if frame is not None else ""
    lines = str(err).strip().splitlines() or [""]
    return f"{type(err).__name__}: {lines[0]}{' ...' if len(lines) > 1 else ''}{at}"


def play_deal(
    raw_env: Any, seed: int, deal: Mapping[str, Any], policies: Sequence[Policy], recorder: Any = None
) -> tuple[list[int], int]:
    """Play one episode from a fixed deal.

    Args:
        raw_env: the unwrapped env (rule options already set).
        seed: reset seed (later hands of an ``episode="game"`` run are dealt from it).
        deal: reset options fixing the first deal (:func:`deal_options`).
        policies: one policy per seat; each acts with ``act(observation, information_state)``.
        recorder: optional :class:`whist_env.records.GameRecorder` built on ``raw_env`` (with this
            seed and deal); it logs the play, and ``recorder.finish()`` then gives its record.
    Returns:
        ``(points, hands)``: points per side summed over the episode's hands, and hands played.
    Raises:
        AgentError: a policy returned an illegal action or raised (the message names the agent, its
            seat and, for an exception, its type, text and the line it came from); a ``ValueError``.
    """
    raw_env.reset(seed=seed, options=dict(deal))
    if recorder is not None:
        recorder.start()
    g = raw_env.game
    points = [0] * g.num_sides
    hands = 0
    seat_of = {a: i for i, a in enumerate(raw_env.possible_agents)}
    while not (g.done or g.truncated):
        agent = raw_env.agent_selection
        policy = policies[seat_of[agent]]
        try:
            action = policy_action(policy, raw_env, agent)
        except Exception as err:  # the agent's own code failed: one line names it and where
            raise AgentError(f"agent {_agent_name(policy)!r} at {agent} raised {_where(err)}") from err
        hand_number = g.hand_number
        entry = recorder.pre_step(agent, int(action)) if recorder is not None else None
        try:
            raw_env.step(int(action))
        except ValueError as err:
            raise AgentError(f"agent {_agent_name(policy)!r} at {agent} chose an illegal action: {err}") from err
        if recorder is not None:
            recorder.after_step(entry)
        if g.hand_number != hand_number or g.done or g.truncated:
            hands += 1
            for side, p in enumerate(g.last_hand_points):
                points[side] += int(p)
    return points, hands


def _half_wins(points: Sequence[int], side_a: int) -> int:
    """Twice the number of other sides that ``side_a`` out-scored (a tie counts one)."""
    a = points[side_a]
    return sum(2 if a > p else 1 if a == p else 0 for s, p in enumerate(points) if s != side_a)


def _label(agent: Policy) -> str:
    return str(agent.name) if isinstance(agent, Named) else type(agent).__name__


def _play_seed(seed: int, index: int, side_a: int, role: int) -> int:
    """Seed of agent A (``role`` 0) or B (1) for the play of deal ``index`` with A on ``side_a``."""
    return int(np.random.SeedSequence([seed, index, side_a, role]).generate_state(1)[0])


class DealPlayer:
    """Plays the deals of one match, each on its own (the object a worker process holds).

    Args:
        game: a key of ``whist_env.GAMES``.
        options: the full rule options of the plays.
        agent_a, agent_b: the two policies (A on one side, B on every other seat).
        labels: names of A and B (for records and error messages).
        seed: the match seed; deal ``i`` is dealt from ``_deal_seed(seed, i)``.
        duplicate: play every deal once per side, else once with A on side ``i % sides``.
        records: also return each play's game record.
    """

    def __init__(self, game: str, options: Mapping[str, Any], agent_a: Policy, agent_b: Policy, labels: tuple[str, str],
                 seed: int, duplicate: bool, records: bool) -> None:
        self.game, self.options, self.agents, self.labels = game, dict(options), (agent_a, agent_b), labels
        self.seed, self.duplicate, self.records = seed, duplicate, records
        self.raw = _game_module(game).raw_env(**self.options)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["raw"]  # rebuilt from the options
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.raw = _game_module(self.game).raw_env(**self.options)

    def play(self, i: int) -> tuple[DealOutcome, list[dict[str, Any]]]:
        """Every play of deal ``i``: its :class:`DealOutcome` and (with ``records``) the plays'
        game records."""
        raw, g = self.raw, self.raw.game
        (agent_a, agent_b), (name_a, name_b) = self.agents, self.labels
        s = _deal_seed(self.seed, i)
        deal = deal_options(raw, s)
        plays, deal_records = [], []
        for side_a in (range(g.num_sides) if self.duplicate else [i % g.num_sides]):
            for role, agent in ((1, agent_b), (0, agent_a)):  # A last: reseeds A when A is B
                if isinstance(agent, Reseedable):
                    try:
                        agent.reseed(_play_seed(self.seed, i, side_a, role))
                    except Exception as err:  # the agent's own code failed
                        raise AgentError(f"agent {_agent_name(agent)!r} raised in reseed: {_where(err)}") from err
            policies = [agent_a if g.side_of(seat) == side_a else agent_b for seat in range(g.num_players)]
            recorder = None
            if self.records:
                players = {a: name_a if g.side_of(seat) == side_a else name_b for seat, a in enumerate(raw.possible_agents)}
                meta = {"match": f"{name_a} vs {name_b}", "agent_a": name_a, "agent_b": name_b, "deal_index": i,
                        "deal_seed": s, "side_a": side_a, "match_seed": self.seed, "duplicate": self.duplicate}
                recorder = GameRecorder(raw, self.game, self.options, s, deal, players, meta=meta)
            points, hands = play_deal(raw, s, deal, policies, recorder=recorder)
            if recorder is not None:
                deal_records.append(recorder.finish())
            plays.append(PlayOutcome(side_a=side_a, points=tuple(points), hands=hands, truncated=bool(g.truncated)))
        return DealOutcome(index=i, seed=s, plays=tuple(plays)), deal_records


class DealIndices:
    """The deal indices ``0 … num_deals-1`` less the skipped ones, in ascending order, drawn one at
    a time: a sized iterable whose memory does not grow with ``num_deals`` (only with ``skip``).

    Args:
        num_deals: deals of the match (≥ 0).
        skip: indices not to play; those outside ``0 … num_deals-1`` are ignored.
    """

    def __init__(self, num_deals: int, skip: Collection[int] = ()) -> None:
        self.num_deals = int(num_deals)
        self.skip = frozenset(int(i) for i in skip)
        self._skipped = sum(1 for i in self.skip if 0 <= i < self.num_deals)

    def __len__(self) -> int:
        return self.num_deals - self._skipped

    def __iter__(self) -> Iterator[int]:
        if not self.skip:
            return iter(range(self.num_deals))
        return (i for i in range(self.num_deals) if i not in self.skip)


def evaluate_pair(
    game: str,
    agent_a: Policy,
    agent_b: Policy,
    num_deals: int,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    duplicate: bool = True,
    progress: bool = False,
    labels: tuple[str, str] | None = None,
    on_deal: Callable[[DealOutcome], Any] | None = None,
    skip_deals: Collection[int] = (),
    records_path: str | Path | None = None,
    workers: int = 1,
    ray_address: str | None = None,
) -> PairResult:
    """Play ``num_deals`` deals of ``game`` between two agents and summarise them.

    Args:
        game: a key of ``whist_env.GAMES``.
        agent_a, agent_b: policies (they may be the same object). A plays the seats of one side,
            B every other seat.
        num_deals: deals to play (≥ 1; the intervals need ≥ 2).
        seed: seed of the deals (deal ``i`` uses a seed derived from ``(seed, i)``; ≥ 0).
        options: rule options merged over ``{"episode": "hand"}``.
        duplicate: replay each deal once per side (A on side 0, then side 1, …); otherwise each
            deal is played once, A's side rotating from deal to deal.
        progress: show progress (rate and ETA) on stderr: a bar on a terminal, else a plain line
            now and then (:func:`training.progress.progress_bar`).
        labels: names of A and B in the result (default: the agents' ``name``).
        on_deal: called with a :class:`DealOutcome` as soon as each deal's plays are finished
            (e.g. to store it); an exception it raises stops the match.
        skip_deals: indices of deals not to play (e.g. already stored); they are left out of the
            result, whose ``deals`` counts only the deals played (statistics are ``nan`` when
            every deal is skipped). The deals to play are drawn one at a time, so memory does
            not grow with ``num_deals``.
        records_path: when given, a JSON Lines file that receives the game record
            (``whist_env.records``) of every play of the match, written deal by deal; it is
            replaced if it exists, or appended to when ``skip_deals`` is not empty. Each
            record's ``meta`` holds the match, the deal index and seed, and A's side.
        workers: processes playing deals at once (1: here, in this process). Each worker holds
            a pickled copy of both agents; results, records and ``on_deal`` calls still come in
            deal order, in this process. Every play starts from seeds derived from ``seed``, the
            deal and the side (agents with a ``reseed`` method are reseeded), so the result is
            the same for any number of workers.
        ray_address: play the deals on Ray actors instead (``"local"``: a local Ray started for
            the match; else a cluster address for ``ray.init``, e.g. ``"auto"``), ``workers`` > 1
            capping the actors; the same results, in the same order, in this process.
    Returns:
        a :class:`PairResult`.
    Raises:
        ValueError: on an unknown game, an invalid rule option, ``num_deals < 1``, a negative
            seed, ``workers < 1``, an agent that cannot be pickled for the workers, Ray missing
            or unreachable (with ``ray_address``), or an illegal action by an agent.
        MatchInterrupted: Ctrl-C (a :class:`KeyboardInterrupt`) during the match; its
            ``result`` summarises the deals finished before (a deal counts once its records are
            written and ``on_deal`` has returned).
    """
    module = _game_module(game)
    if not isinstance(num_deals, (int, np.integer)) or num_deals < 1:
        raise ValueError(f"num_deals must be an int >= 1, got {num_deals!r}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed!r}")
    if not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    opts = {"episode": "hand", **dict(options or {})}
    module.raw_env(**opts)  # bad options fail here, before any worker starts
    name_a, name_b = labels if labels is not None else (_label(agent_a), _label(agent_b))
    player = DealPlayer(game, opts, agent_a, agent_b, (name_a, name_b), int(seed), bool(duplicate), records_path is not None)
    n_sides = player.raw.game.num_sides
    start = time.perf_counter()
    todo = DealIndices(int(num_deals), skip_deals)
    skip = todo.skip
    diff_per_deal: list[float] = []
    win_per_deal: list[float] = []
    total_hands = 0
    games = 0
    truncated = 0
    if records_path is not None:
        records_path = Path(records_path)
        records_path.parent.mkdir(parents=True, exist_ok=True)
        if not skip:
            records_path.write_text("")
    bar = progress_bar(total=num_deals, desc=f"{name_a} vs {name_b}", unit="deal", disable=not progress, dynamic_ncols=True,
                       initial=num_deals - len(todo))
    interrupted = False
    try:
        with played_units(player, todo, int(workers), ray_address) as outcomes:
            for outcome, deal_records in outcomes:
                diff, win, hands_sum = deal_values(outcome.plays, n_sides)
                if deal_records:
                    write_records(deal_records, records_path)
                if on_deal is not None:
                    on_deal(outcome)
                # counted only now: an interruption above leaves this deal out of the result
                diff_per_deal.append(diff)
                win_per_deal.append(win)
                total_hands += hands_sum
                games += len(outcome.plays)
                truncated += sum(play.truncated for play in outcome.plays)
                bar.update(1)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
    result = summarize_pair(
        diff_per_deal,
        win_per_deal,
        agent_a=name_a,
        agent_b=name_b,
        game=game,
        hands=total_hands,
        games=games,
        duplicate=bool(duplicate),
        seed=int(seed),
        options=opts,
        seconds=time.perf_counter() - start,
        deals_requested=len(todo),
        complete=not interrupted,
        truncated=truncated,
    )
    if interrupted:
        raise MatchInterrupted(result) from None
    return result


# ---------------------------------------------------------------------------------- output
def _fmt(v: float, spec: str) -> str:
    return "n/a" if not math.isfinite(v) else format(v, spec)


def _play_unit(results: Sequence[PairResult]) -> str:
    """What one play of the results is: ``"hand"`` or ``"game"`` (``episode``), else ``"play"``."""
    episodes = {str(r.options.get("episode", "hand")) for r in results}
    return episodes.pop() if len(episodes) == 1 and episodes <= {"hand", "game"} else "play"


def format_table(results: list[PairResult]) -> str:
    """A plain-text table, one row per pair: deals, hands, A's win rate (the share of plays won:
    the column says per hand or per game) and points per hand (A minus B) with their 95%
    intervals, the p-value and whether the difference is significant. Where there is no
    t-interval the points cell says why (``+0.250 [too few deals (3 < 15)]``) and the p-value and
    significance read ``n/a``. An interrupted match shows its deals as ``137 of 500``, and a line
    ``INCOMPLETE: A vs B: 137 of 500 deals ...`` follows the table. When a play was cut by the
    ``max_hands`` guard, a ``truncated`` column (plays cut ``of`` plays) follows ``hands`` and a
    line ``TRUNCATED: A vs B: 40 of 40 plays cut at max_hands=200 ...`` per such pair follows the
    table; a win rate with no play that ended reads ``n/a``.
    """
    unit = _play_unit(results)
    with_truncated = any(r.truncated for r in results)
    header = ["agent A", "agent B", "game", "deals", "hands", *(["truncated"] if with_truncated else []),
              f"win rate A, per {unit} [95% CI]", "points/hand A-B [95% CI]", "p-value", "sig."]
    rows = []
    for r in results:
        lo, hi = r.win_rate_ci
        plo, phi = r.points_per_hand_ci
        points = f"{_fmt(r.points_per_hand, '+.3f')} " + (f"[{r.interval_note}]" if r.interval_note else
                                                          f"[{_fmt(plo, '+.3f')}, {_fmt(phi, '+.3f')}]")
        win = (f"{_fmt(100 * r.win_rate, '.1f')}% [{_fmt(100 * lo, '.1f')}, {_fmt(100 * hi, '.1f')}]"
               if math.isfinite(r.win_rate) else "n/a")
        tested = math.isfinite(r.p_value)
        rows.append(
            [
                r.agent_a,
                r.agent_b,
                r.game,
                str(r.deals) if r.complete else f"{r.deals} of {r.deals_requested}",
                str(r.hands),
                *([f"{r.truncated} of {r.games}"] if with_truncated else []),
                win,
                points,
                "n/a" if not tested else (f"{r.p_value:.2g}" if r.p_value >= 1e-4 else "<1e-4"),
                "n/a" if not tested else "yes" if r.significant else "no",
            ]
        )
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    numeric = {3, 4, 5, 8} if with_truncated else {3, 4, 7}

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    out += [f"INCOMPLETE: {r.agent_a} vs {r.agent_b}: {r.deals} of {r.deals_requested} deals (interrupted; "
            "the row covers the deals played)" for r in results if not r.complete]
    out += [truncation_note(r) for r in results if r.truncated]
    return "\n".join(out)


def truncation_note(result: PairResult) -> str:
    """``"TRUNCATED: A vs B: 40 of 40 plays cut at max_hands=200 ..."``: one line saying how many
    plays of ``result`` the rules' ``max_hands`` guard cut before their episode ended, and that
    they are left out of the win rate; with ``allow_revoke`` it adds why that happens there."""
    from whist_env.rules.options import CommonOptions

    max_hands = result.options.get("max_hands", CommonOptions().max_hands)
    why = ("; with allow_revoke a hand annulled by a revoke is redealt and does not end the episode (RULES.md §2.9)"
           if result.options.get("allow_revoke") else "")
    return (f"TRUNCATED: {result.agent_a} vs {result.agent_b}: {result.truncated} of {result.games} plays cut at "
            f"max_hands={max_hands} before their episode ended; no winner, so left out of the win rate (their hands "
            f"count in points/hand){why}")


_CSV_FIELDS = [
    "agent_a", "agent_b", "game", "deals", "games", "hands", "win_rate", "win_rate_ci_low", "win_rate_ci_high",
    "points_per_hand", "points_per_hand_ci_low", "points_per_hand_ci_high", "p_value", "significant",
    "duplicate", "seed", "options", "seconds", "interval_note", "deals_requested", "complete", "truncated",
]


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it and a rename, so that a crash
    or Ctrl-C leaves either the old file or the new one, never half of one."""
    # not tempfile.mkstemp: its file is private (mode 0600); this one gets the usual umask mode
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("x", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save_results(results: list[PairResult], out_dir: str | Path) -> list[Path]:
    """Write ``results.json`` (a list of :meth:`PairResult.to_dict`) and ``results.csv`` (one row per pair).

    Each file is replaced whole (written beside it, then renamed): an interruption leaves the
    previous file or the new one. A row of an interrupted match has ``"complete": false`` and
    ``deals`` (played) below ``deals_requested``.

    Args:
        results: match results.
        out_dir: folder, created if missing.
    Returns:
        the two paths written, JSON first.
    Raises:
        OSError: when the folder or files cannot be written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dicts = [r.to_dict() for r in results]
    json_path = out / "results.json"
    csv_path = out / "results.csv"
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=_CSV_FIELDS)
    writer.writeheader()
    for d in dicts:
        row = {k: d[k] for k in _CSV_FIELDS if k in d}
        row["win_rate_ci_low"], row["win_rate_ci_high"] = d["win_rate_ci"]
        row["points_per_hand_ci_low"], row["points_per_hand_ci_high"] = d["points_per_hand_ci"]
        row["options"] = json.dumps(d["options"], sort_keys=True)
        writer.writerow(row)
    write_text_atomically(json_path, json.dumps(dicts, indent=2) + "\n")
    write_text_atomically(csv_path, buffer.getvalue())
    return [json_path, csv_path]




# ---------------------------------------------------------------------------------- the eval command
#: Options that do not change what a good move is (how rewards are paid, the truncation guard).
_NON_RULE_OPTIONS = frozenset({"reward", "episode", "max_hands", "first_dealer", "first_player"})


def rule_differences(agent: Policy, options: Any) -> str:
    """``"honours=False, ..."``: the rule options a trained agent (:class:`agents.base.TrainedOptions`)
    was trained with that differ from ``options`` (an options dataclass); ``""`` if none."""
    trained = agent.trained_options if isinstance(agent, TrainedOptions) else None
    if not trained:
        return ""
    diffs = []
    for key, value in trained.items():
        now = getattr(options, key, value)
        if key not in _NON_RULE_OPTIONS and (list(now) if isinstance(now, tuple) else now) != value:
            diffs.append(f"{key}={value!r} (here {now!r})")
    return ", ".join(diffs)


def env_version_difference(agent: Policy, game: str) -> str:
    """``"was trained on whist/<game>-v0, ..."`` when a trained agent
    (:class:`agents.base.TrainedEnvVersion`) learned an env version of ``game`` other than today's;
    ``""`` if not (docs/versioning.md: such an agent plays an env it never saw)."""
    from whist_env.versions import env_id, env_version

    trained = agent.trained_env_version if isinstance(agent, TrainedEnvVersion) else None
    if trained is None or int(trained) == env_version(game):
        return ""
    return (f"was trained on {env_id(game, int(trained))}, not on today's {env_id(game)}: the env has changed "
            "since (CHANGELOG.md); retrain it or read its results as of an older env")


def unique_labels(specs: Sequence[str]) -> list[str]:
    """The specs as agent names, a repeated spec getting ``#2``, ``#3``, ... (``random``,
    ``random#2``)."""
    labels: list[str] = []
    for spec in specs:
        label, k = spec, 2
        while label in labels:
            label, k = f"{spec}#{k}", k + 1
        labels.append(label)
    return labels


@dataclass
class MatchSetup:
    """A checked line-up for ``whist eval`` / ``whist league``: the rule options (with
    ``episode="hand"`` unless given), the rules object of those options, the agents, their
    unique labels (the canonical specs, a repeated one with ``#2``, ...) and their canonical
    specs (:func:`agents.registry.canonical_spec`)."""

    options: dict[str, Any]
    game: Any
    agents: list[Policy]
    labels: list[str]
    specs: list[str] = field(default_factory=list)


def prepare_match(game: str, specs: Sequence[str], deals: int, seed: int, option_pairs: Sequence[tuple[str, Any]],
                  command: str, workers: int = 1, ray_address: str | None = None) -> MatchSetup:
    """Check the arguments of a match command and build its agents.

    The agents are named by their canonical specs (:func:`agents.registry.canonical_spec`:
    ``pimc`` and ``PIMC:z=1.0`` are one player), a spec listed again getting ``#2``, ...

    Raises:
        CommandError: on an unknown game, fewer than two specs, ``deals < 1``, ``seed < 0``,
            ``workers < 1``, ``--ray`` without Ray installed or with an address where nothing
            listens, a bad rule option or a bad agent spec (the message names it).
    """
    from agents.registry import canonical_spec, make_agent, spec_error
    from whist_env import GAMES

    if game not in GAMES:
        raise CommandError(f"unknown game {game!r}; games: {sorted(GAMES)}")
    if len(specs) < 2:
        raise CommandError("--agents needs at least two agent specs")
    if deals < 1:
        raise CommandError(f"--deals must be >= 1, got {deals}")
    if seed < 0:
        raise CommandError(f"--seed must be >= 0, got {seed}")
    if workers < 1:
        raise CommandError(f"--workers must be >= 1, got {workers}")
    if ray_address is not None:
        from training.evaluation.ray_deals import ray_address_problem, ray_available

        problem = ray_available() or ray_address_problem(ray_address)
        if problem is not None:
            raise CommandError(f"--ray: {problem}" if not problem.startswith("--ray") else problem)
    options = {"episode": "hand", **dict(option_pairs)}
    try:
        probe = GAMES[game].raw_env(**options)
    except (ValueError, TypeError) as err:
        raise CommandError(f"bad --option: {err}") from None
    rules = probe.game
    agents, canonical = [], []
    for i, spec in enumerate(specs):
        try:
            agents.append(make_agent(spec, game, seed=seed + 1 + i))
            canonical.append(canonical_spec(spec, game))
        except (ValueError, OSError, ImportError, RuntimeError, KeyError) as err:
            raise CommandError(spec_error(spec, err)) from None
    obs_size = probe.observation_space(probe.possible_agents[0])["observation"].shape[0]
    for spec, agent in zip(specs, agents):
        note = rule_differences(agent, rules.options)
        try:  # a trained agent must fit the observation and actions of these options
            if isinstance(agent, ChecksFit):
                agent.check_fits(obs_size, rules.num_actions)
        except ValueError as err:
            raise CommandError(f"agent {spec!r} cannot play {game} with these options: {err}"
                               + (f"; it was trained with {note}" if note else "")) from None
        if note:
            print(f"whist {command}: note: {spec} was trained with {note}; this match uses the game's options "
                  f"(add --option KEY=VALUE to match)", file=sys.stderr)
        version_note = env_version_difference(agent, game)
        if version_note:
            print(f"whist {command}: note: {spec} {version_note}", file=sys.stderr)
    return MatchSetup(options=options, game=rules, agents=agents, labels=unique_labels(canonical), specs=canonical)


def safe_file_name(label: str) -> str:
    """An agent label made safe for a file name: characters other than letters, digits and
    ``-_.#`` become ``_``, leading and trailing ``.``/``_`` go (``"agent"`` when nothing is left)."""
    return "".join(ch if ch.isalnum() or ch in "-_.#" else "_" for ch in label).strip("._") or "agent"


def records_path(folder: str | Path, game: str, label_a: str, label_b: str) -> Path:
    """``folder/<game>__<label A>__vs__<label B>.jsonl``, labels made safe for a file name (:func:`safe_file_name`)."""
    return Path(folder) / f"{game}__{safe_file_name(label_a)}__vs__{safe_file_name(label_b)}.jsonl"


def _interrupted_eval(args: Any, pairs: Sequence[tuple[int, int]], labels: Sequence[str], options: Mapping[str, Any],
                      results: list[PairResult], stop: KeyboardInterrupt) -> Interrupted:
    """After Ctrl-C in ``whist eval``: print the table of what finished (the interrupted match's
    row marked incomplete), write it to ``--out``, and return the :class:`Interrupted` to raise."""
    finished = len(results)
    if isinstance(stop, MatchInterrupted):
        partial = stop.result
    else:  # between two matches: the next one had not started
        i, j = pairs[min(finished, len(pairs) - 1)]
        partial = summarize_pair([], [], agent_a=labels[i], agent_b=labels[j], game=args.game, hands=0,
                                 duplicate=not args.no_duplicate, seed=int(args.seed), options=dict(options),
                                 deals_requested=int(args.deals), complete=False)
    shown = results + ([partial] if finished < len(pairs) else [])
    print(format_table(shown))
    parts = [f"{finished} of {len(pairs)} matches finished"]
    if finished < len(pairs):
        parts.append(f"{partial.agent_a} vs {partial.agent_b} stopped after {partial.deals} of {partial.deals_requested} deals "
                     "(the table above, marked INCOMPLETE)")
    if args.out:
        try:
            paths = save_results(shown, args.out)
            parts.append(f"{' and '.join(p.name for p in paths)} in {args.out} say so (\"complete\": false)")
        except OSError as err:
            parts.append(f"--out {args.out}: not written: {err}")
    else:
        parts.append("nothing saved (no --out)")
    if args.records:
        parts.append(f"the records of the finished deals are in {args.records}")
    return Interrupted("; ".join(parts))


def run_eval(args: Any) -> int:
    """Carry out ``whist eval`` (arguments: :func:`training.cli.configure_eval`): print the table,
    optionally save JSON/CSV, records and bidding statistics; returns 0.

    Raises:
        CommandError: bad game, option, deal count, seed or agent spec.
        Interrupted: Ctrl-C (or SIGTERM); the table of the finished matches and of the deals
            finished in the interrupted one is printed first (that row marked ``INCOMPLETE``),
            ``--out`` receives it (``"complete": false``, ``deals`` of ``deals_requested``), and
            the message says what was kept.
    """
    setup = prepare_match(args.game, args.agents, args.deals, args.seed, args.option, "eval", args.workers, args.ray)
    agents, labels = setup.agents, setup.labels
    for flag, folder in (("--out", args.out), ("--records", args.records)):
        if folder:
            try:  # before hours of play, not after
                Path(folder).mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise CommandError(f"{flag} {folder}: cannot create the folder: {err}") from None
    # records for --bid-stats alone go to a folder removed when the command ends (or is interrupted)
    scratch = tempfile.TemporaryDirectory(prefix="whist-records-") if args.bid_stats and not args.records else None
    folder = args.records or (scratch.name if scratch is not None else None)
    pairs = [(i, j) for i in range(len(agents)) for j in range(i + 1, len(agents))]
    results: list[PairResult] = []
    record_files: list[Path] = []
    try:
        for i, j in pairs:
            path = None if folder is None else records_path(folder, args.game, labels[i], labels[j])
            if path is not None:
                record_files.append(path)
            try:
                results.append(evaluate_pair(args.game, agents[i], agents[j], args.deals, seed=args.seed,
                                             options=setup.options, duplicate=not args.no_duplicate, progress=not args.quiet,
                                             labels=(labels[i], labels[j]), records_path=path, workers=args.workers,
                                             ray_address=args.ray))
            except ValueError as err:  # an illegal action, an agent that cannot go to the workers
                raise CommandError(f"{labels[i]} vs {labels[j]}: {err}") from None
            if args.records:
                print(f"wrote {path}", file=sys.stderr)
    except KeyboardInterrupt as stop:
        raise _interrupted_eval(args, pairs, labels, setup.options, results, stop) from None
    saved = save_results(results, args.out) if args.out else []
    print(format_table(results))
    total = sum(r.seconds for r in results)
    print(f"({sum(r.games for r in results)} games, {sum(r.hands for r in results)} hands in {total:.1f} s)")
    if args.bid_stats:
        from training.evaluation.bidding import bidding_stats, format_bidding_stats
        from whist_env.records import read_records

        records = [r for path in record_files for r in read_records(path)]
        print()
        print(format_bidding_stats(bidding_stats(records)))
    for path in saved:
        print(f"wrote {path}")
    return 0
