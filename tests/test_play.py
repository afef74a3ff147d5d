"""``whist play`` (training/viewers/play.py): a person plays through stdin; bad input is rejected with the
reason, legal input finishes a hand, and the game record is saved."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from training import cli
from training.viewers.play import describe_table, format_hand, parse_action
from whist_env import bid_whist_v0, classic_whist_v0
from whist_env.records import read_records, replay_record

_SUIT = {"♠": "S", "♥": "H", "♣": "C", "♦": "D"}


def _last_line(text: str, prefix: str) -> str:
    return [line for line in text.splitlines() if line.startswith(prefix)][-1][len(prefix):]


def _hand_from(line: str) -> list[str]:
    """Card texts of a printed hand such as ``♠ K 10   ♥ A   ♣ -   ♦ -``."""
    cards = []
    for group in line.split("   "):
        tokens = group.split()
        if tokens[0] in _SUIT:
            cards += [("T" if r == "10" else r) + _SUIT[tokens[0]] for r in tokens[1:] if r != "-"]
        else:
            cards += tokens
    return cards


class ScriptedPerson(io.StringIO):
    """A stdin that answers the prompts printed to ``out``: first some bad inputs, then (once)
    an illegal card from the hand, then always the first legal action."""

    def __init__(self, out: io.StringIO, shout: bool = False):
        super().__init__()
        self.out = out
        self.bad = ["garbage", "", "bid:99", None]  # None: a card not in the hand
        self.illegal_sent = False
        self.shout = shout
        self.lines = 0

    def readline(self, *args):
        self.lines += 1
        assert self.lines < 2000, "the game does not end"
        text = self.out.getvalue()
        legal = _last_line(text, "legal: ").split()
        hand = _hand_from(_last_line(text, "your hand: "))
        if self.bad:
            bad = self.bad.pop(0)
            if bad is None:
                deck = [r + s for s in "CDHS" for r in "23456789TJQKA"]
                bad = next(c for c in deck if c not in hand).lower()
            return bad + "\n"
        if not self.illegal_sent and legal and all(len(a) == 2 for a in legal):
            illegal = [c for c in hand if c not in legal and not c.startswith("JK")]
            if illegal:
                self.illegal_sent = True
                return illegal[0].replace("T", "10") + "\n"
        choice = legal[0]
        return (choice.upper() if self.shout else choice.replace("T", "10").lower()) + "\n"


def _play(monkeypatch, tmp_path, game, seat, shout=False, extra=()):
    out = io.StringIO()
    person = ScriptedPerson(out, shout=shout)
    monkeypatch.setattr(sys, "stdin", person)
    monkeypatch.setattr(sys, "stdout", out)
    record_path = tmp_path / f"{game}.jsonl"
    status = cli.main(["play", "--game", game, "--seat", str(seat), "--opponents", "random", "--seed", "3",
                       "--option", "episode=hand", "--record", str(record_path), *extra])
    return status, out.getvalue(), record_path, person


def test_bad_inputs_are_rejected_then_a_hand_is_played(monkeypatch, tmp_path):
    status, text, path, person = _play(monkeypatch, tmp_path, "classic_whist", seat=1)
    assert status == 0, text
    assert "rejected: cannot read 'garbage'" in text
    assert "rejected: empty input" in text
    assert "rejected: 'bid:99' is not legal" in text or "rejected: cannot read 'bid:99'" in text
    assert "rejected: you do not hold" in text
    assert person.illegal_sent and "must follow suit" in text
    assert "your hand: ♠" in text and "trump" in text and "score:" in text
    assert "game over" in text and "final score:" in text
    assert f"record saved to {path}" in text
    (record,) = read_records(path)
    assert record["players"]["player_1"] == "human" and record["players"]["player_0"] == "random"
    assert record["result"]["terminated"] and len(record["actions"]) == 52
    assert replay_record(record).ok


@pytest.mark.parametrize("game", ["romanian_whist", "bid_whist"])
def test_bidding_labels_in_any_case(monkeypatch, tmp_path, game):
    status, text, path, _ = _play(monkeypatch, tmp_path, game, seat=0, shout=True)
    assert status == 0, text
    assert "legal: " in text and ("bid:" in text or "pass" in text)
    (record,) = read_records(path)
    assert record["result"]["terminated"] and replay_record(record).ok


def test_end_of_input_exits_cleanly(tmp_path):
    path = tmp_path / "never.jsonl"
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("whist")), "play", "--game", "classic_whist", "--seat", "0", "--opponents", "random",
         "--seed", "1", "--option", "episode=hand", "--record", str(path)],
        input="nonsense\nZZ\n", capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "rejected: cannot read 'nonsense'" in proc.stdout
    assert "end of input: game abandoned, no record saved" in proc.stdout
    assert "Traceback" not in proc.stderr and not path.exists()


def test_bad_arguments_are_reported(capsys):
    assert cli.main(["play", "--game", "classic_whist", "--seat", "7", "--opponents", "random"]) == 2
    assert "seat 7" in capsys.readouterr().err
    assert cli.main(["play", "--game", "classic_whist", "--opponents", "wizard"]) == 2
    assert "unknown agent spec" in capsys.readouterr().err


def test_parse_action_and_format_hand():
    env = classic_whist_v0.raw_env(episode="hand")
    env.reset(seed=0, options={"hands": {
        "player_0": ["AS", "KS", "QH", "TH", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC"],
        "player_1": ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "2H", "3H"],
        "player_2": ["4H", "5H", "6H", "7H", "8H", "9H", "JH", "KH", "AH", "JC", "QC", "KC", "AC"],
        "player_3": ["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD", "AD"],
    }, "dealer": "player_3", "turn_up": "AD"})
    legal = env.game.legal_action_list()
    assert env.agent_selection == "player_0"
    for text in ("QH", "qh", "10h", "th", " Qh "):
        action, reason = parse_action(env, text, legal)
        assert action is not None and reason == "", text
    assert parse_action(env, "QD", legal)[1].startswith("you do not hold QD")
    assert "cannot read" in parse_action(env, "queen", legal)[1]
    assert "empty input" in parse_action(env, "   ", legal)[1]
    assert format_hand(["AS", "KS", "QH", "TH", "2C"]) == "♠ A K   ♥ Q T   ♣ 2   ♦ -"  # T as in the legal list (TH)


def test_rule_options_are_printed_once_not_at_every_prompt(monkeypatch, tmp_path):
    status, text, _, _ = _play(monkeypatch, tmp_path, "classic_whist", seat=1)
    assert status == 0, text
    assert text.count("rules: episode=hand") == 1
    assert "options:" not in text and "'reward'" not in text
    assert "history:" not in text  # the hand's action ids: shown in words by the events and the trick


def test_cards_are_written_as_the_person_types_them():
    env = classic_whist_v0.raw_env(episode="hand")
    env.reset(seed=0, options={"hands": {
        "player_0": ["AS", "TS", "QH", "TH", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC"],
        "player_1": ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "KS", "JS", "QS", "2H", "3H"],
        "player_2": ["4H", "5H", "6H", "7H", "8H", "9H", "JH", "KH", "AH", "JC", "QC", "KC", "AC"],
        "player_3": ["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD", "AD"],
    }, "dealer": "player_3", "turn_up": "TD"})
    env.step(env.action_id("TS"))  # player_0 leads the ten of spades
    table = describe_table(env, "player_1", {a: a for a in env.possible_agents})
    assert "turn up: TD" in table and "trick: player_0 TS" in table
    assert "10" not in table
    legal = env.game.legal_action_list()
    assert parse_action(env, "10s", legal)[1].startswith("you do not hold TS")
    assert parse_action(env, "2s", legal) == (env.action_id("2S"), "")


def test_a_card_during_the_auction_is_answered_with_the_auction():
    env = bid_whist_v0.raw_env(episode="hand")
    env.reset(seed=3)
    assert env.game.phase == "auction"
    view = env.information_state(env.agent_selection)
    legal = env.game.legal_action_list()
    for card in (view["hand"][0], next(c for c in ("2C", "3C", "4C", "5C") if c not in view["hand"])):
        reason = parse_action(env, card, legal)[1]
        assert "auction" in reason and "no card is played now" in reason and "pass" in reason, reason
        assert "do not hold" not in reason


def test_legal_bids_are_listed_in_action_order_and_cards_in_display_order():
    import numpy as np

    import whist_env
    from training.viewers.play import _legal_text

    env = whist_env.GAMES["spades"].raw_env()
    env.reset(seed=1)
    legal = [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]
    assert _legal_text(env, legal) == "bid:nil " + " ".join(f"bid:{k}" for k in range(1, 14))  # not bid:1 bid:10 ...
    env = whist_env.GAMES["classic_whist"].raw_env()
    env.reset(seed=0, options={"hands": {"player_0": ["2C", "AS", "TH", "3D", "KC", "4S", "5H", "6D", "7C", "8S", "9H", "JD", "QC"],
                                         "player_1": ["3C", "2S", "JH", "4D", "AC", "5S", "6H", "7D", "8C", "9S", "TD", "QH", "KD"],
                                         "player_2": ["4C", "3S", "QD", "5D", "2H", "6S", "7H", "8D", "9C", "TS", "JC", "KH", "AD"],
                                         "player_3": ["5C", "3H", "4H", "2D", "6C", "7S", "8H", "9D", "TC", "JS", "QS", "KS", "AH"]},
                              "dealer": "player_3"})
    legal = [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]
    assert _legal_text(env, legal) == "AS 8S 4S TH 9H 5H KC QC 7C 2C JD 6D 3D"  # ♠ ♥ ♣ ♦, high first


def test_spades_nil_reads_as_nil_and_bid_0_is_accepted():
    """Spades writes a nil as bid:nil; a person may also type bid:0 or 0 (the game's own spelling of
    nil, ``action_id("bid:0")``), and the table shows the auction's words, not the stored 0."""
    import numpy as np

    import whist_env
    from whist_env.rules.spades import BID_BASE, NIL

    env = whist_env.GAMES["spades"].raw_env()
    env.reset(seed=1)
    legal = [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]
    for text in ("bid:0", "0", "BID:0", "bid:nil", "bid:NIL"):
        assert parse_action(env, text, legal) == (BID_BASE + NIL, ""), text
    assert parse_action(env, "bid:14", legal)[0] is None
    assert parse_action(env, "14", legal)[0] is None
    bidder = env.agent_selection
    env.step(BID_BASE + NIL)
    env.step(BID_BASE + 4)
    table = describe_table(env, "player_0", {a: a for a in env.possible_agents})
    bids = next(line for line in table.splitlines() if line.startswith("bids:"))
    others = [a for a in env.possible_agents if a != bidder]
    assert f"{bidder} nil" in bids and any(f"{a} 4" in bids for a in others), bids
    assert f"{bidder} 0" not in bids
    from training.viewers.serve.seat_view import seat_view  # the browser table says the same

    assert ["bids", "nil"] in seat_view(env, "player_0")["agent_facts"][bidder]
    ansi = whist_env.GAMES["spades"].raw_env(render_mode="ansi")  # and so does the env's own text render
    ansi.reset(seed=1)
    ansi.step(BID_BASE + NIL)
    ansi.step(BID_BASE + 4)
    assert "bids: (None, None, 'nil', '4')" in ansi.render().splitlines()  # the dealer's left bids first
