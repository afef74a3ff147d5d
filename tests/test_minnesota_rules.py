"""Minnesota Whist rules (RULES.md §3): worked examples NW-1…NW-6 and every option of §3.7."""

from __future__ import annotations

import numpy as np
import pytest
from new_games_helpers import DECK_52, c, fill_deal, finish_hand_with_tricks, lowest_legal, new_game, play, texts

from whist_env.engine.cards import RED_SUITS, card_to_str, cards_of, suit_of
from whist_env.engine.dealing import shuffled_deck
from whist_env.rules.minnesota import MinnesotaWhist


def deal(required, dealer=0, voids=None):
    hands, rest = fill_deal(required, num_seats=4, size=13, deck=DECK_52, voids=voids)
    assert rest == []
    return {"hands": hands, "dealer": dealer}


def game(required=None, dealer=0, voids=None, **options) -> MinnesotaWhist:
    return new_game(MinnesotaWhist, deal(required or {}, dealer, voids), **options)


def choose_bid_cards(g: MinnesotaWhist, black: bool) -> None:
    """Every seat, in bid order, chooses a black (or red) card of its hand as bid card."""
    assert g.phase == "bid_card"
    for _ in range(4):
        hand = list(cards_of(g.hands[g.current_player]))
        wanted = [x for x in hand if (suit_of(x) not in RED_SUITS) == black]
        assert wanted, "the seed's deal gives every seat both colours"
        g.apply(wanted[0])
    assert g.phase == "play"


# ------------------------------------------------------------------ deal and bid cards (§3.2, §3.3)
def test_deal_mapping_from_shuffled_list():
    """§3.2: d[i] -> seat (dealer + 1 + i) mod 4, 13 each, no card turned."""
    g = MinnesotaWhist()
    g.reset(np.random.default_rng(11), {"dealer": 2})
    order = shuffled_deck(np.random.default_rng(11), range(52))
    for i, card in enumerate(order):
        assert g.hands[(2 + 1 + i) % 4] >> card & 1
    assert [h.bit_count() for h in g.hands] == [13] * 4
    assert g.trump is None and g.phase == "bid_card" and g.current_player == 3


def test_nw1_reveal_stops_at_first_black_card():
    g = game({1: ["4D"], 2: ["2C"], 3: ["AS"], 0: ["3H"]}, dealer=0)
    assert g.phase == "bid_card" and g.current_player == 1
    play(g, "4D", "2C", "AS", "3H")
    assert g.high is True
    assert g.grand_player == 2 and g.grand_side == 0
    assert g.revealed == [None, c("4D"), c("2C"), None]  # seats 3 and 0 are not revealed
    assert g.phase == "play"
    assert g.leader == g.current_player == 3  # left(2)
    # bid cards stay in hand (§3.8 N3)
    assert [h.bit_count() for h in g.hands] == [13] * 4
    assert g.hands[1] >> c("4D") & 1 and g.hands[2] >> c("2C") & 1
    view = g.information_state(3)
    assert view["contract"] == "high" and view["grand_player"] == 2
    assert view["revealed_bid_cards"] == (None, "4D", "2C", None)


def test_nw1_grand_leader_right():
    g = game({1: ["4D"], 2: ["2C"], 3: ["AS"], 0: ["3H"]}, dealer=0, grand_leader="right")
    play(g, "4D", "2C", "AS", "3H")
    assert g.grand_player == 2
    assert g.leader == g.current_player == 1  # right(2)


def test_reveal_wraps_around_from_left_of_dealer():
    g = game({3: ["4D"], 0: ["5H"], 1: ["KS"], 2: ["AC"]}, dealer=2)
    assert g.current_player == 3
    play(g, "4D", "5H", "KS", "AC")
    assert g.grand_player == 1 and g.grand_side == 1
    assert g.revealed == [c("5H"), c("KS"), None, c("4D")]
    assert g.current_player == 2  # left(1)
    g = game({3: ["4D"], 0: ["5H"], 1: ["KS"], 2: ["AC"]}, dealer=2, grand_leader="right")
    play(g, "4D", "5H", "KS", "AC")
    assert g.current_player == 0  # right(1)


def test_first_revealed_black_card_makes_its_owner_grand():
    g = game({1: ["2S"], 2: ["3S"], 3: ["4S"], 0: ["5S"]}, dealer=0)
    play(g, "2S", "3S", "4S", "5S")
    assert g.grand_player == 1 and g.revealed == [None, c("2S"), None, None]
    assert g.current_player == 2


def test_nw2_all_red_is_low_and_left_of_dealer_leads():
    g = game({1: ["4D"], 2: ["5H"], 3: ["AD"], 0: ["3H"]}, dealer=0)
    play(g, "4D", "5H", "AD", "3H")
    assert g.high is False and g.grand_player is None and g.grand_side is None
    assert g.revealed == [c("3H"), c("4D"), c("5H"), c("AD")]  # all four revealed
    assert g.leader == g.current_player == 1
    assert g.information_state(0)["contract"] == "low"


def test_bid_card_phase_legal_set_is_own_hand_and_card_stays():
    g = game(dealer=3)
    for _ in range(4):
        seat = g.current_player
        assert g.legal_actions() == g.hands[seat]
        with pytest.raises(ValueError, match="bid_card"):
            g.apply(next(cards_of(g.hands[(seat + 1) % 4])))  # another seat's card
        g.apply(lowest_legal(g))
    assert [h.bit_count() for h in g.hands] == [13] * 4
    assert g.played == [0, 0, 0, 0]


def test_nw3_trick_without_trump():
    # NW-1's bid cards make seat 2 Grand, so seat 3 leads
    g = game({3: ["5H"], 0: ["AS", "3D"], 1: ["9H", "4D"], 2: ["6H", "2C"]}, dealer=0, voids={0: "H"})
    play(g, "4D", "2C", "5H", "3D")
    assert g.current_player == 3
    outcome = play(g, "5H", "AS", "9H", "6H")
    assert outcome.last_trick["winner"] == 1
    assert g.leader == g.current_player == 1 and g.tricks_won == [0, 1, 0, 0]


def test_must_follow_suit_in_play():
    g = game({3: ["5H"], 0: ["AS", "3D"], 1: ["9H", "4D"], 2: ["6H", "2C"]}, dealer=0, voids={0: "H"})
    play(g, "4D", "2C", "5H", "3D")
    play(g, "5H")
    assert g.legal_actions() == g.hands[0]  # seat 0 void in hearts: any card
    play(g, "AS")
    assert set(texts(g.legal_actions())) == {t for t in texts(g.hands[1]) if t.endswith("H")}
    with pytest.raises(ValueError):
        play(g, "4D")


# ------------------------------------------------------------------ scoring (§3.5)
def high_grand_team0(**options) -> MinnesotaWhist:
    g = game({1: ["4D"], 2: ["2C"], 3: ["AS"], 0: ["3H"]}, dealer=0, **options)
    play(g, "4D", "2C", "AS", "3H")
    assert g.high and g.grand_side == 0
    return g


def low_hand(**options) -> MinnesotaWhist:
    g = game({1: ["4D"], 2: ["5H"], 3: ["AD"], 0: ["3H"]}, dealer=0, **options)
    play(g, "4D", "5H", "AD", "3H")
    assert g.high is False
    return g


def test_nw4a_grand_side_takes_nine():
    g = high_grand_team0()
    out = finish_hand_with_tricks(g, [5, 2, 4, 2])
    assert out.hand_points == (3, 0)
    assert g.scores == [3, 0]


@pytest.mark.parametrize("doubling, expected", [(False, 2), (True, 4)])
def test_nw4b_opponents_of_grand_take_eight(doubling, expected):
    g = high_grand_team0(doubling_variation=doubling)
    out = finish_hand_with_tricks(g, [3, 4, 2, 4])
    assert out.hand_points == (0, expected)
    assert g.scores == [0, expected]


def test_doubling_variation_does_not_double_the_grand_side():
    g = high_grand_team0(doubling_variation=True)
    out = finish_hand_with_tricks(g, [5, 2, 4, 2])
    assert out.hand_points == (3, 0)


def test_nw5_low_scoring():
    g = low_hand()
    out = finish_hand_with_tricks(g, [3, 4, 2, 4])
    assert out.hand_points == (0, -2) and g.scores == [0, -2]
    g = low_hand()
    out = finish_hand_with_tricks(g, [4, 3, 3, 3])
    assert out.hand_points == (-1, 0) and g.scores == [-1, 0]


def test_low_scores_become_negative_and_accumulate():
    g = low_hand()
    g.scores = [-3, 5]
    out = finish_hand_with_tricks(g, [1, 5, 1, 6])  # team 1 takes 11
    assert out.hand_points == (0, -5) and g.scores == [-3, 0]


def test_nw6_end_at_target():
    g = high_grand_team0()
    g.scores = [11, 12]
    out = finish_hand_with_tricks(g, [5, 2, 4, 2])
    assert out.hand_points == (3, 0)
    assert g.scores == [14, 12]
    assert g.done and g.winners == [0, 2] and g.current_player is None and g.phase == "game_over"
    assert g.legal_actions() == 0


def test_game_continues_below_target_and_deal_passes_left():
    g = high_grand_team0()
    g.scores = [5, 12]
    finish_hand_with_tricks(g, [5, 2, 4, 2])
    assert g.scores == [8, 12] and not g.done
    assert g.dealer == 1 and g.hand_number == 1 and g.hand_in_game == 1
    assert g.phase == "bid_card" and g.current_player == 2
    assert [h.bit_count() for h in g.hands] == [13] * 4 and g.bid_cards == [None] * 4


@pytest.mark.parametrize("target", [1, 4])
def test_custom_target_score(target):
    g = high_grand_team0(target_score=target)
    finish_hand_with_tricks(g, [5, 2, 4, 2])
    assert g.done == (3 >= target)


# ------------------------------------------------------------------ options (§3.7)
def test_num_hands_ignores_target_and_breaks_ties_with_extra_hands():
    g = high_grand_team0(num_hands=2)
    g.scores = [20, 0]
    finish_hand_with_tricks(g, [5, 2, 4, 2])  # +3
    assert not g.done and g.scores == [23, 0] and g.hand_in_game == 1
    # hand 2: a tie 24 : 24 after the last fixed hand -> an extra hand
    choose_bid_cards(g, black=True)
    assert g.grand_player == 2  # left(dealer 1)
    g.scores = [24, 23]
    finish_hand_with_tricks(g, [3, 4, 3, 3])  # team 1, not Grand, takes 7 -> +1
    assert g.scores == [24, 24] and not g.done and g.hand_in_game == 2
    # hand 3 (extra): team 0 takes 7 -> +1 in a High hand
    choose_bid_cards(g, black=True)
    finish_hand_with_tricks(g, [4, 3, 3, 3])
    assert g.scores == [25, 24] and g.done and g.winners == [0, 2]


def test_num_hands_winner_after_last_hand():
    g = low_hand(num_hands=1)
    finish_hand_with_tricks(g, [3, 4, 2, 4])
    assert g.scores == [0, -2] and g.done and g.winners == [0, 2]


def test_best_of_three_match():
    g = high_grand_team0(best_of=3)
    g.scores = [12, 3]
    finish_hand_with_tricks(g, [4, 3, 3, 3])  # team 0 -> 13: game 1
    assert not g.done and g.games_won == [1, 0] and g.scores == [0, 0]
    assert g.game_number == 1 and g.hand_in_game == 0 and g.dealer == 1  # deal keeps rotating
    choose_bid_cards(g, black=True)  # left(dealer) = seat 2 is Grand
    assert g.grand_side == 0
    g.scores = [12, 12]
    finish_hand_with_tricks(g, [3, 4, 3, 3])  # team 1 (not Grand) takes 7 -> 13
    assert g.games_won == [1, 1] and not g.done and g.dealer == 2
    choose_bid_cards(g, black=True)  # seat 3 Grand
    g.scores = [12, 0]
    finish_hand_with_tricks(g, [4, 3, 3, 3])
    assert g.done and g.games_won == [2, 1] and g.winners == [0, 2]


def revoke_deal(**options) -> MinnesotaWhist:
    g = game({1: ["2H", "4H"], 2: ["3H", "2C"], 3: ["5H"], 0: ["6H", "7H"]}, dealer=0, **options)
    play(g, "4H", "3H", "5H", "6H")  # all red: Low, seat 1 leads
    assert g.high is False and g.current_player == 1
    return g


def test_revoke_impossible_by_default():
    g = revoke_deal()
    play(g, "2H")
    before = (list(g.hands), list(g.trick), g.current_player)
    with pytest.raises(ValueError, match="illegal"):
        play(g, "2C")
    assert (g.hands, g.trick, g.current_player) == before


@pytest.mark.parametrize("start, after", [([3, 2], [0, 2]), ([-2, 2], [-2, 2]), ([0, 5], [0, 5])])
def test_allow_revoke_penalty_min_score_zero(start, after):
    g = revoke_deal(allow_revoke=True)
    g.scores = list(start)
    play(g, "2H")
    assert g.legal_actions() == g.hands[2]  # every card in hand
    play(g, "2C", "5H", "6H")  # seat 2 revokes (holds 3H); seat 0 wins
    assert g.pending_revokes == [(2, 2)] and g.current_player == 0
    out = play(g, "7H", "4H", "3H")  # seat 2 plays a heart: established
    assert out.hand_points == tuple(a - b for a, b in zip(after, start))
    assert g.scores == after
    assert out.rewards == (out.hand_points[0] - out.hand_points[1], out.hand_points[1] - out.hand_points[0]) * 2
    # annulled: same dealer redeals, the hand does not count
    assert g.dealer == 0 and g.hand_in_game == 0 and g.hand_number == 1
    assert g.phase == "bid_card" and g.current_player == 1 and not g.done
    assert g.played == [0] * 4 and [h.bit_count() for h in g.hands] == [13] * 4


def test_annulled_hand_does_not_count_toward_num_hands():
    g = revoke_deal(allow_revoke=True, num_hands=1)
    play(g, "2H", "2C", "5H", "6H", "7H", "4H", "3H")
    assert not g.done and g.hand_in_game == 0
    choose_bid_cards(g, black=True)
    finish_hand_with_tricks(g, [4, 3, 3, 3])
    assert g.done


def test_first_dealer_option():
    g = MinnesotaWhist(first_dealer=3)
    g.reset(np.random.default_rng(0))
    assert g.dealer == 3 and g.current_player == 0


# ------------------------------------------------------------------ options validation
@pytest.mark.parametrize(
    "name, value",
    [
        ("doubling_variation", "yes"),
        ("doubling_variation", 1),
        ("grand_leader", "up"),
        ("num_hands", 0),
        ("num_hands", 1.5),
        ("best_of", 2),
        ("best_of", 0),
        ("allow_revoke", 1),
        ("first_dealer", 4),
        ("target_score", 0),
        ("reward", "points"),
        ("episode", "trick"),
        ("max_hands", 0),
    ],
)
def test_invalid_option_values(name, value):
    with pytest.raises(ValueError, match=name):
        MinnesotaWhist(**{name: value})


@pytest.mark.parametrize("name", ["honours", "trump_mode", "jokers_high", "scoring", "colour"])
def test_unknown_options(name):
    with pytest.raises(ValueError, match=name):
        MinnesotaWhist(**{name: True})


# ------------------------------------------------------------------ rewards and episodes (§1.9)
@pytest.mark.parametrize(
    "reward, expected",
    [("score_diff", (2.0, -2.0, 2.0, -2.0)), ("score", (0.0, -2.0, 0.0, -2.0)), ("win_loss", (0.0,) * 4)],
)
def test_reward_modes(reward, expected):
    g = low_hand(reward=reward)
    out = finish_hand_with_tricks(g, [3, 4, 2, 4])
    assert out.rewards == expected
    assert sum(out.rewards) == 0 or reward == "score"


def test_win_loss_reward_at_game_end():
    g = high_grand_team0(reward="win_loss")
    g.scores = [11, 12]
    out = finish_hand_with_tricks(g, [5, 2, 4, 2])
    assert out.rewards == (1.0, -1.0, 1.0, -1.0)


def test_episode_hand_ends_after_one_hand():
    g = low_hand(episode="hand")
    out = finish_hand_with_tricks(g, [3, 4, 2, 4])
    assert g.done and g.winners == [0, 2] and out.hand_points == (0, -2)
    g = high_grand_team0(episode="hand", reward="win_loss")
    out = finish_hand_with_tricks(g, [5, 2, 4, 2])
    assert g.done and g.winners == [0, 2] and out.rewards == (1.0, -1.0, 1.0, -1.0)


def test_max_hands_truncates():
    g = low_hand(max_hands=1)
    finish_hand_with_tricks(g, [3, 4, 2, 4])
    assert g.truncated and not g.done and g.current_player is None and g.legal_actions() == 0


# ------------------------------------------------------------------ information (§1.7)
def test_unrevealed_bid_cards_are_private():
    g = game({1: ["4D"], 2: ["2C"], 3: ["AS"], 0: ["3H"]}, dealer=0)
    play(g, "4D", "2C")
    assert g.information_state(1)["own_bid_card"] == "4D"
    assert g.information_state(2)["own_bid_card"] == "2C"
    for viewer in (0, 3):
        view = g.information_state(viewer)
        assert view["own_bid_card"] is None
        assert "4D" not in repr(view) and "2C" not in repr(view)
    play(g, "AS", "3H")
    for viewer in range(4):
        view = g.information_state(viewer)
        assert view["revealed_bid_cards"] == (None, "4D", "2C", None)
        others = [s for s in (3, 0) if s != viewer]
        for s in others:
            hidden = card_to_str(g.bid_cards[s])
            assert hidden not in repr(view)
    assert g.information_state(3)["own_bid_card"] == "AS"


def test_default_options_follow_rules():
    o = MinnesotaWhist().options
    assert (o.target_score, o.doubling_variation, o.grand_leader, o.num_hands, o.best_of, o.allow_revoke, o.first_dealer) == (
        13, False, "left", None, 1, False, None)
    assert (o.reward, o.episode, o.max_hands) == ("score_diff", "game", 200)


def test_invalid_option_message_names_allowed_values():
    with pytest.raises(ValueError, match=r"grand_leader.*'left', 'right'"):
        MinnesotaWhist(grand_leader="up")


def test_episode_hand_continues_after_an_annulled_hand():
    g = revoke_deal(allow_revoke=True, episode="hand")
    play(g, "2H", "2C", "5H", "6H", "7H", "4H", "3H")
    assert not g.done and g.phase == "bid_card" and g.scores == [0, 0]
    choose_bid_cards(g, black=True)
    finish_hand_with_tricks(g, [4, 3, 3, 3])
    assert g.done
