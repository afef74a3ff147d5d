"""The transposition table of the double-dummy kernels (DDS's TransTable*.cpp, in the form of
Ginsberg's partition search): bounds on the value of positions at trick boundaries, each stored
under the pattern of the cards it rests on, so that one entry serves every position that matches.

* ``tt_b`` (int64[rows, BUCKET], rows a power of two): one row ("bucket") per shape of position: each
  seat's length in each ranking group and the leader (columns ``B_LEN..B_LEN + 2``: the lengths,
  as :func:`_pattern` packs them; ``B_OWNER``: ``tag * 8 + leader + 1``; ``B_FIRST``: its first
  entry, -1 none; ``B_COUNT``: its entries, LIST_CAP at most). Open addressing, ``PROBES`` rows at
  most from the hashed one.
* ``tt_e`` (int64[entries, ENTRY], ``counters[C_USED]`` of them in use): each bucket's entries, a
  linked list (``E_NEXT``): a pattern (columns ``0..GROUPS - 1``: the holders of the top cards of
  each group down to the weakest card the value rests on, 3 bits a card), how deep it reaches
  (``E_DEPTHS``), and ``E_INFO`` = ``lo | hi << 8 | (best lead + 1) << 16``. A position reads the
  bounds of the entries whose pattern it matches, from the first until they decide its search window;
  the entry that decided moves to the front of its list. A store into a full list replaces its last
  entry (entries that decide a probe move to the front, so the last is one that has not lately), so a list stays short enough to read at every trick boundary
  (uncapped, a no-trump deal of DDS's list100 read 384 entries a store on average).

The generation ``tag`` is new for each solver call, so a call never reads another call's rows and
the table needs no clearing between calls. A position's pattern and lengths lie in its search
frame (``frames[p, F_PAT:]``, ``frames[p, F_LEN:]``, :mod:`~whist_env.engine.dd_context`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from whist_env.engine.dd_context import C_USED, CX_ORDER, CX_ORDLEN, F_ALPHA, F_BETA, F_FIRST, F_LEN, F_PAT, GROUPS, SUIT_WIDTH

PATTERN_CARDS = 20  # cards of a group a stored pattern reaches at most (3 bits of holder each)
PROBES = 16  # table rows probed for a position's before it goes unstored
# columns of a bucket (a row of ``tt_b``): the lengths (3), the owner (generation and leader), the first entry
B_LEN = 0
B_OWNER = 3
B_FIRST = 4
B_COUNT = 5
BUCKET = 6
LIST_CAP = 256  # entries of one bucket at most (DDS's TransTableL caps its blocks likewise)
# columns of a table entry: the pattern (GROUPS), its depths, lo | hi << 8 | (move + 1) << 16, the next entry
E_DEPTHS = GROUPS
E_INFO = GROUPS + 1
E_NEXT = GROUPS + 2
ENTRY = GROUPS + 3

_HASH = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as a signed int64


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
    """The bits of the first ``j`` cards of a group's pattern (3 bits a card)."""
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
        if tt_b[i, B_OWNER] == owner and tt_b[i, B_LEN] == l0 and tt_b[i, B_LEN + 1] == l1 and tt_b[i, B_LEN + 2] == l2:
            return i
        if tt_b[i, B_OWNER] >> 3 != tag:  # a row of an earlier generation, or never used: the position's is absent
            tt_b[i, B_LEN] = l0
            tt_b[i, B_LEN + 1] = l1
            tt_b[i, B_LEN + 2] = l2
            tt_b[i, B_OWNER] = owner
            tt_b[i, B_FIRST] = -1
            tt_b[i, B_COUNT] = 0
            return i
        i = (i + 1) & (size - 1)
    return -1


@njit(cache=True)
def _matches(tt_e, e, frames, p):
    """Whether the position of frame ``p`` matches the pattern of entry ``e`` of ``tt_e``: the
    same holders of the top cards of each group, as deep as the entry's pattern reaches."""
    depths = tt_e[e, E_DEPTHS]
    for g in range(GROUPS):
        j = (depths >> (5 * g)) & 31
        if j and (frames[p, F_PAT + g] & _pattern_mask(j)) != tt_e[e, g]:
            return False
    return True


@njit(cache=True)
def _probe(tt_b, tt_e, bucket, frames, p, left, alpha, beta):
    """Bounds of the position from the stored patterns it matches, read until they decide the
    window (``alpha``, ``beta``) or meet: ``(lo, hi, lo_depths, hi_depths, move)``, the depths of
    the patterns that gave the bounds (-1: none: the trivial 0 and ``left``) and a stored best
    card (-1 none)."""
    lo = 0
    hi = left
    lo_depths = np.int64(-1)
    hi_depths = np.int64(-1)
    move = -1
    e = tt_b[bucket, B_FIRST]
    prev = np.int64(-1)
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
            if lo >= beta or hi <= alpha or lo == hi:  # decided: no later entry can change the search
                if prev >= 0:  # the deciding entry moves to the front, where the next probe reads it first
                    tt_e[prev, E_NEXT] = tt_e[e, E_NEXT]
                    tt_e[e, E_NEXT] = tt_b[bucket, B_FIRST]
                    tt_b[bucket, B_FIRST] = e
                break
        prev = e
        e = tt_e[e, E_NEXT]
    return lo, hi, lo_depths, hi_depths, move


@njit(cache=True)
def _store(cx, hands, n, tt_b, tt_e, counters, bucket, frames, p, relevant, lo, hi, move):
    """Stores the bounds ``lo``, ``hi`` and best lead ``move`` of the trick-boundary position of
    frame ``p`` (its row ``bucket`` of ``tt_b``) under the pattern of its ``relevant`` cards (a
    bitmask: every position with the same lengths, leader and holders of those cards and the ones
    above them has the same bounds: partition search), tightening an entry of the same pattern
    (DDS's table store). ``counters[C_USED]`` counts the entries of ``tt_e`` in use; a full pool
    stores no more; a full list (LIST_CAP entries) gives up its last entry for the new one. A pattern reaching below PATTERN_CARDS cards of a group is not stored."""
    depths = _depths(cx, hands, n, relevant)
    if depths < 0:
        return
    e = tt_b[bucket, B_FIRST]
    prev = np.int64(-1)  # the entry before e
    last_prev = np.int64(-1)  # the entry before the list's last
    while e >= 0:
        if tt_e[e, E_DEPTHS] == depths and _matches(tt_e, e, frames, p):
            info = tt_e[e, E_INFO]
            lo = max(lo, info & 255)
            hi = min(hi, (info >> 8) & 255)
            tt_e[e, E_INFO] = lo | (hi << 8) | ((move + 1) << 16)
            return
        if tt_e[e, E_NEXT] < 0:
            last_prev = prev
        prev = e
        e = tt_e[e, E_NEXT]
    if tt_b[bucket, B_COUNT] >= LIST_CAP:  # a full list: its last entry (the one read least lately) is replaced
        e = prev
        if last_prev >= 0:
            tt_e[last_prev, E_NEXT] = -1
        else:
            tt_b[bucket, B_FIRST] = -1
    else:
        e = counters[C_USED]
        if e >= tt_e.shape[0]:
            return  # the pool is full: this generation stores no more
        counters[C_USED] = e + 1
        tt_b[bucket, B_COUNT] += 1
    for g in range(GROUPS):
        tt_e[e, g] = frames[p, F_PAT + g] & _pattern_mask((depths >> (5 * g)) & 31)
    tt_e[e, E_DEPTHS] = depths
    tt_e[e, E_INFO] = lo | (hi << 8) | ((move + 1) << 16)
    tt_e[e, E_NEXT] = tt_b[bucket, B_FIRST]
    tt_b[bucket, B_FIRST] = e


@njit(cache=True)
def _lookup(cx, hands, n, leader, left, frames, p, tt_b, tt_e, tag):
    """The table's bounds on the trick-boundary position of frame ``p`` (``left`` tricks left, led
    by ``leader``; DDS's table lookup): writes the position's pattern and lengths into the frame,
    and the stored best lead, where the leader holds it, into ``F_FIRST``. Returns ``(bucket, lo,
    hi, lo_depths, hi_depths)``: the position's row of ``tt_b`` (-1: its probe run is full, the
    position goes unstored) and the bounds of :func:`_probe` (0 and ``left`` when none matches)."""
    _pattern(cx, hands, n, frames, p)
    bucket = _bucket(tt_b, frames, p, leader, tag)
    lo = 0
    hi = left
    lo_depths = np.int64(-1)
    hi_depths = np.int64(-1)
    if bucket >= 0:
        lo, hi, lo_depths, hi_depths, first = _probe(tt_b, tt_e, bucket, frames, p, left, frames[p, F_ALPHA], frames[p, F_BETA])
        if first >= 0 and (hands[leader] >> first) & 1:
            frames[p, F_FIRST] = first
    return bucket, lo, hi, lo_depths, hi_depths
