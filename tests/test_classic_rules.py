"""Classic Whist rules (RULES.md §2): the worked examples CW-1 … CW-10 as exact-value tests, scoring
order, honours, game end, matches, the revoke mode, rewards, episodes and options.

The rules object is driven directly: ``game.reset(rng, {"hands": {seat: [...]}, "dealer": seat,
"turn_up": "QH"})`` fixes the first deal, then cards are played with ``game.apply``.
"""

from __future__ import annotations

import numpy as np
import pytest

from whist_env.engine.cards import SUITS, card_from_str, card_to_str, cards_of, mask_from_strs, suit_of
from whist_env.engine.dealing import shuffled_deck
from whist_env.rules.base import GAME_OVER, PLAY
from whist_env.rules.classic import ClassicWhist

# --------------------------------------------------------------------------- helpers


def fill_deal(fixed: dict[int, list[str]], voids: dict[int, str] | None = None) -> dict[int, list[str]]:
    """A full 4 × 13 deal holding ``fixed`` cards; the other cards are spread deterministically,
    never giving a seat a card of a suit listed in ``voids[seat]``."""
    voids = voids or {}
    hands = {s: [card_from_str(c) for c in fixed.get(s, [])] for s in range(4)}
    used = {c for h in hands.values() for c in h}
    assert len(used) == sum(len(h) for h in hands.values())
    rest = [c for c in range(52) if c not in used]

    def eligible(c):
        return [s for s in range(4) if SUITS[suit_of(c)] not in voids.get(s, "")]

    for c in sorted(rest, key=lambda c: (len(eligible(c)), c)):
        seats = [s for s in eligible(c) if len(hands[s]) < 13]
        assert seats, "cannot build the deal"
        best = max(seats, key=lambda s: (13 - len(hands[s]), -s))
        hands[best].append(c)
    return {s: [card_to_str(c) for c in sorted(h)] for s, h in hands.items()}


def start(game: ClassicWhist, hands: dict[int, list[str] | str], dealer: int, turn_up: str | None = None, seed: int = 0) -> ClassicWhist:
    deal = {"hands": {s: h.split() if isinstance(h, str) else list(h) for s, h in hands.items()}, "dealer": dealer}
    if turn_up is not None:
        deal["turn_up"] = turn_up
    game.reset(np.random.default_rng(seed), deal)
    return game


def play(game: ClassicWhist, *texts: str):
    """Play card texts in turn; return the last outcome."""
    out = None
    for t in texts:
        out = game.apply(card_from_str(t))
    return out


def play_hand_lowest(game: ClassicWhist) -> tuple[list[int], object]:
    """Play the current hand with "lowest legal card id"; return (tricks per side, last outcome)."""
    hand = game.hand_number
    by_side = [0, 0]
    out = None
    while not (game.done or game.truncated) and game.hand_number == hand:
        out = game.apply(min(cards_of(game.legal_actions())))
        if out.last_trick is not None:
            by_side[out.last_trick["winner"] % 2] += 1
    return by_side, out


def play_hand_random(game: ClassicWhist, rng: np.random.Generator):
    hand = game.hand_number
    out = None
    while not (game.done or game.truncated) and game.hand_number == hand:
        legal = list(cards_of(game.legal_actions()))
        out = game.apply(legal[int(rng.integers(len(legal)))])
    return out


def labels(mask: int) -> set[str]:
    return {card_to_str(c) for c in cards_of(mask)}


# Deals found once by search; with "lowest legal card" play they give the stated trick split.
# CW-6: dealer 0, turn-up QH (team 0's only honour); team 1 holds AH KH JH; team 0 takes 8 tricks.
DEAL_CW6 = {
    0: "2C 6C 8C 6D AD 4H 7H 9H QH 4S 5S 9S QS",
    1: "7C JC 3D 4D 8D JD 5H 6H TH KH AH 6S 7S",
    2: "3C 4C KC AC 5D 7D 9D QD 2H 3S 8S TS AS",
    3: "5C 9C TC QC 2D TD KD 3H 8H JH 2S JS KS",
}
# CW-7: dealer 1, turn-up AH; team 1 holds AH KH QH, team 0 JH; team 0 takes 9 tricks.
DEAL_CW7 = {
    0: "3C 5C 9C 3D 8D JD AD 3H 4H 9H TH JH QS",
    1: "2C 7C 9D 2H KH AH 2S 3S 7S TS JS KS AS",
    2: "8C TC KC AC 2D 6D 7D TD KD 5H 7H 5S 6S",
    3: "4C 6C JC QC 4D 5D QD 6H 8H QH 4S 8S 9S",
}
# CW-8: dealer 2, turn-up JH; team 0 holds all four honours; team 1 takes 7 tricks.
DEAL_CW8 = {
    0: "2C QC 4D QD KD AD 2H KH AH 4S JS QS KS",
    1: "5C 6C 7C 8C TC 2D 3D 6D TD JD 9H 2S 6S",
    2: "4C JC 5D 9D 3H 7H TH JH QH 3S 5S 7S 8S",
    3: "3C 9C KC AC 7D 8D 4H 5H 6H 8H 9S TS AS",
}
# dealer 3, turn-up AH; team 1 holds all four honours; team 0 takes 7 tricks.
DEAL_T1_FOUR = {
    0: "2C QC 3D 5D JD 2H 3H 6S 7S 8S 9S TS AS",
    1: "8C 9C KC 4D 6D 7D 8D 9D QD 5H 9H JH QH",
    2: "3C 4C 6C 7C KD AD 6H 7H 2S 3S 5S JS QS",
    3: "5C TC JC AC 2D TD 4H 8H TH KH AH 4S KS",
}
# dealer 0, turn-up 2H; honours split 2-2; team 1 takes 7 tricks.
DEAL_SPLIT = {
    0: "2C 6C TC AC 9D TD 2H 9H AH 6S 8S JS AS",
    1: "3C 4C 7C 8C 9C JD 6H 7H TH QH 2S 3S 4S",
    2: "5C QC 2D 7D QD 3H 4H 8H KH 5S 7S QS KS",
    3: "JC KC 3D 4D 5D 6D 8D KD AD 5H JH 9S TS",
}


# --------------------------------------------------------------------------- CW-1 … CW-5
def test_cw1_deal_mapping_from_shuffled_list():
    for seed in range(5):
        order = shuffled_deck(np.random.default_rng(seed), range(52))
        game = ClassicWhist(first_dealer=3)
        game.reset(np.random.default_rng(seed))
        assert game.dealer == 3
        for i, c in enumerate(order):
            assert game.hands[i % 4] >> c & 1, f"d[{i}] should go to seat {i % 4}"
        assert game.turn_up == order[51]
        assert game.hands[3] >> order[51] & 1
        assert game.trump == suit_of(order[51])
        assert game.current_player == game.leader == 0  # left(dealer) leads


def test_cw1_turn_up_qh_with_dealer_3():
    hands = fill_deal({3: ["QH"]})
    game = start(ClassicWhist(), hands, dealer=3, turn_up="QH")
    assert game.trump == SUITS.index("H")
    assert game.turn_up == card_from_str("QH")
    assert game.hands[3] >> card_from_str("QH") & 1
    assert game.honours_held()[1] >= 1
    assert ("turn_up", 3, "QH") in game.events
    assert game.information_state(0)["turn_up"] == "QH"
    assert game.public_card_sets(1) == [1 << card_from_str("QH")]


def test_cw2_trick_with_a_single_trump():
    hands = fill_deal({0: ["AD", "3H"], 1: ["KS"], 2: ["AS"], 3: ["2H"]}, voids={0: "S", 3: "S"})
    game = start(ClassicWhist(), hands, dealer=0, turn_up="3H")
    assert game.current_player == 1
    out = play(game, "KS", "AS", "2H", "AD")
    assert out.last_trick == {
        "cards": {1: card_from_str("KS"), 2: card_from_str("AS"), 3: card_from_str("2H"), 0: card_from_str("AD")},
        "leader": 1,
        "winner": 3,
    }
    assert game.current_player == game.leader == 3
    assert game.tricks_won == [0, 0, 0, 1]
    assert game.trick == [] and game.trick_number == 1


def test_cw3_no_trump_played():
    hands = fill_deal({0: ["TD"], 1: ["QD"], 2: ["AS"], 3: ["3D", "2C"]}, voids={2: "D"})
    game = start(ClassicWhist(), hands, dealer=3, turn_up="2C")
    assert game.trump == SUITS.index("C")
    out = play(game, "TD", "QD", "AS", "3D")
    assert out.last_trick["winner"] == 1
    assert game.current_player == 1


def test_cw4_two_trumps_and_dealer_plays_the_turn_up_on_the_first_trick():
    hands = fill_deal({0: ["AC"], 1: ["JH"], 2: ["5C"], 3: ["7H"]}, voids={1: "C", 3: "C"})
    game = start(ClassicWhist(), hands, dealer=1, turn_up="JH")
    assert game.current_player == 2
    play(game, "5C", "7H", "AC")
    assert game.turn_up == card_from_str("JH")
    assert game.legal_actions() >> card_from_str("JH") & 1
    out = play(game, "JH")
    assert out.last_trick["winner"] == 1
    assert game.turn_up is None
    assert game.public_card_sets(0) == [0]
    assert game.information_state(2)["turn_up"] is None


def test_cw5_legal_mask_on_the_first_trick():
    hands = fill_deal({1: ["2S"], 2: ["7S", "AH", "KH"], 0: ["3D"]}, voids={2: "S"})
    game = start(ClassicWhist(), hands, dealer=0, turn_up="3D")
    play(game, "2S")
    assert labels(game.legal_actions()) == {"7S"}
    before = (list(game.hands), list(game.trick), game.current_player)
    with pytest.raises(ValueError, match="AH"):
        play(game, "AH")
    assert (list(game.hands), list(game.trick), game.current_player) == before
    # the same lead with seat 2 void in spades: every card is legal
    hands = fill_deal({1: ["2S"], 2: ["AH", "KH", "2D"], 0: ["3D"]}, voids={2: "S"})
    hands_void = fill_deal({1: ["2S"], 2: ["AH", "KH", "2D"], 0: ["3D", "7S"]}, voids={2: "S"})
    assert hands != hands_void
    game = start(ClassicWhist(), hands_void, dealer=0, turn_up="3D")
    play(game, "2S")
    assert labels(game.legal_actions()) == set(hands_void[2])


def test_cw5_legal_mask_with_three_cards_left():
    game = start(ClassicWhist(), fill_deal({0: ["3D"]}), dealer=0, turn_up="3D")
    # the state of trick 11: seat 1 has led a spade, seat 2 holds three cards
    game.hands[2] = mask_from_strs(["7S", "AH", "KH"])
    game.trick = [(1, card_from_str("2S"))]
    game.current_player = 2
    assert labels(game.legal_actions()) == {"7S"}
    game.hands[2] = mask_from_strs(["AH", "KH", "2D"])
    assert labels(game.legal_actions()) == {"AH", "KH", "2D"}


# --------------------------------------------------------------------------- CW-6 … CW-8, scoring
def scored(deal, dealer, turn_up, scores, **opts):
    game = start(ClassicWhist(**opts), deal, dealer=dealer, turn_up=turn_up)
    game.scores = list(scores)
    tricks, out = play_hand_lowest(game)
    return game, tricks, out


def test_cw6_honours_decide_the_game():
    game, tricks, out = scored(DEAL_CW6, 0, "QH", [2, 3])
    assert tricks == [8, 5]
    assert game.scores == [4, 5]
    assert out.hand_points == (2, 2)
    assert game.done and game.phase == GAME_OVER and game.current_player is None
    assert game.winners == [1, 3]
    assert game.games_won == [0, 1]


def test_cw6_honours_held_as_dealt():
    game = start(ClassicWhist(), DEAL_CW6, dealer=0, turn_up="QH")
    assert game.honours_held() == [1, 3]
    play_hand_lowest(game)  # honours are counted as dealt even after they are played


def test_cw7_tricks_first_ends_the_game_before_honours():
    game, tricks, out = scored(DEAL_CW7, 1, "AH", [3, 3])
    assert tricks == [9, 4]
    assert game.scores == [6, 3]
    assert out.hand_points == (3, 0)
    assert game.done and game.winners == [0, 2]


def test_cw7_same_hand_without_the_end_scores_the_honours():
    game, tricks, out = scored(DEAL_CW7, 1, "AH", [0, 0])
    assert tricks == [9, 4]
    assert game.scores == [3, 2]  # game continues: team 1's three honours count
    assert not game.done


def test_cw8_honours_barred_at_target_minus_one():
    game, tricks, out = scored(DEAL_CW8, 2, "JH", [4, 1])
    assert tricks == [6, 7]
    assert game.scores == [4, 2]
    assert out.hand_points == (0, 1)
    assert not game.done
    assert game.hand_number == 1 and game.hand_in_game == 1
    assert game.dealer == 3  # the deal passes to the left


def test_honours_alone_win_the_game_when_not_barred():
    game, _, out = scored(DEAL_CW8, 2, "JH", [3, 1])
    assert game.scores == [7, 2]
    assert out.hand_points == (4, 1)
    assert game.done and game.winners == [0, 2]


@pytest.mark.parametrize(("start_scores", "expected", "done"), [([9, 1], [9, 2], False), ([8, 1], [12, 2], True)])
def test_honours_bar_follows_target_score(start_scores, expected, done):
    game, _, _ = scored(DEAL_CW8, 2, "JH", start_scores, target_score=10)
    assert game.scores == expected
    assert game.done is done


def test_honours_four_score_four_and_split_scores_nothing():
    game, tricks, out = scored(DEAL_T1_FOUR, 3, "AH", [0, 0])
    assert tricks == [7, 6]
    assert game.scores == [1, 4] and out.hand_points == (1, 4)
    game, tricks, out = scored(DEAL_SPLIT, 0, "2H", [0, 0])
    assert tricks == [6, 7]
    assert game.honours_held() == [2, 2]
    assert game.scores == [0, 1] and out.hand_points == (0, 1)


def test_honours_option_off():
    game, _, out = scored(DEAL_CW8, 2, "JH", [0, 0], honours=False)
    assert game.scores == [0, 1] and out.hand_points == (0, 1)


def test_honours_always_scorable_in_num_hands_mode():
    game, _, out = scored(DEAL_CW8, 2, "JH", [4, 1], num_hands=5)
    assert game.scores == [8, 2]  # target ignored: no bar, no end at 8
    assert out.hand_points == (4, 1)
    assert not game.done


def test_num_hands_tie_plays_extra_hands():
    game, _, _ = scored(DEAL_SPLIT, 0, "2H", [1, 0], num_hands=1)
    assert game.scores == [1, 1]
    assert not game.done  # tied after the last scheduled hand: play on
    assert game.hand_in_game == 1
    rng = np.random.default_rng(3)
    while not game.done:
        before = game.hand_in_game
        play_hand_random(game, rng)
        if not game.done:
            assert game.scores[0] == game.scores[1]
            assert game.hand_in_game == before + 1
    assert game.scores[0] != game.scores[1]
    best = 0 if game.scores[0] > game.scores[1] else 1
    assert game.winners == [best, best + 2]


@pytest.mark.parametrize("seed", range(3))
def test_num_hands_game_length(seed):
    game = ClassicWhist(num_hands=3, first_dealer=0)
    rng = np.random.default_rng(seed)
    game.reset(rng)
    hands = 0
    while not game.done:
        before = list(game.scores)
        play_hand_random(game, rng)
        hands += 1
        if not game.done:
            assert hands < 3 or game.scores[0] == game.scores[1] or before == game.scores
    assert hands >= 3
    assert game.scores[0] != game.scores[1]


def test_target_game_ends_when_target_reached():
    rng = np.random.default_rng(11)
    game = ClassicWhist(target_score=5)
    game.reset(rng)
    while not game.done:
        play_hand_random(game, rng)
        if not game.done:
            assert max(game.scores) < 5
    assert max(game.scores) >= 5
    side = game.winners[0] % 2
    assert game.scores[side] >= 5 and game.scores[1 - side] < 5
    assert game.legal_actions() == 0


# --------------------------------------------------------------------------- rotation, matches
def test_cw10_fixed_rotation_trumps():
    game = ClassicWhist(trump_mode="fixed_rotation", num_hands=10, first_dealer=0)
    rng = np.random.default_rng(0)
    game.reset(rng)
    trumps = []
    for _ in range(6):
        assert game.turn_up is None
        assert game.public_card_sets(0) == [0]
        assert not any(e[0] == "turn_up" for e in game.events)
        trumps.append(SUITS[game.trump])
        play_hand_random(game, rng)
    assert trumps == ["S", "H", "D", "C", "S", "H"]


def test_custom_trump_rotation():
    game = ClassicWhist(trump_mode="fixed_rotation", trump_rotation=["C", "D", "H", "S"], num_hands=10)
    rng = np.random.default_rng(1)
    game.reset(rng)
    trumps = []
    for _ in range(5):
        trumps.append(SUITS[game.trump])
        play_hand_random(game, rng)
    assert trumps == ["C", "D", "H", "S", "C"]


def test_fixed_rotation_rejects_a_turn_up():
    with pytest.raises(ValueError, match="turn_up"):
        start(ClassicWhist(trump_mode="fixed_rotation"), DEAL_CW8, dealer=2, turn_up="JH")


def test_best_of_3_match():
    rng = np.random.default_rng(5)
    game = ClassicWhist(best_of=3, target_score=2, trump_mode="fixed_rotation", first_dealer=1)
    game.reset(rng)
    dealer = 1
    games_seen = 0
    while not game.done:
        assert game.dealer == dealer
        assert SUITS[game.trump] == "SHDC"[game.hand_in_game % 4]
        game_before = game.game_number
        won_before = list(game.games_won)
        play_hand_random(game, rng)
        dealer = (dealer + 1) % 4  # keeps rotating across games
        if game.done:
            break
        if game.game_number != game_before:
            games_seen += 1
            assert game.scores == [0, 0]  # scores reset for the new game
            assert game.hand_in_game == 0  # rotation restarts at its first suit
            assert sum(game.games_won) == sum(won_before) + 1
    assert max(game.games_won) == 2
    side = game.games_won.index(2)
    assert game.winners == [side, side + 2]
    assert sum(game.games_won) in (2, 3)
    assert games_seen == sum(game.games_won) - 1


# --------------------------------------------------------------------------- revoke mode (§2.9)
# CW-9 script: dealer 3, trump H (turn-up 9H). Seat 2 revokes on trick 3, wins tricks 3-5 and
# leads 7S on trick 6.
CW9_FIXED = {
    0: ["AC", "AD", "AS", "6C", "6D"],
    1: ["2C", "2D", "2S", "7C", "7D"],
    2: ["3C", "3D", "2H", "KC", "KD", "7S"],
    3: ["4C", "4D", "3S", "5C", "5D", "9H"],
}
CW9_TRICKS = [
    ["AC", "2C", "3C", "4C"],  # seat 0 leads, wins
    ["AD", "2D", "3D", "4D"],  # seat 0 wins
    ["AS", "2S", "2H", "3S"],  # seat 2 revokes (holds 7S), wins with the trump
    ["KC", "5C", "6C", "7C"],  # seat 2 wins
    ["KD", "5D", "6D", "7D"],  # seat 2 wins
]


def cw9_game(**opts):
    hands = fill_deal(CW9_FIXED)
    game = ClassicWhist(allow_revoke=True, **opts)
    turn_up = "9H" if game.options.trump_mode == "turn_up" else None
    return start(game, hands, dealer=3, turn_up=turn_up)


def test_cw9_revoke_established_when_the_revoker_leads_the_suit():
    game = cw9_game()
    game.scores = [3, 2]
    for i, trick in enumerate(CW9_TRICKS):
        assert labels(game.legal_actions()) == labels(game.hands[game.current_player])  # mask = whole hand
        out = play(game, *trick)
        if i == 2:
            assert out.last_trick["winner"] == 2
            assert game.pending_revokes == [(2, SUITS.index("S"))]
            assert not any(e[0] == "revoke" for e in game.events)  # nothing is announced
            # nothing in the view mentions it (the public rule options name "allow_revoke" itself)
            view = {k: v for k, v in game.information_state(1).items() if k != "options"}
            assert "revoke" not in str(view)
    assert game.current_player == 2 and game.tricks_won == [2, 0, 3, 0]
    out = play(game, "7S")
    assert out.hand_points == (-3, 0)
    assert out.last_trick is None
    assert game.scores == [0, 2]
    assert not game.done
    # the same dealer redeals a fresh hand; the annulled hand does not count
    assert game.dealer == 3
    assert game.hand_in_game == 0
    assert game.hand_number == 1
    assert game.tricks_won == [0, 0, 0, 0] and game.trick_number == 0
    assert game.pending_revokes == []
    assert [h.bit_count() for h in game.hands] == [13, 13, 13, 13]
    assert game.current_player == 0
    assert game.phase == PLAY


@pytest.mark.parametrize(("reward", "expected"), [("score_diff", (-3.0, 3.0, -3.0, 3.0)), ("score", (-3.0, 0.0, -3.0, 0.0))])
def test_cw9_rewards_of_an_annulled_hand(reward, expected):
    game = cw9_game(reward=reward)
    game.scores = [3, 2]
    for trick in CW9_TRICKS:
        play(game, *trick)
    out = play(game, "7S")
    assert out.rewards == expected


def test_revoke_established_when_following_the_suit():
    hands = fill_deal({0: ["AS", "KS"], 1: ["2S", "4S"], 2: ["2D", "7S"], 3: ["3S", "5S", "9H"]})
    game = start(ClassicWhist(allow_revoke=True), hands, dealer=3, turn_up="9H")
    game.scores = [1, 4]
    out = play(game, "AS", "2S", "2D", "3S")
    assert out.last_trick["winner"] == 0
    assert game.pending_revokes == [(2, 3)]
    play(game, "KS", "4S")
    out = play(game, "7S")
    assert game.scores == [0, 4]
    assert out.hand_points == (-1, 0)
    assert game.dealer == 3 and game.hand_number == 1


def test_first_established_revoke_wins():
    hands = fill_deal(
        {
            0: ["AC", "AD"],
            1: ["5C", "2H", "2D"],
            2: ["3C", "4H", "5D"],
            3: ["4C", "4D", "9H"],
        }
    )
    game = start(ClassicWhist(allow_revoke=True), hands, dealer=3, turn_up="9H")
    game.scores = [3, 4]
    out = play(game, "AC", "2H", "3C", "4C")  # seat 1 revokes in clubs, wins with the trump
    assert out.last_trick["winner"] == 1
    out = play(game, "2D", "4H", "4D", "AD")  # seat 2 revokes in diamonds, wins with the trump
    assert out.last_trick["winner"] == 2
    assert game.pending_revokes == [(1, 0), (2, 1)]
    out = play(game, "5D")  # seat 2's revoke is established first
    assert game.scores == [0, 4]
    assert out.hand_points == (-3, 0)
    assert game.pending_revokes == []


def test_a_void_discard_is_not_a_revoke():
    hands = fill_deal({0: ["AS"], 1: ["2S"], 2: ["2D"], 3: ["3S", "9H"]}, voids={2: "S"})
    game = start(ClassicWhist(allow_revoke=True), hands, dealer=3, turn_up="9H")
    play(game, "AS", "2S", "2D", "3S")
    assert game.pending_revokes == []


def test_revoke_is_impossible_without_allow_revoke():
    hands = fill_deal(CW9_FIXED)
    game = start(ClassicWhist(), hands, dealer=3, turn_up="9H")
    play(game, *CW9_TRICKS[0], *CW9_TRICKS[1], "AS", "2S")
    with pytest.raises(ValueError, match="illegal"):
        play(game, "2H")


def test_annulled_hand_does_not_count_for_num_hands_or_rotation():
    game = cw9_game(trump_mode="fixed_rotation", trump_rotation=["H", "S", "D", "C"], num_hands=1)
    assert SUITS[game.trump] == "H" and game.turn_up is None
    for trick in CW9_TRICKS:
        play(game, *trick)
    play(game, "7S")
    assert not game.done  # num_hands=1, but the annulled hand does not count
    assert game.hand_in_game == 0
    assert SUITS[game.trump] == "H"  # replayed with the same trump
    assert game.dealer == 3


def test_annulled_hand_does_not_end_a_hand_episode():
    game = cw9_game(episode="hand")
    for trick in CW9_TRICKS:
        play(game, *trick)
    play(game, "7S")
    assert not game.done and game.hand_number == 1
    while not game.done:  # now follow suit: the redealt hand is scored and ends the episode
        hand = game.hands[game.current_player]
        led = [c for c in cards_of(hand) if game.trick and suit_of(c) == suit_of(game.trick[0][1])]
        out = game.apply(min(led or cards_of(hand)))
    assert game.hand_number == 1
    assert list(out.hand_points) == game.scores and max(game.scores) > 0


# --------------------------------------------------------------------------- dealer, rewards, episodes
def test_first_dealer_option():
    for seat in range(4):
        game = ClassicWhist(first_dealer=seat)
        game.reset(np.random.default_rng(0))
        assert game.dealer == seat
        assert game.current_player == (seat + 1) % 4
        assert game.turn_up is not None and game.hands[seat] >> game.turn_up & 1


def test_random_first_dealer_is_seeded():
    dealers = set()
    for seed in range(20):
        a, b = ClassicWhist(), ClassicWhist()
        a.reset(np.random.default_rng(seed))
        b.reset(np.random.default_rng(seed))
        assert a.dealer == b.dealer and a.hands == b.hands
        dealers.add(a.dealer)
    assert len(dealers) > 1


def test_fixed_deal_dealer_overrides_first_dealer():
    game = start(ClassicWhist(first_dealer=1), DEAL_CW8, dealer=2, turn_up="JH")
    assert game.dealer == 2


@pytest.mark.parametrize(
    ("reward", "expected"),
    [
        ("score_diff", (3.0, -3.0, 3.0, -3.0)),
        ("score", (3.0, 0.0, 3.0, 0.0)),
        ("win_loss", (1.0, -1.0, 1.0, -1.0)),
    ],
)
def test_rewards_at_game_end(reward, expected):
    _, _, out = scored(DEAL_CW7, 1, "AH", [3, 3], reward=reward)
    assert out.rewards == expected


@pytest.mark.parametrize(
    ("reward", "expected"),
    [
        ("score_diff", (-1.0, 1.0, -1.0, 1.0)),
        ("score", (0.0, 1.0, 0.0, 1.0)),
        ("win_loss", (0.0, 0.0, 0.0, 0.0)),
    ],
)
def test_rewards_of_a_hand_that_does_not_end_the_game(reward, expected):
    game, _, out = scored(DEAL_CW8, 2, "JH", [4, 1], reward=reward)
    assert not game.done
    assert out.rewards == expected


def test_rewards_only_when_a_hand_ends():
    game = start(ClassicWhist(), DEAL_CW8, dealer=2, turn_up="JH")
    for _ in range(51):
        out = game.apply(min(cards_of(game.legal_actions())))
        assert out.rewards is None and out.hand_points is None
    out = game.apply(min(cards_of(game.legal_actions())))
    assert out.rewards is not None and sum(out.rewards) == 0


def test_score_diff_rewards_sum_to_zero_over_a_game():
    rng = np.random.default_rng(2)
    game = ClassicWhist(target_score=7)
    game.reset(rng)
    while not game.done:
        out = play_hand_random(game, rng)
        assert sum(out.rewards) == 0
        assert out.rewards[0] == out.rewards[2] and out.rewards[1] == out.rewards[3]
        assert out.rewards[0] == out.hand_points[0] - out.hand_points[1]


def test_episode_hand():
    game, _, out = scored(DEAL_CW8, 2, "JH", [0, 0], episode="hand", reward="win_loss")
    assert game.done
    assert game.scores == [4, 1]
    assert game.winners == [0, 2]
    assert out.rewards == (1.0, -1.0, 1.0, -1.0)
    assert game.legal_actions() == 0


def test_episode_hand_scores_start_at_zero():
    for seed in range(3):
        game = ClassicWhist(episode="hand")
        rng = np.random.default_rng(seed)
        game.reset(rng)
        assert game.scores == [0, 0]
        out = play_hand_random(game, rng)
        assert game.done and game.hand_number == 0
        assert list(out.hand_points) == game.scores


def test_max_hands_truncation():
    rng = np.random.default_rng(4)
    game = ClassicWhist(target_score=100, max_hands=3)
    game.reset(rng)
    for _ in range(3):
        assert not game.truncated
        out = play_hand_random(game, rng)
        assert out.rewards is not None
    assert game.truncated and not game.done
    assert game.current_player is None and game.legal_actions() == 0
    assert game.hand_number == 2
    with pytest.raises(ValueError):
        game.apply(0)


def test_max_hands_one():
    game, _, _ = scored(DEAL_CW8, 2, "JH", [0, 0], target_score=100, max_hands=1)
    assert game.truncated and not game.done and game.winners == []


def test_game_end_takes_precedence_over_truncation():
    game, _, _ = scored(DEAL_CW7, 1, "AH", [3, 3], max_hands=1)
    assert game.done and not game.truncated


# --------------------------------------------------------------------------- options
BAD_OPTIONS = [
    ("target_score", 0),
    ("target_score", -5),
    ("target_score", 2.5),
    ("target_score", True),
    ("target_score", "5"),
    ("honours", 1),
    ("honours", "yes"),
    ("honours", None),
    ("trump_mode", "turnup"),
    ("trump_mode", None),
    ("trump_rotation", ["S", "H", "D"]),
    ("trump_rotation", ["S", "H", "D", "D"]),
    ("trump_rotation", ["S", "H", "D", "X"]),
    ("trump_rotation", "SHDC"),
    ("trump_rotation", ["s", "h", "d", "c"]),
    ("best_of", 2),
    ("best_of", 0),
    ("best_of", 3.0),
    ("num_hands", 0),
    ("num_hands", -1),
    ("num_hands", "3"),
    ("allow_revoke", 0),
    ("allow_revoke", "no"),
    ("first_dealer", 4),
    ("first_dealer", -1),
    ("first_dealer", "player_0"),
    ("reward", "points"),
    ("reward", None),
    ("episode", "match"),
    ("max_hands", 0),
    ("max_hands", 1.5),
]


@pytest.mark.parametrize(("name", "value"), BAD_OPTIONS)
def test_invalid_option_values_raise_naming_the_option(name, value):
    with pytest.raises(ValueError, match=name):
        ClassicWhist(**{name: value})


def test_unknown_option_raises():
    with pytest.raises(ValueError, match="trump_suit"):
        ClassicWhist(trump_suit="H")


def test_valid_options_are_accepted():
    game = ClassicWhist(
        target_score=10,
        honours=False,
        trump_mode="fixed_rotation",
        trump_rotation=["C", "D", "H", "S"],
        best_of=5,
        num_hands=4,
        allow_revoke=True,
        first_dealer=0,
        reward="win_loss",
        episode="game",
        max_hands=50,
    )
    assert game.options.trump_rotation == ("C", "D", "H", "S")
    assert ClassicWhist(num_hands=None).options.num_hands is None
    assert ClassicWhist(first_dealer=None).options.first_dealer is None


# --------------------------------------------------------------------------- fixed deals
@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d["hands"][0].__setitem__(0, d["hands"][1][0]), "more than one seat|twice"),
        (lambda d: d["hands"][0].pop(), "13"),
        (lambda d: d["hands"][0].__setitem__(0, "XX"), "XX"),
        (lambda d: d["hands"].pop(3), "every seat"),
        (lambda d: d.__setitem__("turn_up", "2C"), "dealer"),
        (lambda d: d.__setitem__("turn_up", "JKR"), "52"),
        (lambda d: d.__setitem__("dealer", 4), "dealer"),
    ],
)
def test_broken_fixed_deals_raise_and_leave_the_state(mutate, match):
    game = start(ClassicWhist(), DEAL_CW7, dealer=1, turn_up="AH")
    play(game, "8C")
    snapshot = (list(game.hands), list(game.trick), game.current_player, game.dealer, game.turn_up)
    deal = {"hands": {s: h.split() for s, h in DEAL_CW8.items()}, "dealer": 2, "turn_up": "JH"}
    mutate(deal)
    with pytest.raises(ValueError, match=match):
        game.reset(np.random.default_rng(0), deal)
    assert (list(game.hands), list(game.trick), game.current_player, game.dealer, game.turn_up) == snapshot


def test_fixed_deal_without_turn_up_turns_up_a_dealer_card():
    game = start(ClassicWhist(), DEAL_CW8, dealer=2)
    assert game.hands[2] >> game.turn_up & 1
    assert game.trump == suit_of(game.turn_up)


def test_fixed_turn_up_with_random_hands_goes_to_the_dealer():
    game = ClassicWhist(first_dealer=1)
    game.reset(np.random.default_rng(9), {"turn_up": "5S"})
    assert game.turn_up == card_from_str("5S")
    assert game.hands[1] >> card_from_str("5S") & 1
    assert SUITS[game.trump] == "S"


def test_later_hands_are_random_from_the_seed():
    a = start(ClassicWhist(target_score=100), DEAL_CW8, dealer=2, turn_up="JH", seed=1)
    b = start(ClassicWhist(target_score=100), DEAL_CW8, dealer=2, turn_up="JH", seed=1)
    play_hand_lowest(a)
    play_hand_lowest(b)
    assert a.hands == b.hands and a.turn_up == b.turn_up
    assert sorted(c for h in a.hands for c in cards_of(h)) == list(range(52))


def test_fixed_turn_up_uses_first_dealer_when_the_deal_names_no_dealer():
    hands = {s: h.split() for s, h in DEAL_CW8.items()}
    game = ClassicWhist(first_dealer=2)
    game.reset(np.random.default_rng(0), {"hands": hands, "turn_up": "JH"})
    assert game.dealer == 2 and game.turn_up == card_from_str("JH")
    with pytest.raises(ValueError, match="dealer"):
        ClassicWhist(first_dealer=1).reset(np.random.default_rng(0), {"hands": hands, "turn_up": "JH"})
    with pytest.raises(ValueError, match="dealer"):
        ClassicWhist().reset(np.random.default_rng(0), {"hands": hands, "turn_up": "JH"})


def test_both_sides_at_target_rule_kept_for_completeness():
    # §2.6: unreachable in play (only one side scores trick points, honours come after the end
    # test), so the end test itself is checked: the higher score wins, equal scores play on
    from whist_env.rules.scoring import fixed_hands_winner, target_winner

    assert target_winner([5, 6], 5) == 1
    assert target_winner([7, 5], 5) == 0
    assert target_winner([5, 5], 5) is None
    assert target_winner([4, 3], 5) is None
    assert fixed_hands_winner([3, 2], 2, 1) is None
    assert fixed_hands_winner([3, 2], 2, 2) == 0
    assert fixed_hands_winner([3, 3], 2, 3) is None
