"""Card ids, card text and bitmask card sets (RULES.md §1.1, DESIGN.md "Cards").

A card is a small ``int``: ``suit * 13 + rank`` with suits clubs 0, diamonds 1, hearts 2,
spades 3 and ranks 0 (two) … 12 (ace); ``JKR`` (red joker) is 52 and ``JKB`` (black joker) 53.
A set of cards (a hand, a suit, the cards played so far) is a Python ``int`` used as a
bitmask: bit ``c`` is set when card ``c`` is in the set.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator

SUITS = "CDHS"
RANKS = "23456789TJQKA"
NUM_SUITS = 4
NUM_RANKS = 13
NUM_STANDARD_CARDS = 52
JKR = 52
JKB = 53
NUM_CARDS_WITH_JOKERS = 54

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
RED_SUITS = (DIAMONDS, HEARTS)

#: Bitmask of the 13 natural cards of each suit, indexed by suit.
SUIT_MASKS: tuple[int, ...] = tuple(((1 << NUM_RANKS) - 1) << (s * NUM_RANKS) for s in range(NUM_SUITS))
FULL_DECK_52 = (1 << NUM_STANDARD_CARDS) - 1
JOKERS_MASK = (1 << JKR) | (1 << JKB)
FULL_DECK_54 = FULL_DECK_52 | JOKERS_MASK

_CARD_TEXT: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS) + ("JKR", "JKB")
_TEXT_TO_CARD: dict[str, int] = {text: c for c, text in enumerate(_CARD_TEXT)}
_TEXT_TO_CARD.update({"10" + s: s_i * NUM_RANKS + 8 for s_i, s in enumerate(SUITS)})


def suit_of(card: int) -> int:
    """Natural suit index 0..3 of a standard card (``card`` in 0..51).

    Jokers have no natural suit; asking for one raises ``ValueError``.
    """
    if not 0 <= card < NUM_STANDARD_CARDS:
        raise ValueError(f"card {card!r} has no natural suit (standard cards are 0..51)")
    return card // NUM_RANKS


def rank_of(card: int) -> int:
    """Natural rank index 0 (two) .. 12 (ace) of a standard card; ``ValueError`` for a joker."""
    if not 0 <= card < NUM_STANDARD_CARDS:
        raise ValueError(f"card {card!r} has no natural rank (standard cards are 0..51)")
    return card % NUM_RANKS


def make_card(suit: int, rank: int) -> int:
    """Card id of ``rank`` (0..12) in ``suit`` (0..3)."""
    if not (0 <= suit < NUM_SUITS and 0 <= rank < NUM_RANKS):
        raise ValueError(f"no card with suit {suit!r} and rank {rank!r}")
    return suit * NUM_RANKS + rank


def card_to_str(card: int) -> str:
    """Text of a card id: ``"2C"`` … ``"AS"``, ``"JKR"``, ``"JKB"``.

    Raises ``ValueError`` for an id outside 0..53.
    """
    # operator.index accepts ints and numpy integers but not floats (2.5 is not card 2)
    try:
        index = operator.index(card) if not isinstance(card, bool) else None
    except TypeError:
        index = None
    if index is None or not 0 <= index < NUM_CARDS_WITH_JOKERS:
        raise ValueError(f"not a card id: {card!r} (expected an int in 0..53)")
    return _CARD_TEXT[index]


def card_from_str(text: str) -> int:
    """Card id of a card text such as ``"QH"``, ``"10c"``, ``"th"`` or ``"JKB"`` (case-insensitive).

    Raises ``ValueError`` naming the text when it is not a card.
    """
    card = _TEXT_TO_CARD.get(text) if type(text) is str else None
    if card is not None:  # the canonical texts the rules write
        return card
    if not isinstance(text, str):
        raise ValueError(f"not a card text: {text!r}")
    key = text.strip().upper()
    try:
        return _TEXT_TO_CARD[key]
    except KeyError:
        raise ValueError(
            f"unknown card {text!r}: expected rank 2-9/T/10/J/Q/K/A then suit C/D/H/S, or JKR/JKB"
        ) from None


def mask_of(cards: Iterable[int]) -> int:
    """Bitmask of an iterable of card ids."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> Iterator[int]:
    """Card ids in a bitmask, lowest id first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def cards_list(mask: int) -> list[int]:
    """List of the card ids in a bitmask, lowest first."""
    return list(cards_of(mask))


def count(mask: int) -> int:
    """Number of cards in a bitmask."""
    return mask.bit_count()


def mask_to_str(mask: int) -> list[str]:
    """Card texts of a bitmask, lowest id first (clubs, diamonds, hearts, spades, jokers)."""
    return [_CARD_TEXT[c] for c in cards_of(mask)]


def mask_from_strs(texts: Iterable[str]) -> int:
    """Bitmask of card texts; ``ValueError`` on an unknown card or a card named twice."""
    m = 0
    for t in texts:
        c = card_from_str(t)
        if m >> c & 1:
            raise ValueError(f"card {card_to_str(c)} appears twice")
        m |= 1 << c
    return m
