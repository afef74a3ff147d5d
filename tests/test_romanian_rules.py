"""Romanian Whist rules (RULES.md §5): worked examples RW-1…RW-7 and every option of §5.9."""

from __future__ import annotations

import numpy as np
import pytest
from bidding_games_helpers import (
    act,
    c,
    fill_hands,
    finish_with_tricks,
    last_trick_winner,
    lowest_legal,
    new_game,
    romanian_deck_texts,
    texts,
)

from whist_env.engine.cards import DIAMONDS, card_to_str, mask_of
from whist_env.engine.dealing import deal_round_robin, shuffled_deck
from whist_env.rules.romanian import (
    BID_BASE,
    RomanianWhist,
    deal_points,
    deal_schedule,
    forbidden_bid,
    romanian_deck,
)

SCHEDULE_3_181 = [1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 1]
SCHEDULE_4_181 = [1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 1, 1]
SCHEDULE_4_818 = [8, 8, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 8]


def rw(deal=None, seed=0, **options) -> RomanianWhist:
    return new_game(RomanianWhist, deal, seed, **options)


def bid_values(game: RomanianWhist) -> set[int]:
    return {a - BID_BASE for a in game.legal_action_list()}


def bid_round(game: RomanianWhist, wanted: dict[int, int]) -> None:
    """Every seat bids: the seats of ``wanted`` their wanted bid, the others 0 (the dealer its lowest
    legal bid); the last non-dealer avoids forbidding the dealer's wanted bid."""
    k = game.k
    while game.phase == "bid":
        seat = game.current_player
        if seat in wanted:
            b = wanted[seat]
        elif seat == game.dealer:
            b = min(bid_values(game))
        else:
            b = 0
            if game.dealer in wanted and game.left(seat) == game.dealer:
                if k - sum(x for x in game.bids if x is not None) - b == wanted[game.dealer]:
                    b = 1
        act(game, f"bid:{b}")


def play_deal(game: RomanianWhist, seat: int, bid: int | None, took: int | None, exact: bool | None = None):
    """Play one deal in which ``seat`` bids ``bid`` and takes ``took`` tricks; for a 1-card deal
    pass ``exact`` instead and the bid follows from the trick's winner. Returns the outcome."""
    if game.k == 1 and exact is not None:
        took = int(last_trick_winner(game) == seat)
        bid = took if exact else 1 - took
    bid_round(game, {seat: bid})
    return finish_with_tricks(game, {seat}, took)


# ------------------------------------------------------------------ RW-1 schedules (§5.3)
def test_rw1_schedule_three_players():
    assert deal_schedule(3, "1-8-1") == SCHEDULE_3_181
    assert RomanianWhist(num_players=3).schedule == SCHEDULE_3_181


def test_schedule_examples_four_players():
    assert RomanianWhist().schedule == SCHEDULE_4_181
    assert RomanianWhist(schedule="8-1-8").schedule == SCHEDULE_4_818


@pytest.mark.parametrize("n", [3, 4, 5, 6])
@pytest.mark.parametrize("schedule", ["1-8-1", "8-1-8"])
def test_schedule_lengths(n, schedule):
    s = RomanianWhist(num_players=n, schedule=schedule).schedule
    assert len(s) == 3 * n + 12
    assert {21: 3, 24: 4, 27: 5, 30: 6}[len(s)] == n
    edge = 1 if schedule == "1-8-1" else 8
    mid = 8 if edge == 1 else 1
    assert s[:n] == [edge] * n and s[-n:] == [edge] * n
    assert s[n + 6 : 2 * n + 6] == [mid] * n
    assert s[n : n + 6] == ([2, 3, 4, 5, 6, 7] if edge == 1 else [7, 6, 5, 4, 3, 2])
    assert s[2 * n + 6 : 2 * n + 12] == ([7, 6, 5, 4, 3, 2] if edge == 1 else [2, 3, 4, 5, 6, 7])


# ------------------------------------------------------------------ deck (§5.2)
@pytest.mark.parametrize(
    ("n", "ranks"), [(3, "9TJQKA"), (4, "789TJQKA"), (5, "56789TJQKA"), (6, "3456789TJQKA")]
)
def test_deck_is_the_8n_top_cards(n, ranks):
    expected = {r + s for s in "CDHS" for r in ranks}
    assert len(expected) == 8 * n
    assert {card_to_str(x) for x in romanian_deck(n)} == expected
    g = rw(num_players=n)
    assert texts(g.deck_mask()) == expected
    assert g.num_actions == 61 and g.num_players == n


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_every_deal_of_a_game_uses_only_the_deck(n):
    g = rw(seed=n, num_players=n)
    deck = g.deck_mask()
    while not g.done:
        if g.trick == [] and g.phase == "bid":
            held = [h.bit_count() for h in g.hands]
            assert held == [g.k] * n
            all_cards = 0
            for h in g.hands:
                assert h & ~deck == 0 and h & all_cards == 0
                all_cards |= h
            if g.turn_up is not None:
                assert deck >> g.turn_up & 1 and not all_cards >> g.turn_up & 1
        g.apply(lowest_legal(g))
    assert g.hand_number == 3 * n + 11


# ------------------------------------------------------------------ RW-2 deal and trump (§5.4)
def test_rw2_deal_mapping_from_the_shuffled_list():
    g = rw({"dealer": 1, "deal_index": 5}, seed=7)  # N = 4, deal 5 has k = 3
    assert g.k == 3 and g.dealer == 1 and g.first_player == 2
    d = shuffled_deck(np.random.default_rng(7), romanian_deck(4))
    expected_seat = {0: 2, 1: 3, 2: 0, 3: 1, 11: 1}
    for i, seat in expected_seat.items():
        assert g.hands[seat] >> d[i] & 1
    for i in range(12):
        assert g.hands[(2 + i) % 4] >> d[i] & 1
    assert g.turn_up == d[12] and g.trump == d[12] // 13
    hands, rest = deal_round_robin(d, 2, 4, 3)
    assert g.hands == hands and rest[0] == g.turn_up


def test_rw2_turned_nine_of_diamonds_makes_diamonds_trump():
    g = rw({"dealer": 1, "deal_index": 5, "turn_up": "9D"}, seed=3)
    assert g.turn_up == c("9D") and g.trump == DIAMONDS
    assert all(not h >> c("9D") & 1 for h in g.hands)
    view = g.information_state(0)
    assert view["turn_up"] == "9D" and view["trump"] == "D" and ("turn_up", "9D") in view["events"]
    # a fixed deal with the turned card
    hands, rest = fill_hands({}, num_seats=4, size=3, deck=romanian_deck_texts(4), reserve=["9D"])
    g = rw({"hands": hands, "dealer": 1, "deal_index": 5, "turn_up": "9D"})
    assert g.trump == DIAMONDS and g.turn_up == c("9D")
    assert [texts(h) for h in g.hands] == [set(hands[s]) for s in range(4)]


def test_turn_up_is_public_and_belongs_to_nobody():
    g = rw({"dealer": 1, "deal_index": 5, "turn_up": "9D"})
    for seat in range(4):
        assert g.public_card_sets(seat) == [1 << c("9D")]
    while g.hand_number == 0:
        assert all(not h >> c("9D") & 1 for h in g.hands) and all(not p >> c("9D") & 1 for p in g.played)
        g.apply(lowest_legal(g))
    assert g.hand_number == 1


def test_a_given_turn_up_in_a_one_hand_episode_picks_a_deal_that_turns_one():
    """episode="hand" draws the deal size; with a turn-up given it draws among the deals with a trump
    (2..7 cards; 1 card too with trump_on_one_card_deals), never silently dropping the card."""
    from whist_env import romanian_whist_v0

    sizes = set()
    for seed in range(40):
        env = romanian_whist_v0.raw_env(episode="hand")
        env.reset(seed=seed, options={"turn_up": "AS"})
        g = env.game
        assert g.turn_up == c("AS") and g.trump == 3
        sizes.add(g.k)
    assert sizes == {2, 3, 4, 5, 6, 7}
    env = romanian_whist_v0.raw_env(episode="hand", trump_on_one_card_deals=True)
    assert {(env.reset(seed=s, options={"turn_up": "AS"}), env.game.k)[1] for s in range(60)} == {1, 2, 3, 4, 5, 6, 7}


@pytest.mark.parametrize("bad", [{"turn_up": "2C"}, {"turn_up": "XX"}, {"deal_index": 24}, {"deal_index": -1}, {"deal_index": True}])
def test_bad_deal_extras_raise(bad):
    with pytest.raises(ValueError):
        rw({"dealer": 1, "deal_index": 5, **bad})


def test_turn_up_in_a_hand_or_in_a_deal_without_trump_raises():
    hands, _ = fill_hands({0: ["9D"]}, num_seats=4, size=3, deck=romanian_deck_texts(4))
    with pytest.raises(ValueError, match="turn_up"):
        rw({"hands": hands, "dealer": 1, "deal_index": 5, "turn_up": "9D"})
    with pytest.raises(ValueError, match="turn_up"):
        rw({"dealer": 1, "deal_index": 0, "turn_up": "9D"})  # a 1-card deal has no trump
    with pytest.raises(ValueError, match="turn_up"):
        rw({"dealer": 1, "deal_index": 10, "turn_up": "9D"})  # an 8-card deal has no trump
    g = rw({"dealer": 1, "deal_index": 0, "turn_up": "9D"}, trump_on_one_card_deals=True)
    assert g.turn_up == c("9D") and g.trump == DIAMONDS


def test_fixed_hands_must_have_the_deal_size():
    hands, _ = fill_hands({}, num_seats=4, size=2, deck=romanian_deck_texts(4))
    with pytest.raises(ValueError, match="must hold 3 cards"):
        rw({"hands": hands, "dealer": 1, "deal_index": 5})
    with pytest.raises(ValueError, match="not in this game's deck"):
        rw({"hands": {0: ["2C"], 1: ["AC"], 2: ["KC"], 3: ["QC"]}, "dealer": 1})


# ------------------------------------------------------------------ trump only in 2..7-card deals
@pytest.mark.parametrize("one_card_trump", [False, True])
@pytest.mark.parametrize("n", [3, 6])
def test_trump_only_in_two_to_seven_card_deals(n, one_card_trump):
    g = rw(seed=11, num_players=n, trump_on_one_card_deals=one_card_trump)
    seen = set()
    while not g.done:
        if g.phase == "bid" and all(b is None for b in g.bids):
            seen.add(g.k)
            has_trump = 2 <= g.k <= 7 or (g.k == 1 and one_card_trump)
            assert (g.trump is not None) == has_trump == (g.turn_up is not None), g.k
            if has_trump:
                assert g.trump == g.turn_up // 13
                assert g.ctx.must_trump and g.ctx.trump == g.trump
            else:
                assert g.ctx.trump is None
        g.apply(lowest_legal(g))
    assert seen == set(range(1, 9))


# ------------------------------------------------------------------ first player, dealer, bidding order
@pytest.mark.parametrize(("n", "f0"), [(3, 2), (5, 1), (6, 0)])
def test_first_player_rotates_and_dealer_bids_last(n, f0):
    g = rw(seed=2, num_players=n, first_player=f0)
    for j in range(len(g.schedule)):
        assert g.deal_index == j and g.hand_number == j and g.k == g.schedule[j]
        f = (f0 + j) % n
        assert g.first_player == f and g.dealer == (f - 1) % n
        order = []
        while g.phase == "bid":
            order.append(g.current_player)
            g.apply(lowest_legal(g))
        assert order == [(f + i) % n for i in range(n)] and order[-1] == g.dealer
        assert g.phase == "play" and g.current_player == g.leader == f
        while g.hand_number == j and not g.done:
            g.apply(lowest_legal(g))
    assert g.done


def test_first_player_is_random_without_the_option():
    firsts = {rw(seed=s).first_player for s in range(30)}
    assert firsts == {0, 1, 2, 3}


def test_fixed_dealer_sets_the_first_player():
    g = rw({"dealer": 3})
    assert g.first_player == 0 and g.current_player == 0 and g.leader == 0


# ------------------------------------------------------------------ RW-3 last-bidder restriction
def test_rw3a_dealer_may_not_make_the_sum_equal_k():
    g = rw({"dealer": 2, "deal_index": 5}, num_players=3)  # k = 4, f = 0
    assert g.k == 4 and g.first_player == 0
    act(g, "bid:2")
    assert bid_values(g) == {0, 1, 2, 3, 4}  # other players are never restricted
    act(g, "bid:1")
    assert g.current_player == g.dealer == 2
    assert bid_values(g) == {0, 2, 3, 4}
    with pytest.raises(ValueError, match="bid:1"):
        act(g, "bid:1")
    assert g.phase == "bid" and g.bids == [2, 1, None]


def test_rw3b_one_card_deal_dealer_must_bid_zero():
    g = rw({"dealer": 3, "deal_index": 0})
    assert g.k == 1
    act(g, "bid:0", "bid:0", "bid:0")
    assert bid_values(g) == {0}


def test_rw3c_forbidden_value_out_of_range_leaves_the_dealer_unrestricted():
    g = rw({"dealer": 2, "deal_index": 3}, num_players=3)  # k = 2
    assert g.k == 2
    act(g, "bid:2", "bid:1")
    assert bid_values(g) == {0, 1, 2}
    assert forbidden_bid([2, 1], 2) is None and forbidden_bid([2, 1], 4) == 1 and forbidden_bid([0, 0, 0], 1) == 1


def test_bids_are_zero_to_k_for_every_deal_size():
    g = rw(seed=4, num_players=3)
    while not g.done:
        if g.phase == "bid":
            if g.current_player != g.dealer:
                assert bid_values(g) == set(range(g.k + 1))
            else:
                v = forbidden_bid([b for b in g.bids if b is not None], g.k)
                assert bid_values(g) == set(range(g.k + 1)) - {v}
                assert bid_values(g)
        g.apply(g.legal_action_list()[-1] if g.phase == "bid" else lowest_legal(g))


def test_bids_are_public_in_order():
    g = rw({"dealer": 2, "deal_index": 5}, num_players=3)
    act(g, "bid:2", "bid:0", "bid:3")
    assert g.bids == [2, 0, 3]
    for seat in range(3):
        view = g.information_state(seat)
        assert view["bids"] == (2, 0, 3)
        assert [e for e in view["events"] if e[0] == "bid"] == [("bid", 0, 2), ("bid", 1, 0), ("bid", 2, 3)]


# ------------------------------------------------------------------ RW-4 must trump
def rw4_game(second_hand: list[str], deal_index: int = 4, turn_up: str | None = "9D"):
    """N = 4, f = 0 leads a club; seat 1 holds ``second_hand``."""
    k = len(second_hand)
    reserve = [turn_up] if turn_up else []
    hands, _ = fill_hands(
        {0: ["AC"], 1: second_hand}, num_seats=4, size=k, deck=romanian_deck_texts(4), voids={1: "CDHS"}, reserve=reserve
    )
    deal = {"hands": hands, "dealer": 3, "deal_index": deal_index}
    if turn_up:
        deal["turn_up"] = turn_up
    g = rw(deal)
    act(g, *(["bid:0"] * 3), "bid:0" if k != 0 else "bid:1")
    act(g, "AC")
    return g


def test_rw4_void_player_holding_trump_must_trump():
    g = rw4_game(["7D", "KS"])
    assert g.trump == DIAMONDS and g.current_player == 1
    assert texts(g.legal_actions()) == {"7D"}
    with pytest.raises(ValueError, match="KS"):
        act(g, "KS")


def test_rw4_void_in_both_may_play_anything():
    g = rw4_game(["KS", "QH"])
    assert texts(g.legal_actions()) == {"KS", "QH"}


def test_rw4_no_must_trump_in_an_eight_card_deal():
    hand = ["7D", "KS", "8D", "9D", "TD", "QS", "JS", "7H"]
    g = rw4_game(hand, deal_index=10, turn_up=None)
    assert g.k == 8 and g.trump is None
    assert texts(g.legal_actions()) == set(hand)
    g.hands[1] = mask_of([c("7D"), c("KS")])  # the same decision later in the deal, with two cards left
    assert texts(g.legal_actions()) == {"7D", "KS"}


def test_following_suit_comes_before_trumping_and_trump_lead_must_be_followed():
    hands, _ = fill_hands(
        {0: ["AC", "8D"], 1: ["KC", "7D"], 2: ["QD", "KH"], 3: ["7C", "JH"]},
        num_seats=4, size=2, deck=romanian_deck_texts(4), reserve=["9D"],
    )
    g = rw({"hands": hands, "dealer": 3, "deal_index": 4, "turn_up": "9D"})
    act(g, "bid:0", "bid:0", "bid:0", "bid:0")
    act(g, "AC")
    assert texts(g.legal_actions()) == {"KC"}  # follows suit, may not trump
    act(g, "KC")
    assert texts(g.legal_actions()) == {"QD"}  # void in clubs: must trump
    act(g, "QD", "7C")
    assert g.current_player == 2
    act(g, "KH")
    assert texts(g.legal_actions()) == {"JH"}
    # trump led: following means playing trump
    g2 = rw({"hands": hands, "dealer": 3, "deal_index": 4, "turn_up": "9D"})
    act(g2, "bid:0", "bid:0", "bid:0", "bid:0", "8D")
    assert texts(g2.legal_actions()) == {"7D"}


# ------------------------------------------------------------------ RW-5 trick
def test_rw5_highest_trump_wins():
    hands, _ = fill_hands(
        {2: ["AC", "TH"], 3: ["7D", "KS"], 0: ["KC", "QC"], 1: ["8D", "JS"]},
        num_seats=4, size=2, deck=romanian_deck_texts(4), reserve=["9D"],
    )
    g = rw({"hands": hands, "dealer": 1, "deal_index": 4, "turn_up": "9D"})
    assert g.first_player == 2 and g.trump == DIAMONDS
    act(g, "bid:0", "bid:0", "bid:0", "bid:0")
    assert g.current_player == 2
    act(g, "AC")
    assert texts(g.legal_actions()) == {"7D"}  # forced
    act(g, "7D", "KC")
    out = act(g, "8D")
    assert out.last_trick == {"cards": {2: c("AC"), 3: c("7D"), 0: c("KC"), 1: c("8D")}, "leader": 2, "winner": 1}
    assert g.tricks_won == [0, 1, 0, 0] and g.leader == g.current_player == 1


def test_off_suit_discard_cannot_win_without_trump():
    hands = {0: ["9C"], 1: ["AS"], 2: ["TC"]}
    g = rw({"hands": hands, "dealer": 2, "deal_index": 0}, num_players=3)
    assert g.trump is None
    act(g, "bid:0", "bid:0", "bid:0")
    out = act(g, "9C", "AS", "TC")
    assert out.last_trick["winner"] == 2


# ------------------------------------------------------------------ RW-6 deal scores
@pytest.mark.parametrize(("bid", "took", "points"), [(3, 3, 8), (3, 2, -1), (3, 6, -3), (0, 0, 5), (0, 2, -2)])
def test_rw6_deal_points(bid, took, points):
    assert deal_points(bid, took) == points


@pytest.mark.parametrize(("bid", "took", "points"), [(3, 3, 8), (3, 2, -1), (3, 6, -3), (0, 0, 5), (0, 2, -2)])
def test_rw6_deal_points_in_a_played_deal(bid, took, points):
    g = rw({"dealer": 2, "deal_index": 9}, seed=bid * 10 + took, num_players=3)  # k = 8
    assert g.k == 8
    out = play_deal(g, 0, bid, took)
    assert out.hand_points[0] == points and g.scores[0] == points
    assert g.hand_number == 1 and g.deal_index == 10


def test_a_played_one_card_deal_scores_every_seat():
    hands = {0: ["AS"], 1: ["KS"], 2: ["QS"]}
    g = rw({"hands": hands, "dealer": 2, "deal_index": 0}, num_players=3)
    act(g, "bid:1", "bid:0")
    assert bid_values(g) == {1}  # 0 would make the sum 1
    out = act(g, "bid:1", "AS", "KS", "QS")
    assert out.last_trick["winner"] == 0
    assert out.hand_points == (6, 5, -1) and g.scores == [6, 5, -1]


# ------------------------------------------------------------------ RW-7 streaks
def test_rw7_streak_bonus():
    g = rw({"dealer": 2}, seed=5, num_players=3)  # f0 = 0, 1-8-1
    for _ in range(3):
        assert g.k == 1
        out = play_deal(g, 0, None, None, exact=False)
        assert out.hand_points[0] == -1
        assert g.hits[0] == 0 and g.misses[0] == 0  # 1-card deals do not touch the counters
    assert g.scores[0] == -3
    pairs = [(1, 1), (0, 0), (2, 2), (1, 1), (3, 3)]
    expected_points = [6, 5, 7, 6, 18]
    expected_hits = [1, 2, 3, 4, 0]
    for j, ((bid, took), pts, hits) in enumerate(zip(pairs, expected_points, expected_hits), start=3):
        assert g.deal_index == j and g.k == j - 1
        out = play_deal(g, 0, bid, took)
        assert out.hand_points[0] == pts
        assert g.hits[0] == hits and g.misses[0] == 0
    assert g.scores[0] == -3 + 42


def test_ten_exact_counted_deals_earn_two_bonuses():
    g = rw({"dealer": 2}, seed=6, num_players=3)
    for _ in range(3):
        play_deal(g, 0, None, None, exact=True)
    points = []
    for _ in range(10):  # deals 3..12, all counted (k >= 2)
        assert g.k >= 2
        points.append(play_deal(g, 0, 1, 1).hand_points[0])
    assert points == [6, 6, 6, 6, 16, 6, 6, 6, 6, 16]
    assert g.hits[0] == 0


def test_one_card_deals_neither_extend_nor_break_a_streak():
    g = rw({"dealer": 2, "deal_index": 6}, seed=8, num_players=3, schedule="8-1-8")
    assert g.schedule[6:14] == [4, 3, 2, 1, 1, 1, 2, 3]
    pts = [play_deal(g, 0, 1, 1).hand_points[0] for _ in range(3)]  # k = 4, 3, 2
    assert pts == [6, 6, 6] and g.hits[0] == 3
    for _ in range(3):  # three 1-card misses
        assert play_deal(g, 0, None, None, exact=False).hand_points[0] == -1
        assert g.hits[0] == 3 and g.misses[0] == 0
    assert play_deal(g, 0, 1, 1).hand_points[0] == 6 and g.hits[0] == 4
    assert play_deal(g, 0, 1, 1).hand_points[0] == 16 and g.hits[0] == 0


def test_exact_one_card_deals_do_not_count_either():
    g = rw({"dealer": 2, "deal_index": 8}, seed=9, num_players=3, schedule="8-1-8")  # 2, 1, 1, 1, 2, ...
    assert g.schedule[8:13] == [2, 1, 1, 1, 2]
    assert play_deal(g, 0, 1, 1).hand_points[0] == 6 and g.hits[0] == 1
    for _ in range(3):
        assert play_deal(g, 0, None, None, exact=True).hand_points[0] in (5, 6)
        assert g.hits[0] == 1


def test_five_counted_misses_cost_the_penalty_and_reset():
    g = rw({"dealer": 2, "deal_index": 3}, seed=10, num_players=3)
    points = [play_deal(g, 0, 0, 1).hand_points[0] for _ in range(6)]
    assert points == [-1, -1, -1, -1, -11, -1]
    assert g.misses[0] == 1 and g.hits[0] == 0


def test_a_miss_resets_the_hit_counter_and_an_exact_deal_the_miss_counter():
    g = rw({"dealer": 2, "deal_index": 3}, seed=12, num_players=3)
    for _ in range(4):
        play_deal(g, 0, 1, 1)
    assert g.hits[0] == 4
    play_deal(g, 0, 0, 1)
    assert g.hits[0] == 0 and g.misses[0] == 1
    play_deal(g, 0, 1, 1)
    assert g.hits[0] == 1 and g.misses[0] == 0
    points = [play_deal(g, 0, 1, 1).hand_points[0] for _ in range(4)]
    assert points == [6, 6, 6, 16]


def test_streak_length_and_points_options():
    g = rw({"dealer": 2, "deal_index": 3}, seed=13, num_players=3, streak_length=3, streak_points=4)
    points = [play_deal(g, 0, 1, 1).hand_points[0] for _ in range(6)]
    assert points == [6, 6, 10, 6, 6, 10]
    misses = [play_deal(g, 0, 0, 1).hand_points[0] for _ in range(3)]
    assert misses == [-1, -1, -5]


def test_streak_bonus_off():
    g = rw({"dealer": 2, "deal_index": 3}, seed=14, num_players=3, streak_bonus=False)
    points = [play_deal(g, 0, 1, 1).hand_points[0] for _ in range(6)]
    assert points == [6] * 6
    points = [play_deal(g, 0, 0, 1).hand_points[0] for _ in range(6)]
    assert points == [-1] * 6


def test_streak_counters_are_public_per_player():
    g = rw({"dealer": 2, "deal_index": 3}, seed=15, num_players=3)
    play_deal(g, 0, 1, 1)
    view = g.information_state(1)
    assert view["streak_hits"][0] == 1 and view["streak_misses"][0] == 0


# ------------------------------------------------------------------ game end and ties (§5.8)
def last_deal(scores, hands, **options):
    g = rw({"hands": hands, "dealer": 2, "deal_index": 20}, num_players=3, **options)
    g.scores = list(scores)
    return g


def test_game_ends_after_the_schedule_with_a_single_winner():
    g = last_deal([0, 0, 0], {0: ["AS"], 1: ["KS"], 2: ["QS"]}, reward="win_loss")
    out = act(g, "bid:1", "bid:0", "bid:1", "AS", "KS", "QS")
    assert g.scores == [6, 5, -1] and g.done and g.winners == [0]
    assert out.rewards == (1.0, -1.0, -1.0)


def test_players_tied_for_highest_are_joint_winners():
    g = last_deal([0, 1, 0], {0: ["AS"], 1: ["KS"], 2: ["QS"]}, reward="win_loss")
    out = act(g, "bid:1", "bid:0", "bid:1", "AS", "KS", "QS")
    assert g.scores == [6, 6, -1] and g.done and g.winners == [0, 1]
    assert out.rewards == (1.0, 1.0, -1.0)
    assert g.current_player is None and g.legal_actions() == 0


def test_everyone_tied_is_a_draw():
    """Implemented choice: when all players tie for the highest total, the game is a draw
    (``winners == []``, win_loss rewards 0), as for ``episode="hand"``."""
    g = last_deal([0, 1, 7], {0: ["AS"], 1: ["KS"], 2: ["QS"]}, reward="win_loss")
    out = act(g, "bid:1", "bid:0", "bid:1", "AS", "KS", "QS")
    assert g.scores == [6, 6, 6] and g.done and g.winners == []
    assert out.rewards == (0.0, 0.0, 0.0)


def test_score_diff_rewards_are_own_points_minus_mean_of_others():
    g = last_deal([0, 0, 0], {0: ["AS"], 1: ["KS"], 2: ["QS"]})
    out = act(g, "bid:1", "bid:0", "bid:1", "AS", "KS", "QS")
    assert out.rewards == (6 - 2.0, 5 - 2.5, -1 - 5.5)
    assert sum(out.rewards) == 0
    g = last_deal([0, 0, 0], {0: ["AS"], 1: ["KS"], 2: ["QS"]}, reward="score")
    assert act(g, "bid:1", "bid:0", "bid:1", "AS", "KS", "QS").rewards == (6.0, 5.0, -1.0)


# ------------------------------------------------------------------ episode = "hand"
def test_episode_hand_draws_the_deal_index_and_ends_after_one_deal():
    sizes, indices = set(), set()
    for seed in range(40):
        g = rw(seed=seed, episode="hand", first_player=1)
        j = g.deal_index
        indices.add(j)
        assert g.k == g.schedule[j] and g.first_player == (1 + j) % 4
        assert g.scores == [0, 0, 0, 0] and g.hits == [0] * 4 and g.misses == [0] * 4
        sizes.add(g.k)
        while not g.done:
            g.apply(lowest_legal(g))
        assert g.hand_number == 0
        best = max(g.scores)
        assert g.winners == [s for s in range(4) if g.scores[s] == best] or (g.winners == [] and min(g.scores) == best)
    assert sizes == set(range(1, 9)) and len(indices) > 10


def test_episode_hand_with_fixed_hands_takes_the_deal_size_from_them():
    hands, _ = fill_hands({}, num_seats=4, size=3, deck=romanian_deck_texts(4))
    g = rw({"hands": hands, "dealer": 0}, episode="hand")
    assert g.k == 3 and g.deal_index == 5 and g.first_player == 1


# ------------------------------------------------------------------ labels and options
def test_labels_round_trip():
    g = RomanianWhist()
    assert g.num_actions == 61
    for b in range(9):
        assert g.action_label(BID_BASE + b) == f"bid:{b}"
        assert g.action_id(f"bid:{b}") == BID_BASE + b
    for text in romanian_deck_texts(4):
        assert g.action_label(g.action_id(text)) == text
    assert g.action_id("10h") == c("TH")
    for bad in ["bid:9", "bid:-1", "bid:x", "2C", "JKR", "pass", "bid:3:uptown"]:
        with pytest.raises(ValueError):
            g.action_id(bad)
    for bad in ["bid: 3", "bid:+3", "bid:\u0663", "bid:\u00b2"]:  # a space, a sign, Arabic-Indic 3, ²
        with pytest.raises(ValueError, match="unknown bid label"):
            g.action_id(bad)
    with pytest.raises(ValueError):
        g.action_label(61)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("num_players", 2), ("num_players", 7), ("num_players", "4"), ("num_players", True),
        ("schedule", "1-7-1"), ("streak_bonus", 1), ("streak_length", 0), ("streak_points", -1),
        ("trump_on_one_card_deals", "yes"), ("first_player", 4), ("first_player", -1),
        ("reward", "points"), ("episode", "match"), ("max_hands", 0),
    ],
)
def test_invalid_option_values_raise_naming_the_option(option, value):
    with pytest.raises(ValueError, match=option):
        RomanianWhist(**{option: value})


def test_unknown_option_raises_naming_it():
    with pytest.raises(ValueError, match="target_score"):
        RomanianWhist(target_score=7)


def test_first_player_may_be_any_seat_of_a_six_player_table():
    assert RomanianWhist(num_players=6, first_player=5).options.first_player == 5
    g = rw(num_players=6, first_player=5)
    assert g.first_player == 5 and g.dealer == 4


def test_illegal_action_changes_nothing():
    g = rw({"dealer": 3, "deal_index": 0})
    before = (list(g.bids), g.current_player, g.phase, list(g.hands))
    for bad in [c("AS"), BID_BASE + 2, 61, -1]:
        with pytest.raises(ValueError):
            g.apply(bad)
    assert (list(g.bids), g.current_player, g.phase, list(g.hands)) == before


@pytest.mark.parametrize("options", [{"num_players": 3}, {"num_players": 5, "trump_on_one_card_deals": True}, {"episode": "hand"}])
def test_current_deal_replays_every_deal(options):
    g = rw(seed=31, **options)
    replayed = 0
    while not g.done:
        if g.phase == "bid" and all(b is None for b in g.bids):
            deal = g.current_deal()
            h = rw(deal, seed=99, **options)
            assert (h.hands, h.dealer, h.k, h.deal_index, h.turn_up, h.trump, h.first_player) == (
                g.hands, g.dealer, g.k, g.deal_index, g.turn_up, g.trump, g.first_player
            )
            replayed += 1
        g.apply(lowest_legal(g))
    assert replayed == (1 if options.get("episode") == "hand" else len(g.schedule))


def test_max_hands_truncates_the_schedule():
    g = rw(seed=3, max_hands=3)
    while not (g.done or g.truncated):
        g.apply(lowest_legal(g))
    assert g.truncated and not g.done and g.hand_number == 2 and g.winners == []
