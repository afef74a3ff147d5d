"""Bounds of the double-dummy kernels (DDS's QuickTricks.cpp and LaterTricks.cpp, simpler): at a
trick boundary, tricks one side is sure to take whatever anyone plays, which bound the position's
value from below (the counted side's) and from above (its opponents') before it is searched, and
the cards each bound rests on (partition search: a bound stored or cut off by is valid wherever
those cards' holders are the same).

Each function takes the context array ``cx``, ``hands`` (int64[MAX_SEATS], each seat's cards as a
bitmask), the number of seats ``n`` and the counted ``side``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from whist_env.engine.dd_context import CX_MUST, CX_SIDE, CX_SUIT, CX_SUPER, CX_TRUMP, _above, _popcount, _top_power


@njit(cache=True)
def _quick_tricks(cx, hands, n, leader, side):
    """Quick tricks (DDS's QuickTricks, in its simplest form): tricks the leader wins by cashing
    cards that nobody can beat or ruff: a lower bound on what the leader's side (counted side or
    its opponents) takes from this trick on. Returns ``(tricks, relevant)``: the bitmask of the
    cards whose ranks the bound rests on (the cashed winners; the rest is suit lengths)."""
    others = 0
    for s in range(n):
        if s != leader:
            others |= hands[s]
    supers = cx[CX_SUPER]
    relevant = np.int64(0)
    if others & supers:
        return 0, relevant
    mine = hands[leader]
    count = _popcount(mine & supers)
    trump = cx[CX_TRUMP]
    mine_side = cx[CX_SIDE + leader] == side
    for suit in range(4):
        held = mine & cx[CX_SUIT + suit] & ~supers
        if not held:
            continue
        tops = _above(cx, held, _top_power(cx, others & cx[CX_SUIT + suit]))
        winners = _popcount(tops)
        if winners and trump >= 0 and suit != trump:
            trumps = cx[CX_SUIT + trump]
            for s in range(n):
                if s == leader or not hands[s] & trumps:
                    continue
                friend = (cx[CX_SIDE + s] == side) == mine_side
                if friend and not cx[CX_MUST]:
                    continue  # a friend may decline to ruff
                length = _popcount(hands[s] & cx[CX_SUIT + suit])
                if length < winners:
                    winners = length
        if winners:
            relevant |= tops
        count += winners
    return count, relevant


@njit(cache=True)
def _side_quick_tricks(cx, hands, n, leader, side):
    """Quick tricks of the leader's side: the leader's own (:func:`_quick_tricks`), or a friend's
    after the leader crosses to it, leading a suit whose best card the friend holds above every
    other live card of the suit, with no seat that would ruff it (an opponent, or any seat under
    must-trump, void in the suit and holding a trump). The crossing trick is the friend's first
    quick trick. Returns ``(tricks, relevant)`` as :func:`_quick_tricks`."""
    best, relevant = _quick_tricks(cx, hands, n, leader, side)
    mine_side = cx[CX_SIDE + leader] == side
    trump = cx[CX_TRUMP]
    supers = cx[CX_SUPER]
    for f in range(n):
        if f == leader or (cx[CX_SIDE + f] == side) != mine_side:
            continue
        others = 0
        for s in range(n):
            if s != f:
                others |= hands[s]
        if others & supers:
            continue
        cross = np.int64(0)
        for suit in range(4):
            mask = cx[CX_SUIT + suit]
            if not hands[leader] & mask or not hands[f] & mask:
                continue
            top = _top_power(cx, hands[f] & mask)
            if _above(cx, others & mask, top):
                continue  # another live card beats the friend's best
            if trump >= 0 and suit != trump:
                trumps = cx[CX_SUIT + trump]
                ruffed = False
                for s in range(n):
                    if s == f or not hands[s] & trumps or hands[s] & mask:
                        continue
                    if (cx[CX_SIDE + s] == side) != mine_side or cx[CX_MUST]:
                        ruffed = True
                        break
                if ruffed:
                    continue
            cross = _above(cx, hands[f] & mask, top - 1)  # the friend's best card of the suit
            break
        if cross:
            q, q_relevant = _quick_tricks(cx, hands, n, f, side)
            if q > best:
                best, relevant = q, q_relevant | cross
    return best, relevant


@njit(cache=True)
def _sure_tricks(cx, hands, n, side, ours):
    """Sure trump tricks (a simpler cousin of DDS's LaterTricks): tricks the counted side
    (``ours``) or its opponents (not ``ours``) take whatever anyone plays: the most trumps one seat
    of that side holds above every trump of the other side (each wins the trick it falls on, one
    trick per card of one seat). 0 in no-trump and while super cards are live. Returns ``(tricks, relevant)`` as :func:`_quick_tricks` (the side's trumps
    above the other side's best)."""
    trump = cx[CX_TRUMP]
    relevant = np.int64(0)
    if trump < 0:
        return 0, relevant
    union = 0
    for s in range(n):
        union |= hands[s]
    if union & cx[CX_SUPER]:
        return 0, relevant
    trumps = cx[CX_SUIT + trump]
    theirs = 0
    for s in range(n):
        if (cx[CX_SIDE + s] == side) != ours:
            theirs |= hands[s] & trumps
    top = _top_power(cx, theirs)  # the strongest trump of the other side
    most = 0
    for s in range(n):
        if (cx[CX_SIDE + s] == side) == ours:
            above = _above(cx, hands[s] & trumps, top)
            most = max(most, _popcount(above))
            if theirs:
                relevant |= above
    return most, relevant



@njit(cache=True)
def _trick_bounds(cx, hands, n, leader, side, misere):
    """Tricks each side is sure of at a trick boundary led by ``leader``: ``(mine, mine_rel,
    theirs, theirs_rel)``, the counted side's and its opponents' (bounds ``mine <= value <= left -
    theirs``) with the cards each rests on. Each side's sure trumps (:func:`_sure_tricks`), or the
    leading side's quick tricks (:func:`_side_quick_tricks`) where more; in misère the leader cashes
    no quick tricks (its side may not want them)."""
    mine, mine_rel = _sure_tricks(cx, hands, n, side, True)
    theirs, theirs_rel = _sure_tricks(cx, hands, n, side, False)
    if not misere:
        quick, quick_rel = _side_quick_tricks(cx, hands, n, leader, side)
        if cx[CX_SIDE + leader] == side:
            if quick > mine:
                mine, mine_rel = quick, quick_rel
        elif quick > theirs:
            theirs, theirs_rel = quick, quick_rel
    return mine, mine_rel, theirs, theirs_rel
