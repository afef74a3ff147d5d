"""Bid Whist rules (RULES.md §6): worked examples BW-1…BW-8 and every option of §6.11."""

from __future__ import annotations

import numpy as np
import pytest
from bidding_games_helpers import DECK_52, DECK_54, act, c, fill_hands, finish_with_tricks, lowest_legal, new_game, texts

from whist_env.engine.cards import JKB, JKR, card_to_str
from whist_env.engine.dealing import shuffled_deck
from whist_env.engine.tricks import NO_SUIT
from whist_env.rules.bid_whist import (
    BID_BASE,
    DECLARE_BASE,
    NUM_ACTIONS,
    PASS,
    BidWhist,
    BidWhistOptions,
    bid_action,
    bid_rank,
    contract_context,
)

ALL_BIDS = [f"bid:{lv}:{m}" for lv in range(1, 8) for m in ("uptown", "downtown", "notrump")]


def bids_from(level: int, modes=("uptown", "downtown", "notrump")) -> set[str]:
    return {f"bid:{lv}:{m}" for lv in range(level, 8) for m in modes}


def labels(game: BidWhist) -> set[str]:
    return {game.action_label(a) for a in game.legal_action_list()}


def deal(required=None, dealer=3, voids=None, kitty=(), kitty_on=True):
    size, deck = (12, DECK_54) if kitty_on else (13, DECK_52)
    hands, rest = fill_hands(required or {}, num_seats=4, size=size, deck=deck, voids=voids, reserve=kitty)
    out = {"hands": hands, "dealer": dealer}
    if kitty_on:
        assert len(rest) == 6
        out["kitty"] = rest
    else:
        assert rest == []
    return out


def bw(d=None, seed=0, **options) -> BidWhist:
    return new_game(BidWhist, d, seed, **options)


def to_play(game: BidWhist, calls, declaration: str, discards=None) -> None:
    """Run the auction with ``calls``, discard (by default the kitty cards back) and declare."""
    act(game, *calls)
    if game.options.kitty:
        assert game.phase == "discard"
        for text in discards if discards is not None else sorted(texts(game.kitty_cards)):
            act(game, text)
    assert game.phase == "declare"
    act(game, declaration)
    assert game.phase == "play"


def seat0_contract(game: BidWhist, bid: str, declaration: str, **kw) -> None:
    """Dealer 3: seat 0 bids ``bid``, the others pass; seat 0 declares."""
    to_play(game, [bid, "pass", "pass", "pass"], declaration, **kw)


# ------------------------------------------------------------------ deal (§6.2, §6.4)
def test_deal_mapping_and_kitty():
    g = bw({"dealer": 2}, seed=21)
    d = shuffled_deck(np.random.default_rng(21), list(range(54)))
    for i in range(48):
        assert g.hands[(2 + 1 + i) % 4] >> d[i] & 1
    assert g.kitty_cards == sum(1 << x for x in d[48:])
    assert [h.bit_count() for h in g.hands] == [12] * 4
    assert g.deck_mask() == (1 << 54) - 1 and g.HAND_SIZE == 12


def test_no_kitty_deal_has_52_cards_13_each():
    g = bw({"dealer": 0}, seed=22, kitty=False)
    d = shuffled_deck(np.random.default_rng(22), list(range(52)))
    for i in range(52):
        assert g.hands[(0 + 1 + i) % 4] >> d[i] & 1
    assert g.kitty_cards == 0 and g.deck_mask() == (1 << 52) - 1 and g.HAND_SIZE == 13
    with pytest.raises(ValueError, match="kitty"):
        bw({"dealer": 0, "kitty": ["2C", "3C", "4C", "5C", "6C", "7C"]}, kitty=False)
    with pytest.raises(ValueError):
        bw({"hands": {0: ["JKR"] + DECK_52[:12], 1: DECK_52[12:25], 2: DECK_52[25:38], 3: DECK_52[38:51]}}, kitty=False)


def test_fixed_kitty_and_bad_kitties():
    g = bw({"dealer": 1, "kitty": ["JKR", "JKB", "2C", "3C", "4C", "5C"]}, seed=3)
    assert texts(g.kitty_cards) == {"JKR", "JKB", "2C", "3C", "4C", "5C"}
    assert all(h.bit_count() == 12 for h in g.hands)
    for bad in (["JKR", "JKB", "2C", "3C", "4C"], ["JKR", "JKR", "2C", "3C", "4C", "5C"], ["XX", "JKB", "2C", "3C", "4C", "5C"]):
        with pytest.raises(ValueError):
            bw({"dealer": 1, "kitty": bad})
    d = deal({})
    with pytest.raises(ValueError, match="kitty"):
        bw({"hands": d["hands"], "dealer": 1, "kitty": [d["hands"][0][0]] + d["kitty"][1:]})


def test_deal_passes_to_the_left():
    g = bw({"dealer": 3}, seed=4)
    dealers = []
    while not g.done and len(dealers) < 4:
        dealers.append(g.dealer)
        hand = g.hand_number
        while g.hand_number == hand and not g.done:
            g.apply(lowest_legal(g))
    assert dealers[:2] == [3, 0] and all((b - a) % 4 == 1 for a, b in zip(dealers, dealers[1:]))


# ------------------------------------------------------------------ BW-1, BW-2 auction (§6.5)
def test_bw1_auction():
    g = bw({"dealer": 3})
    assert g.current_player == 0 and g.phase == "auction"
    assert "bid:3:uptown" not in labels(g)  # min_bid = 4
    with pytest.raises(ValueError):
        act(g, "bid:3:uptown")
    act(g, "bid:4:uptown")
    assert labels(g) == {"pass", "bid:4:notrump"} | bids_from(5)
    act(g, "pass")
    assert "bid:4:notrump" in labels(g)
    act(g, "bid:4:notrump")
    assert g.current_player == 3
    assert "bid:4:downtown" not in labels(g) and "bid:5:downtown" in labels(g)
    with pytest.raises(ValueError, match="bid:4:downtown"):
        act(g, "bid:4:downtown")
    act(g, "bid:5:downtown")
    assert g.declarer == 3 and g.side_of(g.declarer) == 1 and g.contract == (5, "downtown")
    assert 6 + g.contract[0] == 11
    assert g.phase == "discard" and g.current_player == 3


def test_bw2_forced_dealer():
    g = bw({"dealer": 3})
    act(g, "pass", "pass", "pass")
    assert labels(g) == bids_from(4)
    assert len(labels(g)) == 12
    with pytest.raises(ValueError, match="pass"):
        act(g, "pass")
    act(g, "bid:4:uptown")
    assert g.declarer == 3 and g.contract == (4, "uptown")


def test_auction_order_is_one_round_from_left_of_dealer():
    g = bw({"dealer": 1})
    order = []
    while g.phase == "auction":
        order.append(g.current_player)
        act(g, "pass" if len(order) < 4 else "bid:4:notrump")
    assert order == [2, 3, 0, 1]
    assert [e for e in g.events if e[0] == "call"] == [
        ("call", 2, "pass"), ("call", 3, "pass"), ("call", 0, "pass"), ("call", 1, "bid:4:notrump"),
    ]


def test_dealer_may_pass_when_someone_bid():
    g = bw({"dealer": 3})
    act(g, "pass", "bid:5:uptown", "pass")
    assert "pass" in labels(g)
    act(g, "pass")
    assert g.declarer == 1 and g.contract == (5, "uptown") and g.current_player == 1


def test_bid_order_default_uptown_and_downtown_are_equal():
    assert bid_rank(4, "uptown", False) == bid_rank(4, "downtown", False) < bid_rank(4, "notrump", False) < bid_rank(5, "uptown", False)
    g = bw({"dealer": 3})
    act(g, "bid:4:downtown")
    assert labels(g) == {"pass", "bid:4:notrump"} | bids_from(5)
    act(g, "bid:4:notrump")
    assert labels(g) == {"pass"} | bids_from(5)
    act(g, "bid:7:downtown")
    assert labels(g) == {"pass", "bid:7:notrump"}


def test_downtown_beats_uptown_option():
    assert bid_rank(4, "uptown", True) < bid_rank(4, "downtown", True) < bid_rank(4, "notrump", True) < bid_rank(5, "uptown", True)
    g = bw({"dealer": 3}, downtown_beats_uptown=True)
    act(g, "bid:4:uptown")
    assert labels(g) == {"pass", "bid:4:downtown", "bid:4:notrump"} | bids_from(5)
    act(g, "bid:4:downtown")
    assert labels(g) == {"pass", "bid:4:notrump"} | bids_from(5)
    act(g, "pass", "bid:4:notrump")
    assert g.declarer == 3 and g.contract == (4, "notrump")


@pytest.mark.parametrize(
    ("dbu", "high", "dealer_may"),
    [
        (False, "bid:5:uptown", {"bid:5:uptown", "bid:5:downtown", "bid:5:notrump"}),
        (False, "bid:5:notrump", {"bid:5:notrump"}),
        (True, "bid:5:downtown", {"bid:5:downtown", "bid:5:notrump"}),
        (True, "bid:5:uptown", {"bid:5:uptown", "bid:5:downtown", "bid:5:notrump"}),
    ],
)
def test_dealer_can_match(dbu, high, dealer_may):
    g = bw({"dealer": 3}, dealer_can_match=True, downtown_beats_uptown=dbu)
    act(g, high, "pass")
    assert labels(g) == {"pass"} | {lb for lb in bids_from(5) if bid_rank(int(lb[4]), lb[6:], dbu) > bid_rank(5, high[6:], dbu)}
    act(g, "pass")  # seat 2: not the dealer, may not match
    assert labels(g) == {"pass"} | dealer_may | bids_from(6)
    act(g, high)
    assert g.declarer == 3 and g.contract == (5, high[6:])


def test_without_dealer_can_match_the_dealer_must_overcall():
    g = bw({"dealer": 3})
    act(g, "bid:5:uptown", "pass", "pass")
    assert labels(g) == {"pass", "bid:5:notrump"} | bids_from(6)


@pytest.mark.parametrize("min_bid", [1, 2, 5, 7])
def test_min_bid(min_bid):
    g = bw({"dealer": 3}, min_bid=min_bid)
    assert labels(g) == {"pass"} | bids_from(min_bid)
    act(g, "pass", "pass", "pass")
    assert labels(g) == bids_from(min_bid)


# ------------------------------------------------------------------ kitty, discard, declaration (§6.6)
def test_kitty_pickup_and_six_discards_from_all_eighteen_cards():
    d = deal({0: ["AS"]}, kitty=["JKR", "JKB", "2C", "2D", "2H", "2S"])
    g = bw(d)
    own = g.hands[0]
    act(g, "bid:4:uptown", "pass", "pass", "pass")
    assert g.phase == "discard" and g.current_player == 0
    assert g.hands[0] == own | g.kitty_cards and g.hands[0].bit_count() == 18
    assert g.legal_actions() == g.hands[0]
    discards = ["JKR", "AS", "2C", d["hands"][0][1], "JKB", d["hands"][0][2]]  # jokers and own cards allowed
    for i, text in enumerate(discards):
        assert g.phase == "discard" and g.legal_actions() == g.hands[0]
        act(g, text)
        assert g.hands[0].bit_count() == 17 - i and g.discards.bit_count() == i + 1
    assert texts(g.discards) == set(discards)
    assert g.phase == "declare" and g.current_player == 0 and g.hands[0].bit_count() == 12
    assert [e for e in g.events if e[0] == "discard"] == [("discard", 0)] * 6  # the cards are not public
    assert labels(g) == {"trump:C", "trump:D", "trump:H", "trump:S"}
    with pytest.raises(ValueError):
        act(g, "direction:uptown")
    act(g, "trump:H")
    assert g.trump == 2 and g.direction == "uptown" and g.phase == "play"
    assert g.current_player == g.leader == 0 and g.trick_number == 0


def test_discard_must_be_a_held_card():
    g = bw(deal({1: ["AS"]}))
    act(g, "bid:4:uptown", "pass", "pass", "pass")
    with pytest.raises(ValueError):
        act(g, "AS")
    assert g.discards == 0 and g.hands[0].bit_count() == 18


@pytest.mark.parametrize(("bid", "declaration", "trump", "direction"), [
    ("bid:4:downtown", "trump:C", 0, "downtown"),
    ("bid:4:uptown", "trump:S", 3, "uptown"),
    ("bid:4:notrump", "direction:uptown", None, "uptown"),
    ("bid:4:notrump", "direction:downtown", None, "downtown"),
])
def test_declaration_names_trump_or_direction(bid, declaration, trump, direction):
    g = bw({"dealer": 0})  # seat 1 bids first
    act(g, bid, "pass", "pass", "pass")
    assert g.declarer == 1
    for _ in range(6):
        g.apply(lowest_legal(g))
    expected = {"direction:uptown", "direction:downtown"} if bid.endswith("notrump") else {f"trump:{s}" for s in "CDHS"}
    assert labels(g) == expected
    act(g, declaration)
    assert g.trump == trump and g.direction == direction
    assert g.current_player == g.leader == 1  # the declarer leads
    assert g.ctx.trump == trump
    view = g.information_state(2)
    assert view["contract"] == bid and view["declarer"] == 1 and view["direction"] == direction


def test_no_kitty_declares_right_after_the_auction_and_plays_13_tricks():
    g = bw({"dealer": 3}, seed=5, kitty=False)
    assert all(h.bit_count() == 13 for h in g.hands)
    act(g, "pass", "bid:4:uptown", "pass", "pass")
    assert g.phase == "declare" and g.current_player == 1 and g.hands[1].bit_count() == 13
    act(g, "trump:D")
    assert g.phase == "play" and g.current_player == 1
    tricks = 0
    while g.hand_number == 0 and not g.done:
        out = g.apply(lowest_legal(g))
        tricks += out.last_trick is not None
    assert tricks == 13


def test_no_kitty_with_deuces_wild():
    g = bw({"dealer": 3}, kitty=False, deuces_wild=True)
    seat0_contract(g, "bid:4:uptown", "trump:H")
    assert g.ctx.eff_suit[c("2D")] == 2 and g.ctx.eff_suit[c("2S")] == 2
    assert g.ctx.power[c("2D")] > g.ctx.power[c("2S")] > g.ctx.power[c("AH")]


# ------------------------------------------------------------------ rank orders (§6.3)
def order_of(ctx, cards: list[str]) -> list[str]:
    return sorted(cards, key=lambda t: -ctx.power[c(t)])


def suit_cards(s: str) -> list[str]:
    return [r + s for r in "23456789TJQKA"]


def opts(**kw) -> BidWhistOptions:
    return BidWhistOptions(**kw)


def test_uptown_orders():
    ctx = contract_context(opts(), 3, downtown=False)
    assert order_of(ctx, suit_cards("S") + ["JKR", "JKB"]) == ["JKR", "JKB"] + [r + "S" for r in "AKQJT98765432"]
    assert order_of(ctx, suit_cards("H")) == [r + "H" for r in "AKQJT98765432"]
    assert ctx.eff_suit[JKR] == ctx.eff_suit[JKB] == 3 and ctx.trump == 3


def test_downtown_orders_aces_good_and_bad():
    ctx = contract_context(opts(), 2, downtown=True)
    assert order_of(ctx, suit_cards("H") + ["JKB", "JKR"]) == ["JKR", "JKB"] + [r + "H" for r in "A23456789TJQK"]
    assert order_of(ctx, suit_cards("C")) == [r + "C" for r in "A23456789TJQK"]
    ctx = contract_context(opts(downtown_aces="bad"), 2, downtown=True)
    assert order_of(ctx, suit_cards("H") + ["JKB", "JKR"]) == ["JKR", "JKB"] + [r + "H" for r in "23456789TJQKA"]
    assert order_of(ctx, suit_cards("C")) == [r + "C" for r in "23456789TJQKA"]
    # downtown_aces has no effect uptown
    assert order_of(contract_context(opts(downtown_aces="bad"), None, downtown=False), suit_cards("D")) == [
        r + "D" for r in "AKQJT98765432"
    ]


def test_big_joker_black():
    ctx = contract_context(opts(big_joker="black"), 0, downtown=False)
    assert order_of(ctx, ["JKR", "JKB", "AC"]) == ["JKB", "JKR", "AC"]


@pytest.mark.parametrize("downtown", [False, True])
def test_no_trump_jokers_are_suitless_and_powerless(downtown):
    ctx = contract_context(opts(), None, downtown=downtown)
    assert ctx.eff_suit[JKR] == ctx.eff_suit[JKB] == NO_SUIT and ctx.super_mask == 0 and ctx.trump is None
    ctx = contract_context(opts(jokers_high=True), None, downtown=downtown)
    assert ctx.eff_suit[JKR] == ctx.eff_suit[JKB] == NO_SUIT
    assert ctx.super_mask == (1 << JKR) | (1 << JKB) and ctx.power[JKR] > ctx.power[JKB]
    ctx = contract_context(opts(jokers_high=True, big_joker="black"), None, downtown=downtown)
    assert ctx.power[JKB] > ctx.power[JKR]


def test_jokers_high_changes_nothing_in_trump_contracts():
    a = contract_context(opts(), 1, downtown=False)
    b = contract_context(opts(jokers_high=True), 1, downtown=False)
    assert a == b


def test_wild_deuces_rank_below_jokers_and_leave_their_suits():
    o = opts(deuces_wild=True)
    ctx = contract_context(o, 0, downtown=False)
    assert order_of(ctx, suit_cards("C") + ["JKR", "JKB", "2D", "2S"]) == ["JKR", "JKB", "2D", "2S"] + [r + "C" for r in "AKQJT98765432"]
    assert ctx.eff_suit[c("2D")] == ctx.eff_suit[c("2S")] == 0
    assert not ctx.suit_masks[1] >> c("2D") & 1 and not ctx.suit_masks[3] >> c("2S") & 1
    ctx = contract_context(o, 1, downtown=True)  # downtown, trump diamonds: 2D is still the Big Deuce
    assert order_of(ctx, suit_cards("D") + ["JKR", "JKB", "2S"]) == ["JKR", "JKB", "2D", "2S"] + [r + "D" for r in "A3456789TJQK"]
    ctx = contract_context(opts(deuces_wild=True, deuces_over_jokers=True), 3, downtown=False)
    assert order_of(ctx, ["JKR", "JKB", "2D", "2S", "AS"]) == ["2D", "2S", "JKR", "JKB", "AS"]
    ctx = contract_context(opts(deuces_wild=True, wild_deuces=("2H", "2C")), 3, downtown=False)
    assert order_of(ctx, ["JKR", "JKB", "2H", "2C", "AS", "2D"]) == ["JKR", "JKB", "2H", "2C", "AS", "2D"]
    assert ctx.eff_suit[c("2D")] == 1 and ctx.eff_suit[c("2S")] == 3


def test_wild_deuces_in_no_trump():
    ctx = contract_context(opts(deuces_wild=True), None, downtown=False)
    assert all(ctx.eff_suit[c(t)] == NO_SUIT for t in ("JKR", "JKB", "2D", "2S")) and ctx.super_mask == 0
    ctx = contract_context(opts(deuces_wild=True, jokers_high=True), None, downtown=False)
    assert texts(ctx.super_mask) == {"JKR", "JKB", "2D", "2S"}
    assert order_of(ctx, ["2S", "JKB", "2D", "JKR"]) == ["JKR", "JKB", "2D", "2S"]
    ctx = contract_context(opts(deuces_wild=True, jokers_high=True, deuces_over_jokers=True), None, downtown=False)
    assert order_of(ctx, ["2S", "JKB", "2D", "JKR"]) == ["2D", "2S", "JKR", "JKB"]


def test_jokers_high_has_no_effect_without_the_kitty():
    """RULES.md §6.9: with kitty=False ``jokers_high`` has no effect, so the wild deuces stay
    powerless in no-trump."""
    ctx = contract_context(opts(kitty=False, deuces_wild=True, jokers_high=True), None, downtown=False)
    assert ctx.super_mask == 0 and ctx.eff_suit[c("2D")] == NO_SUIT
    assert ctx == contract_context(opts(kitty=False, deuces_wild=True), None, downtown=False)
    ctx = contract_context(opts(kitty=False), 2, downtown=False)
    assert ctx.eff_suit[JKR] == NO_SUIT  # no jokers in the 52-card deck


# ------------------------------------------------------------------ BW-3 … BW-6 tricks
def test_bw3_jokers_in_trump():
    d = deal({0: ["AS"], 1: ["JKB"], 2: ["KS"], 3: ["JKR"]})
    for big, winner in (("red", 3), ("black", 1)):
        g = bw(d, big_joker=big)
        seat0_contract(g, "bid:4:uptown", "trump:S")
        act(g, "AS")
        assert "JKB" in texts(g.legal_actions())  # a joker follows a spade lead
        out = act(g, "JKB", "KS", "JKR")
        assert out.last_trick["winner"] == winner


def test_joker_lead_in_trump_is_a_trump_lead():
    d = deal({0: ["JKR"], 1: ["3S", "7H"]})
    g = bw(d)
    seat0_contract(g, "bid:4:uptown", "trump:S")
    act(g, "JKR")
    held = texts(g.hands[1])
    assert texts(g.legal_actions()) == {t for t in held if t.endswith("S") or t.startswith("JK")}


@pytest.mark.parametrize(("aces", "winner"), [("good", 2), ("bad", 1)])
def test_bw4_downtown(aces, winner):
    g = bw(deal({0: ["5C"], 1: ["2C"], 2: ["AC"], 3: ["KC"]}), downtown_aces=aces)
    seat0_contract(g, "bid:4:downtown", "trump:H")
    assert g.trump == 2 and g.direction == "downtown"
    out = act(g, "5C", "2C", "AC", "KC")
    assert out.last_trick["winner"] == winner


def test_bw5_lowest_trump_still_trumps():
    g = bw(deal({0: ["3S"], 1: ["KH"], 2: ["AS"], 3: ["2S"]}, voids={1: "S"}))
    seat0_contract(g, "bid:4:downtown", "trump:H")
    act(g, "3S")
    assert not any(t.endswith("S") for t in texts(g.legal_actions()))
    out = act(g, "KH", "AS", "2S")
    assert out.last_trick["winner"] == 1


@pytest.mark.parametrize(("jokers_high", "winner"), [(False, 2), (True, 0)])
def test_bw6_joker_led_in_no_trump(jokers_high, winner):
    d = deal({0: ["JKR"], 1: ["9D"], 2: ["JD", "JKB"], 3: ["AC"]}, voids={2: "D", 3: "D"})
    g = bw(d, jokers_high=jokers_high)
    seat0_contract(g, "bid:4:notrump", "direction:uptown")
    act(g, "JKR")
    assert g.legal_actions() == g.hands[1]  # no suit established yet: anything
    act(g, "9D")
    assert texts(g.legal_actions()) == {"JD"}  # the joker is not legal while holding a diamond
    with pytest.raises(ValueError):
        act(g, "JKB")
    act(g, "JD")
    assert g.legal_actions() == g.hands[3]  # void in diamonds
    out = act(g, "AC")
    assert out.last_trick["winner"] == winner


def test_joker_may_be_discarded_when_void_but_never_wins_in_no_trump():
    d = deal({0: ["3H"], 1: ["JKB"], 2: ["2H"], 3: ["JKR"]}, voids={1: "H", 3: "H"})
    g = bw(d)
    seat0_contract(g, "bid:4:notrump", "direction:uptown")
    out = act(g, "3H", "JKB", "2H", "JKR")
    assert out.last_trick["winner"] == 0
    g = bw(d, jokers_high=True)
    seat0_contract(g, "bid:4:notrump", "direction:uptown")
    assert act(g, "3H", "JKB", "2H", "JKR").last_trick["winner"] == 3


def test_wild_deuce_leaves_its_suit_in_play():
    d = deal({0: ["5D"], 1: ["2D", "AS"], 2: ["7D"], 3: ["9D"]}, voids={1: "D"})
    g = bw(d, deuces_wild=True)
    seat0_contract(g, "bid:4:notrump", "direction:uptown")
    act(g, "5D")
    assert g.legal_actions() == g.hands[1]  # 2D is no diamond: seat 1 is void
    out = act(g, "2D", "7D", "9D")
    assert out.last_trick["winner"] == 3
    g = bw(d, deuces_wild=True)
    seat0_contract(g, "bid:4:uptown", "trump:S")
    act(g, "5D")
    assert "2D" in texts(g.legal_actions())
    out = act(g, "2D", "7D", "9D")
    assert out.last_trick["winner"] == 1  # a wild deuce is a trump


def test_four_suitless_powerless_cards_go_to_the_leader():
    """RULES.md leaves open a no-trump trick of four powerless suitless cards (two jokers and two
    wild deuces): the implementation gives it to the leader."""
    d = deal({0: ["JKR"], 1: ["2D"], 2: ["JKB"], 3: ["2S"]})
    g = bw(d, deuces_wild=True)
    seat0_contract(g, "bid:4:notrump", "direction:downtown")
    for seat, text in enumerate(["JKR", "2D", "JKB", "2S"]):
        assert g.legal_actions() == g.hands[seat]
        out = act(g, text)
    assert out.last_trick["winner"] == 0
    g = bw(d, deuces_wild=True, jokers_high=True)
    seat0_contract(g, "bid:4:notrump", "direction:downtown")
    assert act(g, "JKR", "2D", "JKB", "2S").last_trick["winner"] == 0
    g = bw(d, deuces_wild=True, jokers_high=True, deuces_over_jokers=True)
    seat0_contract(g, "bid:4:notrump", "direction:downtown")
    assert act(g, "JKR", "2D", "JKB", "2S").last_trick["winner"] == 1


# ------------------------------------------------------------------ BW-7 scores (§6.8)
BW7 = [
    ("bid:5:uptown", 10, 11, 5, 2, 0),
    ("bid:5:notrump", 10, 11, 10, 2, 0),
    ("bid:4:downtown", 8, 9, -4, 4, 0),
    ("bid:4:uptown", 5, 6, -4, 7, 1),
    ("bid:4:notrump", 5, 6, -8, 7, 2),
]


def declaration_for(bid: str) -> str:
    return "direction:uptown" if bid.endswith("notrump") else "trump:S"


def play_hand_with_tricks(g: BidWhist, bid: str, dec_tricks: int):
    seat0_contract(g, bid, declaration_for(bid))
    books = {}

    def snapshot(game, winner):
        b = game.books()
        b[game.side_of(winner)] += 1
        books["final"] = b

    out = finish_with_tricks(g, {0, 2}, dec_tricks, before_last_card=snapshot)
    return out, books["final"]


@pytest.mark.parametrize(("bid", "tricks", "dec_books", "dec_points", "def_books", "def_points"), BW7)
def test_bw7_hand_scores(bid, tricks, dec_books, dec_points, def_books, def_points):
    g = bw({"dealer": 3}, seed=tricks)
    out, books = play_hand_with_tricks(g, bid, tricks)
    assert books == [dec_books, def_books] and sum(books) == 13
    assert out.hand_points == (dec_points, def_points)
    assert g.scores == [dec_points, def_points]


@pytest.mark.parametrize(("bid", "tricks", "dec_books", "dec_points", "def_books", "def_points"), BW7)
def test_bw7_last_contract_and_contract_points(bid, tricks, dec_books, dec_points, def_books, def_points):
    """The finished hand's contract and books are kept, and ``contract_points`` of them gives the
    points the hand scored (the table of §6.8, as search agents re-score a contract's books)."""
    g = bw({"dealer": 3}, seed=tricks)
    assert g.last_contract is None
    play_hand_with_tricks(g, bid, tricks)
    _, level, mode = bid.split(":")
    assert g.last_contract == (0, int(level), mode, (dec_books, def_books))
    assert g.contract_points(0, int(level), mode, [dec_books, def_books]) == [dec_points, def_points]
    assert g.contract_points(1, int(level), mode, [def_books, dec_books]) == [def_points, dec_points]


@pytest.mark.parametrize(("level", "mode", "books", "options", "points"), [
    (7, "notrump", [13, 0], {}, [56, 0]),                      # Boston: 7 x 2 x 4
    (7, "notrump", [13, 0], {"boston_multiplier": 1}, [14, 0]),
    (6, "uptown", [12, 1], {}, [6, 0]),                        # made exactly
    (6, "uptown", [11, 2], {}, [-6, 0]),                       # set by one, defenders short of 7
    (1, "downtown", [6, 7], {}, [-1, 1]),                      # set, defenders' 7 books score 1
    (1, "downtown", [6, 7], {"defenders_score": False}, [-1, 0]),
    (5, "notrump", [4, 9], {"no_trump_double": False}, [-5, 3]),
])
def test_contract_points_is_pure(level, mode, books, options, points):
    g = bw({"dealer": 3}, seed=1, **options)
    before = (list(g.scores), g.phase, g.current_player)
    assert g.contract_points(0, level, mode, books) == points
    assert (list(g.scores), g.phase, g.current_player) == before


def boston_deal(bid: str) -> dict:
    if bid.endswith("uptown"):  # seat 0 holds the 12 top trumps
        required = ["JKR", "JKB"] + [r + "S" for r in "AKQJT9875"] + ["6S"]
        kitty = ["2C", "3C", "4C", "5C", "6C", "7C"]
    else:  # seat 0 holds the 12 top clubs
        required = [r + "C" for r in "AKQJT9876543"]
        kitty = ["2D", "3D", "4D", "5D", "6D", "7D"]
    return deal({0: required}, kitty=kitty)


@pytest.mark.parametrize(("bid", "points", "multiplier"), [
    ("bid:6:uptown", 24, 4), ("bid:7:notrump", 56, 4), ("bid:6:uptown", 6, 1), ("bid:7:notrump", 28, 2),
])
def test_bw7_boston(bid, points, multiplier):
    g = bw(boston_deal(bid), boston_multiplier=multiplier)
    seat0_contract(g, bid, declaration_for(bid))
    while g.trick_number < 11 or g.trick:
        g.apply(lowest_legal(g))
    assert g.tricks_by_side() == [11, 0] and g.books() == [12, 0]
    out = None
    for _ in range(4):
        out = g.apply(lowest_legal(g))
    assert out.last_trick["winner"] in (0, 2)
    assert out.hand_points == (points, 0) and g.scores == [points, 0]


def test_no_trump_double_off():
    g = bw({"dealer": 3}, seed=1, no_trump_double=False)
    out, _ = play_hand_with_tricks(g, "bid:5:notrump", 10)
    assert out.hand_points == (5, 0)
    g = bw({"dealer": 3}, seed=2, no_trump_double=False)
    out, _ = play_hand_with_tricks(g, "bid:4:notrump", 5)
    assert out.hand_points == (-4, 1)


def test_defenders_score_off():
    g = bw({"dealer": 3}, seed=1, defenders_score=False)
    out, books = play_hand_with_tricks(g, "bid:4:uptown", 3)
    assert books == [4, 9] and out.hand_points == (-4, 0)


def test_defenders_need_seven_books_to_score():
    g = bw({"dealer": 3}, seed=3)
    out, books = play_hand_with_tricks(g, "bid:7:uptown", 6)
    assert books == [7, 6] and out.hand_points == (-7, 0)
    g = bw({"dealer": 3}, seed=4)
    out, books = play_hand_with_tricks(g, "bid:6:uptown", 0)
    assert books == [1, 12] and out.hand_points == (-6, 6)


def test_defenders_boston_without_kitty():
    hands = {1: suit_cards("S"), 0: suit_cards("H"), 2: suit_cards("D"), 3: suit_cards("C")}
    for mult, dfn in ((4, 28), (1, 7)):
        g = bw({"hands": hands, "dealer": 3}, kitty=False, boston_multiplier=mult)
        seat0_contract(g, "bid:4:uptown", "trump:S")
        while g.hand_number == 0 and not g.done:
            out = g.apply(lowest_legal(g))
        assert out.hand_points == (-4, dfn)
    g = bw({"hands": hands, "dealer": 3}, kitty=False)
    seat0_contract(g, "bid:4:notrump", "direction:uptown")  # seat 0 leads 2H and keeps the lead
    while g.hand_number == 0 and not g.done:
        out = g.apply(lowest_legal(g))
    assert out.hand_points == (32, 0)  # 4 × 2 (no-trump) × 4 (Boston)


def test_declaring_boston_without_kitty():
    hands = {0: suit_cards("S"), 1: suit_cards("H"), 2: suit_cards("D"), 3: suit_cards("C")}
    g = bw({"hands": hands, "dealer": 3}, kitty=False)
    seat0_contract(g, "bid:7:uptown", "trump:S")
    while g.hand_number == 0 and not g.done:
        out = g.apply(lowest_legal(g))
    assert out.hand_points == (28, 0)


def test_no_kitty_books_are_tricks():
    g = bw({"dealer": 3}, seed=8, kitty=False)
    seat0_contract(g, "bid:4:uptown", "trump:S")
    books = {}
    finish_with_tricks(g, {0, 2}, 10, before_last_card=lambda game, w: books.update(b=game.books()))
    assert sum(books["b"]) == 12  # before the 13th trick; no kitty book


# ------------------------------------------------------------------ BW-8 game end (§6.10)
def test_bw8_team_reaching_target_wins():
    g = bw({"dealer": 3}, seed=1, reward="win_loss")
    g.scores = [3, 0]
    out, _ = play_hand_with_tricks(g, "bid:4:uptown", 9)
    assert out.hand_points == (4, 0) and g.scores == [7, 0]
    assert g.done and g.winners == [0, 2] and out.rewards == (1.0, -1.0, 1.0, -1.0)


def test_bw8_team_at_minus_target_loses():
    g = bw({"dealer": 3}, seed=2, reward="win_loss")
    g.scores = [-4, 0]
    out, _ = play_hand_with_tricks(g, "bid:4:uptown", 5)
    assert g.scores == [-8, 1] and g.done and g.winners == [1, 3]
    assert out.rewards == (-1.0, 1.0, -1.0, 1.0)


def test_lose_at_negative_target_off_and_target_score():
    g = bw({"dealer": 3}, seed=2, lose_at_negative_target=False)
    g.scores = [-4, 0]
    play_hand_with_tricks(g, "bid:4:uptown", 5)
    assert g.scores == [-8, 1] and not g.done and g.hand_number == 1 and g.dealer == 0
    g = bw({"dealer": 3}, seed=1, target_score=10)
    g.scores = [3, 0]
    play_hand_with_tricks(g, "bid:4:uptown", 9)
    assert g.scores == [7, 0] and not g.done
    g = bw({"dealer": 3}, seed=1, target_score=10)
    g.scores = [6, -9]
    play_hand_with_tricks(g, "bid:4:uptown", 9)
    assert g.scores == [10, -9] and g.done and g.winners == [0, 2]


def test_score_diff_and_score_rewards():
    g = bw({"dealer": 3}, seed=1)
    out, _ = play_hand_with_tricks(g, "bid:4:notrump", 5)
    assert out.rewards == (-10.0, 10.0, -10.0, 10.0)
    g = bw({"dealer": 3}, seed=1, reward="score")
    out, _ = play_hand_with_tricks(g, "bid:4:notrump", 5)
    assert out.rewards == (-8.0, 2.0, -8.0, 2.0)


# ------------------------------------------------------------------ information (§1.7, §6.6)
def test_kitty_and_discards_are_private_to_the_declarer():
    d = deal({}, kitty=["JKR", "JKB", "2C", "2D", "2H", "2S"])
    g = bw(d)
    for seat in range(4):
        assert g.public_card_sets(seat) == [0, 0] and "kitty" not in g.information_state(seat)
    act(g, "bid:4:uptown", "pass", "pass", "pass")
    kitty = g.kitty_cards
    assert g.public_card_sets(0) == [kitty, 0]
    act(g, "JKR", "2C")
    assert g.public_card_sets(0) == [kitty, mask_of_texts(["JKR", "2C"])]
    assert g.information_state(0)["own_discards"] == ("2C", "JKR")
    assert set(g.information_state(0)["kitty"]) == texts(kitty)
    for seat in (1, 2, 3):
        assert g.public_card_sets(seat) == [0, 0]
        view = g.information_state(seat)
        assert "kitty" not in view and "own_discards" not in view


def test_sport_kitty_shows_the_kitty_to_everyone_after_the_auction():
    d = deal({}, kitty=["JKR", "JKB", "2C", "2D", "2H", "2S"])
    g = bw(d, sport_kitty=True)
    act(g, "bid:4:uptown", "pass", "pass")
    for seat in range(4):
        assert g.public_card_sets(seat) == [0, 0]  # not during the auction
    act(g, "pass")
    for seat in range(4):
        assert texts(g.public_card_sets(seat)[0]) == {"JKR", "JKB", "2C", "2D", "2H", "2S"}
        assert set(g.information_state(seat)["kitty"]) == {"JKR", "JKB", "2C", "2D", "2H", "2S"}
    assert ("kitty_shown", ("2C", "2D", "2H", "2S", "JKR", "JKB")) in g.events
    act(g, "2C")
    assert g.public_card_sets(1)[1] == 0  # discards stay private


# ------------------------------------------------------------------ labels and options
def mask_of_texts(items) -> int:
    return sum(1 << c(t) for t in items)


def test_labels_round_trip():
    g = BidWhist()
    assert g.num_actions == NUM_ACTIONS == 82
    for a in range(NUM_ACTIONS):
        assert g.action_id(g.action_label(a)) == a
    assert g.action_label(PASS) == "pass" and g.action_id("pass") == 54
    assert g.action_id("bid:5:uptown") == bid_action(5, "uptown") == BID_BASE + 12
    assert g.action_id("bid:5:notrump") == BID_BASE + 14
    assert [g.action_label(DECLARE_BASE + i) for i in range(6)] == [
        "trump:C", "trump:D", "trump:H", "trump:S", "direction:uptown", "direction:downtown"
    ]
    assert g.action_id("trump:H") == 78 and g.action_id("direction:downtown") == 81
    assert g.action_label(52) == "JKR" and g.action_id("JKB") == 53 and g.action_id("10h") == c("TH")
    assert sorted(g.action_label(a) for a in range(BID_BASE, DECLARE_BASE)) == sorted(ALL_BIDS)
    for bad in ["bid:8:uptown", "bid:0:uptown", "bid:5:sideways", "bid:5", "trump:X", "direction:up", "XX", "bid:3"]:
        with pytest.raises(ValueError):
            g.action_id(bad)
    for bad in ["bid:\u00b2:uptown", "bid:\u0663:uptown"]:  # ², Arabic-Indic 3
        with pytest.raises(ValueError, match="unknown bid"):
            g.action_id(bad)
    with pytest.raises(ValueError):
        g.action_label(82)
    assert card_to_str(53) == "JKB"


def test_no_kitty_has_no_joker_actions():
    g = BidWhist(kitty=False)
    with pytest.raises(ValueError):
        g.action_id("JKR")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("kitty", "yes"), ("min_bid", 0), ("min_bid", 8), ("downtown_beats_uptown", 1), ("dealer_can_match", None),
        ("sport_kitty", 0), ("big_joker", "blue"), ("jokers_high", "no"), ("deuces_wild", 2),
        ("wild_deuces", ("2D", "2D")), ("wild_deuces", ("2D", "3S")), ("wild_deuces", ("2D",)), ("wild_deuces", "2D2S"),
        ("deuces_over_jokers", "x"), ("downtown_aces", "ugly"), ("no_trump_double", 2), ("defenders_score", None),
        ("boston_multiplier", 0), ("target_score", 0), ("lose_at_negative_target", "no"), ("first_dealer", 4),
        ("reward", "x"), ("episode", "x"), ("max_hands", 0),
    ],
)
def test_invalid_option_values_raise_naming_the_option(option, value):
    with pytest.raises(ValueError, match=option):
        BidWhist(**{option: value})


def test_unknown_option_raises_naming_it():
    with pytest.raises(ValueError, match="num_players"):
        BidWhist(num_players=4)


def test_wild_deuces_accepts_a_list_and_lower_case():
    g = BidWhist(deuces_wild=True, wild_deuces=["2h", "2c"])
    assert g.options.wild_deuces == ("2h", "2c")
    ctx = contract_context(g.options, 0, downtown=False)
    assert ctx.power[c("2H")] > ctx.power[c("2C")] > ctx.power[c("AC")]


def test_first_dealer_option():
    assert bw(first_dealer=2).dealer == 2
    assert {bw(seed=s).dealer for s in range(20)} == {0, 1, 2, 3}


def test_illegal_action_changes_nothing():
    g = bw({"dealer": 3})
    before = (list(g.calls), g.current_player, g.phase, list(g.hands))
    for bad in [c("AS"), DECLARE_BASE, NUM_ACTIONS, -1, bid_action(3, "uptown")]:
        with pytest.raises(ValueError):
            g.apply(bad)
    assert (list(g.calls), g.current_player, g.phase, list(g.hands)) == before


@pytest.mark.parametrize("options", [{}, {"kitty": False}])
def test_current_deal_replays_the_hand(options):
    g = bw(seed=32, target_score=30, **options)
    for _ in range(3):
        deal = g.current_deal()
        h = bw(deal, seed=99, **options)
        assert (h.hands, h.dealer, h.kitty_cards) == (g.hands, g.dealer, g.kitty_cards)
        hand = g.hand_number
        while g.hand_number == hand:
            g.apply(lowest_legal(g))


def test_episode_hand_ends_after_one_hand():
    g = bw({"dealer": 3}, seed=6, episode="hand", reward="win_loss")
    out, _ = play_hand_with_tricks(g, "bid:4:uptown", 9)
    assert g.done and g.hand_number == 0 and g.scores == [4, 0]
    assert g.winners == [0, 2] and out.rewards == (1.0, -1.0, 1.0, -1.0)


def test_max_hands_truncates():
    g = bw({"dealer": 3}, seed=7, max_hands=2, target_score=50)
    while not (g.done or g.truncated):
        g.apply(lowest_legal(g))
    assert g.truncated and not g.done and g.hand_number == 1 and g.legal_actions() == 0
