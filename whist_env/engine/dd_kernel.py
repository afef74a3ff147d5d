"""Numba kernels of the compiled double-dummy solver (:mod:`whist_env.engine.compiled_double_dummy`).

Plain functions over int64 arrays, compiled on first use and cached on disk (``cache=True``):

* ``cx`` (int64[CX_SIZE]): the hand's ranking and seating, written by :func:`context_array`;
* ``hands`` (int64[6]): each seat's remaining cards as a bitmask of card ids 0..53;
* ``tcard`` (int64[MAX_TRICKS * 6]): the card played at position k of trick t, ``tcard[6 t + k]``;
* ``leaders`` (int64[MAX_TRICKS]): the seat that leads trick t;
* ``moves`` (int64[MAX_PLIES * ROW]): scratch space, one row per ply;
* ``frames`` (int64[MAX_PLIES + 1, FRAME]): the search's explicit stack;
* ``hist`` (int64[MAX_SEATS * 64]): the history of moves that cut off, by seat and card;
* ``tt_keys`` (int64[2 size]), ``tt_lo``/``tt_hi``/``tt_depth``/``tt_move`` (int8[2 size]): the transposition
  table, a power-of-two number of buckets of two entries (one kept for the deeper position, one
  always replaced), keyed on the remaining cards by their rank within their group (so positions
  that differ only in which lower cards are gone share an entry), the leader and a generation tag
  (one tag per solver call, so a call never reads another call's entries and the table needs no
  clearing between calls).

The value of a position is the number of tricks the counted side takes from the current trick
(included) to the end of the hand; that side maximises it (minimises it with ``misere``), every
other seat does the opposite (the paranoid reduction for more than two sides). Search:
fail-soft alpha-beta over single card plays, driven by zero-window tests (MTD(f)); the table holds
lower and upper bounds at trick boundaries, and the best lead found there; quick tricks (the
leader's, or a partner's after a crossing) and sure trump tricks bound a trick boundary before it
is searched; equivalent cards are searched once; a lead tries the table's best lead first, then
high cards; a follow tries the lowest card that takes the trick, else the lowest card.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAX_SEATS = 6
MAX_TRICKS = 20
MAX_PLIES = MAX_TRICKS * MAX_SEATS
MOVE_WIDTH = 24  # legal cards of one hand at most (18 cards in the largest hand)
ROW = 3 * MOVE_WIDTH  # one ply's moves: (card, class) pairs, then their ordering scores
SUIT_WIDTH = 24  # cards of one effective suit at most (a Bid Whist trump suit with jokers: 15)

CX_EFF = 0  # 64: effective suit of each card id, -1 suitless
CX_POW = 64  # 64: power of each card id
CX_SUIT = 128  # 4: bitmask of each effective suit's cards
CX_TRUMP = 132  # trump suit, -1 none
CX_MUST = 133  # 1: a void player holding a trump must trump
CX_SUPER = 134  # bitmask of super cards
CX_N = 135  # number of seats
CX_SIDE = 136  # 6: side of each seat
GROUPS = 6  # ranking groups: the 4 effective suits (super cards apart), the super cards, the other cards
CX_ORDER = 142  # GROUPS * SUIT_WIDTH: cards of each group, strongest first
CX_ORDLEN = CX_ORDER + GROUPS * SUIT_WIDTH  # GROUPS: length of each group's order
CX_ZOB = CX_ORDLEN + GROUPS  # GROUPS * SUIT_WIDTH * MAX_SEATS: key of (group, rank within the group, holder)
CX_ZLEAD = CX_ZOB + GROUPS * SUIT_WIDTH * MAX_SEATS  # MAX_SEATS: key of the leader
CX_SIZE = CX_ZLEAD + MAX_SEATS
KEY_BITS = 57  # bits of a position's key; the 7 above them hold the generation tag

_HASH = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as a signed int64


@njit(cache=True, inline="always")
def _popcount(x):
    count = 0
    while x:
        x &= x - 1
        count += 1
    return count


@njit(cache=True, inline="always")
def _low_bit(x):
    """Index of the lowest set bit of ``x`` (> 0)."""
    i = 0
    while not (x >> i) & 1:
        i += 1
    return i


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
def _count_above(cx, mask, power):
    """Cards of ``mask`` stronger than ``power``."""
    count = 0
    while mask:
        c = _low_bit(mask)
        mask &= mask - 1
        if cx[CX_POW + c] > power:
            count += 1
    return count


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
def _quick_tricks(cx, hands, n, leader, side):
    """Tricks the leader wins by cashing cards that nobody can beat or ruff: a lower bound on
    what the leader's side (counted side or its opponents) takes from this trick on."""
    others = 0
    for s in range(n):
        if s != leader:
            others |= hands[s]
    supers = cx[CX_SUPER]
    if others & supers:
        return 0
    mine = hands[leader]
    count = _popcount(mine & supers)
    trump = cx[CX_TRUMP]
    mine_side = cx[CX_SIDE + leader] == side
    for suit in range(4):
        held = mine & cx[CX_SUIT + suit] & ~supers
        if not held:
            continue
        winners = _count_above(cx, held, _top_power(cx, others & cx[CX_SUIT + suit]))
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
        count += winners
    return count


@njit(cache=True)
def _side_quick_tricks(cx, hands, n, leader, side):
    """Quick tricks of the leader's side: the leader's own (:func:`_quick_tricks`), or a friend's
    after the leader crosses to it, leading a suit whose best card the friend holds above every
    other live card of the suit, with no seat that would ruff it (an opponent, or any seat under
    must-trump, void in the suit and holding a trump). The crossing trick is the friend's first
    quick trick."""
    best = _quick_tricks(cx, hands, n, leader, side)
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
        cross = False
        for suit in range(4):
            mask = cx[CX_SUIT + suit]
            if not hands[leader] & mask or not hands[f] & mask:
                continue
            if _count_above(cx, others & mask, _top_power(cx, hands[f] & mask)):
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
            cross = True
            break
        if cross:
            q = _quick_tricks(cx, hands, n, f, side)
            if q > best:
                best = q
    return best


@njit(cache=True)
def _sure_tricks(cx, hands, n, side, ours):
    """Tricks the counted side (``ours``) or its opponents (not ``ours``) take whatever anyone
    plays: the most trumps one seat of that side holds above every trump of the other side (each
    wins the trick it falls on, one trick per card of one seat). 0 in no-trump and while super
    cards are live."""
    trump = cx[CX_TRUMP]
    if trump < 0:
        return 0
    union = 0
    for s in range(n):
        union |= hands[s]
    if union & cx[CX_SUPER]:
        return 0
    trumps = cx[CX_SUIT + trump]
    theirs = 0
    for s in range(n):
        if (cx[CX_SIDE + s] == side) != ours:
            theirs |= hands[s] & trumps
    top = _top_power(cx, theirs)  # the strongest trump of the other side
    most = 0
    for s in range(n):
        if (cx[CX_SIDE + s] == side) == ours:
            most = max(most, _count_above(cx, hands[s] & trumps, top))
    return most


@njit(cache=True)
def _moves(cx, hands, tcard, leaders, t, k, side, moves, row, first, hist):
    """Writes the representatives of ``seat``'s legal cards (one per class of equivalent cards),
    best first, at ``moves[row:]``, each followed by the bitmask of its class; returns their
    count. A lead tries the class of ``first`` (the table's best move, -1 none) first, then
    the tops of suits, then by ``hist`` (int64[MAX_SEATS * 64], the history of cut-off moves)."""
    n = cx[CX_N]
    leader = leaders[t]
    seat = (leader + k) % n
    base = t * MAX_SEATS
    led = _led(cx, tcard, base, k)
    legal = _legal(cx, hands[seat], led)
    live = 0
    for s in range(n):
        live |= hands[s]
    for i in range(k):
        live |= 1 << tcard[base + i]
    count = 0
    # classes: runs of a suit's order with no live card of another hand between them
    for suit in range(4):
        if not legal & cx[CX_SUIT + suit]:
            continue
        rep = -1
        group = 0
        top = True  # no live card of another hand above the run
        for i in range(cx[CX_ORDLEN + suit]):
            c = cx[CX_ORDER + suit * SUIT_WIDTH + i]
            bit = 1 << c
            if legal & bit:
                if rep < 0:
                    rep = c
                group |= bit
            elif live & bit:
                if rep >= 0:
                    moves[row + 2 * count] = rep
                    moves[row + 2 * count + 1] = group
                    moves[row + 2 * MOVE_WIDTH + count] = 1 if top else 0
                    count += 1
                    rep = -1
                    group = 0
                top = False
        if rep >= 0:
            moves[row + 2 * count] = rep
            moves[row + 2 * count + 1] = group
            moves[row + 2 * MOVE_WIDTH + count] = 1 if top else 0
            count += 1
    other = (legal & ~(cx[CX_SUIT] | cx[CX_SUIT + 1] | cx[CX_SUIT + 2] | cx[CX_SUIT + 3])) | (legal & cx[CX_SUPER])
    while other:
        c = _low_bit(other)
        other &= other - 1
        moves[row + 2 * count] = c
        moves[row + 2 * count + 1] = 1 << c
        moves[row + 2 * MOVE_WIDTH + count] = 0
        count += 1
    # ordering scores, after the moves' row
    scores = moves[row + 2 * MOVE_WIDTH:row + 3 * MOVE_WIDTH]
    mine = cx[CX_SIDE + seat] == side
    if k == 0:
        for m in range(count):
            c = moves[row + 2 * m]
            if first >= 0 and (moves[row + 2 * m + 1] >> first) & 1:
                scores[m] = 1 << 50
            else:
                scores[m] = (cx[CX_POW + c] << 40) + hist[seat * 64 + c]
    else:
        win = _winning_position(cx, tcard, base, k)
        win_seat = (leader + win) % n
        friend_winning = (cx[CX_SIDE + win_seat] == side) == mine
        for m in range(count):
            c = moves[row + 2 * m]
            power = cx[CX_POW + c]
            tcard[base + k] = c
            takes = _winning_position(cx, tcard, base, k + 1) == k
            if friend_winning:
                scores[m] = -power
            elif takes:
                scores[m] = 1000 - power
            else:
                scores[m] = -1000 - power
    # insertion sort, best first
    for i in range(1, count):
        score = scores[i]
        c = moves[row + 2 * i]
        g = moves[row + 2 * i + 1]
        j = i - 1
        while j >= 0 and scores[j] < score:
            scores[j + 1] = scores[j]
            moves[row + 2 * (j + 1)] = moves[row + 2 * j]
            moves[row + 2 * (j + 1) + 1] = moves[row + 2 * j + 1]
            j -= 1
        scores[j + 1] = score
        moves[row + 2 * (j + 1)] = c
        moves[row + 2 * (j + 1) + 1] = g
    return count


@njit(cache=True)
def _key(cx, hands, n, leader, tag):
    """Key of a trick-boundary position: each remaining card by its group, its rank among the
    group's remaining cards and its holder; the leader; the generation tag in the top bits."""
    key = cx[CX_ZLEAD + leader]
    for g in range(GROUPS):
        rank = 0
        for i in range(cx[CX_ORDLEN + g]):
            bit = 1 << cx[CX_ORDER + g * SUIT_WIDTH + i]
            for s in range(n):
                if hands[s] & bit:
                    key ^= cx[CX_ZOB + (g * SUIT_WIDTH + rank) * MAX_SEATS + s]
                    rank += 1
                    break
    return (key & ((1 << KEY_BITS) - 1)) | (tag << KEY_BITS)


@njit(cache=True, inline="always")
def _slot(tt_keys, key):
    """Index of ``key``'s entry in the table, -1 if absent."""
    bucket = 2 * (((key * _HASH) >> 24) & (len(tt_keys) // 2 - 1))
    if tt_keys[bucket] == key:
        return bucket
    if tt_keys[bucket + 1] == key:
        return bucket + 1
    return -1


@njit(cache=True, inline="always")
def _victim(tt_keys, tt_depth, key, depth):
    """Index where a new entry of ``key`` (``depth`` tricks left) goes: the bucket's first entry
    when it is stale or no deeper, else its second."""
    bucket = 2 * (((key * _HASH) >> 24) & (len(tt_keys) // 2 - 1))
    if tt_keys[bucket] >> KEY_BITS != key >> KEY_BITS or tt_depth[bucket] <= depth:
        return bucket
    return bucket + 1


# fields of a search frame (one row of ``frames`` per ply below the root)
(F_T, F_K, F_ALPHA, F_BETA, F_ALPHA0, F_BETA0, F_BEST, F_MAX, F_COUNT, F_M, F_HAND, F_SEAT, F_INDEX, F_KEY, F_WON, F_ROW, F_CARD,
 F_BEST_CARD, F_FIRST) = range(19)
FRAME = 19


@njit(cache=True, inline="always")
def _take(frames, p, value):
    """Folds a move's ``value`` into frame ``p`` (its best value and its window)."""
    if frames[p, F_MAX]:
        if value > frames[p, F_BEST]:
            frames[p, F_BEST] = value
            frames[p, F_BEST_CARD] = frames[p, F_CARD]
            if value > frames[p, F_ALPHA]:
                frames[p, F_ALPHA] = value
    else:
        if value < frames[p, F_BEST]:
            frames[p, F_BEST] = value
            frames[p, F_BEST_CARD] = frames[p, F_CARD]
            if value < frames[p, F_BETA]:
                frames[p, F_BETA] = value


@njit(cache=True)
def _search(cx, hands, tcard, leaders, t0, k0, side, misere, alpha, beta, moves, frames, hist, tt_keys, tt_lo, tt_hi, tt_depth, tt_move, tag, nodes,
            only):
    """Fail-soft alpha-beta value of the position at position ``k0`` of trick ``t0``, the seat
    to play choosing among its legal cards in ``only`` (a bitmask; -1 for all, as every position
    below the root has; the table is neither read nor written where it restricts). An explicit
    stack of ``frames`` (int64[MAX_PLIES + 1, FRAME]) stands for recursion, which numba cannot
    cache."""
    n = cx[CX_N]
    p = 0
    frames[0, F_T] = t0
    frames[0, F_K] = k0
    frames[0, F_ALPHA] = alpha
    frames[0, F_BETA] = beta
    frames[0, F_WON] = 0
    entering = True
    result = 0
    while True:
        returning = False
        if entering:
            entering = False
            nodes[0] += 1
            t = frames[p, F_T]
            k = frames[p, F_K]
            a = frames[p, F_ALPHA]
            b = frames[p, F_BETA]
            leader = leaders[t]
            frames[p, F_INDEX] = -1
            frames[p, F_FIRST] = -1
            if k == 0 and (p > 0 or only == -1):
                left = _popcount(hands[leader])
                if left == 1:  # the last trick: every card is forced
                    for i in range(n):
                        tcard[t * MAX_SEATS + i] = hands[(leader + i) % n]
                        tcard[t * MAX_SEATS + i] = _low_bit(tcard[t * MAX_SEATS + i])
                    winner = (leader + _winning_position(cx, tcard, t * MAX_SEATS, n)) % n
                    result = 1 if cx[CX_SIDE + winner] == side else 0
                    returning = True
            if not returning and k == 0 and (p > 0 or only == -1):
                key = _key(cx, hands, n, leader, tag)
                index = _slot(tt_keys, key)
                lo = 0
                hi = left
                if index >= 0:
                    lo = np.int64(tt_lo[index])
                    hi = np.int64(tt_hi[index])
                    first = tt_move[index]
                    if first >= 0 and (hands[leader] >> first) & 1:
                        frames[p, F_FIRST] = first
                else:
                    index = _victim(tt_keys, tt_depth, key, left)
                mine = _sure_tricks(cx, hands, n, side, True)
                theirs = _sure_tricks(cx, hands, n, side, False)
                if not misere:  # the leader cashes its quick tricks only when its side wants them
                    quick = _side_quick_tricks(cx, hands, n, leader, side)
                    if cx[CX_SIDE + leader] == side:
                        mine = max(mine, quick)
                    else:
                        theirs = max(theirs, quick)
                if mine > lo:
                    lo = mine
                if left - theirs < hi:
                    hi = left - theirs
                if lo >= b or lo == hi:
                    result = lo
                    returning = True
                elif hi <= a:
                    result = hi
                    returning = True
                else:
                    if lo > a:
                        a = lo
                    if hi < b:
                        b = hi
                    frames[p, F_ALPHA] = a
                    frames[p, F_BETA] = b
                    frames[p, F_INDEX] = index
                    frames[p, F_KEY] = key
            if not returning:
                seat = (leader + k) % n
                maximise = (cx[CX_SIDE + seat] == side) != misere
                frames[p, F_ALPHA0] = a
                frames[p, F_BETA0] = b
                frames[p, F_MAX] = maximise
                frames[p, F_BEST] = -1 if maximise else 1 << 20
                frames[p, F_BEST_CARD] = -1
                row = (t * MAX_SEATS + k) * ROW
                frames[p, F_ROW] = row
                frames[p, F_COUNT] = _moves(cx, hands, tcard, leaders, t, k, side, moves, row, frames[p, F_FIRST], hist)
                frames[p, F_M] = 0
                frames[p, F_SEAT] = seat
                frames[p, F_HAND] = hands[seat]
        if not returning:
            # the next move of frame p, or its end
            t = frames[p, F_T]
            k = frames[p, F_K]
            seat = frames[p, F_SEAT]
            hand = frames[p, F_HAND]
            row = frames[p, F_ROW]
            pushed = False
            while frames[p, F_M] < frames[p, F_COUNT] and frames[p, F_ALPHA] < frames[p, F_BETA]:
                card = moves[row + 2 * frames[p, F_M]]
                frames[p, F_M] += 1
                if p == 0 and not (only >> card) & 1:
                    continue
                hands[seat] = hand & ~(1 << card)
                frames[p, F_CARD] = card
                base = t * MAX_SEATS
                tcard[base + k] = card
                if k + 1 < n:
                    frames[p, F_WON] = 0
                    q = p + 1
                    frames[q, F_T] = t
                    frames[q, F_K] = k + 1
                    frames[q, F_ALPHA] = frames[p, F_ALPHA]
                    frames[q, F_BETA] = frames[p, F_BETA]
                    pushed = True
                    break
                winner = (leaders[t] + _winning_position(cx, tcard, base, n)) % n
                won = 1 if cx[CX_SIDE + winner] == side else 0
                if hands[winner] == 0:
                    hands[seat] = hand
                    _take(frames, p, won)
                    continue
                leaders[t + 1] = winner
                frames[p, F_WON] = won
                q = p + 1
                frames[q, F_T] = t + 1
                frames[q, F_K] = 0
                frames[q, F_ALPHA] = frames[p, F_ALPHA] - won
                frames[q, F_BETA] = frames[p, F_BETA] - won
                pushed = True
                break
            if pushed:
                p += 1
                entering = True
                continue
            # frame p is done: store its bounds
            best = frames[p, F_BEST]
            index = frames[p, F_INDEX]
            if frames[p, F_BEST_CARD] >= 0 and frames[p, F_ALPHA] >= frames[p, F_BETA]:
                left = _popcount(hand) + (1 if k else 0)
                hist[seat * 64 + frames[p, F_BEST_CARD]] += left * left
            if index >= 0:
                key = frames[p, F_KEY]
                left = _popcount(hands[leaders[t]])
                lo = 0
                hi = left
                if tt_keys[index] == key:
                    lo = np.int64(tt_lo[index])
                    hi = np.int64(tt_hi[index])
                if best <= frames[p, F_ALPHA0]:
                    if best < hi:
                        hi = best
                elif best >= frames[p, F_BETA0]:
                    if best > lo:
                        lo = best
                else:
                    lo = best
                    hi = best
                tt_keys[index] = key
                tt_lo[index] = lo
                tt_hi[index] = hi
                tt_depth[index] = _popcount(hands[leaders[t]])
                tt_move[index] = frames[p, F_BEST_CARD]
            result = best
        # return result to the parent frame
        if p == 0:
            return result
        p -= 1
        hands[frames[p, F_SEAT]] = frames[p, F_HAND]
        _take(frames, p, result + frames[p, F_WON])


@njit(cache=True)
def _mtd(cx, hands, tcard, leaders, k, side, misere, only, guess, total, moves, frames, hist, tt_keys, tt_lo, tt_hi, tt_depth, tt_move, tag, nodes):
    """Exact value of the root position (trick 0, position ``k``) with the seat to play choosing
    among ``only``, by zero-window tests from ``guess`` (MTD(f)); the value lies in [0, total]."""
    lo = 0
    hi = total
    g = min(max(guess, lo), hi)
    while lo < hi:
        b = g + 1 if g == lo else g
        g = _search(cx, hands, tcard, leaders, 0, k, side, misere, b - 1, b, moves, frames, hist, tt_keys, tt_lo, tt_hi, tt_depth, tt_move, tag, nodes, only)
        if g < b:
            hi = g
        else:
            lo = g
    return lo


@njit(cache=True)
def _root(cx, hands, trick, leader):
    """The search's trick arrays of a root position, its position in the trick, the seat to play
    and the tricks left (the current one included)."""
    tcard = np.zeros(MAX_TRICKS * MAX_SEATS, dtype=np.int64)
    leaders = np.zeros(MAX_TRICKS, dtype=np.int64)
    k = len(trick)
    for i in range(k):
        tcard[i] = trick[i]
    leaders[0] = leader
    seat = (leader + k) % cx[CX_N]
    total = _popcount(hands[seat]) + (1 if k else 0)
    return tcard, leaders, k, seat, total


@njit(cache=True)
def card_values(cx, hands, trick, leader, misere, moves, frames, hist, tt_keys, tt_lo, tt_hi, tt_depth, tt_move, tag, nodes, out):
    """Values of every legal card of the seat to play, written to ``out`` (int64[64], -1 for a
    card that is not legal): the tricks its side takes from the current trick on.

    Args:
        cx: the context array (:func:`context_array`).
        hands: int64[6], each seat's remaining cards (the trick's cards removed).
        trick: int64 array of the cards played to the current trick, in order.
        leader: the seat that led (or leads) the current trick.
        misere: the seat's side minimises its tricks.
        moves, frames, hist, tt_keys, tt_lo, tt_hi, tt_depth, tt_move: scratch, stack, history and
            table (module docstring); ``tag`` 1..127.
        nodes: int64[1], incremented by the positions searched.
    """
    tcard, leaders, k, seat, total = _root(cx, hands, trick, leader)
    side = cx[CX_SIDE + seat]
    row = k * ROW
    count = _moves(cx, hands, tcard, leaders, 0, k, side, moves, row, -1, hist)
    reps = moves[row:row + 2 * count].copy()
    for i in range(64):
        out[i] = -1
    guess = total // 2
    for m in range(count):
        card = reps[2 * m]
        value = _mtd(cx, hands, tcard, leaders, k, side, misere, 1 << card, guess, total, moves, frames, hist, tt_keys, tt_lo, tt_hi, tt_depth, tt_move, tag,
                     nodes)
        guess = value
        group = reps[2 * m + 1]
        while group:
            c = _low_bit(group)
            group &= group - 1
            out[c] = value


@njit(cache=True)
def solve(cx, hands, trick, leader, side, misere, moves, frames, hist, tt_keys, tt_lo, tt_hi, tt_depth, tt_move, tag, nodes):
    """Tricks ``side`` takes from the current trick on (arguments as :func:`card_values`)."""
    tcard, leaders, k, seat, total = _root(cx, hands, trick, leader)
    return _mtd(cx, hands, tcard, leaders, k, side, misere, -1, total // 2, total, moves, frames, hist, tt_keys, tt_lo, tt_hi, tt_depth, tt_move, tag,
                nodes)


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
    keys = np.random.default_rng(0x5EED).integers(1, 1 << 62, size=GROUPS * SUIT_WIDTH * MAX_SEATS + MAX_SEATS, dtype=np.int64)
    cx[CX_ZOB:CX_SIZE] = keys
    cx[CX_TRUMP] = -1 if trump is None else trump
    cx[CX_MUST] = int(bool(must_trump))
    cx[CX_SUPER] = super_mask
    cx[CX_N] = len(side_of)
    cx[CX_SIDE:CX_SIDE + len(side_of)] = side_of
    return cx
