"""Move generation of the double-dummy kernels (DDS's Moves.cpp): the legal cards of the seat to
play, one per class of equivalent cards, ordered best first; and the closure of a ply's classes
that a stored value's relevant cards need (partition search).

A ply's moves lie in ``moves`` (int64[MAX_PLIES * ROW]) from ``row``: ``moves[row + 2 m]`` the
card of move ``m`` (the strongest of its class), ``moves[row + 2 m + 1]`` the bitmask of its class,
and from ``row + 2 * MOVE_WIDTH`` the moves' ordering scores.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from whist_env.engine.dd_context import (
    CX_N,
    CX_ORDER,
    CX_ORDLEN,
    CX_POW,
    CX_SIDE,
    CX_SUIT,
    CX_SUPER,
    MAX_SEATS,
    MOVE_WIDTH,
    SUIT_WIDTH,
    _above,
    _group_of,
    _low_bit,
)
from whist_env.engine.dd_tricks import _led, _legal, _winning_position


@njit(cache=True)
def _moves(cx, hands, tcard, leaders, t, k, side, moves, row, first, hist):
    """Writes the moves of the seat at position ``k`` of trick ``t`` (one per class of equivalent
    legal cards), best first, at ``moves[row:]``; returns their count.

    Args:
        cx: the context array; hands: int64[MAX_SEATS], each seat's cards (bitmasks).
        tcard: int64[MAX_TRICKS * MAX_SEATS], the cards of the tricks; leaders: int64[MAX_TRICKS].
        side: the counted side; first: the table's best lead (a card, -1 none).
        moves: int64[MAX_PLIES * ROW], written from ``row``.
        hist: int64[MAX_SEATS * 64], the history of moves that cut off, by seat and card.
    """
    n = cx[CX_N]
    leader = leaders[t]
    seat = (leader + k) % n
    base = t * MAX_SEATS
    legal = _legal(cx, hands[seat], _led(cx, tcard, base, k))
    live = 0  # the cards not yet played to an earlier trick
    for s in range(n):
        live |= hands[s]
    for i in range(k):
        live |= 1 << tcard[base + i]
    count = _move_classes(cx, legal, live, moves, row)
    if k == 0:
        _order_lead(cx, seat, moves, row, count, first, hist)
    else:
        _order_follow(cx, tcard, base, k, leader, (cx[CX_SIDE + seat] == side), side, moves, row, count)
    _sort_moves(moves, row, count)
    return count


@njit(cache=True, inline="always")
def _move_classes(cx, legal, live, moves, row):
    """Writes the classes of equivalent cards of ``legal`` (a seat's legal cards, a bitmask) at
    ``moves[row:]``, each as its strongest card and the class's bitmask, and returns their count. A
    class is a run of a suit's cards held by the seat with no ``live`` card (one not yet played to
    an earlier trick) of another seat between them: DDS's equivalent cards; a suitless or super
    card is a class of its own."""
    count = 0
    for suit in range(4):
        if not legal & cx[CX_SUIT + suit]:
            continue
        rep = -1
        group = 0
        for i in range(cx[CX_ORDLEN + suit]):
            c = cx[CX_ORDER + suit * SUIT_WIDTH + i]
            bit = 1 << c
            if legal & bit:
                if rep < 0:
                    rep = c
                group |= bit
            elif live & bit and rep >= 0:
                moves[row + 2 * count] = rep
                moves[row + 2 * count + 1] = group
                count += 1
                rep = -1
                group = 0
        if rep >= 0:
            moves[row + 2 * count] = rep
            moves[row + 2 * count + 1] = group
            count += 1
    other = (legal & ~(cx[CX_SUIT] | cx[CX_SUIT + 1] | cx[CX_SUIT + 2] | cx[CX_SUIT + 3])) | (legal & cx[CX_SUPER])
    while other:
        c = _low_bit(other)
        other &= other - 1
        moves[row + 2 * count] = c
        moves[row + 2 * count + 1] = 1 << c
        count += 1
    return count


@njit(cache=True, inline="always")
def _order_lead(cx, leader, moves, row, count, first, hist):
    """Ordering scores of the ``count`` moves of a lead (DDS's lead move ordering, simpler): the
    class of ``first`` (the table's best lead, -1 none) first, then high cards, then by the
    ``hist`` of cut-offs (the history heuristic)."""
    scores = row + 2 * MOVE_WIDTH  # the moves' ordering scores
    for m in range(count):
        c = moves[row + 2 * m]
        if first >= 0 and (moves[row + 2 * m + 1] >> first) & 1:
            moves[scores + m] = 1 << 50
        else:
            moves[scores + m] = (cx[CX_POW + c] << 40) + hist[leader * 64 + c]


@njit(cache=True, inline="always")
def _order_follow(cx, tcard, base, k, leader, mine, side, moves, row, count):
    """Ordering scores of the ``count`` moves of the seat at position ``k`` > 0 of the trick at
    ``tcard[base:]`` led by ``leader`` (``mine``: the seat is of the counted ``side``; DDS's follow
    move ordering, simpler): when a friend (a seat of the same side, the counted side's opponents
    counting as one) holds the trick, the lowest card; else the lowest card that takes the trick,
    else the lowest card (a discard or an underruff)."""
    scores = row + 2 * MOVE_WIDTH  # the moves' ordering scores
    win = _winning_position(cx, tcard, base, k)
    friend_winning = (cx[CX_SIDE + (leader + win) % cx[CX_N]] == side) == mine
    for m in range(count):
        c = moves[row + 2 * m]
        power = cx[CX_POW + c]
        tcard[base + k] = c
        takes = _winning_position(cx, tcard, base, k + 1) == k
        if friend_winning:
            moves[scores + m] = -power
        elif takes:
            moves[scores + m] = 1000 - power
        else:
            moves[scores + m] = -1000 - power


@njit(cache=True, inline="always")
def _sort_moves(moves, row, count):
    """Sorts the ``count`` moves at ``moves[row:]`` by their scores, best first (an insertion sort:
    a ply has few moves; stable, so equal scores keep the order of generation)."""
    scores = row + 2 * MOVE_WIDTH  # the moves' ordering scores
    for i in range(1, count):
        score = moves[scores + i]
        c = moves[row + 2 * i]
        g = moves[row + 2 * i + 1]
        j = i - 1
        while j >= 0 and moves[scores + j] < score:
            moves[scores + j + 1] = moves[scores + j]
            moves[row + 2 * (j + 1)] = moves[row + 2 * j]
            moves[row + 2 * (j + 1) + 1] = moves[row + 2 * j + 1]
            j -= 1
        moves[scores + j + 1] = score
        moves[row + 2 * (j + 1)] = c
        moves[row + 2 * (j + 1) + 1] = g


@njit(cache=True)
def _close_classes(cx, moves, row, count, relevant):
    """``relevant`` with every class of equivalent cards searched at a ply (its ``count`` moves at
    ``moves[row:]``) that straddles the weakest relevant card of its group taken in whole: the
    class was searched by one card, which stands for the others only where they stay equivalent,
    so a stored pattern must reach below all of them or above all of them (partition search)."""
    changed = True
    while changed:
        changed = False
        for m in range(count):
            cls = moves[row + 2 * m + 1]
            if not cls & (cls - 1) or not cls & ~relevant:
                continue
            g = _group_of(cx, moves[row + 2 * m])
            weakest = np.int64(1) << 40
            rest = relevant
            while rest:
                c = _low_bit(rest)
                rest &= rest - 1
                if _group_of(cx, c) == g and cx[CX_POW + c] < weakest:
                    weakest = cx[CX_POW + c]
            if cx[CX_POW + moves[row + 2 * m]] >= weakest and _above(cx, cls, weakest - 1) != cls:
                relevant |= cls
                changed = True
    return relevant
