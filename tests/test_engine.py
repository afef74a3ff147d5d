"""Engine tests: card codes, bitmask helpers, legality and trick winner (RULES.md §1.1, §1.3, §1.4)."""

from __future__ import annotations

import numpy as np
import pytest

from whist_env.engine.cards import (
    FULL_DECK_52,
    FULL_DECK_54,
    JKB,
    JKR,
    JOKERS_MASK,
    SUIT_MASKS,
    card_from_str,
    card_to_str,
    cards_list,
    cards_of,
    count,
    make_card,
    mask_from_strs,
    mask_of,
    mask_to_str,
    rank_of,
    suit_of,
)
from whist_env.engine.dealing import deal_round_robin, shuffled_deck
from whist_env.engine.tricks import (
    NO_SUIT,
    TrickContext,
    is_revoke,
    led_suit,
    legal_cards,
    natural_context,
    trick_winner,
)

C, D, H, S = 0, 1, 2, 3


def m(*texts: str) -> int:
    return mask_from_strs(texts)


# --------------------------------------------------------------------------- cards (§1.1)
def test_card_ids_follow_the_normative_encoding():
    assert card_from_str("2C") == 0
    assert card_from_str("AC") == 12
    assert card_from_str("2D") == 13
    assert card_from_str("QH") == 2 * 13 + 10
    assert card_from_str("AS") == 51
    assert card_from_str("JKR") == JKR == 52
    assert card_from_str("JKB") == JKB == 53
    assert card_to_str(0) == "2C"
    assert card_to_str(8) == "TC"
    assert card_to_str(51) == "AS"


@pytest.mark.parametrize("card", range(54))
def test_card_text_round_trip(card):
    text = card_to_str(card)
    assert card_from_str(text) == card
    assert card_from_str(text.lower()) == card
    assert card_to_str(np.int64(card)) == text


@pytest.mark.parametrize(
    ("text", "card"),
    [("10C", 8), ("10d", 21), ("10H", 34), ("10s", 47), ("th", 34), ("qh", 36), ("as", 51), ("jkr", 52), ("jkb", 53), (" KD ", 24)],
)
def test_card_from_str_accepts_ten_and_lower_case(text, card):
    assert card_from_str(text) == card


@pytest.mark.parametrize("bad", ["", "1C", "11C", "ZZ", "QX", "Q", "H", "JK", "JKX", "A S", "10", "QHH", None, 5])
def test_card_from_str_rejects_bad_text(bad):
    with pytest.raises(ValueError):
        card_from_str(bad)


@pytest.mark.parametrize("bad", [-1, 54, 100, "QH", None, 2.5, True])
def test_card_to_str_rejects_non_cards(bad):
    with pytest.raises(ValueError):
        card_to_str(bad)


def test_suit_rank_and_make_card():
    for card in range(52):
        assert make_card(suit_of(card), rank_of(card)) == card
    assert suit_of(card_from_str("QH")) == H
    assert rank_of(card_from_str("QH")) == 10
    for joker in (JKR, JKB):
        with pytest.raises(ValueError):
            suit_of(joker)
        with pytest.raises(ValueError):
            rank_of(joker)
    with pytest.raises(ValueError):
        make_card(4, 0)
    with pytest.raises(ValueError):
        make_card(0, 13)


# --------------------------------------------------------------------------- bitmasks
def test_bitmask_helpers():
    cards = [0, 5, 13, 51, 52]
    mask = mask_of(cards)
    assert mask == (1 << 0) | (1 << 5) | (1 << 13) | (1 << 51) | (1 << 52)
    assert list(cards_of(mask)) == cards
    assert cards_list(mask) == cards
    assert count(mask) == 5
    assert mask_to_str(mask) == ["2C", "7C", "2D", "AS", "JKR"]
    assert mask_from_strs(["2C", "7c", "2D", "AS", "JKR"]) == mask
    assert mask_of([]) == 0 and cards_list(0) == [] and count(0) == 0


def test_mask_from_strs_rejects_duplicates_and_unknown_cards():
    with pytest.raises(ValueError, match="twice"):
        mask_from_strs(["QH", "qh"])
    with pytest.raises(ValueError, match="TC"):
        mask_from_strs(["TC", "10C"])
    with pytest.raises(ValueError):
        mask_from_strs(["QH", "XX"])


def test_deck_and_suit_masks():
    assert count(FULL_DECK_52) == 52
    assert count(FULL_DECK_54) == 54
    assert FULL_DECK_54 == FULL_DECK_52 | JOKERS_MASK
    assert count(JOKERS_MASK) == 2
    union = 0
    for suit, sm in enumerate(SUIT_MASKS):
        assert count(sm) == 13
        assert all(suit_of(c) == suit for c in cards_of(sm))
        assert union & sm == 0
        union |= sm
    assert union == FULL_DECK_52


# --------------------------------------------------------------------------- reference §1.4
def ref_led_suit(trick, eff):
    for c in trick:
        if eff[c] != NO_SUIT:
            return eff[c]
    return None


def ref_legal_cards(hand, trick, ctx):
    """RULES.md §1.4 ``legal_cards`` pseudo-code, line by line, on lists."""
    if not trick:
        return set(hand)
    s = ref_led_suit(trick, ctx.eff_suit)
    if s is None:
        return set(hand)
    same = [c for c in hand if ctx.eff_suit[c] == s]
    if same:
        return set(same)
    if ctx.must_trump and ctx.trump is not None:
        trumps = [c for c in hand if ctx.eff_suit[c] == ctx.trump]
        if trumps:
            return set(trumps)
    return set(hand)


def ref_trick_winner(plays, ctx):
    """RULES.md §1.4 ``trick_winner`` pseudo-code."""
    if ctx.super_mask:
        supers = [p for p in plays if ctx.super_mask >> p[1] & 1]
        if supers:
            return max(supers, key=lambda p: ctx.power[p[1]])[0]
    if ctx.trump is not None:
        trumps = [p for p in plays if ctx.eff_suit[p[1]] == ctx.trump]
        if trumps:
            return max(trumps, key=lambda p: ctx.power[p[1]])[0]
    s = ref_led_suit([c for _, c in plays], ctx.eff_suit)
    return max([p for p in plays if ctx.eff_suit[p[1]] == s], key=lambda p: ctx.power[p[1]])[0]


def engine_legal(hand_cards, trick_cards, ctx):
    led = led_suit(trick_cards, ctx) if trick_cards else None
    return set(cards_of(legal_cards(mask_of(hand_cards), led, ctx)))


def joker_context(trump=None, must_trump=False, super_jokers=False):
    """A Bid-Whist-like context: jokers are suitless in no-trump and (optionally) super cards."""
    eff = [c // 13 if c < 52 else NO_SUIT for c in range(54)]
    power = [c % 13 if c < 52 else 0 for c in range(54)]
    power[JKR], power[JKB] = 20, 21  # big joker beats little joker
    if trump is not None:
        eff[JKR] = eff[JKB] = trump  # in a trump hand the jokers are the top trumps
    return TrickContext(tuple(eff), tuple(power), trump, must_trump, (JOKERS_MASK if super_jokers else 0))


def cards(*texts):
    return [card_from_str(t) for t in texts]


def test_leader_may_play_anything():
    ctx = natural_context(H)
    hand = cards("7S", "AH", "KH", "2D")
    assert engine_legal(hand, [], ctx) == set(hand)
    assert legal_cards(mask_of(hand), None, ctx) == mask_of(hand)


def test_must_follow_suit_else_free_discard():
    ctx = natural_context(H)
    hand = cards("7S", "AH", "KH")
    assert engine_legal(hand, cards("KS"), ctx) == set(cards("7S"))
    hand = cards("AH", "KH", "2D")
    assert engine_legal(hand, cards("KS"), ctx) == set(hand)  # no obligation to trump
    hand = cards("3S", "9S", "AD")
    assert engine_legal(hand, cards("KS", "AS"), ctx) == set(cards("3S", "9S"))  # no obligation to beat
    assert legal_cards(0, S, ctx) == 0


def test_must_trump_context():
    ctx = natural_context(H, must_trump=True)
    assert engine_legal(cards("AH", "KH", "2D"), cards("KS"), ctx) == set(cards("AH", "KH"))
    assert engine_legal(cards("7S", "AH", "2D"), cards("KS"), ctx) == set(cards("7S"))  # following first
    assert engine_legal(cards("2C", "3C", "2D"), cards("KS"), ctx) == set(cards("2C", "3C", "2D"))  # void in both
    assert engine_legal(cards("2C", "2H"), cards("KS", "AH"), ctx) == set(cards("2H"))  # no over-trump duty
    no_trump = natural_context(None, must_trump=True)
    assert engine_legal(cards("2C", "2H"), cards("KS"), no_trump) == set(cards("2C", "2H"))


def test_suitless_cards_and_led_suit():
    ctx = joker_context()
    assert led_suit(cards("JKR"), ctx) is None
    assert led_suit(cards("JKR", "5D", "AS"), ctx) == D
    hand = cards("2C", "3S", "JKB")
    # only suitless cards so far: anything goes
    assert engine_legal(hand, cards("JKR"), ctx) == set(hand)
    # the first card with a suit decides; a joker is never of that suit
    assert engine_legal(hand, cards("JKR", "9S"), ctx) == set(cards("3S"))
    assert engine_legal(cards("2C", "JKB"), cards("9S"), ctx) == set(cards("2C", "JKB"))
    # in a trump hand the jokers are trumps: they follow a trump lead
    tctx = joker_context(trump=S)
    assert engine_legal(cards("2C", "JKB"), cards("9S"), tctx) == set(cards("JKB"))


def test_is_revoke():
    ctx = natural_context(H)
    hand = mask_of(cards("7S", "2H"))
    assert is_revoke(hand, card_from_str("2H"), S, ctx)
    assert not is_revoke(hand, card_from_str("7S"), S, ctx)
    assert not is_revoke(hand, card_from_str("2H"), None, ctx)
    assert not is_revoke(mask_of(cards("2D", "2H")), card_from_str("2H"), S, ctx)


def test_trick_winner_worked_examples():
    # CW-2: trump H; 1 KS, 2 AS, 3 2H, 0 AD -> seat 3 (only trump)
    ctx = natural_context(H)
    assert trick_winner([(1, card_from_str("KS")), (2, card_from_str("AS")), (3, card_from_str("2H")), (0, card_from_str("AD"))], ctx) == 3
    # CW-3: trump C; 0 TD, 1 QD, 2 AS, 3 3D -> seat 1
    ctx = natural_context(C)
    assert trick_winner([(0, card_from_str("TD")), (1, card_from_str("QD")), (2, card_from_str("AS")), (3, card_from_str("3D"))], ctx) == 1
    # CW-4: trump H; 2 5C, 3 7H, 0 AC, 1 JH -> seat 1
    ctx = natural_context(H)
    assert trick_winner([(2, card_from_str("5C")), (3, card_from_str("7H")), (0, card_from_str("AC")), (1, card_from_str("JH"))], ctx) == 1


def test_trick_winner_no_trump_and_off_suit_never_wins():
    ctx = natural_context(None)
    plays = [(0, card_from_str("2D")), (1, card_from_str("AS")), (2, card_from_str("AC")), (3, card_from_str("3D"))]
    assert trick_winner(plays, ctx) == 3
    assert trick_winner(plays[:1], ctx) == 0
    with pytest.raises(ValueError):
        trick_winner([], ctx)


def test_trick_winner_with_jokers_and_super_cards():
    # no-trump, jokers suitless and not super: a joker can never win
    ctx = joker_context()
    plays = [(0, JKR), (1, card_from_str("4D")), (2, card_from_str("AS")), (3, card_from_str("9D"))]
    assert trick_winner(plays, ctx) == 3  # led suit is D (first card with a suit)
    with pytest.raises(ValueError):
        trick_winner([(0, JKR), (1, JKB)], ctx)
    # super cards beat everything; the higher-power super wins
    sctx = joker_context(super_jokers=True)
    plays = [(0, card_from_str("AD")), (1, JKR), (2, card_from_str("KD")), (3, JKB)]
    assert trick_winner(plays, sctx) == 3
    assert trick_winner(plays[:3], sctx) == 1
    assert trick_winner([(0, card_from_str("AD")), (1, card_from_str("2D"))], sctx) == 0
    # trump hand: jokers are the top trumps
    tctx = joker_context(trump=S)
    plays = [(0, card_from_str("AD")), (1, card_from_str("AS")), (2, JKR), (3, card_from_str("2S"))]
    assert trick_winner(plays, tctx) == 2


def test_context_validation():
    with pytest.raises(ValueError):
        TrickContext((0,) * 53, (0,) * 54)
    with pytest.raises(ValueError):
        TrickContext((0,) * 54, (0,) * 54, trump=4)
    ctx = natural_context(D)
    assert ctx.suit_masks == SUIT_MASKS
    assert natural_context(D) is ctx  # cached


@pytest.mark.parametrize("ctx_name", ["natural_H", "natural_none", "must_trump_S", "jokers_nt", "jokers_super", "jokers_trump_C"])
def test_engine_matches_reference_pseudo_code_on_random_situations(ctx_name):
    ctx = {
        "natural_H": natural_context(H),
        "natural_none": natural_context(None),
        "must_trump_S": natural_context(S, must_trump=True),
        "jokers_nt": joker_context(),
        "jokers_super": joker_context(super_jokers=True),
        "jokers_trump_C": joker_context(trump=C),
    }[ctx_name]
    rng = np.random.default_rng(1234)
    deck = list(range(54))
    for _ in range(300):
        order = [int(c) for c in rng.permutation(deck)]
        n_trick = int(rng.integers(0, 4))
        trick = order[:n_trick]
        hand = order[n_trick : n_trick + int(rng.integers(1, 14))]
        assert engine_legal(hand, trick, ctx) == ref_legal_cards(hand, trick, ctx)
        plays = list(enumerate(order[:4]))
        if ref_led_suit([c for _, c in plays], ctx.eff_suit) is None and not any(ctx.super_mask >> c & 1 for _, c in plays):
            if ctx.trump is None or not any(ctx.eff_suit[c] == ctx.trump for _, c in plays):
                continue  # no card can win (only jokers in a no-trump trick of this synthetic context)
        assert trick_winner(plays, ctx) == ref_trick_winner(plays, ctx)


# --------------------------------------------------------------------------- dealing (§1.3)
def test_deal_round_robin_mapping():
    order = list(range(52))
    hands, rest = deal_round_robin(order, first_seat=0, num_seats=4, cards_each=13)
    assert rest == []
    for i, c in enumerate(order):
        assert hands[i % 4] >> c & 1
    # CW-1: dealer 3 -> first seat left(3) = 0; d[51] lands with the dealer
    hands, _ = deal_round_robin(order, first_seat=(3 + 1) % 4, num_seats=4, cards_each=13)
    assert hands[3] >> order[51] & 1
    # starting elsewhere, with leftover cards returned in order
    order = [int(c) for c in np.random.default_rng(7).permutation(54)]
    hands, rest = deal_round_robin(order, first_seat=2, num_seats=3, cards_each=17)
    assert rest == order[51:]
    for i in range(51):
        assert hands[(2 + i) % 3] >> order[i] & 1
    assert [count(h) for h in hands] == [17, 17, 17]
    assert sum(hands) == mask_of(order[:51])


def test_deal_round_robin_errors():
    with pytest.raises(ValueError, match="need 52"):
        deal_round_robin(list(range(51)), 0, 4, 13)
    with pytest.raises(ValueError, match="repeats"):
        deal_round_robin(list(range(51)) + [0], 0, 4, 13)


def test_shuffled_deck_is_a_reproducible_permutation():
    a = shuffled_deck(np.random.default_rng(5), range(52))
    b = shuffled_deck(np.random.default_rng(5), range(52))
    assert a == b
    assert sorted(a) == list(range(52))
    assert all(type(c) is int for c in a)
    assert shuffled_deck(np.random.default_rng(6), range(52)) != a
