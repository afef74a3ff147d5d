"""Ratings and pairwise win rates computed from the results store.

Used by ``whist league`` (after its matches) and ``whist leaderboard`` (at any time), so both
print the same thing for the same store.

Matches are grouped by game and rule options (a leaderboard never mixes rule sets). Within a
group:

* **Ratings**: openskill's Plackett-Luce model (default ``mu = 25``, ``sigma = 25/3``), one
  two-player update per duplicate deal: the agent whose side scored more points over all plays of
  the deal wins it, equal points are a draw. Updates run in a fixed order (deal index, then the
  two agents' names, then match id), so a recomputation gives the same numbers whatever order the
  matches were stored in. ``ordinal = mu - 3 sigma`` (a conservative skill estimate) ranks the
  agents.
* **Pairwise results**: for each pair of agents, every stored deal between them (from all
  matches, turned to the pair's first-stored orientation) is summarised with
  :func:`training.evaluation.match.deal_values` and :func:`training.evaluation.match.summarize_pair`: win rate
  and points per hand with 95% t-intervals over deals, the same statistics as ``whist eval``.

Two measures, labelled apart. The ranking counts *deals* (won on points over the deal's plays);
the pairwise win rate counts *hands* (plays) and the points are per hand. They can disagree: an
agent that wins one deal by many points and loses two by one point has won more hands and more
points but fewer deals, and ranks lower. So the printed ranking says what it ranks by, shows the
ordinal it is sorted by and each agent's deals won, drawn and lost with its deal win rate, and the
pairwise columns say they count hands.

Each deal counts once per pair: a store written before a pair was one match whatever the order
(``--agents A B``, then ``--agents B A``) may hold both orientations over the same deals; the
deals of the first-stored match are counted and the same deal indices of the other left out.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from training.evaluation.match import PairResult, deal_values, format_table, summarize_pair
from training.evaluation.store import MatchRow, ResultsStore, canonical_json, match_options
from whist_env.rules.options import CommonOptions


@dataclass(frozen=True)
class AgentRating:
    """One agent's rating.

    Attributes:
        name: display name (agent name, plus ``@<hash prefix>`` for a checkpoint).
        mu, sigma: openskill skill mean and standard deviation (rating points).
        ordinal: ``mu - 3 * sigma``.
        deals: duplicate deals played; wins, draws, losses: their outcomes for this agent (a deal
            is won by the side with more points over all its plays).
    """

    name: str
    mu: float
    sigma: float
    ordinal: float
    deals: int
    wins: int
    draws: int
    losses: int

    @property
    def deal_win_rate(self) -> float:
        """Share of deals won, a draw counting half, in [0, 1] (``nan`` with no deals)."""
        return (self.wins + 0.5 * self.draws) / self.deals if self.deals else math.nan


@dataclass
class Leaderboard:
    """Ratings and pairwise results of one (game, rule options) group of the store.

    Attributes:
        game: game name.
        options: rule options of every match of the group.
        ratings: one entry per agent, best ``ordinal`` first (ties by name).
        pairs: one :class:`PairResult` per pair of agents that played, in first-stored order,
            from the first-stored agent A's point of view.
        deals: duplicate deals in all (the number of rating updates).
    """

    game: str
    options: dict[str, Any]
    ratings: list[AgentRating] = field(default_factory=list)
    pairs: list[PairResult] = field(default_factory=list)
    deals: int = 0

    def win_rate_matrix(self) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
        """Row agent's win rate against the column agent.

        Returns:
            ``(names, rate, low, high)``: names in rating order; three ``float64`` arrays of shape
            ``(n, n)`` with the win rate and its 95% interval bounds in [0, 1]; ``nan`` on the
            diagonal and for pairs that never played.
        """
        names = [r.name for r in self.ratings]
        pos = {n: i for i, n in enumerate(names)}
        n = len(names)
        rate, low, high = (np.full((n, n), np.nan) for _ in range(3))
        for p in self.pairs:
            i, j = pos[p.agent_a], pos[p.agent_b]
            rate[i, j], (low[i, j], high[i, j]) = p.win_rate, p.win_rate_ci
            rate[j, i], low[j, i], high[j, i] = 1.0 - p.win_rate, 1.0 - p.win_rate_ci[1], 1.0 - p.win_rate_ci[0]
        return names, rate, low, high


def compute_leaderboards(store: ResultsStore, game: str | None = None) -> list[Leaderboard]:
    """Every (game, options) group of the store (optionally one game's), sorted by game then options JSON.

    Args:
        store: an open results store.
        game: only this game's matches, or all games when ``None``.
    Returns:
        one :class:`Leaderboard` per group with at least one stored deal.
    """
    groups: dict[tuple[str, str], list[MatchRow]] = defaultdict(list)
    for m in store.matches(game):
        groups[(m.game, m.options_json)].append(m)
    out = []
    for key in sorted(groups):
        board = _leaderboard(store, groups[key])
        if board.deals:
            out.append(board)
    return out


def compute_leaderboard(store: ResultsStore, game: str, options: dict[str, Any]) -> Leaderboard:
    """The leaderboard of one game and rule-option set (empty when nothing is stored for it);
    options at their defaults are no change (:func:`training.evaluation.store.match_options`)."""
    stored = match_options(game, options)
    matches = [m for m in store.matches(game) if m.options_json == canonical_json(stored)]
    return _leaderboard(store, matches) if matches else Leaderboard(game=game, options=_shown_options(stored))


def _display_names(store: ResultsStore, ids: set[int]) -> dict[int, str]:
    rows = store.agents()
    names: dict[int, str] = {}
    taken: set[str] = set()
    for i in sorted(ids):
        name = rows[i].display_name
        if name in taken:  # same label for two different agents (e.g. kinds differ): keep them apart
            name = f"{name}#{i}"
        taken.add(name)
        names[i] = name
    return names


def _leaderboard(store: ResultsStore, matches: list[MatchRow]) -> Leaderboard:
    from openskill.models import PlackettLuce

    first = matches[0]
    names = _display_names(store, {m.agent_a for m in matches} | {m.agent_b for m in matches})
    # pair (unordered) -> its orientation (a, b) in first-stored order, and per-deal values
    orientation: dict[frozenset[int], tuple[int, int]] = {}
    values: dict[frozenset[int], dict[str, Any]] = {}
    events: list[tuple[int, str, str, int, int, int, float]] = []
    # deal indices already counted per (pair, seed, duplicate): the same deals stored in both
    # orientations (a store written before a pair was one match) count once, first-stored
    counted: dict[tuple[frozenset[int], int, bool], set[int]] = defaultdict(set)
    for m in sorted(matches, key=lambda m: m.id):
        pair = frozenset((m.agent_a, m.agent_b))
        orientation.setdefault(pair, (m.agent_a, m.agent_b))
        flip = orientation[pair] != (m.agent_a, m.agent_b)
        v = values.setdefault(pair, {"diff": [], "win": [], "hands": 0, "games": 0, "duplicate": True})
        v["duplicate"] = v["duplicate"] and m.duplicate
        seen = counted[(pair, m.seed, m.duplicate)]
        for deal in store.deals(m.id):
            if deal.index in seen:
                continue
            seen.add(deal.index)
            diff, win, hands = deal_values(deal.plays, len(deal.plays[0].points))
            v["diff"].append(-diff if flip else diff)
            v["win"].append(1.0 - win if flip else win)
            v["hands"] += hands
            v["games"] += len(deal.plays)
            events.append((deal.index, names[m.agent_a], names[m.agent_b], m.id, m.agent_a, m.agent_b, diff))
    events.sort(key=lambda e: e[:4])

    model = PlackettLuce()
    ratings = {i: model.rating(name=n) for i, n in names.items()}
    record = {i: [0, 0, 0] for i in names}  # wins, draws, losses
    for *_, a, b, diff in events:
        ranks = [0, 1] if diff > 0 else [1, 0] if diff < 0 else [0, 0]
        [[ratings[a]], [ratings[b]]] = model.rate([[ratings[a]], [ratings[b]]], ranks=ranks)
        outcome_a = 0 if diff > 0 else 2 if diff < 0 else 1
        record[a][outcome_a] += 1
        record[b][2 - outcome_a] += 1

    rows = [
        AgentRating(
            name=names[i],
            mu=float(r.mu),
            sigma=float(r.sigma),
            ordinal=float(r.mu - 3.0 * r.sigma),
            deals=sum(record[i]),
            wins=record[i][0],
            draws=record[i][1],
            losses=record[i][2],
        )
        for i, r in ratings.items()
    ]
    rows.sort(key=lambda r: (-r.ordinal, r.name))
    pairs = []
    for pair, (a, b) in orientation.items():
        v = values[pair]
        if not v["diff"]:
            continue
        pairs.append(
            summarize_pair(
                v["diff"], v["win"], agent_a=names[a], agent_b=names[b], game=first.game, hands=v["hands"],
                games=v["games"], duplicate=v["duplicate"], seed=first.seed, options=_shown_options(first.options),
            )
        )
    return Leaderboard(game=first.game, options=_shown_options(first.options), ratings=rows, pairs=pairs, deals=len(events))


def _shown_options(stored: Mapping[str, Any]) -> dict[str, Any]:
    """A match's stored options (the changes from the game's defaults) with ``episode`` spelled
    out, as the tables and plots name it (``hand`` or ``game``)."""
    return {"episode": CommonOptions().episode, **dict(stored)}


def _pct(v: float) -> str:
    return "n/a" if not math.isfinite(v) else f"{100 * v:.1f}%"


#: The line above the rating table: what the ranking ranks by, and how it differs from the pairwise tables.
RANKING_NOTE = ("Ranked by ordinal = mu - 3*sigma of openskill Plackett-Luce ratings, one update per duplicate deal:\n"
                "a deal is won by the side with more points over all its plays (equal points: drawn). The pairwise\n"
                "tables below count hands won and points per hand, which can order two agents otherwise.")


def format_leaderboard(board: Leaderboard) -> str:
    """Plain text: a header line, :data:`RANKING_NOTE`, the rating table (rank, agent, the ordinal
    it is ranked by, mu, sigma, deals and the deals won, drawn and lost, the deal win rate), the
    pairwise win-rate matrix (hands won) and the pairwise table of
    :func:`training.evaluation.match.format_table` (win rates per hand and points per hand with
    95% CIs)."""
    lines = [
        f"Leaderboard: {board.game}, options {canonical_json(board.options)}: {len(board.ratings)} agents, "
        f"{len(board.pairs)} pairs, {board.deals} duplicate deals",
    ]
    if not board.ratings:
        return lines[0] + "\n(nothing stored)"
    lines.append(RANKING_NOTE)
    header = ["rank", "agent", "ordinal", "mu", "sigma", "deals", "deals won", "drawn", "lost", "deal win rate"]
    table = [
        [str(k), r.name, f"{r.ordinal:.2f}", f"{r.mu:.2f}", f"{r.sigma:.2f}", str(r.deals), str(r.wins), str(r.draws), str(r.losses),
         _pct(r.deal_win_rate)]
        for k, r in enumerate(board.ratings, 1)
    ]
    lines += _align(header, table, left={1})
    names, rate, low, high = board.win_rate_matrix()
    unit = {"hand": "hands", "game": "games"}.get(str(board.options.get("episode", "hand")), "plays")
    lines.append("")
    lines.append(f"Win rate of the row agent against the column agent, in {unit} won (ties count half; "
                 "not the deals the ranking counts):")
    matrix = [[n] + ["-" if i == j else _pct(rate[i, j]) for j in range(len(names))] for i, n in enumerate(names)]
    lines += _align([""] + names, matrix, left={0})
    lines.append("")
    lines.append(format_table(board.pairs))
    return "\n".join(lines)


def _align(header: list[str], rows: list[list[str]], left: set[int]) -> list[str]:
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def format_leaderboards(boards: list[Leaderboard]) -> str:
    """Every leaderboard of :func:`compute_leaderboards`, separated by blank lines."""
    return "\n\n".join(format_leaderboard(b) for b in boards)
