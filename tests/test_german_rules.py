"""German Whist rules (RULES.md §4): worked examples GW-1…GW-4, stock mechanics, every option of §4.6."""

from __future__ import annotations

import numpy as np
import pytest
from new_games_helpers import DECK_52, c, fill_deal, finish_hand_with_tricks, lowest_legal, new_game, play, texts

from whist_env.engine.cards import SPADES, cards_of
from whist_env.engine.dealing import shuffled_deck
from whist_env.rules.german import GermanWhist


def deal(required, dealer=0, voids=None, stock_top=()):
    hands, rest = fill_deal(required, num_seats=2, size=13, deck=DECK_52, voids=voids, reserve=stock_top)
    assert len(rest) == 26
    return {"hands": hands, "dealer": dealer, "stock": rest}


def game(required=None, dealer=0, voids=None, stock_top=(), **options) -> GermanWhist:
    return new_game(GermanWhist, deal(required or {}, dealer, voids, stock_top), **options)


def gw2_game(**options) -> GermanWhist:
    return game({0: ["KH"], 1: ["2S"]}, dealer=0, voids={1: "H"}, stock_top=("4S", "9D", "QC"), **options)


# ------------------------------------------------------------------ GW-1 deal
def test_gw1_deal_mapping_and_trump():
    g = GermanWhist()
    g.reset(np.random.default_rng(5), {"dealer": 0})
    d = shuffled_deck(np.random.default_rng(5), range(52))
    for i in range(26):
        assert g.hands[(0 + 1 + i) % 2] >> d[i] & 1  # d[0] -> seat 1, d[1] -> seat 0, ..., d[25] -> seat 0
    assert g.stock == d[26:]
    assert g.trump == d[26] // 13
    assert [h.bit_count() for h in g.hands] == [13, 13]


def test_gw1_fixed_stock_top_sets_trump():
    g = GermanWhist()
    g.reset(np.random.default_rng(1), {"dealer": 0, "stock": ["4S"] + [t for t in DECK_52 if t != "4S"][:25]})
    assert g.stock[0] == c("4S") and g.trump == SPADES
    assert g.information_state(1)["stock_top"] == "4S" and g.information_state(0)["trump"] == "S"
    g = gw2_game()
    assert g.trump == SPADES and g.stock[:3] == [c("4S"), c("9D"), c("QC")] and len(g.stock) == 26


# ------------------------------------------------------------------ GW-2 first trick and the stock
def test_gw2_first_trick_and_stock_draws():
    g = gw2_game()
    assert g.phase == "stock" and g.current_player == 0  # the dealer leads
    out = play(g, "KH", "2S")
    assert out.last_trick["winner"] == 1
    assert g.hands[1] >> c("4S") & 1  # winner takes the face-up card
    assert g.hands[0] >> c("9D") & 1  # loser draws d[27]
    assert g.stock[0] == c("QC") and len(g.stock) == 24  # d[28] turned
    assert [h.bit_count() for h in g.hands] == [13, 13]
    assert g.current_player == g.leader == 1
    assert g.known == [0, 1 << c("4S")]
    assert g.tricks_won == [0, 0] and g.stock_tricks_won == [0, 1]
    assert g.trump == SPADES  # later face-up cards do not change trump
    # public: the taken card and the new top; the draw without its card
    events = g.information_state(1)["events"]
    assert ("stock_take", 1, "4S") in events and ("stock_draw", 0) in events and ("stock_turn", "QC") in events
    assert "9D" not in repr(g.information_state(1))
    assert "9D" in g.information_state(0)["hand"]


def test_gw2_first_leader_non_dealer():
    g = gw2_game(first_leader="non_dealer")
    assert g.current_player == g.leader == 1


# ------------------------------------------------------------------ GW-3 must follow
def test_gw3_must_follow():
    g = game({1: ["9C"], 0: ["3C", "AS"]}, dealer=0, voids={0: "C"}, stock_top=("7H", "8H"), first_leader="non_dealer")
    # seat 0's only club is 3C (fill_deal puts no other club in seat 0's hand)
    assert texts(g.hands[0] & (0x1FFF)) == ["3C"]
    assert g.current_player == 1
    play(g, "9C")
    assert texts(g.legal_actions()) == ["3C"]
    with pytest.raises(ValueError):
        play(g, "AS")
    out = play(g, "3C")
    assert out.last_trick["winner"] == 1 and g.hands[1] >> c("7H") & 1 and g.hands[0] >> c("8H") & 1


def test_void_player_may_play_any_card_and_trump_wins():
    g = gw2_game()
    play(g, "KH")
    assert g.legal_actions() == g.hands[1]


# ------------------------------------------------------------------ stock mechanics over a whole phase 1
def test_phase_one_then_phase_two():
    g = gw2_game()
    for k in range(13):
        assert g.phase == "stock"
        top, hidden = g.stock[0], g.stock[1]
        next_top = g.stock[2] if len(g.stock) > 2 else None
        out = None
        while out is None or out.last_trick is None:
            out = g.apply(lowest_legal(g))
        w = out.last_trick["winner"]
        assert g.hands[w] >> top & 1 and g.hands[1 - w] >> hidden & 1
        assert [h.bit_count() for h in g.hands] == [13, 13]
        assert len(g.stock) == 24 - 2 * k
        assert (g.stock[0] if g.stock else None) == next_top
        assert sum(g.stock_tricks_won) == k + 1 and g.tricks_won == [0, 0]
        all_cards = g.hands[0] | g.hands[1] | g.played[0] | g.played[1]
        for x in g.stock:
            all_cards |= 1 << x
        assert all_cards == (1 << 52) - 1
    assert g.phase == "play" and g.stock == [] and g.leader == w
    for k in range(13):
        out = None
        while out is None or out.last_trick is None:
            out = g.apply(lowest_legal(g))
        assert sum(g.tricks_won) == k + 1 or out.hand_points is not None
    assert g.done
    assert sum(out.hand_points) == 1  # "hand" scoring: the winner scores one


def test_only_phase_two_tricks_count():
    g = gw2_game()
    while g.phase == "stock":
        g.apply(lowest_legal(g))
    assert g.tricks_won == [0, 0] and sum(g.stock_tricks_won) == 13


# ------------------------------------------------------------------ GW-4 result and scoring
def test_gw4_hand_scoring():
    g = gw2_game()
    out = finish_hand_with_tricks(g, [8, 5])
    assert out.hand_points == (1, 0)
    assert g.done and g.winners == [0]


def test_gw4_over_six():
    g = gw2_game(scoring="over_six")
    out = finish_hand_with_tricks(g, [8, 5])
    assert out.hand_points == (2, 0) and g.scores == [2, 0]
    assert not g.done and g.dealer == 1 and g.phase == "stock"
    assert g.current_player == 1  # the new dealer leads


def test_over_six_target_score():
    g = gw2_game(scoring="over_six", target_score=5)
    finish_hand_with_tricks(g, [8, 5])
    assert g.scores == [2, 0] and not g.done
    out = finish_hand_with_tricks(g, [4, 9])
    assert out.hand_points == (0, 3) and g.scores == [2, 3] and not g.done
    out = finish_hand_with_tricks(g, [10, 3])
    assert out.hand_points == (4, 0) and g.scores == [6, 3] and g.done and g.winners == [0]


def test_best_of_three_hands():
    g = gw2_game(best_of=3)
    finish_hand_with_tricks(g, [8, 5])
    assert g.games_won == [1, 0] and not g.done and g.dealer == 1
    finish_hand_with_tricks(g, [6, 7])
    assert g.games_won == [1, 1] and not g.done and g.dealer == 0
    finish_hand_with_tricks(g, [1, 12])
    assert g.games_won == [1, 2] and g.done and g.winners == [1]


def test_first_dealer_option():
    for seat in (0, 1):
        g = GermanWhist(first_dealer=seat)
        g.reset(np.random.default_rng(3))
        assert g.dealer == seat and g.current_player == seat
        g = GermanWhist(first_dealer=seat, first_leader="non_dealer")
        g.reset(np.random.default_rng(3))
        assert g.current_player == 1 - seat


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    "name, value",
    [
        ("first_leader", "winner"),
        ("scoring", "points"),
        ("best_of", 2),
        ("target_score", 0),
        ("target_score", "10"),
        ("first_dealer", 2),
        ("reward", "tricks"),
        ("episode", "match"),
        ("max_hands", 0),
    ],
)
def test_invalid_option_values(name, value):
    with pytest.raises(ValueError, match=name):
        GermanWhist(**{name: value})


@pytest.mark.parametrize("name", ["allow_revoke", "honours", "num_hands", "deck"])
def test_unknown_options(name):
    with pytest.raises(ValueError, match=name):
        GermanWhist(**{name: 1})


def test_bad_stock_extras():
    hands, rest = fill_deal({}, num_seats=2, size=13, deck=DECK_52)
    with pytest.raises(ValueError, match="stock"):
        GermanWhist().reset(np.random.default_rng(0), {"hands": hands, "stock": rest[:25], "dealer": 0})
    with pytest.raises(ValueError):
        GermanWhist().reset(np.random.default_rng(0), {"hands": hands, "stock": rest[:25] + [hands[0][0]], "dealer": 0})
    with pytest.raises(ValueError):
        GermanWhist().reset(np.random.default_rng(0), {"hands": hands, "stock": rest[:25] + [rest[0]], "dealer": 0})


# ------------------------------------------------------------------ rewards and episodes
@pytest.mark.parametrize(
    "scoring, reward, expected",
    [
        ("hand", "score_diff", (1.0, -1.0)),
        ("hand", "score", (1.0, 0.0)),
        ("hand", "win_loss", (1.0, -1.0)),
        ("over_six", "score_diff", (2.0, -2.0)),
        ("over_six", "score", (2.0, 0.0)),
        ("over_six", "win_loss", (0.0, 0.0)),
    ],
)
def test_reward_modes(scoring, reward, expected):
    g = gw2_game(scoring=scoring, reward=reward)
    out = finish_hand_with_tricks(g, [8, 5])
    assert out.rewards == expected


def test_episode_hand():
    g = gw2_game(scoring="over_six", episode="hand")
    out = finish_hand_with_tricks(g, [5, 8])
    assert g.done and g.winners == [1] and out.hand_points == (0, 2)


def test_drawn_card_never_seen_by_winner():
    g = gw2_game()
    play(g, "KH", "2S")
    drawn = c("9D")
    view = g.information_state(1)
    assert "9D" not in view["hand"] and "9D" not in repr(view)
    assert all(not m >> drawn & 1 for m in g.public_card_sets(1))
    assert list(cards_of(g.public_card_sets(0)[1])) == [c("4S")]  # seat 0 knows seat 1 took 4S


def test_default_options_follow_rules():
    o = GermanWhist().options
    assert (o.first_leader, o.scoring, o.best_of, o.target_score, o.first_dealer) == ("dealer", "hand", 1, 10, None)
    assert (o.reward, o.episode, o.max_hands) == ("score_diff", "game", 200)
