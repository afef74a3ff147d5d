"""The layouts the double-dummy kernels share, and their bit helpers (the bottom of the kernels'
imports: :mod:`~whist_env.engine.dd_tricks`, :mod:`~whist_env.engine.dd_moves`,
:mod:`~whist_env.engine.dd_bounds`, :mod:`~whist_env.engine.dd_table` and
:mod:`~whist_env.engine.dd_search` import it; it imports none of them).

* The context array ``cx`` (int64[CX_SIZE], written once per solver by :func:`context_array`): the
  hand's ranking (each card's effective suit and power, trump, must-trump, super cards, the cards
  of each ranking group strongest first) and its seating (seats, the side of each).
* A search frame (one row of ``frames``, int64[MAX_PLIES + 1, FRAME]): the state of one ply of the
  search's explicit stack, fields ``F_*``; its pattern and lengths (``F_PAT``, ``F_LEN``) are the
  transposition table's key (:mod:`~whist_env.engine.dd_table`).
* The workspace's counters (``counters``, int64[COUNTERS], fields ``C_*``).
* Bitmasks: a set of cards is an int64 whose bit ``c`` stands for card id ``c`` (0..53).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

MAX_SEATS = 6
MAX_TRICKS = 20
MAX_PLIES = MAX_TRICKS * MAX_SEATS
MOVE_WIDTH = 24  # legal cards of one hand at most (18 cards in the largest hand)
ROW = 3 * MOVE_WIDTH  # one ply's moves: (card, class) pairs, then their ordering scores
SUIT_WIDTH = 24  # cards of one effective suit at most (a Bid Whist trump suit with jokers: 15)
GROUPS = 6  # ranking groups: the 4 effective suits (super cards apart), the super cards, the other cards

# the context array
CX_EFF = 0  # 64: effective suit of each card id, -1 suitless
CX_POW = 64  # 64: power of each card id
CX_SUIT = 128  # 4: bitmask of each effective suit's cards
CX_TRUMP = 132  # trump suit, -1 none
CX_MUST = 133  # 1: a void player holding a trump must trump
CX_SUPER = 134  # bitmask of super cards
CX_N = 135  # number of seats
CX_SIDE = 136  # 6: side of each seat
CX_ORDER = 142  # GROUPS * SUIT_WIDTH: cards of each group, strongest first
CX_ORDLEN = CX_ORDER + GROUPS * SUIT_WIDTH  # GROUPS: length of each group's order
CX_SIZE = CX_ORDLEN + GROUPS

# fields of a search frame (one row of ``frames`` per ply below the root): the trick ``t`` and the
# position ``k`` in it; the window (alpha, beta) as narrowed and as entered; the best value so far and
# its card; whether the seat to play maximises; the ply's move row, move count and next move; the seat
# to play and its hand before its card; the table row of a trick boundary (-1 none); the value of the
# trick the ply's card completed and the card that won it by rank; the table's best lead; the cards
# the value rests on
(F_T, F_K, F_ALPHA, F_BETA, F_ALPHA0, F_BETA0, F_BEST, F_MAX, F_COUNT, F_M, F_HAND, F_SEAT, F_BUCKET, F_WON, F_ROW, F_CARD,
 F_BEST_CARD, F_FIRST, F_REL, F_TREL) = range(20)
F_PAT = 20  # GROUPS fields: the position's pattern (:func:`whist_env.engine.dd_table._pattern`)
F_LEN = F_PAT + GROUPS  # 3 fields: its lengths
F_LOW = F_LEN + 3  # 4 fields: per suit, the power below which its cards are not searched (-1: all are)
FRAME = F_LOW + 4

# the workspace's counters (``counters``, int64[COUNTERS]): the transposition table's generation (new
# for each solver call), its entries in use, the positions searched by the call
C_TAG = 0
C_USED = 1
C_NODES = 2
COUNTERS = 3


@intrinsic
def _ctpop(typingctx, x):
    """LLVM's ``ctpop`` of an int64: its set bits, one machine instruction where the CPU has it."""
    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, [args[0]])
    return types.int64(types.int64), codegen


@intrinsic
def _cttz(typingctx, x):
    """LLVM's ``cttz`` of an int64: its trailing zero bits (64 for 0)."""
    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])
    return types.int64(types.int64), codegen


@njit(cache=True, inline="always")
def _popcount(x):
    """Number of cards in the bitmask ``x``."""
    return _ctpop(np.int64(x))


@njit(cache=True, inline="always")
def _low_bit(x):
    """Index of the lowest set bit of ``x`` (> 0): the lowest card id of a bitmask."""
    return _cttz(np.int64(x))


@njit(cache=True)
def _top_power(cx, mask):
    """Power of the strongest card of ``mask``, below every power if it is empty."""
    top = -(1 << 30)
    while mask:
        c = _low_bit(mask)
        mask &= mask - 1
        if cx[CX_POW + c] > top:
            top = cx[CX_POW + c]
    return top


@njit(cache=True)
def _above(cx, mask, power):
    """The cards of ``mask`` stronger than ``power`` (a bitmask)."""
    out = np.int64(0)
    rest = mask
    while rest:
        c = _low_bit(rest)
        rest &= rest - 1
        if cx[CX_POW + c] > power:
            out |= np.int64(1) << c
    return out


@njit(cache=True)
def _group_of(cx, c):
    """Ranking group of card ``c``: its effective suit 0..3, 4 for a super card, 5 for the others."""
    if (cx[CX_SUPER] >> c) & 1:
        return 4
    s = cx[CX_EFF + c]
    return s if s >= 0 else 5


def context_array(eff_suit, power, suit_masks, trump, must_trump, super_mask, side_of) -> np.ndarray:
    """The context array ``cx`` (int64[CX_SIZE]) of a hand's ranking and seating.

    Args:
        eff_suit, power: 54 ints each (``TrickContext.eff_suit``, ``.power``).
        suit_masks: 4 bitmasks (``TrickContext.suit_masks``).
        trump: suit 0..3 or ``None``; must_trump: bool; super_mask: bitmask.
        side_of: the side of each seat (2 to 6 seats).
    Raises:
        ValueError: a ranking group with more than SUIT_WIDTH cards, or more than MAX_SEATS seats.
    """
    if len(side_of) > MAX_SEATS:
        raise ValueError(f"at most {MAX_SEATS} seats, got {len(side_of)}")
    cx = np.zeros(CX_SIZE, dtype=np.int64)
    cx[CX_EFF:CX_EFF + 64] = -1
    cx[CX_EFF:CX_EFF + len(eff_suit)] = eff_suit
    cx[CX_POW:CX_POW + len(power)] = power
    suited = 0
    for s in range(4):
        cx[CX_SUIT + s] = suit_masks[s]
        suited |= suit_masks[s]
    groups = [suit_masks[s] & ~super_mask for s in range(4)] + [super_mask, ((1 << len(eff_suit)) - 1) & ~suited & ~super_mask]
    for g, mask in enumerate(groups):
        cards = sorted((c for c in range(len(eff_suit)) if mask >> c & 1), key=lambda c: power[c], reverse=True)
        if len(cards) > SUIT_WIDTH:
            raise ValueError(f"a ranking group of {len(cards)} cards: the kernels hold at most {SUIT_WIDTH}")
        cx[CX_ORDLEN + g] = len(cards)
        cx[CX_ORDER + g * SUIT_WIDTH:CX_ORDER + g * SUIT_WIDTH + len(cards)] = cards
    cx[CX_TRUMP] = -1 if trump is None else trump
    cx[CX_MUST] = int(bool(must_trump))
    cx[CX_SUPER] = super_mask
    cx[CX_N] = len(side_of)
    cx[CX_SIDE:CX_SIDE + len(side_of)] = side_of
    return cx
