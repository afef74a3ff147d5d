"""Bidding statistics from game records: how well each agent bids.

Input: game records (``whist_env.records`` format), as ``whist eval --records DIR`` writes them.
Which games have bids, and of which style, is read from their descriptors (``GameSpec.bids``,
:mod:`whist_env.games`); records of other games are skipped. Per agent label
(``record["players"]``):

* exact bids (``bids="exact"``, Romanian Whist, RULES.md §5): every bid made, the exact bids
  (tricks taken == bid) and their share with a 95% Wilson interval, overall and by deal size k
  (cards per player).
* contracts (``bids="contract"``, Bid Whist, RULES.md §6): contracts won in the auction (the label
  sat in the declarer's seat), contracts made (declaring books = the side's tricks + 1 for the
  kitty when played with one, §6.8, at least 6 + level), the made share with a 95% Wilson
  interval, the mean level, and the contracts by mode.
* side contracts (``bids="side"``, Spades, RULES.md §8): the bids of a number of tricks, the share
  of them whose side made its contract (the side's tricks at least the sum of its players' bids,
  §8.3) with a 95% Wilson interval, the mean bid, and the nils (bids of exactly no trick) and the
  share of them made. What a bid means is the rules' (``bid_meaning``); every trick of the side
  counts toward its contract, a nil bidder's included (§8.5's default ``nil_tricks``).

Python: ``bidding_stats(records) -> dict`` (shape in its docstring), ``format_bidding_stats``.
Command line (:func:`run_bid_stats`): ``whist bid-stats FILE.jsonl [FILE.jsonl ...]`` prints the
tables (``--json`` prints the dict instead); ``whist eval --bid-stats`` prints them after a match.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from training.errors import CommandError
from training.evaluation.stats import wilson_counts
from whist_env import games
from whist_env.records import read_records


def bid_style(game: object) -> str | None:
    """The bid style of the game named ``game`` (``"exact"``, ``"contract"`` or ``"side"``, its
    descriptor's ``bids``), or ``None`` for a game without counted bids or a name no game is
    registered under."""
    try:
        return games.spec(game).bids  # type: ignore[arg-type]
    except ValueError:
        return None


def _bid_phases(game: str) -> frozenset[str]:
    """The phases in which ``game``'s players bid (its descriptor's decisions of kind ``bid``)."""
    return frozenset(p for p, d in games.spec(game).decisions.items() if d.kind == games.BID)


def _share(successes: int, trials: int) -> dict[str, Any]:
    lo, hi = wilson_counts(successes, trials)
    return {"share": successes / trials if trials else math.nan, "ci": (lo, hi)}


def _bid_value(label: str) -> int | None:
    """The bid of a Romanian label ``"bid:3"`` (``None`` for another label)."""
    parts = str(label).split(":")
    return int(parts[1]) if len(parts) == 2 and parts[0] == "bid" and parts[1].isdigit() else None


def _actions_by_hand(record: Mapping[str, Any]) -> dict[int, list[Mapping[str, Any]]]:
    out: dict[int, list[Mapping[str, Any]]] = {}
    for a in record.get("actions", ()):
        out.setdefault(int(a["hand_number"]), []).append(a)
    return out


def _tricks_by_agent(hand: Mapping[str, Any]) -> dict[str, int]:
    taken: dict[str, int] = {}
    for t in hand.get("tricks", ()):
        taken[t["winner"]] = taken.get(t["winner"], 0) + 1
    return taken


def _complete(hand: Mapping[str, Any]) -> bool:
    """Whether the hand was played out and scored (a record may end mid-hand)."""
    return hand.get("points") is not None


def _complete_hands(records: Iterable[Mapping[str, Any]], style: str) -> Iterator[tuple[Mapping[str, Any], list[tuple[Mapping[str, Any], list[Mapping[str, Any]]]]]]:
    """Each record of a game whose bids are ``style`` (:data:`whist_env.games.BID_STYLES`), with
    its complete hands, each with its bidding-phase actions in order: ``(record, [(hand,
    bid_actions), ...])``. Records of other games are skipped."""
    for rec in records:
        if bid_style(rec.get("game")) != style:
            continue
        bid_phases = _bid_phases(rec["game"])
        actions = _actions_by_hand(rec)
        yield rec, [(hand, [a for a in actions.get(int(hand["hand_number"]), ()) if a.get("phase") in bid_phases])
                    for hand in rec.get("hands", ()) if _complete(hand)]


def romanian_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Raw exact-bid counts per label of the records of games with exact bids (``bids="exact"``:
    Romanian Whist): ``{label: {"bids": n, "exact": n, "by_k": {k: [bids, exact]}}}`` (k: cards per
    player in the deal). Records of other games are skipped."""
    out: dict[str, dict[str, Any]] = {}
    for rec, hands in _complete_hands(records, "exact"):
        players = rec.get("players") or {}
        for hand, bid_actions in hands:
            taken = _tricks_by_agent(hand)
            cards = hand["deal"]["hands"]
            for a in bid_actions:
                bid = _bid_value(a["label"])
                if bid is None:
                    continue
                agent = a["agent"]
                k = len(cards[agent])
                exact = int(taken.get(agent, 0) == bid)
                row = out.setdefault(players.get(agent, agent), {"bids": 0, "exact": 0, "by_k": {}})
                row["bids"] += 1
                row["exact"] += exact
                per_k = row["by_k"].setdefault(k, [0, 0])
                per_k[0] += 1
                per_k[1] += exact
    return out


def bid_whist_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Raw contract counts per label of the records of games with an auction (``bids="contract"``:
    Bid Whist): ``{label: {"hands": n (hands the label took part in), "contracts": n, "made": n,
    "level_sum": n, "by_mode": {mode: [contracts, made]}}}``. Records of other games are skipped."""
    out: dict[str, dict[str, Any]] = {}
    for rec, hands in _complete_hands(records, "contract"):
        players = rec.get("players") or {}
        agents = list(players) or [f"player_{i}" for i in range(4)]
        # the kitty counts as a book when played with one; a record names the option only when set
        default_kitty = getattr(games.spec(rec["game"]).options(), "kitty", False)
        kitty = bool((rec.get("options") or {}).get("kitty", default_kitty))
        for hand, bid_actions in hands:
            for label in {players.get(a, a) for a in agents}:
                out.setdefault(label, {"hands": 0, "contracts": 0, "made": 0, "level_sum": 0, "by_mode": {}})["hands"] += 1
            bids = [a for a in bid_actions if a["label"] != "pass"]
            if not bids:
                continue
            declarer = bids[-1]["agent"]
            _, level_text, mode = bids[-1]["label"].split(":")
            level = int(level_text)
            seat = agents.index(declarer) if declarer in agents else int(declarer.rsplit("_", 1)[1])
            side = {a for i, a in enumerate(agents) if i % 2 == seat % 2}
            taken = _tricks_by_agent(hand)
            books = sum(n for a, n in taken.items() if a in side) + (1 if kitty else 0)
            made = int(books >= 6 + level)
            row = out.setdefault(players.get(declarer, declarer), {"hands": 0, "contracts": 0, "made": 0, "level_sum": 0, "by_mode": {}})
            row["contracts"] += 1
            row["made"] += made
            row["level_sum"] += level
            per_mode = row["by_mode"].setdefault(mode, [0, 0])
            per_mode[0] += 1
            per_mode[1] += made
    return out


def side_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Raw side-contract counts per label of the records of games whose players each bid toward
    their side's contract (``bids="side"``: Spades, RULES.md §8): ``{label: {"hands": n (complete
    hands the label bid in), "bids": n (bids of a number of tricks), "made": n (of those, bids
    whose side took at least the sum of its players' bids), "bid_sum": n (tricks bid), "nils": n
    (bids of exactly no trick), "nils_made": n (nils whose bidder took none)}}``. A bid's meaning
    is the rules' :meth:`~whist_env.rules.base.TrickTakingGame.bid_meaning` of its label (a bid
    ``exact`` is a nil, the others count toward the side's contract); sides are the rules'
    ``side_of``. Records of other games are skipped."""
    out: dict[str, dict[str, Any]] = {}
    for rec, hands in _complete_hands(records, "side"):
        spec = games.spec(rec["game"])
        known = {f.name for f in dataclasses.fields(spec.options)}
        rules = spec.rules(**{k: v for k, v in (rec.get("options") or {}).items() if k in known})
        players = rec.get("players") or {}
        for hand, bid_actions in hands:
            taken = _tricks_by_agent(hand)
            bids = [(a["agent"], rules.bid_meaning(rules.action_id(a["label"]))) for a in bid_actions]
            bids = [(agent, meaning) for agent, meaning in bids if meaning is not None]
            side = {agent: rules.side_of(int(agent.rsplit("_", 1)[1])) for agent, _ in bids}
            contract: dict[int, int] = {}
            tricks: dict[int, int] = {}
            for agent, meaning in bids:
                if not meaning.exact:
                    contract[side[agent]] = contract.get(side[agent], 0) + meaning.tricks
            for agent, n in taken.items():
                seat_side = rules.side_of(int(agent.rsplit("_", 1)[1]))
                tricks[seat_side] = tricks.get(seat_side, 0) + n
            for agent, meaning in bids:
                row = out.setdefault(players.get(agent, agent), {"hands": 0, "bids": 0, "made": 0, "bid_sum": 0, "nils": 0, "nils_made": 0})
                row["hands"] += 1
                if meaning.exact:
                    row["nils"] += 1
                    row["nils_made"] += int(taken.get(agent, 0) == meaning.tricks)
                else:
                    row["bids"] += 1
                    row["bid_sum"] += meaning.tricks
                    row["made"] += int(tricks.get(side[agent], 0) >= contract[side[agent]])
    return out


def bidding_stats(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Bidding statistics per game and agent label.

    Args:
        records: game records (dicts of ``whist_env.records``); records of games without bids
            (:func:`bid_style` ``None``) are ignored.
    Returns:
        game name -> table, in the registry's order of games, a game present only when the
        records hold it. A game with exact bids (``"romanian_whist"``): ``{label: {"bids": int,
        "exact": int, "share": float, "ci": (lo, hi), "by_k": {k: {"bids", "exact", "share",
        "ci"}}}}``; a game with contracts (``"bid_whist"``): ``{label: {"hands": int, "contracts":
        int, "made": int, "share": float (made / contracts), "ci": (lo, hi), "mean_level": float,
        "by_mode": {mode: {"contracts", "made", "share", "ci"}}}}``; a game with side contracts
        (``"spades"``): ``{label: {"hands": int, "bids": int, "made": int, "share": float (made /
        bids), "ci": (lo, hi), "mean_bid": float, "nils": int, "nils_made": int, "nil": {"share",
        "ci"}}}`` (:func:`side_counts`). Shares are ``nan`` (and intervals ``(nan, nan)``) when
        there is nothing to count; intervals are 95% Wilson.
    """
    by_game: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        if bid_style(r.get("game")) is not None:
            by_game.setdefault(r["game"], []).append(r)
    out: dict[str, Any] = {}
    for spec in games.specs():
        if spec.name in by_game:
            out[spec.name] = _bid_table(spec.bids, by_game[spec.name])
    return out


def _bid_table(style: str, records: list[Mapping[str, Any]]) -> dict[str, Any]:
    """One game's table of :func:`bidding_stats` from its ``records``, by its bid ``style``."""
    table = {}
    if style == "exact":
        for label, c in sorted(romanian_counts(records).items()):
            by_k = {k: {"bids": b, "exact": e, **_share(e, b)} for k, (b, e) in sorted(c["by_k"].items())}
            table[label] = {"bids": c["bids"], "exact": c["exact"], **_share(c["exact"], c["bids"]), "by_k": by_k}
    elif style == "side":
        for label, c in sorted(side_counts(records).items()):
            n = c["bids"]
            table[label] = {"hands": c["hands"], "bids": n, "made": c["made"], **_share(c["made"], n),
                            "mean_bid": c["bid_sum"] / n if n else math.nan, "nils": c["nils"], "nils_made": c["nils_made"],
                            "nil": _share(c["nils_made"], c["nils"])}
    else:
        for label, c in sorted(bid_whist_counts(records).items()):
            by_mode = {m: {"contracts": n, "made": k, **_share(k, n)} for m, (n, k) in sorted(c["by_mode"].items())}
            n = c["contracts"]
            table[label] = {"hands": c["hands"], "contracts": n, "made": c["made"], **_share(c["made"], n),
                            "mean_level": c["level_sum"] / n if n else math.nan, "by_mode": by_mode}
    return table


def _pct(share: float, ci: tuple[float, float]) -> str:
    if not math.isfinite(share):
        return "n/a"
    return f"{100 * share:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    out = ["  ".join(c.ljust(w) for c, w in zip(header, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return out


def format_bidding_stats(stats: Mapping[str, Any]) -> str:
    """Plain-text tables of :func:`bidding_stats`: per game (titled by its descriptor's docs
    title) one row per label, and per label and deal size k for exact bids, per label and mode
    for contracts, per label for side contracts (bids made, nils made). Keys of ``stats`` that
    name no game with bids are skipped."""
    lines: list[str] = []
    for game, table in stats.items():
        style = bid_style(game)
        if style is None:
            continue
        if lines:
            lines.append("")
        title = games.spec(game).docs.title
        rows = []
        if style == "exact":
            for label, s in table.items():
                rows.append([label, "all", str(s["bids"]), str(s["exact"]), _pct(s["share"], s["ci"])])
                for k, sk in s["by_k"].items():
                    rows.append([label, str(k), str(sk["bids"]), str(sk["exact"]), _pct(sk["share"], sk["ci"])])
            lines.append(f"{title}: exact bids")
            lines += _table(["agent", "k", "bids", "exact", "exact share [95% CI]"], rows)
        elif style == "side":
            for label, s in table.items():
                bid = "n/a" if not math.isfinite(s["mean_bid"]) else f"{s['mean_bid']:.2f}"
                rows.append([label, str(s["hands"]), str(s["bids"]), str(s["made"]), _pct(s["share"], s["ci"]), bid,
                             str(s["nils"]), str(s["nils_made"]), _pct(s["nil"]["share"], s["nil"]["ci"])])
            lines.append(f"{title}: bids whose side made its contract, and nils made")
            lines += _table(["agent", "hands", "bids", "made", "made share [95% CI]", "mean bid", "nils", "nils made",
                             "nil share [95% CI]"], rows)
        else:
            for label, s in table.items():
                level = "n/a" if not math.isfinite(s["mean_level"]) else f"{s['mean_level']:.2f}"
                rows.append([label, "all", str(s["hands"]), str(s["contracts"]), str(s["made"]), _pct(s["share"], s["ci"]), level])
                for m, sm in s["by_mode"].items():
                    rows.append([label, m, "", str(sm["contracts"]), str(sm["made"]), _pct(sm["share"], sm["ci"]), ""])
            lines.append(f"{title}: contracts won in the auction and made")
            lines += _table(["agent", "mode", "hands", "contracts", "made", "made share [95% CI]", "mean level"], rows)
    if not lines:
        titles = [spec.docs.title for spec in games.specs() if spec.bids is not None]
        lines.append(f"no {' or '.join(titles)} records")
    return "\n".join(lines)


def json_ready(value: Any) -> Any:
    """``value`` with mappings' keys as text, tuples as lists and non-finite floats as ``None``
    (JSON has no NaN)."""
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def run_bid_stats(args: Any) -> int:
    """Carry out ``whist bid-stats`` (arguments: :func:`training.cli.configure_bid_stats`): print
    the tables (or JSON with ``--json``); returns 0.

    Raises:
        CommandError: a file that cannot be read, or a record in it without the fields the
            statistics read (``game``, ``players``, ``hands``, ``actions``).
    """
    records = []
    for path in args.files:
        try:
            for record in read_records(path):
                missing = [k for k, t in (("game", str), ("players", dict), ("hands", list), ("actions", list))
                           if not isinstance(record.get(k), t)]
                if missing:
                    raise ValueError(f"malformed record: no valid {', '.join(repr(k) for k in missing)} field")
                records.append(record)
        except (OSError, ValueError) as err:
            where = f"{path}: " if isinstance(err, ValueError) and str(path) not in str(err) else ""
            raise CommandError(f"{where}{err}") from None
    stats = bidding_stats(records)
    print(json.dumps(json_ready(stats), indent=2) if args.json else format_bidding_stats(stats))
    return 0
