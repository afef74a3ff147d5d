"""Partnership Spades rules (RULES.md §8): worked examples SP-1…SP-13, every option of §8.8, and
property tests (cards conserved, masks equal the legal set, tricks add up, scores follow §8.5)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from new_games_helpers import DECK_52, c, fill_deal, new_game, play, texts

from whist_env.engine.cards import FULL_DECK_52, SPADES, card_to_str, cards_of
from whist_env.engine.dealing import shuffled_deck
from whist_env.rules.spades import BID_BASE, BLIND_NIL, Spades, SpadesOptions, side_points

SIDE_SUIT_BITS = 0b0111  # clubs, diamonds, hearts


# ------------------------------------------------------------------ helpers
def deal(required: Mapping[int, Sequence[str]] | None = None, dealer: int = 3, voids=None) -> dict:
    hands, rest = fill_deal(required or {}, num_seats=4, size=13, deck=DECK_52, voids=voids)
    assert rest == []
    return {"hands": hands, "dealer": dealer}


def game(required=None, dealer: int = 3, voids=None, **options) -> Spades:
    return new_game(Spades, deal(required, dealer, voids), **options)


def bid(g: Spades, *labels: str) -> None:
    """The bids in bidding order, from ``left(dealer)``."""
    for label in labels:
        g.apply(g.action_id(label))


def legal_labels(g: Spades) -> set[str]:
    return {g.action_label(a) for a in g.legal_action_list()}


def lowest_legal(g: Spades) -> int:
    return g.legal_action_list()[0]


def finish(g: Spades, final_tricks: Sequence[int]):
    """Play the hand out so that each seat ends with ``final_tricks[seat]`` tricks; return the
    outcome of the last card. Lowest legal cards up to the last trick; then the one-card hands are
    arranged so that a seat with a trick to take wins it, and the public ``tricks_won`` is set."""
    assert sum(final_tricks) == 13
    while not (g.trick == [] and all(h.bit_count() == 1 for h in g.hands)):
        g.apply(lowest_legal(g))
    last = list(g.hands)
    for perm in itertools.permutations(range(4)):
        g.hands = [last[p] for p in perm]
        plays = [((g.leader + i) % 4, next(cards_of(g.hands[(g.leader + i) % 4]))) for i in range(4)]
        winner = Spades.trick_winner_rule(plays, g.ctx)
        if final_tricks[winner] >= 1:
            break
    before = list(final_tricks)
    before[winner] -= 1
    g.tricks_won = before
    outcome = None
    for _ in range(4):
        outcome = g.apply(lowest_legal(g))
    assert outcome.hand_points is not None and outcome.last_trick["winner"] == winner
    return outcome


def opts(**changes) -> SpadesOptions:
    return SpadesOptions(**changes)


# ------------------------------------------------------------------ SP-1 deal and order (§8.3)
def test_sp1_deal_mapping_from_the_shuffled_list():
    g = Spades()
    g.reset(np.random.default_rng(7), {"dealer": 3})
    d = shuffled_deck(np.random.default_rng(7), list(range(52)))
    for i in range(52):
        assert g.hands[i % 4] >> d[i] & 1
    assert [h.bit_count() for h in g.hands] == [13] * 4
    assert g.phase == "bid" and g.current_player == 0 and g.trump == SPADES
    g = Spades()
    g.reset(np.random.default_rng(7), {"dealer": 1})
    for i in range(52):
        assert g.hands[(2 + i) % 4] >> d[i] & 1
    assert g.current_player == 2


def test_sp1_bidding_order_then_left_of_dealer_leads():
    g = game(dealer=1)
    order = []
    for label in ("bid:3", "bid:nil", "bid:4", "bid:2"):
        order.append(g.current_player)
        assert g.phase == "bid"
        bid(g, label)
    assert order == [2, 3, 0, 1]
    assert g.bids == [4, 2, 3, 0] and g.blind == [False] * 4
    assert g.phase == "play" and g.current_player == g.leader == 2
    assert g.side_contract(0) == 7 and g.side_contract(1) == 2
    assert [e for e in g.events if e[0] == "bid"] == [("bid", 2, "3"), ("bid", 3, "nil"), ("bid", 0, "4"), ("bid", 1, "2")]


def test_the_deal_passes_to_the_left():
    g = game(dealer=3)
    bid(g, "bid:1", "bid:1", "bid:1", "bid:1")
    finish(g, (4, 3, 3, 3))
    assert g.hand_number == 1 and g.dealer == 0 and g.phase == "bid" and g.current_player == 1


def test_first_dealer_option():
    g = Spades(first_dealer=2)
    g.reset(np.random.default_rng(0))
    assert g.dealer == 2 and g.current_player == 3


# ------------------------------------------------------------------ SP-2 bids (§8.3)
def test_sp2_combined_bid_limit():
    g = game(dealer=3)
    assert legal_labels(g) == {"bid:nil"} | {f"bid:{b}" for b in range(1, 14)}
    bid(g, "bid:5", "bid:nil")
    assert legal_labels(g) == {"bid:nil"} | {f"bid:{b}" for b in range(1, 9)}  # seat 2, partner of 5
    with pytest.raises(ValueError, match="illegal action"):
        g.apply(g.action_id("bid:9"))
    bid(g, "bid:8")
    assert legal_labels(g) == {"bid:nil"} | {f"bid:{b}" for b in range(1, 14)}  # partner bid nil
    bid(g, "bid:13")
    assert g.side_contract(0) == 13 and g.side_contract(1) == 13


def test_without_the_combined_bid_limit_every_bid_is_legal():
    g = game(dealer=3, combined_bid_limit=False)
    bid(g, "bid:13", "bid:1")
    assert legal_labels(g) == {"bid:nil"} | {f"bid:{b}" for b in range(1, 14)}
    bid(g, "bid:13", "bid:1")
    assert g.side_contract(0) == 26


def test_bid_labels_and_ids():
    g = Spades()
    assert g.num_actions == 66
    assert [g.action_label(a) for a in range(52, 66)] == ["bid:nil"] + [f"bid:{b}" for b in range(1, 14)]
    assert g.action_label(0) == "2C" and g.action_label(51) == "AS"
    for a in range(66):
        assert g.action_id(g.action_label(a)) == a
    assert g.action_id("bid:0") == g.action_id("BID:NIL") == BID_BASE
    for bad in ("bid:14", "bid:-1", "bid:", "bid:one", "bid:blind_nil", "bid:\u00b2", "bid:\u0663"):  # ², Arabic-Indic 3
        with pytest.raises(ValueError, match="unknown bid label"):
            g.action_id(bad)
    with pytest.raises(ValueError):
        g.action_label(66)
    g = Spades(blind_nil=True)
    assert g.num_actions == 67 and g.action_label(66) == "bid:blind_nil" and g.action_id("bid:blind_nil") == BLIND_NIL == 66


def test_bid_meaning_and_contract_value():
    g = Spades(blind_nil=True)
    assert g.bid_meaning(c("AS")) is None
    assert g.bid_meaning(BID_BASE) == (0, True, None) and g.bid_meaning(BLIND_NIL) == (0, True, None)
    assert g.bid_meaning(BID_BASE + 4) == (4, False, None)
    assert g.contract_value(0, BID_BASE + 4, 6) == 42.0 and g.contract_value(0, BID_BASE + 4, 3) == -40.0
    assert g.contract_value(0, BID_BASE, 0) == 100.0 and g.contract_value(0, BID_BASE, 1) == -100.0
    assert g.contract_value(0, BLIND_NIL, 0) == 200.0 and g.contract_value(0, BLIND_NIL, 2) == -200.0
    with pytest.raises(ValueError, match="not a bid"):
        g.contract_value(0, c("AS"), 3)
    with pytest.raises(ValueError, match="tricks"):
        g.contract_value(0, BID_BASE + 4, 14)
    assert g.trick_objective(0) == 0 and g.last_hand_contract() is None


# ------------------------------------------------------------------ SP-3, SP-4 leading spades (§8.4)
def test_sp3_no_spade_lead_before_spades_are_broken():
    g = game({0: ["AS", "KS", "2C"]}, dealer=3)
    bid(g, "bid:3", "bid:3", "bid:3", "bid:3")
    hand = set(texts(g.hands[0]))
    assert legal_labels(g) == {t for t in hand if not t.endswith("S")} and "2C" in legal_labels(g)
    before = (list(g.hands), list(g.played), g.current_player, g.actions_in_hand)
    with pytest.raises(ValueError, match="illegal action"):
        g.apply(c("AS"))
    assert (list(g.hands), list(g.played), g.current_player, g.actions_in_hand) == before


def test_sp3_a_leader_with_only_spades_may_lead_one_and_shows_out_of_the_other_suits():
    g = game({0: [r + "S" for r in "23456789TJQKA"]}, dealer=3)
    bid(g, "bid:13", "bid:nil", "bid:nil", "bid:nil")
    assert legal_labels(g) == set(texts(g.hands[0]))
    play(g, "5S")
    assert g.void_suits[0] == SIDE_SUIT_BITS and g.shown_out[0] == 0  # a fact for worlds, not a show-out
    assert not g.spades_broken  # led, not played on another suit


def test_a_forced_spade_lead_does_not_break_spades():
    hearts = [r + "H" for r in "23456789TJ"]
    g = game({0: ["AH", "KH", "QH"] + [r + "S" for r in "56789TJQKA"], 1: ["4S"] + hearts[:4], 2: ["3S"] + hearts[4:7],
              3: ["2S"] + hearts[7:]}, dealer=3)
    bid(g, "bid:10", "bid:1", "bid:1", "bid:1")
    for lead in ("AH", "KH", "QH"):
        assert g.current_player == 0
        play(g, lead)
        for _ in range(3):
            g.apply(lowest_legal(g))
    assert g.tricks_won[0] == 3 and not g.spades_broken and texts(g.hands[0]) == [r + "S" for r in "56789TJQKA"]
    play(g, "AS")
    assert g.void_suits[0] == SIDE_SUIT_BITS
    out = None
    for _ in range(3):
        out = g.apply(lowest_legal(g))
    assert out.last_trick["winner"] == 0 and not g.spades_broken
    assert g.information_state(1)["spades_broken"] is False


def sp4_game(**options) -> Spades:
    g = game({0: ["4H"], 1: ["2S", "KS", "3C"], 2: ["AH"], 3: ["5H"]}, dealer=3, voids={1: "H"}, **options)
    bid(g, "bid:2", "bid:3", "bid:2", "bid:3")
    return g


def test_sp4_a_ruff_breaks_spades():
    g = sp4_game()
    play(g, "4H")
    assert "2S" in legal_labels(g) and legal_labels(g) == set(texts(g.hands[1]))  # void in hearts: anything
    play(g, "2S")
    assert g.spades_broken and ("spades_broken", 1) in g.events
    assert legal_labels(g) == {t for t in texts(g.hands[2]) if t.endswith("H")}
    out = play(g, "AH", "5H")
    assert out.last_trick == {"cards": {0: c("4H"), 1: c("2S"), 2: c("AH"), 3: c("5H")}, "leader": 0, "winner": 1}
    assert g.current_player == 1 and "KS" in legal_labels(g) and legal_labels(g) == set(texts(g.hands[1]))
    assert g.information_state(3)["spades_broken"] is True


def test_sp4_with_only_spades_left_spades_are_never_broken():
    g = sp4_game(spade_lead="only_spades_left")
    out = play(g, "4H", "2S", "AH", "5H")
    assert out.last_trick["winner"] == 1 and not g.spades_broken
    assert legal_labels(g) == {t for t in texts(g.hands[1]) if not t.endswith("S")} and "3C" in legal_labels(g)


def test_with_spade_lead_any_spades_may_always_be_led():
    g = game({0: ["AS", "2C"]}, dealer=3, spade_lead="any")
    bid(g, "bid:3", "bid:3", "bid:3", "bid:3")
    assert legal_labels(g) == set(texts(g.hands[0])) and g.spades_broken
    play(g, "AS")
    assert g.void_suits[0] == 0  # no inference: anyone may lead a spade


# ------------------------------------------------------------------ SP-5, SP-6 tricks (§8.4)
def test_sp5_ruff_and_over_ruff():
    g = game({1: ["KD"], 2: ["3S"], 3: ["QS"], 0: ["AD"]}, dealer=0, voids={2: "D", 3: "D"})
    bid(g, "bid:3", "bid:3", "bid:3", "bid:3")
    out = play(g, "KD", "3S", "QS", "AD")
    assert out.last_trick["winner"] == 3 and g.tricks_won == [0, 0, 0, 1] and g.current_player == 3


def test_highest_of_the_led_suit_wins_without_a_spade():
    g = game({0: ["TD"], 1: ["QD"], 2: ["AC"], 3: ["3D"]}, dealer=3, voids={2: "D"})
    bid(g, "bid:3", "bid:3", "bid:3", "bid:3")
    out = play(g, "TD", "QD", "AC", "3D")
    assert out.last_trick["winner"] == 1 and not g.spades_broken


def test_sp6_follow_suit_if_able():
    g = game({0: ["2H"], 1: ["7H", "AS", "2C"], 2: ["9H"], 3: ["KH"]}, dealer=3)
    bid(g, "bid:3", "bid:3", "bid:3", "bid:3")
    play(g, "2H")
    assert legal_labels(g) == {t for t in texts(g.hands[1]) if t.endswith("H")}
    g = game({0: ["2H"], 1: ["AS", "2C"]}, dealer=3, voids={1: "H"})
    bid(g, "bid:3", "bid:3", "bid:3", "bid:3")
    play(g, "2H")
    assert legal_labels(g) == set(texts(g.hands[1])) and {"AS", "2C"} <= legal_labels(g)


# ------------------------------------------------------------------ SP-7 … SP-12 scoring (§8.5)
@pytest.mark.parametrize(
    ("bids", "blind", "took", "carried", "changes", "points", "bags"),
    [
        ((4, 3), (False, False), (5, 4), 0, {}, 72, 2),                      # SP-7 made with bags
        ((4, 5), (False, False), (5, 5), 0, {}, 91, 1),                      # OpenSpiel's test
        ((5, 4), (False, False), (4, 4), 3, {}, -90, 3),                     # SP-8 set
        ((0, 5), (False, False), (0, 6), 0, {}, 151, 1),                     # SP-9 nil made
        ((0, 4), (False, False), (2, 3), 0, {}, -59, 1),                     # SP-10 nil failed
        ((0, 4), (False, False), (2, 3), 0, {"nil_tricks": "bags"}, -138, 2),
        ((0, 4), (False, False), (0, 5), 0, {"nil_tricks": "bags"}, 141, 1),
        ((13, 0), (False, False), (4, 1), 0, {}, -230, 0),                   # OpenSpiel's test
        ((0, 4), (True, False), (0, 5), 0, {}, 241, 1),                      # SP-11 blind nil
        ((0, 4), (True, False), (1, 4), 0, {}, -159, 1),
        ((3, 3), (False, False), (4, 5), 9, {}, -37, 2),                     # SP-12 bag penalty
        ((3, 3), (False, False), (4, 5), 6, {}, 63, 9),                      # nine bags: no penalty yet
        ((3, 3), (False, False), (4, 5), 7, {}, -37, 0),                     # exactly ten
        ((0, 0), (False, False), (2, 1), 0, {}, -197, 3),                    # both nil: every trick a bag
        ((0, 0), (False, False), (0, 0), 0, {}, 200, 0),
        ((1, 1), (False, False), (13, 0), 5, {}, -69, 6),                    # 11 bags + 5 carried: one penalty
        ((3, 3), (False, False), (4, 5), 4, {"bag_threshold": 5, "bag_penalty": 50}, 13, 2),
        ((0, 5), (False, False), (0, 6), 0, {"nil_points": 50}, 101, 1),
        ((0, 4), (True, False), (0, 5), 0, {"blind_nil_points": 150}, 191, 1),
    ],
)
def test_side_points(bids, blind, took, carried, changes, points, bags):
    assert side_points(bids, blind, took, carried, opts(**changes)) == (points, bags)


@pytest.mark.parametrize(("bids", "blind", "took", "carried"), [((4,), (False,), (5,), 0), ((4, 14), (False, False), (5, 4), 0),
                                                               ((4, 3), (False, False), (5, -1), 0), ((4, 3), (False, False), (5, 4), 10)])
def test_side_points_refuses_bad_input(bids, blind, took, carried):
    with pytest.raises(ValueError):
        side_points(bids, blind, took, carried, opts())


def test_openspiel_scoring_vectors():
    """OpenSpiel's ``spades_test.cc``: ``Score(contracts, taken, current_scores)`` per partnership."""
    cases = [((4, 5, 5, 0), (5, 3, 5, 0), (0, 0), 0, 91), ((13, 5, 0, 1), (4, 6, 1, 2), (0, 0), 0, -230),
             ((3, 3, 3, 2), (4, 2, 5, 2), (9, 0), 0, -37), ((2, 3, 3, 3), (2, 4, 2, 5), (0, 9), 1, -37)]
    for contracts, taken, bags, side, expected in cases:
        seats = (side, side + 2)
        got, _ = side_points([contracts[s] for s in seats], [False, False], [taken[s] for s in seats], bags[side], opts())
        assert got == expected


def test_a_hand_is_scored_for_both_sides_and_bags_carry_over():
    g = game(dealer=3)
    bid(g, "bid:4", "bid:nil", "bid:3", "bid:5")  # side 0: 4 + 3; side 1: nil + 5
    out = finish(g, (5, 0, 4, 4))
    assert out.hand_points == (72, 50)  # side 1: nil made, set on 5 with 4 tricks
    assert g.scores == [72, 50] and g.bags == [2, 0] and g.last_hand_points == [72, 50]
    assert g.information_state(1)["bags"] == (2, 0)
    assert g.last_hand == (0, (5, 0, 4, 4), (72, 50))


def test_sp12_bag_penalty_across_hands():
    g = game(dealer=3)
    g.bags = [9, 0]
    bid(g, "bid:3", "bid:4", "bid:3", "bid:2")
    out = finish(g, (4, 2, 5, 2))
    assert out.hand_points == (-37, -60) and g.bags == [2, 0]


def test_both_partners_nil():
    g = game(dealer=3)
    bid(g, "bid:nil", "bid:6", "bid:nil", "bid:6")
    out = finish(g, (0, 7, 1, 5))
    assert out.hand_points == (1, 120) and g.bags == [1, 0]  # +100 - 100 + 1 bag; 12 made


# ------------------------------------------------------------------ SP-11 blind nil (§8.3)
def test_sp11_blind_nil_only_for_a_side_trailing_by_the_deficit():
    g = game(dealer=3, blind_nil=True)
    g.scores = [150, 300]
    assert "bid:blind_nil" in legal_labels(g)  # seat 0, 150 behind
    bid(g, "bid:blind_nil")
    assert g.bids[0] == 0 and g.blind[0] and "bid:blind_nil" not in legal_labels(g)  # seat 1 leads the game
    bid(g, "bid:4", "bid:4", "bid:3")
    assert g.information_state(3)["blind_nil"] == (True, False, False, False)
    out = finish(g, (0, 4, 5, 4))
    assert out.hand_points == (241, 71) and g.scores == [391, 371]


@pytest.mark.parametrize(("scores", "deficit", "allowed"), [((0, 99), 100, False), ((0, 100), 100, True), ((0, 0), 0, True),
                                                              ((500, 0), 0, False)])
def test_blind_nil_deficit(scores, deficit, allowed):
    g = game(dealer=3, blind_nil=True, blind_nil_deficit=deficit)
    g.scores = list(scores)
    assert ("bid:blind_nil" in legal_labels(g)) == allowed


def test_no_blind_nil_without_the_option():
    g = game(dealer=3)
    g.scores = [0, 400]
    assert "bid:blind_nil" not in legal_labels(g) and g.num_actions == 66
    with pytest.raises(ValueError):
        g.apply(BLIND_NIL)


# ------------------------------------------------------------------ SP-13 game end (§8.6)
def test_sp13_target_reached():
    g = game(dealer=3)
    g.scores = [480, 300]
    bid(g, "bid:4", "bid:3", "bid:3", "bid:3")
    finish(g, (4, 3, 3, 3))
    assert g.scores == [550, 360] and g.done and g.winners == [0, 2] and g.phase == "game_over"


def test_exactly_the_target_wins():
    g = game(dealer=3)
    g.scores = [430, 0]
    bid(g, "bid:4", "bid:3", "bid:3", "bid:3")
    finish(g, (4, 3, 3, 3))
    assert g.scores == [500, 60] and g.done and g.winners == [0, 2]
    g = game(dealer=3, target_score=501)
    g.scores = [430, 0]
    bid(g, "bid:4", "bid:3", "bid:3", "bid:3")
    finish(g, (4, 3, 3, 3))
    assert g.scores == [500, 60] and not g.done


def test_sp13_a_tie_past_the_target_plays_another_hand():
    g = game(dealer=3)
    g.scores = [495, 470]
    bid(g, "bid:1", "bid:2", "bid:1", "bid:2")  # side 0: 2, side 1: 4
    finish(g, (2, 5, 1, 5))  # side 0: 3 tricks, +21; side 1: 10 tricks, +46
    assert g.scores == [516, 516] and not g.done and g.hand_number == 1 and g.phase == "bid" and g.bags == [1, 6]
    bid(g, "bid:2", "bid:1", "bid:2", "bid:1")  # dealer 0: seat 1 bids first
    finish(g, (1, 5, 2, 5))  # side 0: +21; side 1: +46, 12 bags: -100
    assert g.scores == [537, 462] and g.bags == [2, 2] and g.done and g.winners == [0, 2]


def test_sp13_mercy_rule():
    for mercy, done in ((True, True), (False, False)):
        g = game(dealer=3, mercy_rule=mercy)
        g.scores = [-300, 100]
        bid(g, "bid:3", "bid:1", "bid:3", "bid:1")
        finish(g, (2, 1, 3, 7))  # side 0 takes 5 of 6: set
        assert g.scores == [-360, 126] and g.done == done
        if done:
            assert g.winners == [1, 3]


def test_mercy_threshold_option_and_only_the_lower_side_loses():
    g = game(dealer=3, mercy_threshold=-100)
    g.scores = [-50, -90]
    bid(g, "bid:3", "bid:1", "bid:3", "bid:1")
    finish(g, (2, 1, 3, 7))  # side 0 set: -60; side 1 bid 2, took 8: +26
    assert g.scores == [-110, -64] and g.done and g.winners == [1, 3]
    g = game(dealer=3, mercy_threshold=-100)
    g.scores = [-150, -200]
    bid(g, "bid:1", "bid:1", "bid:1", "bid:1")
    finish(g, (1, 5, 1, 6))  # side 0: +20; side 1: +20 + 9 bags; both at or below -100, side 1 lower
    assert g.scores == [-130, -171] and g.done and g.winners == [0, 2]
    g = game(dealer=3, mercy_threshold=-100)
    g.scores = [-200, -150]
    bid(g, "bid:1", "bid:1", "bid:1", "bid:1")
    finish(g, (1, 5, 1, 6))  # both at or below -100 again, side 0 lower this time
    assert g.scores == [-180, -121] and g.done and g.winners == [1, 3]


def test_mercy_at_exactly_the_threshold():
    g = game(dealer=3)
    g.scores = [-290, 100]
    bid(g, "bid:3", "bid:1", "bid:3", "bid:1")
    finish(g, (2, 1, 3, 7))
    assert g.scores == [-350, 126] and g.done and g.winners == [1, 3]


def test_episode_hand_ends_after_one_hand():
    g = game(dealer=3, episode="hand")
    bid(g, "bid:4", "bid:3", "bid:3", "bid:3")
    finish(g, (4, 3, 3, 3))
    assert g.done and g.scores == [70, 60] and g.winners == [0, 2]


# ------------------------------------------------------------------ information and worlds
def test_information_state_is_public_bids_and_own_hand():
    g = game(dealer=3)
    bid(g, "bid:4", "bid:nil")
    for seat in range(4):
        view = g.information_state(seat)
        assert set(view["hand"]) == set(texts(g.hands[seat]))
        assert view["bids"] == (4, 0, None, None) and view["side_contracts"] == (None, None)
        assert view["bags"] == (0, 0) and view["spades_broken"] is False and view["trump"] == "S"
        assert view["phase"] == "bid"


def test_worlds_keep_an_only_spades_lead():
    g = game({0: [r + "S" for r in "23456789TJQKA"]}, dealer=3)
    bid(g, "bid:13", "bid:nil", "bid:nil", "bid:nil")
    play(g, "5S")
    rng = np.random.default_rng(0)
    for observer in (1, 2, 3):
        for _ in range(5):
            world = g.resample(observer, rng)
            assert world.hands[0] & ~(0x1FFF << 39) == 0 and world.bids == g.bids
    g = sp4_game()
    play(g, "4H", "2S")  # seat 1 ruffs: void in hearts, no inference about the lead
    for _ in range(5):
        world = g.resample(3, rng)
        assert not any(suit == 2 for suit in (x // 13 for x in cards_of(world.hands[1])))


def test_extra_features():
    g = game(dealer=3, blind_nil=True)
    g.scores = [0, 200]
    g.bags = [3, 7]
    bid(g, "bid:blind_nil", "bid:5")
    f = g.extra_features(1)  # seat 1's view: relative seats 1, 2, 3, 0
    slots = np.array(f[:64]).reshape(4, 16)
    assert slots[0].argmax() == 5 and slots[1].argmax() == 15 and slots[2].argmax() == 15 and slots[3].argmax() == 14
    assert f[64:66] == [5 / 26, 0.0] and f[66:68] == [0.7, 0.3] and f[68] == 0.0
    low, high = g.extra_feature_bounds()
    assert len(low) == len(f) == 69 and all(lo <= x <= hi for lo, x, hi in zip(low, f, high))


# ------------------------------------------------------------------ options (§8.8)
@pytest.mark.parametrize(
    ("name", "value"),
    [("target_score", 0), ("nil_points", -1), ("nil_tricks", "none"), ("blind_nil", 1), ("blind_nil_points", -5),
     ("blind_nil_deficit", -1), ("combined_bid_limit", "yes"), ("spade_lead", "never"), ("bag_threshold", 0),
     ("bag_penalty", -100), ("mercy_rule", None), ("mercy_threshold", 0), ("mercy_threshold", 350),
     ("first_dealer", 4), ("episode", "match")],
)
def test_invalid_options_raise_naming_the_option(name, value):
    with pytest.raises(ValueError, match=name):
        Spades(**{name: value})


def test_unknown_option_raises():
    with pytest.raises(ValueError, match="honours"):
        Spades(honours=True)


def test_default_options():
    o = Spades().options
    assert (o.target_score, o.nil_points, o.nil_tricks, o.blind_nil, o.blind_nil_points, o.blind_nil_deficit) == \
        (500, 100, "contract", False, 200, 100)
    assert (o.combined_bid_limit, o.spade_lead, o.bag_threshold, o.bag_penalty, o.mercy_rule, o.mercy_threshold) == \
        (True, "broken", 10, 100, True, -350)


def test_a_bad_fixed_deal_raises_and_changes_nothing():
    g = game(dealer=3)
    before = list(g.hands)
    bad = deal()
    bad["hands"][0] = bad["hands"][0][:12] + [bad["hands"][1][0]]
    with pytest.raises(ValueError, match="more than one seat"):
        g.reset(np.random.default_rng(0), bad)
    assert g.hands == before


# ------------------------------------------------------------------ properties
def expected_legal(g_hand: int, trick: Sequence[int], broken: bool) -> set[int]:
    """RULES.md §8.4, from the text: follow suit if able; a leader leads a spade only when spades
    are broken or when it holds nothing but spades."""
    hand = set(cards_of(g_hand))
    if trick:
        same = {x for x in hand if x // 13 == trick[0] // 13}
        return same or hand
    if broken:
        return hand
    return {x for x in hand if x // 13 != SPADES} or hand


def expected_bids(partner_bid: int | None, limit: bool, blind_ok: bool) -> set[int]:
    top = 13 - partner_bid if limit and partner_bid is not None else 13
    return {BID_BASE + b for b in range(top + 1)} | ({BLIND_NIL} if blind_ok else set())


def expected_hand_points(bids, blind, took, carried, o):
    """RULES.md §8.5 from the text, one side."""
    nil = sum((o.blind_nil_points if bl else o.nil_points) * (1 if t == 0 else -1) for b, bl, t in zip(bids, blind, took) if b == 0)
    contract = sum(bids)
    if o.nil_tricks == "contract":
        counted, nil_bags = sum(took), 0
    else:
        counted = sum(t for b, t in zip(bids, took) if b > 0)
        nil_bags = sum(t for b, t in zip(bids, took) if b == 0)
    made = counted >= contract
    bags = (counted - contract if made else 0) + nil_bags
    penalties = (carried + bags) // o.bag_threshold
    return nil + (10 if made else -10) * contract + bags - o.bag_penalty * penalties, carried + bags - penalties * o.bag_threshold


PROPERTY_OPTIONS = st.sampled_from([
    {},
    {"spade_lead": "only_spades_left"},
    {"spade_lead": "any", "nil_tricks": "bags"},
    {"combined_bid_limit": False, "mercy_rule": False, "max_hands": 4},
    {"blind_nil": True, "blind_nil_deficit": 0, "target_score": 60, "mercy_rule": False, "max_hands": 8},
    {"bag_threshold": 3, "bag_penalty": 20, "target_score": 100, "mercy_threshold": -100},
    {"episode": "hand", "blind_nil": True},
])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), options=PROPERTY_OPTIONS)
def test_spades_invariants(seed, options):
    g = Spades(**options)
    o = g.options
    g.reset(np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    broken = o.spade_lead == "any"
    tricks = [0] * 4
    bags = [0, 0]
    hands_played = 0
    for _ in range(20_000):
        if g.done or g.truncated:
            break
        # every card once: the hands and the cards played are the deal
        masks = [*g.hands, *g.played]
        assert sum(m.bit_count() for m in masks) == 52
        union = 0
        for m in masks:
            union |= m
        assert union == FULL_DECK_52
        seat = g.current_player
        if g.phase == "bid":
            partner = g.bids[(seat + 2) % 4]
            side = seat % 2
            blind_ok = o.blind_nil and g.scores[1 - side] - g.scores[side] >= o.blind_nil_deficit
            assert set(g.legal_action_list()) == expected_bids(partner, o.combined_bid_limit, blind_ok)
        else:
            trick = [x for _, x in g.trick]
            assert set(g.legal_action_list()) == expected_legal(g.hands[seat], trick, broken)
            assert g.spades_broken == broken
        action = int(rng.choice(g.legal_action_list()))
        phase, trick_before, scores_before = g.phase, [x for _, x in g.trick], list(g.scores)
        bids_before, blind_before = list(g.bids), list(g.blind)
        out = g.apply(action)
        if phase == "bid":
            continue
        if trick_before and action // 13 == SPADES and trick_before[0] // 13 != SPADES and o.spade_lead == "broken":
            broken = True
        if out.last_trick is None:
            continue
        cards = out.last_trick["cards"]
        assert len(cards) == 4
        led = cards[out.last_trick["leader"]] // 13
        spades = {s: x for s, x in cards.items() if x // 13 == SPADES}
        pool = spades or {s: x for s, x in cards.items() if x // 13 == led}
        assert out.last_trick["winner"] == max(pool, key=pool.get)
        tricks[out.last_trick["winner"]] += 1
        if out.hand_points is None:
            assert g.tricks_won == tricks
            continue
        assert sum(tricks) == 13
        hands_played += 1
        points = []
        for side in (0, 1):
            seats = (side, side + 2)
            p, bags[side] = expected_hand_points([bids_before[s] for s in seats], [blind_before[s] for s in seats],
                                                 [tricks[s] for s in seats], bags[side], o)
            points.append(p)
        assert out.hand_points == tuple(points)
        scores = [a + b for a, b in zip(scores_before, points)]
        if o.episode == "hand":
            assert g.done
        elif max(scores) >= o.target_score and scores[0] != scores[1]:
            assert g.done and g.winners == ([0, 2] if scores[0] > scores[1] else [1, 3])
        elif o.mercy_rule and min(scores) <= o.mercy_threshold and scores[0] != scores[1]:
            assert g.done and g.winners == ([0, 2] if scores[0] > scores[1] else [1, 3])
        else:
            assert not g.done
            assert g.truncated or (g.scores == scores and g.bags == bags and g.phase == "bid")
        tricks = [0] * 4
        broken = o.spade_lead == "any"
    assert g.done or g.truncated
    assert hands_played >= 1


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_cards_text_round_trip_of_random_deals(seed):
    g = Spades()
    g.reset(np.random.default_rng(seed))
    deal_texts = g.current_deal()["hands"]
    assert sorted(x for h in deal_texts.values() for x in h) == sorted(card_to_str(x) for x in range(52))
    twin = Spades()
    twin.reset(np.random.default_rng(0), g.current_deal())
    assert twin.hands == g.hands and twin.dealer == g.dealer


# ------------------------------------------------------------------ search hooks (§8.4, §8.5)
def test_leads_are_restricted_until_spades_are_broken():
    """``leads_restricted()``, what search asks before solving: true until a spade is played on
    another suit; with ``only_spades_left`` never false; with ``any`` false from the deal."""
    g = sp4_game()
    assert g.leads_restricted()
    play(g, "4H")
    assert g.leads_restricted()
    play(g, "2S")
    assert not g.leads_restricted()
    g = sp4_game(spade_lead="only_spades_left")
    play(g, "4H", "2S", "AH", "5H")
    assert g.leads_restricted()
    assert not game({0: ["AS", "2C"]}, dealer=3, spade_lead="any").leads_restricted()


def test_side_trick_points_score_each_trick_total_of_the_hand():
    """Bids 2, 3, 2, 3 (side 0 contracts 4, side 1 six): entry t is side 0's hand points with t of
    the 13 tricks minus side 1's with the rest (§8.5): set below 4, made from 4, a bag a trick
    over, and side 1 set from t = 8; seat 1's table is seat 0's read backwards and negated."""
    g = sp4_game()
    assert g.side_trick_points(0) is not None
    expected = [-40 - (60 + 7 - t) for t in range(4)] + [40 + (t - 4) - (60 + 7 - t) for t in range(4, 8)] \
        + [40 + (t - 4) + 60 for t in range(8, 14)]
    assert g.side_trick_points(0).tolist() == expected
    assert expected[:5] == [-107, -106, -105, -104, -23] and expected[7:9] == [-17, 104] and expected[13] == 109
    assert g.side_trick_points(1).tolist() == [-v for v in reversed(expected)]
    g.bags = [8, 0]  # two bags more cost side 0 the bag penalty
    assert g.side_trick_points(0)[5] == 40 + 1 - 62 and g.side_trick_points(0)[6] == 40 + 2 - 100 - 61


def test_side_trick_points_are_none_in_the_bidding_and_with_a_nil():
    g = game(dealer=3)
    assert g.side_trick_points(0) is None  # the bidding
    bid(g, "bid:nil", "bid:3", "bid:2", "bid:3")
    assert all(g.side_trick_points(s) is None for s in range(4))
    g = game(dealer=3, blind_nil=True, blind_nil_deficit=0)
    bid(g, "bid:3", "bid:blind_nil", "bid:2", "bid:3")
    assert all(g.side_trick_points(s) is None for s in range(4))
