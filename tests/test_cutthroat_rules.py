"""Cutthroat Whist rules (RULES.md §7): worked examples XW-1…XW-5, jokers, decks and every option of §7.5."""

from __future__ import annotations

import numpy as np
import pytest
from new_games_helpers import (
    DECK_52,
    DECK_54,
    c,
    expected_legal_jokers,
    fill_deal,
    finish_hand_with_tricks,
    new_game,
    play,
    texts,
)

from whist_env.engine.cards import JKB, JKR
from whist_env.engine.dealing import shuffled_deck
from whist_env.rules.cutthroat import CutthroatWhist


def deal(required, dealer=0, voids=None, deck="54"):
    size = 18 if deck == "54" else 17
    hands, rest = fill_deal(required, num_seats=3, size=size, deck=DECK_54 if deck == "54" else DECK_52, voids=voids)
    assert len(rest) == (0 if deck == "54" else 1)
    return {"hands": hands, "dealer": dealer}, rest


def game(required=None, dealer=0, voids=None, **options) -> CutthroatWhist:
    d, _ = deal(required or {}, dealer, voids, options.get("deck", "54"))
    return new_game(CutthroatWhist, d, **options)


# ------------------------------------------------------------------ XW-1 deal
def test_xw1_deal_mapping_deck_54():
    g = CutthroatWhist()
    g.reset(np.random.default_rng(7), {"dealer": 2})
    d = shuffled_deck(np.random.default_rng(7), list(range(54)))
    for i in range(54):
        assert g.hands[i % 3] >> d[i] & 1
    assert [h.bit_count() for h in g.hands] == [18, 18, 18]
    assert g.dead_card is None and g.current_player == 0


def test_deal_mapping_deck_52_dead_card():
    g = CutthroatWhist(deck="52")
    g.reset(np.random.default_rng(7), {"dealer": 1})
    d = shuffled_deck(np.random.default_rng(7), list(range(52)))
    for i in range(51):
        assert g.hands[(1 + 1 + i) % 3] >> d[i] & 1
    assert g.dead_card == d[51]
    assert [h.bit_count() for h in g.hands] == [17, 17, 17]
    assert not any(h >> JKR & 1 or h >> JKB & 1 or h >> d[51] & 1 for h in g.hands)
    assert g.current_player == 2


def test_fixed_deal_deck_52_dead_card_is_the_missing_card():
    d, rest = deal({}, dealer=0, deck="52")
    g = new_game(CutthroatWhist, d, deck="52")
    assert g.dead_card == c(rest[0])
    with pytest.raises(ValueError, match="17"):
        CutthroatWhist(deck="52").reset(np.random.default_rng(0), deal({}, 0)[0])  # 18-card hands
    bad = {"hands": {0: ["JKR"] + d["hands"][0][1:], 1: d["hands"][1], 2: d["hands"][2]}, "dealer": 0}
    with pytest.raises(ValueError, match="deck"):
        CutthroatWhist(deck="52").reset(np.random.default_rng(0), bad)


# ------------------------------------------------------------------ XW-2, XW-3 tricks
def test_xw2_trick():
    g = game({1: ["7D"], 2: ["QD"], 0: ["AS"]}, dealer=0, voids={0: "D"})
    assert g.current_player == 1
    out = play(g, "7D", "QD", "AS")
    assert out.last_trick["winner"] == 2 and g.current_player == 2 and g.tricks_won == [0, 0, 1]


@pytest.mark.parametrize("jokers_high, big_joker, winner", [(False, "red", 2), (True, "red", 0), (True, "black", 0)])
def test_xw3_led_joker(jokers_high, big_joker, winner):
    g = game({0: ["JKR"], 1: ["4C"], 2: ["9C"]}, dealer=2, jokers_high=jokers_high, big_joker=big_joker)
    assert g.current_player == 0
    play(g, "JKR")
    assert g.legal_actions() == g.hands[1]  # no suit established yet
    play(g, "4C")
    assert set(texts(g.legal_actions())) == {t for t in texts(g.hands[2]) if t.endswith("C")}  # clubs became led
    out = play(g, "9C")
    assert out.last_trick["winner"] == winner


@pytest.mark.parametrize("jokers_high, big_joker, winner", [(False, "red", 2), (True, "red", 0), (True, "black", 1)])
def test_two_jokers_big_joker(jokers_high, big_joker, winner):
    g = game({0: ["JKR"], 1: ["JKB"], 2: ["4C"]}, dealer=2, jokers_high=jokers_high, big_joker=big_joker)
    play(g, "JKR")
    assert g.legal_actions() == g.hands[1]
    play(g, "JKB")
    assert g.legal_actions() == g.hands[2]  # still no suit: anything
    out = play(g, "4C")
    assert out.last_trick["winner"] == winner


def test_first_non_joker_sets_led_suit_and_off_suit_cannot_win():
    g = game({0: ["JKR", "2C"], 1: ["4C"], 2: ["AD"]}, dealer=2, voids={2: "C"})
    play(g, "JKR", "4C")
    assert g.legal_actions() == g.hands[2]  # void in clubs
    out = play(g, "AD")
    assert out.last_trick["winner"] == 1


def test_joker_only_when_void():
    g = game({1: ["7D", "JKB"], 2: ["QD", "JKR"], 0: ["AS"]}, dealer=0)
    assert g.legal_actions() == g.hands[1]  # leading: anything, jokers included
    play(g, "7D")
    legal = set(texts(g.legal_actions()))
    assert "JKR" not in legal and legal == expected_legal_jokers(texts(g.hands[2]), ["7D"])
    g = game({1: ["7D"], 2: ["JKR"], 0: ["AS"]}, dealer=0, voids={2: "D", 0: "D"})
    play(g, "7D")
    assert "JKR" in texts(g.legal_actions()) and g.legal_actions() == g.hands[2]
    out = play(g, "JKR", "AS")
    assert out.last_trick["winner"] == 1


def test_jokers_high_joker_discard_wins():
    g = game({1: ["7D"], 2: ["JKB"], 0: ["AD"]}, dealer=0, voids={2: "D"}, jokers_high=True)
    out = play(g, "7D", "JKB", "AD")
    assert out.last_trick["winner"] == 2


# ------------------------------------------------------------------ XW-4, XW-5 scoring
@pytest.mark.parametrize("tricks, points", [((9, 6, 3), (3, 0, 0)), ((8, 7, 3), (2, 1, 0)), ((6, 6, 6), (0, 0, 0))])
def test_xw4_hand_score(tricks, points):
    g = game()
    out = finish_hand_with_tricks(g, tricks)
    assert out.hand_points == points and g.scores == list(points)


@pytest.mark.parametrize("tricks, points", [((8, 5, 4), (3, 0, 0)), ((7, 6, 4), (2, 1, 0)), ((6, 6, 5), (1, 1, 0))])
def test_book_five_with_deck_52(tricks, points):
    g = game(deck="52")
    out = finish_hand_with_tricks(g, tricks)
    assert out.hand_points == points


def test_xw5_tie_at_target_plays_another_hand():
    g = game()
    g.scores = [5, 6, 2]
    finish_hand_with_tricks(g, (8, 7, 3))
    assert g.scores == [7, 7, 2] and not g.done
    assert g.hand_number == 1 and g.dealer == 1 and g.current_player == 2
    assert [h.bit_count() for h in g.hands] == [18] * 3
    finish_hand_with_tricks(g, (6, 7, 5))
    assert g.scores == [7, 8, 2] and g.done and g.winners == [1]


def test_xw5_strict_winner():
    g = game()
    g.scores = [5, 6, 2]
    finish_hand_with_tricks(g, (9, 6, 3))
    assert g.scores == [8, 6, 2] and g.done and g.winners == [0]


@pytest.mark.parametrize("target", [1, 3])
def test_target_score(target):
    g = game(target_score=target)
    finish_hand_with_tricks(g, (8, 7, 3))
    assert g.done == (target <= 2)
    if target == 1:
        assert g.winners == [0]


def test_num_hands_ignores_target_and_ties_play_on():
    g = game(num_hands=2)
    g.scores = [10, 0, 0]
    finish_hand_with_tricks(g, (9, 6, 3))
    assert g.scores == [13, 0, 0] and not g.done
    g.scores = [3, 10, 3]
    finish_hand_with_tricks(g, (9, 6, 3))
    assert g.scores == [6, 10, 3] and g.done and g.winners == [1]


def test_num_hands_tie_extra_hands():
    g = game(num_hands=1)
    finish_hand_with_tricks(g, (8, 8, 2))
    assert g.scores == [2, 2, 0] and not g.done and g.hand_in_game == 1
    finish_hand_with_tricks(g, (6, 6, 6))
    assert not g.done
    finish_hand_with_tricks(g, (5, 7, 6))
    assert g.scores == [2, 3, 0] and g.done and g.winners == [1]


def test_first_dealer_option():
    g = CutthroatWhist(first_dealer=1)
    g.reset(np.random.default_rng(0))
    assert g.dealer == 1 and g.current_player == 2


# ------------------------------------------------------------------ options validation
@pytest.mark.parametrize(
    "name, value",
    [
        ("deck", "53"),
        ("deck", 54),
        ("jokers_high", "no"),
        ("big_joker", "blue"),
        ("target_score", 0),
        ("num_hands", 0),
        ("first_dealer", 3),
        ("reward", "tricks"),
        ("episode", "match"),
        ("max_hands", 0),
    ],
)
def test_invalid_option_values(name, value):
    with pytest.raises(ValueError, match=name):
        CutthroatWhist(**{name: value})


@pytest.mark.parametrize("name", ["best_of", "allow_revoke", "kitty", "trump"])
def test_unknown_options(name):
    with pytest.raises(ValueError, match=name):
        CutthroatWhist(**{name: 1})


def test_action_labels():
    g = CutthroatWhist()
    assert g.num_actions == 54 and g.action_label(52) == "JKR" and g.action_label(53) == "JKB"
    assert g.action_id("jkb") == 53
    with pytest.raises(ValueError):
        CutthroatWhist(deck="52").action_id("JKR")


# ------------------------------------------------------------------ rewards and episodes
@pytest.mark.parametrize(
    "reward, expected",
    [("score_diff", (3.0, -1.5, -1.5)), ("score", (3.0, 0.0, 0.0)), ("win_loss", (0.0, 0.0, 0.0))],
)
def test_reward_modes(reward, expected):
    g = game(reward=reward)
    out = finish_hand_with_tricks(g, (9, 6, 3))
    assert out.rewards == expected


def test_score_diff_is_own_minus_mean_of_others():
    g = game()
    out = finish_hand_with_tricks(g, (8, 7, 3))
    assert out.rewards == (2 - 0.5, 1 - 1.0, 0 - 1.5)
    assert sum(out.rewards) == 0


def test_win_loss_at_game_end():
    g = game(reward="win_loss")
    g.scores = [5, 6, 2]
    out = finish_hand_with_tricks(g, (9, 6, 3))
    assert out.rewards == (1.0, -1.0, -1.0)


def test_episode_hand():
    g = game(episode="hand", reward="win_loss")
    out = finish_hand_with_tricks(g, (9, 6, 3))
    assert g.done and g.winners == [0] and out.rewards == (1.0, -1.0, -1.0)
    g = game(episode="hand", reward="win_loss")
    out = finish_hand_with_tricks(g, (6, 6, 6))
    assert g.done and g.winners == [] and out.rewards == (0.0, 0.0, 0.0)


def test_default_options_follow_rules():
    o = CutthroatWhist().options
    assert (o.deck, o.jokers_high, o.big_joker, o.target_score, o.num_hands, o.first_dealer) == ("54", False, "red", 7, None, None)
    assert (o.reward, o.episode, o.max_hands) == ("score_diff", "game", 200)


def test_a_number_for_a_text_option_says_to_quote_it():
    """``deck=52`` from YAML or the command line is the number 52; the options want the text "52"."""
    with pytest.raises(ValueError, match=r"invalid value 52 for option 'deck': expected one of \['54', '52'\] "
                                         r"\(the text '52', not the number 52: quote it\)"):
        CutthroatWhist(deck=52)
    with pytest.raises(ValueError, match=r"expected one of \['54', '52'\]$"):
        CutthroatWhist(deck=53)
    assert CutthroatWhist(deck="52").options.deck == "52"
