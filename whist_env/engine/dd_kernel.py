"""Numba kernels of the compiled double-dummy solver (:mod:`whist_env.engine.compiled_double_dummy`).

Plain functions over int64 arrays, compiled on first use and cached on disk (``cache=True``):

* ``cx`` (int64[CX_SIZE]): the hand's ranking and seating, written by :func:`context_array`;
* ``hands`` (int64[6]): each seat's remaining cards as a bitmask of card ids 0..53;
* ``tcard`` (int64[MAX_TRICKS * 6]): the card played at position k of trick t, ``tcard[6 t + k]``;
* ``leaders`` (int64[MAX_TRICKS]): the seat that leads trick t;
* ``moves`` (int64[MAX_PLIES * ROW]): scratch space, one row per ply;
* ``frames`` (int64[MAX_PLIES + 1, FRAME]): the search's explicit stack;
* ``hist`` (int64[MAX_SEATS * 64]): the history of moves that cut off, by seat and card;
* ``tt_b`` (int64[rows, 5]), ``tt_e`` (int64[entries, ENTRY]), ``tt_n`` (int64[1]): the
  transposition table of partition search. A row of ``tt_b`` stands for one shape of position at
  a trick boundary: each seat's length in each ranking group and the leader (columns 0-2: the
  lengths, 3: ``tag * 8 + leader + 1``, 4: its first entry, -1 none; open addressing). Its entries
  (``tt_e``, a linked list, ``tt_n`` of them used) each hold a pattern, the holders of the top
  cards of each group down to the weakest card the stored value rests on, with the bounds on the
  value and the best lead. A position reads the bounds of every entry whose pattern it matches.
  The generation ``tag`` is new for each solver call, so a call never reads another call's rows
  and the table needs no clearing between calls.

The value of a position is the number of tricks the counted side takes from the current trick
(included) to the end of the hand; that side maximises it (minimises it with ``misere``), every
other seat does the opposite (the paranoid reduction for more than two sides). Search:
fail-soft alpha-beta over single card plays, driven by zero-window tests (MTD(f)); the table holds
lower and upper bounds at trick boundaries under the pattern of the cards they rest on (partition
search, Ginsberg 2001; the winning ranks of DDS, Haglund and Hein), and the best lead found there; quick tricks (the
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
PATTERN_CARDS = 20  # cards of a group a stored pattern reaches at most (3 bits of holder each)
PROBES = 16  # table rows probed for a position's before it goes unstored

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
def _quick_tricks(cx, hands, n, leader, side):
    """Tricks the leader wins by cashing cards that nobody can beat or ruff: a lower bound on
    what the leader's side (counted side or its opponents) takes from this trick on. Returns
    ``(tricks, relevant)``: the bitmask of the cards whose ranks the bound rests on (the cashed
    winners; the rest is suit lengths)."""
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
    """Tricks the counted side (``ours``) or its opponents (not ``ours``) take whatever anyone
    plays: the most trumps one seat of that side holds above every trump of the other side (each
    wins the trick it falls on, one trick per card of one seat). 0 in no-trump and while super
    cards are live. Returns ``(tricks, relevant)`` as :func:`_quick_tricks` (the side's trumps
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
def _group_of(cx, c):
    """Ranking group of card ``c``: its effective suit 0..3, 4 for a super card, 5 for the others."""
    if (cx[CX_SUPER] >> c) & 1:
        return 4
    s = cx[CX_EFF + c]
    return s if s >= 0 else 5


@njit(cache=True)
def _trick_relevant(cx, tcard, base, n, win):
    """The winning card of a finished trick (position ``win``) as a bitmask when it won by its
    rank (another card of its group fell on the trick), else 0 (it won by suit: a ruff, the only
    card of the led suit)."""
    w = tcard[base + win]
    g = _group_of(cx, w)
    for i in range(n):
        if i != win and _group_of(cx, tcard[base + i]) == g:
            return np.int64(1) << w
    return np.int64(0)


@njit(cache=True)
def _pattern(cx, hands, n, frames, p):
    """Writes the trick-boundary position's shape into frame ``p``: for each ranking group, the
    holders of its remaining cards, strongest first, 3 bits each (the top PATTERN_CARDS), at
    ``F_PAT + g``; each seat's length in each group, 5 bits each, six seats a group, two groups a
    word, at ``F_LEN..F_LEN + 2``."""
    for w in range(3):
        frames[p, F_LEN + w] = 0
    for g in range(GROUPS):
        pattern = np.int64(0)
        lengths = np.int64(0)
        j = 0
        for i in range(cx[CX_ORDLEN + g]):
            bit = np.int64(1) << cx[CX_ORDER + g * SUIT_WIDTH + i]
            for s in range(n):
                if hands[s] & bit:
                    if j < PATTERN_CARDS:
                        pattern |= np.int64(s) << (3 * j)
                    j += 1
                    lengths += np.int64(1) << (5 * s)
                    break
        frames[p, F_PAT + g] = pattern
        frames[p, F_LEN + g // 2] |= lengths << (30 * (g % 2))


@njit(cache=True, inline="always")
def _pattern_mask(j):
    return (np.int64(1) << (3 * j)) - 1


@njit(cache=True)
def _depths(cx, hands, n, relevant):
    """How deep the stored pattern of each group reaches: 1 + the rank, among the group's
    remaining cards, of its weakest relevant card (0: no card of the group is relevant), 5 bits
    a group; -1 when a group's reaches below PATTERN_CARDS (the position is then not stored)."""
    live = np.int64(0)
    for s in range(n):
        live |= hands[s]
    depths = np.int64(0)
    for g in range(GROUPS):
        j = 0
        index = 0
        for i in range(cx[CX_ORDLEN + g]):
            c = cx[CX_ORDER + g * SUIT_WIDTH + i]
            if (live >> c) & 1:
                index += 1
                if (relevant >> c) & 1:
                    j = index
        if j > PATTERN_CARDS:
            return np.int64(-1)
        depths |= np.int64(j) << (5 * g)
    return depths


@njit(cache=True)
def _top_cards(cx, hands, n, depths):
    """The cards a stored pattern of ``depths`` covers in this position: the top ``j`` remaining
    cards of each group (a bitmask)."""
    live = np.int64(0)
    for s in range(n):
        live |= hands[s]
    out = np.int64(0)
    for g in range(GROUPS):
        j = (depths >> (5 * g)) & 31
        count = 0
        for i in range(cx[CX_ORDLEN + g]):
            if count >= j:
                break
            c = cx[CX_ORDER + g * SUIT_WIDTH + i]
            if (live >> c) & 1:
                out |= np.int64(1) << c
                count += 1
    return out


@njit(cache=True)
def _bucket(tt_b, frames, p, leader, tag):
    """Row of ``tt_b`` holding the entries of the position's lengths and leader in this
    generation (``tag``), created empty when absent; -1 when its probe run is full."""
    l0 = frames[p, F_LEN]
    l1 = frames[p, F_LEN + 1]
    l2 = frames[p, F_LEN + 2]
    owner = tag * 8 + leader + 1
    size = tt_b.shape[0]
    i = (((l0 ^ (l1 * 1000003) ^ (l2 * 998244353) ^ owner) * _HASH) >> 20) & (size - 1)
    for _ in range(PROBES):
        if tt_b[i, 3] == owner and tt_b[i, 0] == l0 and tt_b[i, 1] == l1 and tt_b[i, 2] == l2:
            return i
        if tt_b[i, 3] >> 3 != tag:  # a row of an earlier generation, or never used: the position's is absent
            tt_b[i, 0] = l0
            tt_b[i, 1] = l1
            tt_b[i, 2] = l2
            tt_b[i, 3] = owner
            tt_b[i, 4] = -1
            return i
        i = (i + 1) & (size - 1)
    return -1


@njit(cache=True)
def _matches(tt_e, e, frames, p):
    depths = tt_e[e, E_DEPTHS]
    for g in range(GROUPS):
        j = (depths >> (5 * g)) & 31
        if j and (frames[p, F_PAT + g] & _pattern_mask(j)) != tt_e[e, g]:
            return False
    return True


@njit(cache=True)
def _probe(tt_b, tt_e, bucket, frames, p, left):
    """Bounds of the position from every stored pattern it matches: ``(lo, hi, lo_depths,
    hi_depths, move)``, the depths of the patterns that gave the bounds (-1: none: the trivial
    0 and ``left``) and a stored best card (-1 none)."""
    lo = 0
    hi = left
    lo_depths = np.int64(-1)
    hi_depths = np.int64(-1)
    move = -1
    e = tt_b[bucket, 4]
    while e >= 0:
        if _matches(tt_e, e, frames, p):
            info = tt_e[e, E_INFO]
            e_lo = info & 255
            e_hi = (info >> 8) & 255
            if e_lo > lo:
                lo = e_lo
                lo_depths = tt_e[e, E_DEPTHS]
            if e_hi < hi:
                hi = e_hi
                hi_depths = tt_e[e, E_DEPTHS]
            if move < 0:
                move = (info >> 16) - 1
        e = tt_e[e, E_NEXT]
    return lo, hi, lo_depths, hi_depths, move


@njit(cache=True)
def _store(cx, hands, n, tt_b, tt_e, tt_n, bucket, frames, p, relevant, lo, hi, move):
    """Stores the bounds ``lo``, ``hi`` of the position of frame ``p`` under the pattern of its
    ``relevant`` cards (every position with the same lengths, leader and holders of those cards
    and the ones above them has the same bounds), tightening an entry of the same pattern."""
    depths = _depths(cx, hands, n, relevant)
    if depths < 0:
        return
    e = tt_b[bucket, 4]
    while e >= 0:
        if tt_e[e, E_DEPTHS] == depths and _matches(tt_e, e, frames, p):
            info = tt_e[e, E_INFO]
            lo = max(lo, info & 255)
            hi = min(hi, (info >> 8) & 255)
            tt_e[e, E_INFO] = lo | (hi << 8) | ((move + 1) << 16)
            return
        e = tt_e[e, E_NEXT]
    e = tt_n[0]
    if e >= tt_e.shape[0]:
        return  # the pool is full: this generation stores no more
    tt_n[0] = e + 1
    for g in range(GROUPS):
        tt_e[e, g] = frames[p, F_PAT + g] & _pattern_mask((depths >> (5 * g)) & 31)
    tt_e[e, E_DEPTHS] = depths
    tt_e[e, E_INFO] = lo | (hi << 8) | ((move + 1) << 16)
    tt_e[e, E_NEXT] = tt_b[bucket, 4]
    tt_b[bucket, 4] = e


@njit(cache=True)
def _close_classes(cx, moves, row, count, relevant):
    """``relevant`` with every class of equivalent cards searched at a ply (its moves at
    ``moves[row:]``) that straddles the weakest relevant card of its group taken in whole: the
    class was searched by one card, which stands for the others only where they stay equivalent,
    so a stored pattern must reach below all of them or above all of them."""
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


# fields of a search frame (one row of ``frames`` per ply below the root)
(F_T, F_K, F_ALPHA, F_BETA, F_ALPHA0, F_BETA0, F_BEST, F_MAX, F_COUNT, F_M, F_HAND, F_SEAT, F_BUCKET, F_WON, F_ROW, F_CARD,
 F_BEST_CARD, F_FIRST, F_REL, F_TREL) = range(20)
F_PAT = 20  # GROUPS fields: the position's pattern (:func:`_pattern`)
F_LEN = F_PAT + GROUPS  # 3 fields: its lengths
FRAME = F_LEN + 3
# columns of a table entry: the pattern (GROUPS), its depths, lo | hi << 8 | (move + 1) << 16, the next entry
E_DEPTHS = GROUPS
E_INFO = GROUPS + 1
E_NEXT = GROUPS + 2
ENTRY = GROUPS + 3


@njit(cache=True, inline="always")
def _take(frames, p, value, relevant):
    """Folds a move's ``value`` into frame ``p`` (its best value and its window) and the cards
    its value rests on into the frame's: a cut-off rests on the move alone, any other value on
    every move searched."""
    if frames[p, F_MAX]:
        if value >= frames[p, F_BETA]:
            frames[p, F_REL] = relevant
        else:
            frames[p, F_REL] |= relevant
        if value > frames[p, F_BEST]:
            frames[p, F_BEST] = value
            frames[p, F_BEST_CARD] = frames[p, F_CARD]
            if value > frames[p, F_ALPHA]:
                frames[p, F_ALPHA] = value
    else:
        if value <= frames[p, F_ALPHA]:
            frames[p, F_REL] = relevant
        else:
            frames[p, F_REL] |= relevant
        if value < frames[p, F_BEST]:
            frames[p, F_BEST] = value
            frames[p, F_BEST_CARD] = frames[p, F_CARD]
            if value < frames[p, F_BETA]:
                frames[p, F_BETA] = value


@njit(cache=True)
def _search(cx, hands, tcard, leaders, t0, k0, side, misere, alpha, beta, moves, frames, hist, tt_b, tt_e, tt_n, tag, nodes, only):
    """Fail-soft alpha-beta value of the position at position ``k0`` of trick ``t0``, the seat
    to play choosing among its legal cards in ``only`` (a bitmask; -1 for all, as every position
    below the root has; the table is neither read nor written where it restricts). An explicit
    stack of ``frames`` (int64[MAX_PLIES + 1, FRAME]) stands for recursion, which numba cannot
    cache.

    Partition search (Ginsberg 2001; DDS's winning ranks): each value comes back with the
    bitmask of the cards whose ranks it rests on: the winning card of every trick it won by rank,
    the cards of the bounds it was cut off by. A trick boundary stores its bounds under the
    pattern of those cards (:func:`_store`), which every position of the same suit lengths and
    leader, with the same holders of the pattern's cards, shares."""
    n = cx[CX_N]
    p = 0
    frames[0, F_T] = t0
    frames[0, F_K] = k0
    frames[0, F_ALPHA] = alpha
    frames[0, F_BETA] = beta
    frames[0, F_WON] = 0
    entering = True
    result = 0
    relevant = np.int64(0)  # the cards ``result`` rests on
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
            frames[p, F_BUCKET] = -1
            frames[p, F_FIRST] = -1
            if k == 0 and (p > 0 or only == -1):
                left = _popcount(hands[leader])
                if left == 1:  # the last trick: every card is forced
                    base = t * MAX_SEATS
                    for i in range(n):
                        tcard[base + i] = _low_bit(hands[(leader + i) % n])
                    win = _winning_position(cx, tcard, base, n)
                    result = 1 if cx[CX_SIDE + (leader + win) % n] == side else 0
                    relevant = _trick_relevant(cx, tcard, base, n, win)
                    returning = True
            if not returning and k == 0 and (p > 0 or only == -1):
                _pattern(cx, hands, n, frames, p)
                bucket = _bucket(tt_b, frames, p, leader, tag)
                lo = 0
                hi = left
                lo_depths = np.int64(-1)
                hi_depths = np.int64(-1)
                if bucket >= 0:
                    lo, hi, lo_depths, hi_depths, first = _probe(tt_b, tt_e, bucket, frames, p, left)
                    if first >= 0 and (hands[leader] >> first) & 1:
                        frames[p, F_FIRST] = first
                lo_rel = np.int64(0)
                hi_rel = np.int64(0)
                mine, mine_rel = _sure_tricks(cx, hands, n, side, True)
                theirs, theirs_rel = _sure_tricks(cx, hands, n, side, False)
                if not misere:  # the leader cashes its quick tricks only when its side wants them
                    quick, quick_rel = _side_quick_tricks(cx, hands, n, leader, side)
                    if cx[CX_SIDE + leader] == side:
                        if quick > mine:
                            mine, mine_rel = quick, quick_rel
                    elif quick > theirs:
                        theirs, theirs_rel = quick, quick_rel
                if mine > lo:
                    lo, lo_depths, lo_rel = mine, np.int64(-1), mine_rel
                if left - theirs < hi:
                    hi, hi_depths, hi_rel = left - theirs, np.int64(-1), theirs_rel
                if lo >= b or lo == hi or hi <= a:
                    relevant = np.int64(0)
                    if lo >= b or lo == hi:
                        result = lo
                        relevant |= lo_rel
                        if lo_depths >= 0:
                            relevant |= _top_cards(cx, hands, n, lo_depths)
                    else:
                        result = hi
                    if hi <= a or lo == hi:
                        relevant |= hi_rel
                        if hi_depths >= 0:
                            relevant |= _top_cards(cx, hands, n, hi_depths)
                    returning = True
                else:
                    if lo > a:
                        a = lo
                    if hi < b:
                        b = hi
                    frames[p, F_ALPHA] = a
                    frames[p, F_BETA] = b
                    frames[p, F_BUCKET] = bucket
            if not returning:
                seat = (leader + k) % n
                maximise = (cx[CX_SIDE + seat] == side) != misere
                frames[p, F_ALPHA0] = a
                frames[p, F_BETA0] = b
                frames[p, F_MAX] = maximise
                frames[p, F_BEST] = -1 if maximise else 1 << 20
                frames[p, F_BEST_CARD] = -1
                frames[p, F_REL] = 0
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
                    frames[p, F_TREL] = 0
                    q = p + 1
                    frames[q, F_T] = t
                    frames[q, F_K] = k + 1
                    frames[q, F_ALPHA] = frames[p, F_ALPHA]
                    frames[q, F_BETA] = frames[p, F_BETA]
                    pushed = True
                    break
                win = _winning_position(cx, tcard, base, n)
                winner = (leaders[t] + win) % n
                won = 1 if cx[CX_SIDE + winner] == side else 0
                trick_rel = _trick_relevant(cx, tcard, base, n, win)
                if hands[winner] == 0:
                    hands[seat] = hand
                    _take(frames, p, won, trick_rel)
                    continue
                leaders[t + 1] = winner
                frames[p, F_WON] = won
                frames[p, F_TREL] = trick_rel
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
            relevant = frames[p, F_REL]
            if frames[p, F_ALPHA] < frames[p, F_BETA]:  # no cut-off: the value rests on every move, each class by one card
                relevant = _close_classes(cx, moves, row, frames[p, F_COUNT], relevant)
            if frames[p, F_BEST_CARD] >= 0 and frames[p, F_ALPHA] >= frames[p, F_BETA]:
                left = _popcount(hand) + (1 if k else 0)
                hist[seat * 64 + frames[p, F_BEST_CARD]] += left * left
            bucket = frames[p, F_BUCKET]
            if bucket >= 0:
                left = _popcount(hands[leaders[t]])
                lo = 0
                hi = left
                if best <= frames[p, F_ALPHA0]:
                    hi = best
                elif best >= frames[p, F_BETA0]:
                    lo = best
                else:
                    lo = best
                    hi = best
                _store(cx, hands, n, tt_b, tt_e, tt_n, bucket, frames, p, relevant, lo, hi, frames[p, F_BEST_CARD])
            result = best
        # return result to the parent frame
        if p == 0:
            return result
        p -= 1
        hands[frames[p, F_SEAT]] = frames[p, F_HAND]
        relevant |= frames[p, F_TREL]
        _take(frames, p, result + frames[p, F_WON], relevant)
        relevant = np.int64(0)


@njit(cache=True)
def _mtd(cx, hands, tcard, leaders, k, side, misere, only, guess, total, moves, frames, hist, tt_b, tt_e, tt_n, tag, nodes):
    """Exact value of the root position (trick 0, position ``k``) with the seat to play choosing
    among ``only``, by zero-window tests from ``guess`` (MTD(f)); the value lies in [0, total]."""
    lo = 0
    hi = total
    g = min(max(guess, lo), hi)
    while lo < hi:
        b = g + 1 if g == lo else g
        g = _search(cx, hands, tcard, leaders, 0, k, side, misere, b - 1, b, moves, frames, hist, tt_b, tt_e, tt_n, tag, nodes, only)
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
def card_values(cx, hands, trick, leader, misere, moves, frames, hist, tt_b, tt_e, tt_n, tag, nodes, out):
    """Values of every legal card of the seat to play, written to ``out`` (int64[64], -1 for a
    card that is not legal): the tricks its side takes from the current trick on.

    Args:
        cx: the context array (:func:`context_array`).
        hands: int64[6], each seat's remaining cards (the trick's cards removed).
        trick: int64 array of the cards played to the current trick, in order.
        leader: the seat that led (or leads) the current trick.
        misere: the seat's side minimises its tricks.
        moves, frames, hist: scratch, stack and history (module docstring).
        tt_b, tt_e, tt_n: the table (module docstring); ``tag`` >= 1, new for each call (entries
            of other tags are never read; ``tt_n`` is reset here).
        nodes: int64[1], incremented by the positions searched.
    """
    tt_n[0] = 0
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
        value = _mtd(cx, hands, tcard, leaders, k, side, misere, np.int64(1) << card, guess, total, moves, frames, hist, tt_b, tt_e, tt_n,
                     tag, nodes)
        guess = value
        group = reps[2 * m + 1]
        while group:
            c = _low_bit(group)
            group &= group - 1
            out[c] = value


@njit(cache=True)
def solve(cx, hands, trick, leader, side, misere, moves, frames, hist, tt_b, tt_e, tt_n, tag, nodes):
    """Tricks ``side`` takes from the current trick on (arguments as :func:`card_values`)."""
    tt_n[0] = 0
    tcard, leaders, k, seat, total = _root(cx, hands, trick, leader)
    return _mtd(cx, hands, tcard, leaders, k, side, misere, -1, total // 2, total, moves, frames, hist, tt_b, tt_e, tt_n, tag, nodes)


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
