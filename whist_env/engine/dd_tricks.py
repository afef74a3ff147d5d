"""The trick rules of the double-dummy kernels: the led suit, the cards a seat may play (follow
suit, must-trump), the card that wins a trick, and whether it won by rank (the winning ranks of
partition search).

A trick in progress lies in ``tcard`` (int64[MAX_TRICKS * MAX_SEATS]): the card played at position
``i`` of trick ``t`` at ``tcard[t * MAX_SEATS + i]``; the functions take ``base = t * MAX_SEATS``.
They implement :func:`whist_env.engine.tricks.trick_winner` (and ``trick_winner_or_leader``, which
agrees with it wherever it decides) over the context array (:mod:`~whist_env.engine.dd_context`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from whist_env.engine.dd_context import CX_EFF, CX_MUST, CX_POW, CX_SUIT, CX_SUPER, CX_TRUMP, _group_of


@njit(cache=True)
def _led(cx, tcard, base, k):
    """Led suit of a trick whose first ``k`` cards lie at ``tcard[base:]``: the effective suit of
    its first suited card, -1 while none is."""
    for i in range(k):
        s = cx[CX_EFF + tcard[base + i]]
        if s >= 0:
            return s
    return -1


@njit(cache=True)
def _legal(cx, hand, led):
    """The cards of ``hand`` (a bitmask) its seat may play to a trick of led suit ``led`` (-1: a
    lead, or no suit led yet): the whole hand on a lead; else follow suit; void in it, a trump
    when the game makes a void seat ruff (must-trump) and the seat holds one; else any card."""
    if led < 0:
        return hand
    same = hand & cx[CX_SUIT + led]
    if same:
        return same
    trump = cx[CX_TRUMP]
    if cx[CX_MUST] and trump >= 0:
        trumps = hand & cx[CX_SUIT + trump]
        if trumps:
            return trumps
    return hand


@njit(cache=True)
def _winning_position(cx, tcard, base, k):
    """Position 0..k-1 of the card that wins (or so far wins) a trick of ``k`` cards: the
    strongest super card, else the strongest trump, else the strongest card of the led suit; the
    leader's card (position 0) when no card can win (a trick of powerless suitless cards)."""
    supers = cx[CX_SUPER]
    best = -1
    best_power = -(1 << 30)
    if supers:
        for i in range(k):
            c = tcard[base + i]
            if (supers >> c) & 1 and cx[CX_POW + c] > best_power:
                best, best_power = i, cx[CX_POW + c]
        if best >= 0:
            return best
    trump = cx[CX_TRUMP]
    if trump >= 0:
        for i in range(k):
            c = tcard[base + i]
            if cx[CX_EFF + c] == trump and cx[CX_POW + c] > best_power:
                best, best_power = i, cx[CX_POW + c]
        if best >= 0:
            return best
    led = _led(cx, tcard, base, k)
    if led < 0:
        return 0
    for i in range(k):
        c = tcard[base + i]
        if cx[CX_EFF + c] == led and cx[CX_POW + c] > best_power:
            best, best_power = i, cx[CX_POW + c]
    return best


@njit(cache=True)
def _trick_relevant(cx, tcard, base, n, win):
    """The winning card of a finished trick of ``n`` cards (position ``win``) as a bitmask when it
    won by its rank (another card of its ranking group fell on the trick), else 0 (it won by suit:
    a ruff, the only card of the led suit). The winning ranks of DDS (Haglund and Hein), the
    relevant cards of Ginsberg's partition search: the trick's value rests on that card's rank."""
    w = tcard[base + win]
    g = _group_of(cx, w)
    for i in range(n):
        if i != win and _group_of(cx, tcard[base + i]) == g:
            return np.int64(1) << w
    return np.int64(0)
