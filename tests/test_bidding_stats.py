"""Bidding statistics from game records (training.evaluation.bidding): exact counts on hand-made records."""

from __future__ import annotations

import json
import math

import pytest
from scipy.stats import binomtest

from training.cli import main as whist
from training.evaluation.bidding import bidding_stats, format_bidding_stats
from training.evaluation.stats import wilson_counts
from whist_env import games

AGENTS = ["player_0", "player_1", "player_2", "player_3"]


def trick(winner: str) -> dict:
    return {"leader": "player_0", "winner": winner, "cards": {}}


def romanian_record(players: dict, hands: list[tuple[int, dict, dict]]) -> dict:
    """A Romanian record: each hand is (k, bids by agent, tricks by agent); only what the
    statistics read is filled in."""
    rec_hands, actions = [], []
    for n, (k, bids, taken) in enumerate(hands):
        tricks = [trick(a) for a, t in taken.items() for _ in range(t)]
        deal = {"hands": {a: ["XX"] * k for a in AGENTS}, "dealer": "player_3"}
        rec_hands.append({"hand_number": n, "deal": deal, "tricks": tricks, "points": {a: 0 for a in AGENTS}, "scores": {}})
        for a, b in bids.items():
            actions.append({"step": len(actions), "agent": a, "action": 52 + b, "label": f"bid:{b}", "phase": "bid", "hand_number": n})
        for t in tricks:  # card plays are ignored by the statistics
            actions.append({"step": len(actions), "agent": t["winner"], "action": 0, "label": "2C", "phase": "play", "hand_number": n})
    return {"schema": "whist-env/game-record", "version": 1, "game": "romanian_whist", "options": {"episode": "hand"},
            "players": players, "hands": rec_hands, "actions": actions, "result": {}}


def bid_whist_record(players: dict, calls: list[tuple[str, str]], taken: dict, kitty: bool = True, complete: bool = True) -> dict:
    """A one-hand Bid Whist record with the given auction calls and tricks per agent."""
    tricks = [trick(a) for a, t in taken.items() for _ in range(t)]
    actions = [{"step": i, "agent": a, "action": 0, "label": lab, "phase": "auction", "hand_number": 0} for i, (a, lab) in enumerate(calls)]
    hand = {"hand_number": 0, "deal": {}, "tricks": tricks, "points": {a: 0 for a in AGENTS} if complete else None, "scores": None}
    return {"schema": "whist-env/game-record", "version": 1, "game": "bid_whist", "options": {"episode": "hand", "kitty": kitty},
            "players": players, "hands": [hand], "actions": actions, "result": {}}


HR = {"player_0": "heuristic", "player_1": "random", "player_2": "random", "player_3": "random"}
PAIRS = {"player_0": "A", "player_1": "B", "player_2": "A", "player_3": "B"}


def test_romanian_exact_bids_by_label_and_deal_size():
    records = [
        romanian_record(HR, [
            (1, {"player_0": 1, "player_1": 0, "player_2": 0, "player_3": 1}, {"player_0": 1}),  # heuristic exact; random 0, 0 exact, 1 missed
            (3, {"player_0": 2, "player_1": 0, "player_2": 1, "player_3": 1}, {"player_0": 2, "player_2": 1}),  # all exact but player_3 (bid 1, took 0)
        ]),
        romanian_record(HR, [(3, {"player_0": 0, "player_1": 3, "player_2": 0, "player_3": 0}, {"player_0": 1, "player_1": 2})]),
    ]
    stats = bidding_stats(records)
    assert set(stats) == {"romanian_whist"}
    h, r = stats["romanian_whist"]["heuristic"], stats["romanian_whist"]["random"]
    assert (h["bids"], h["exact"]) == (3, 2)
    assert (r["bids"], r["exact"]) == (9, 6)  # two of three in each hand
    assert h["share"] == pytest.approx(2 / 3)
    assert {k: (v["bids"], v["exact"]) for k, v in h["by_k"].items()} == {1: (1, 1), 3: (2, 1)}
    assert {k: (v["bids"], v["exact"]) for k, v in r["by_k"].items()} == {1: (3, 2), 3: (6, 4)}
    ci = binomtest(6, 9).proportion_ci(confidence_level=0.95, method="wilson")
    assert r["ci"] == pytest.approx((ci.low, ci.high))


def test_bid_whist_contracts_made_with_the_kitty_book():
    calls_made = [("player_1", "bid:4:uptown"), ("player_2", "pass"), ("player_3", "pass"), ("player_0", "bid:5:notrump")]
    # player_0 + player_2 take 10 tricks, + kitty = 11 books = 6 + 5: made
    made = bid_whist_record(HR, calls_made, {"player_0": 6, "player_2": 4, "player_1": 2})
    # player_1 declares 4 downtown (forced dealer); its side takes 8 tricks + kitty = 9 < 10: set
    forced = [("player_2", "pass"), ("player_3", "pass"), ("player_0", "pass"), ("player_1", "bid:4:downtown")]
    set_ = bid_whist_record(HR, forced, {"player_1": 5, "player_3": 3, "player_0": 4})
    # no kitty: 10 tricks = 10 books = 6 + 4: made
    no_kitty = bid_whist_record(HR, [("player_3", "bid:4:uptown"), ("player_0", "pass"), ("player_1", "pass"), ("player_2", "pass")],
                                {"player_1": 5, "player_3": 5, "player_0": 3}, kitty=False)
    # a hand that was not played out is not counted
    unfinished = bid_whist_record(HR, calls_made, {}, complete=False)
    stats = bidding_stats([made, set_, no_kitty, unfinished])["bid_whist"]
    h, r = stats["heuristic"], stats["random"]
    assert (h["hands"], h["contracts"], h["made"], h["mean_level"]) == (3, 1, 1, 5.0)
    assert h["by_mode"] == {"notrump": {"contracts": 1, "made": 1, "share": 1.0, "ci": pytest.approx(wilson_counts(1, 1))}}
    assert (r["hands"], r["contracts"], r["made"], r["mean_level"]) == (3, 2, 1, 4.0)
    assert {m: (v["contracts"], v["made"]) for m, v in r["by_mode"].items()} == {"downtown": (1, 0), "uptown": (1, 1)}
    assert r["share"] == 0.5


def test_bid_whist_credits_the_declaring_partnership_by_seat():
    calls = [("player_1", "pass"), ("player_2", "bid:6:uptown"), ("player_3", "pass"), ("player_0", "pass")]
    rec = bid_whist_record(PAIRS, calls, {"player_0": 5, "player_2": 6, "player_1": 1})  # 11 + 1 = 12 books = 6 + 6
    stats = bidding_stats([rec])["bid_whist"]
    assert (stats["A"]["contracts"], stats["A"]["made"]) == (1, 1)
    assert stats["B"]["contracts"] == 0 and math.isnan(stats["B"]["share"]) and math.isnan(stats["B"]["mean_level"])


def spades_record(players: dict, bids: dict, taken: dict, options: dict | None = None) -> dict:
    """A one-hand Spades record (RULES.md §8) with the given bid labels and tricks per agent."""
    tricks = [trick(a) for a, t in taken.items() for _ in range(t)]
    actions = [{"step": i, "agent": a, "action": 0, "label": lab, "phase": "bid", "hand_number": 0} for i, (a, lab) in enumerate(bids.items())]
    hand = {"hand_number": 0, "deal": {}, "tricks": tricks, "points": {a: 0 for a in AGENTS}, "scores": {}}
    return {"schema": "whist-env/game-record", "version": 1, "game": "spades", "options": {"episode": "hand", **(options or {})},
            "players": players, "hands": [hand], "actions": actions, "result": {}}


def test_spades_side_contracts_and_nils():
    # side A (player_0 + player_2) bids 4 + nil and takes 3 + 1 = 4: made, but the nil is lost;
    # side B (player_1 + player_3) bids 5 + 3 = 8 and takes 9: made
    rec = spades_record(PAIRS, {"player_1": "bid:5", "player_2": "bid:nil", "player_3": "bid:3", "player_0": "bid:4"},
                        {"player_0": 3, "player_2": 1, "player_1": 4, "player_3": 5})
    # side A bids 6 + blind nil and takes 5 (the blind nil none): set, the blind nil made
    blind = spades_record(PAIRS, {"player_0": "bid:6", "player_1": "bid:2", "player_2": "bid:blind_nil", "player_3": "bid:2"},
                          {"player_0": 5, "player_1": 8}, {"blind_nil": True})
    stats = bidding_stats([rec, blind])["spades"]
    a, b = stats["A"], stats["B"]
    assert (a["hands"], a["bids"], a["made"], a["mean_bid"], a["nils"], a["nils_made"]) == (4, 2, 1, 5.0, 2, 1)
    assert (b["hands"], b["bids"], b["made"], b["mean_bid"], b["nils"], b["nils_made"]) == (4, 4, 4, 3.0, 0, 0)
    assert a["share"] == 0.5 and a["nil"]["share"] == 0.5 and math.isnan(b["nil"]["share"])
    assert a["ci"] == wilson_counts(1, 2)
    text = format_bidding_stats({"spades": stats})
    assert text.startswith("Partnership Spades: bids whose side made its contract, and nils made")


def test_other_games_are_ignored_and_empty_input_gives_no_tables():
    assert bidding_stats([{"game": "classic_whist", "hands": [], "actions": []}]) == {}
    none = format_bidding_stats({})
    assert none.startswith("no Romanian Whist or Bid Whist")  # the games with bids, in RULES.md's order
    assert none == "no " + " or ".join(spec.docs.title for spec in games.specs() if spec.bids is not None) + " records"
    assert all(math.isnan(x) for x in wilson_counts(0, 0))


def test_command_line_prints_tables_and_json(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    recs = [romanian_record(HR, [(2, {"player_0": 1, "player_1": 0, "player_2": 0, "player_3": 0}, {"player_0": 1, "player_1": 1})]),
            bid_whist_record(HR, [("player_0", "bid:4:uptown")], {"player_0": 9})]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert whist(["bid-stats", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Romanian Whist: exact bids" in out and "Bid Whist: contracts" in out
    assert whist(["bid-stats", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["romanian_whist"]["heuristic"]["exact"] == 1
    assert data["romanian_whist"]["random"]["exact"] == 2  # player_2 and player_3 bid 0 and took 0
    assert data["bid_whist"]["heuristic"]["made"] == 1


def test_whist_eval_bid_stats_flag(capsys):
    assert whist(["eval", "--game", "romanian_whist", "--agents", "heuristic", "random", "--deals", "3", "--quiet", "--bid-stats"]) == 0
    out = capsys.readouterr().out
    assert "points/hand" in out and "Romanian Whist: exact bids" in out
    table = [line for line in out.splitlines() if line.startswith("heuristic  all")]
    assert table and table[0].split()[2] == "12"  # 3 deals x 4 plays, one heuristic seat each


def test_command_line_refuses_a_record_without_actions(tmp_path, capsys):
    record = romanian_record(HR, [(2, {"player_0": 1, "player_1": 0, "player_2": 0, "player_3": 0}, {"player_0": 1, "player_1": 1})])
    del record["actions"]
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert whist(["bid-stats", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("whist bid-stats: error: ") and "'actions'" in err
