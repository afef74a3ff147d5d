"""Move generation of the double-dummy kernels (DDS's Moves.cpp): the legal cards of the seat to
play, one per class of equivalent cards, ordered best first by DDS's weights (for any number of
seats and sides: :func:`_lead_weights`, :func:`_order_follow`); and the closure of a ply's classes
that a stored value's relevant cards need (partition search).

A ply's moves lie in ``moves`` (int64[MAX_PLIES * ROW]) from ``row``: ``moves[row + 2 m]`` the
card of move ``m`` (the strongest of its class), ``moves[row + 2 m + 1]`` the bitmask of its class,
and from ``row + 2 * MOVE_WIDTH`` the moves' ordering scores.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from whist_env.engine.dd_context import (
    CX_EFF,
    CX_N,
    CX_ORDER,
    CX_ORDLEN,
    CX_POW,
    CX_SIDE,
    CX_SUIT,
    CX_SUPER,
    CX_TRUMP,
    MAX_SEATS,
    MOVE_WIDTH,
    SUIT_WIDTH,
    _above,
    _group_of,
    _low_bit,
    _popcount,
    _top_power,
)
from whist_env.engine.dd_tricks import _led, _legal, _winning_position


@njit(cache=True)
def _moves(cx, hands, tcard, leaders, t, k, side, misere, moves, row, first, hist):
    """Writes the moves of the seat at position ``k`` of trick ``t`` (one per class of equivalent
    legal cards), best first, at ``moves[row:]``; returns their count.

    Args:
        cx: the context array; hands: int64[MAX_SEATS], each seat's cards (bitmasks).
        tcard: int64[MAX_TRICKS * MAX_SEATS], the cards of the tricks; leaders: int64[MAX_TRICKS].
        side: the counted side; misere: it minimises its tricks (every seat then plays to lose
            tricks: :func:`_order_misere`); first: the table's best lead (a card, -1 none).
        moves: int64[MAX_PLIES * ROW], written from ``row``.
        hist: int64[MAX_SEATS * 64 + MAX_TRICKS], the history of moves that cut off, by seat and
            card, then each trick's killer lead (:class:`~whist_env.engine.dd_search.Workspace`).
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
    if misere:
        _order_misere(cx, tcard, base, k, seat, t, moves, row, count, first, hist)
    elif k == 0:
        _lead_weights(cx, hands, n, seat, side, t, _popcount(hands[seat]), moves, row, count, first, hist)
    else:
        _order_follow(cx, hands, n, tcard, base, k, leader, (cx[CX_SIDE + seat] == side), side, moves, row, count)
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


@njit(cache=True)
def _suit_tops(cx, hands, n, suit):
    """The seats holding the three strongest live cards of effective ``suit`` (-1 where the suit has
    fewer), and its strongest and second strongest live cards (-1 none)."""
    h0 = h1 = h2 = -1
    top = second = -1
    for i in range(cx[CX_ORDLEN + suit]):
        c = cx[CX_ORDER + suit * SUIT_WIDTH + i]
        bit = np.int64(1) << c
        for s in range(n):
            if hands[s] & bit:
                if h0 < 0:
                    h0, top = s, c
                elif h1 < 0:
                    h1, second = s, c
                else:
                    return h0, h1, s, top, second
                break
    return h0, h1, h2, top, second


@njit(cache=True)
def _lead_weights(cx, hands, n, leader, side, t, left, moves, row, count, first, hist):
    """Ordering scores of the ``count`` moves of a lead (DDS's ``WeightAllocTrump0`` and
    ``WeightAllocNT0``, for any number of seats: the leader's friends are the seats of its side, the
    counted side's opponents counting as one; its left-hand opponent plays second, its right-hand
    one last): suits where the opponents hold few cards first; then by who holds the suit's best
    cards, whether a card of the leader's side wins the trick, ruffs by either side; the killer
    move (the lead that last cut off at this trick) and the table's best lead (``first``) raised;
    the history of cut-offs (``hist``) breaks ties. A super or suitless card is weighed by its power
    alone, raised as the killer move only."""
    scores = row + 2 * MOVE_WIDTH
    mine = cx[CX_SIDE + leader] == side
    lho = (leader + 1) % n
    rho = (leader + n - 1) % n
    lho_opp = (cx[CX_SIDE + lho] == side) != mine
    rho_opp = (cx[CX_SIDE + rho] == side) != mine
    trump = cx[CX_TRUMP]
    supers = cx[CX_SUPER]
    live = np.int64(0)
    for s in range(n):
        live |= hands[s]
    trumps = cx[CX_SUIT + trump] & ~supers if trump >= 0 else np.int64(0)
    ruffs = (live & trumps) != 0  # trumps are live: DDS's trump weights, else its no-trump ones
    killer = hist[MAX_SEATS * 64 + t] - 1
    for m in range(count):
        c = moves[row + 2 * m]
        cls = moves[row + 2 * m + 1]
        suit = cx[CX_EFF + c]
        bonus_killer = 0
        if killer >= 0 and (cls >> killer) & 1:
            bonus_killer = 1
        bonus_tt = 0
        if first >= 0 and (cls >> first) & 1:
            bonus_tt = 1
        if suit < 0 or (supers >> c) & 1:  # a super or suitless card: by its power
            w = 40 + 10 * bonus_killer
            moves[scores + m] = (w << 40) + (cx[CX_POW + c] << 20) + hist[leader * 64 + c]
            continue
        mask = cx[CX_SUIT + suit] & ~supers
        w_best, s_best, s_third, top, second_card = _suit_tops(cx, hands, n, suit)
        r_rank = _popcount(live & mask & ~_above(cx, live & mask, cx[CX_POW + c] - 1))  # live cards of the suit below c
        len_l = _popcount(hands[lho] & mask)
        len_r = _popcount(hands[rho] & mask)
        opp_count = 0
        friend_len = 0
        friend_void_ruffs = False
        opp_void_ruffs = False
        friend_top = -(1 << 30)
        opp_top = -(1 << 30)
        friend_trump = -(1 << 30)
        opp_trump = -(1 << 30)
        for s in range(n):
            if s == leader:
                continue
            held = hands[s] & mask
            length = _popcount(held)
            friend = ((cx[CX_SIDE + s] == side) == mine)
            has_trump = (hands[s] & trumps) != 0
            if friend:
                friend_len = max(friend_len, length)
                friend_top = max(friend_top, _top_power(cx, held))
                friend_trump = max(friend_trump, _top_power(cx, hands[s] & trumps))
                if length == 0 and has_trump:
                    friend_void_ruffs = True
            else:
                opp_count += (length if length else left + 1) << 2
                opp_top = max(opp_top, _top_power(cx, held))
                if length == 0 and has_trump:
                    opp_void_ruffs = True
                    opp_trump = max(opp_trump, _top_power(cx, hands[s] & trumps))
        second_friend = s_best >= 0 and s_best != leader and ((cx[CX_SIDE + s_best] == side) == mine)
        third_friend = s_third >= 0 and s_third != leader and ((cx[CX_SIDE + s_third] == side) == mine)
        winner_friend = w_best != leader and ((cx[CX_SIDE + w_best] == side) == mine)
        opp_singleton_top = (lho_opp and len_l == 1 and w_best == lho) or (rho_opp and len_r == 1 and w_best == rho)
        is_top = c == top
        second = False
        if s_best == leader:  # the leader holds the suit's second card: is it this class's?
            second = (cls >> second_card) & 1 != 0
        sequence = (cls & (cls - 1)) != 0
        if ruffs:
            delta = -((opp_count << 5) // 13)
            if suit != trump and opp_void_ruffs:
                delta -= 12
            if suit != trump and friend_void_ruffs and len_r > 0:
                delta += 17
            if rho_opp and (w_best == rho or s_best == rho):
                if len_r != 1:
                    delta -= 12
            elif lho_opp and w_best == lho and second_friend:
                if friend_len != 1:
                    delta += 27
            if suit != trump and _popcount(hands[leader] & mask) == 1 and hands[leader] & trumps and friend_len > 1 and winner_friend:
                delta += 19
            win = False
            if is_top or friend_top > opp_top:
                win = suit == trump or not opp_void_ruffs or (friend_void_ruffs and friend_trump > opp_trump)
            elif suit != trump and friend_void_ruffs:
                win = not opp_void_ruffs or friend_trump > opp_trump
            if win:
                if opp_singleton_top:
                    w = delta + 35 + r_rank
                elif w_best == leader:
                    if second_friend:
                        w = delta + 48 + r_rank
                    elif is_top:
                        w = delta + 31
                    else:
                        w = delta - 3 + r_rank
                elif winner_friend:
                    w = delta + (42 if s_best == leader else 28) + r_rank
                elif sequence and second:
                    w = delta + 40
                elif sequence:
                    w = delta + 22 + r_rank
                else:
                    w = delta + 11 + r_rank
                w += 55 * bonus_killer + (18 * bonus_tt if not bonus_killer else 0)
            else:
                if second_friend and third_friend:
                    delta += 20
                elif (s_best == leader and third_friend and friend_len > 1) or (second_friend and s_third == leader and friend_len > 1):
                    delta += 13
                if opp_singleton_top:
                    w = delta + r_rank + 2
                elif w_best == leader:
                    if second_friend:
                        w = delta + 33 + r_rank
                    elif is_top:
                        w = delta + 38
                    else:
                        w = delta - 14 + r_rank
                elif winner_friend:
                    w = delta + 34 + r_rank
                elif sequence and second:
                    w = delta + 35
                else:
                    w = delta + 17 - r_rank
                w += 18 * bonus_killer
        else:
            delta = -((opp_count << 5) // 19)
            if friend_len == 0:
                delta -= 9
            if is_top or friend_top > opp_top:
                if rho_opp and s_best == rho:
                    if len_r != 1:
                        delta -= 1
                elif lho_opp and s_best == lho:
                    delta += 22 if len_l != 1 else 16
                if (not (lho_opp and s_best == lho) or len_l == 1) and (not (rho_opp and s_best == rho) or len_r == 1):
                    w = delta + 45 + r_rank
                else:
                    w = delta + 18 + r_rank
                w += 126 * bonus_killer + (32 * bonus_tt if not bonus_killer else 0)
            else:
                if rho_opp and (w_best == rho or s_best == rho):
                    if len_r != 1:
                        delta -= 10
                elif lho_opp and w_best == lho and second_friend:
                    if friend_len != 1:
                        delta += 31
                if second_friend and third_friend:
                    delta += 35
                elif (s_best == leader and third_friend and friend_len > 1) or (second_friend and s_third == leader and friend_len > 1):
                    delta += 25
                if opp_singleton_top:
                    w = delta + 28 + r_rank
                elif w_best == leader:
                    w = delta - 17 + r_rank
                elif not sequence:
                    w = delta + 12 + r_rank
                elif second:
                    w = delta + 48
                else:
                    w = delta + 29 - r_rank
                w += 47 * bonus_killer + (19 * bonus_tt if not bonus_killer else 0)
        moves[scores + m] = (np.int64(w) << 40) + hist[leader * 64 + c]


@njit(cache=True)
def _safe(cx, hands, n, tcard, base, m, first_later, leader, side, mine):
    """Whether the card winning the ``m`` cards of the trick at ``tcard[base:]`` (led by ``leader``)
    still wins it whatever the seats at positions ``first_later`` .. n-1 that are opponents of a
    seat of the counted ``side`` or not (``mine``) play: each tries its strongest legal card of the
    led suit, of trumps and of super cards (``tcard[base + m]`` is used as scratch)."""
    led = _led(cx, tcard, base, m)
    trump = cx[CX_TRUMP]
    supers = cx[CX_SUPER]
    for j in range(first_later, n):
        s = (leader + j) % n
        if (cx[CX_SIDE + s] == side) == mine:
            continue
        legal = _legal(cx, hands[s], led)
        for kind in range(3):
            if kind == 0:
                pool = legal & cx[CX_SUIT + led] & ~supers if led >= 0 else np.int64(0)
            elif kind == 1:
                pool = legal & cx[CX_SUIT + trump] & ~supers if trump >= 0 else np.int64(0)
            else:
                pool = legal & supers
            if not pool:
                continue
            best = -1
            power = -(1 << 30)
            while pool:
                c = _low_bit(pool)
                pool &= pool - 1
                if cx[CX_POW + c] > power:
                    best, power = c, cx[CX_POW + c]
            tcard[base + m] = best
            if _winning_position(cx, tcard, base, m + 1) == m:
                return False
    return True


@njit(cache=True, inline="always")
def _order_follow(cx, hands, n, tcard, base, k, leader, mine, side, moves, row, count):
    """Ordering scores of the ``count`` moves of the seat at position ``k`` > 0 of the trick at
    ``tcard[base:]`` led by ``leader`` (``mine``: the seat is of the counted ``side``; DDS's
    ``WeightAlloc*1/2/3``, for any number of seats; a friend is a seat of the same side, the counted
    side's opponents counting as one): a card of the led suit or a trump: when a friend holds the
    trick against every later opponent, the lowest; else the lowest that wins the trick against every
    later opponent, then the lowest that holds it for now, then the lowest of the rest; a discard
    after every such card, from a longer suit before a shorter, low before high."""
    scores = row + 2 * MOVE_WIDTH  # the moves' ordering scores
    win = _winning_position(cx, tcard, base, k)
    friend_winning = (cx[CX_SIDE + (leader + win) % n] == side) == mine
    friend_safe = friend_winning and _safe(cx, hands, n, tcard, base, k, k + 1, leader, side, mine)
    led = _led(cx, tcard, base, k)
    seat = (leader + k) % n
    for m in range(count):
        c = moves[row + 2 * m]
        power = cx[CX_POW + c]
        suit = cx[CX_EFF + c]
        if suit >= 0 and suit != led and suit != cx[CX_TRUMP] and not (cx[CX_SUPER] >> c) & 1:  # a discard
            moves[scores + m] = -1000 - 4 * power + 3 * _popcount(hands[seat] & cx[CX_SUIT + suit])
            continue
        tcard[base + k] = c
        takes = _winning_position(cx, tcard, base, k + 1) == k
        if friend_safe or not takes:
            moves[scores + m] = -4 * power - (0 if friend_safe else 1000)
        elif _safe(cx, hands, n, tcard, base, k + 1, k + 1, leader, side, mine):
            moves[scores + m] = 2000 - power
        else:
            moves[scores + m] = 1000 - power


@njit(cache=True, inline="always")
def _order_misere(cx, tcard, base, k, seat, t, moves, row, count, first, hist):
    """Ordering scores of the ``count`` moves of the seat at position ``k`` of the trick at
    ``tcard[base:]`` when the counted side minimises its tricks (misère, two sides: every seat then
    wants to lose tricks): a lead of the table's best lead or the trick's killer lead first, then low
    leads; a follow of the strongest card that does not take the trick, else the weakest card; the
    history of cut-offs breaks ties."""
    scores = row + 2 * MOVE_WIDTH
    killer = hist[MAX_SEATS * 64 + t] - 1
    for m in range(count):
        c = moves[row + 2 * m]
        cls = moves[row + 2 * m + 1]
        power = cx[CX_POW + c]
        if k == 0:
            w = -power
            if (first >= 0 and (cls >> first) & 1) or (killer >= 0 and (cls >> killer) & 1):
                w += 1000
        else:
            tcard[base + k] = c
            if _winning_position(cx, tcard, base, k + 1) == k:
                w = -1000 - power
            else:
                w = power
        moves[scores + m] = (np.int64(w) << 40) + hist[seat * 64 + c]


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
