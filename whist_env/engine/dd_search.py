"""The search of the double-dummy kernels (DDS's ABsearch.cpp and its MTD(f) driver): fail-soft
alpha-beta over single card plays, driven by zero-window tests, with the transposition table of
partition search (:mod:`~whist_env.engine.dd_table`), the quick and sure tricks that bound a trick
boundary before it is searched (:mod:`~whist_env.engine.dd_bounds`) and ordered moves, one per
class of equivalent cards (:mod:`~whist_env.engine.dd_moves`). The entry points are
:func:`card_values` and :func:`solve`, which take a solver's :class:`Workspace`.

The value of a position is the number of tricks the counted side takes from the current trick
(included) to the end of the hand; that side maximises it (minimises it with ``misere``), every
other seat does the opposite (the paranoid reduction for more than two sides).

Arrays of a search besides the workspace: ``cx`` (int64[CX_SIZE], the context array,
:mod:`~whist_env.engine.dd_context`); ``hands`` (int64[MAX_SEATS]: each seat's remaining cards as a
bitmask); ``tcard`` (int64[MAX_TRICKS * MAX_SEATS]: the card played at position ``k`` of trick
``t`` at ``tcard[t * MAX_SEATS + k]``); ``leaders`` (int64[MAX_TRICKS]: the seat that leads trick
``t``). The search plays and takes back cards in ``hands``, ``tcard`` and ``leaders`` in place.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.core.registry import CPUDispatcher

from whist_env.engine import dd_bounds, dd_context, dd_moves, dd_table, dd_tricks
from whist_env.engine.dd_bounds import _trick_bounds
from whist_env.engine.dd_context import (
    C_NODES,
    C_TAG,
    C_USED,
    COUNTERS,
    CX_EFF,
    CX_N,
    CX_POW,
    CX_SIDE,
    CX_SUIT,
    CX_SUPER,
    F_ALPHA,
    F_ALPHA0,
    F_BEST,
    F_BEST_CARD,
    F_BETA,
    F_BETA0,
    F_BUCKET,
    F_CARD,
    F_COUNT,
    F_FIRST,
    F_HAND,
    F_K,
    F_LOW,
    F_M,
    F_MAX,
    F_REL,
    F_ROW,
    F_SEAT,
    F_T,
    F_TREL,
    F_WON,
    FRAME,
    MAX_PLIES,
    MAX_SEATS,
    MAX_TRICKS,
    ROW,
    _low_bit,
    _popcount,
)
from whist_env.engine.dd_moves import _close_classes, _moves
from whist_env.engine.dd_table import BUCKET, ENTRY, _lookup, _store, _top_cards
from whist_env.engine.dd_tricks import _trick_relevant, _winning_position


class Workspace(NamedTuple):
    """The scratch memory of one solver, passed to :func:`card_values` and :func:`solve` (a
    namedtuple of arrays, which numba takes as one argument). Each call starts a new generation of
    its table (:func:`_new_generation`), so the arrays are never cleared between calls."""

    moves: np.ndarray  #: int64[MAX_PLIES * ROW]: one row of ordered moves per ply (:mod:`~whist_env.engine.dd_moves`)
    frames: np.ndarray  #: int64[MAX_PLIES + 1, FRAME]: the search's explicit stack, a frame per ply
    hist: np.ndarray  #: int64[MAX_SEATS * 64 + MAX_TRICKS]: the history heuristic (cut-offs by seat and card), then per trick the lead that last cut off there (card + 1, 0 none: DDS's ``bestMove``, the killer move)
    tt_b: np.ndarray  #: int64[2 ** table_bits, BUCKET]: the transposition table's rows (:mod:`~whist_env.engine.dd_table`)
    tt_e: np.ndarray  #: int64[2 ** entry_bits, ENTRY]: its entries
    counters: np.ndarray  #: int64[COUNTERS]: the table's generation and entries in use, the positions searched


def workspace(table_bits: int, entry_bits: int) -> Workspace:
    """A new :class:`Workspace` with a table of ``2 ** table_bits`` rows and ``2 ** entry_bits``
    entries (8 * BUCKET and 8 * ENTRY bytes each; pages the search never touches are never
    allocated)."""
    return Workspace(moves=np.zeros(MAX_PLIES * ROW, dtype=np.int64), frames=np.zeros((MAX_PLIES + 1, FRAME), dtype=np.int64),
                     hist=np.zeros(MAX_SEATS * 64 + MAX_TRICKS, dtype=np.int64), tt_b=np.zeros((1 << table_bits, BUCKET), dtype=np.int64),
                     tt_e=np.zeros((1 << entry_bits, ENTRY), dtype=np.int64), counters=np.zeros(COUNTERS, dtype=np.int64))


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


@njit(cache=True, inline="always")
def _note_low(cx, frames, p, relevant):
    """DDS's lowest winning rank (``Moves::MakeNext``): after the move just searched at frame ``p``,
    a card of suit ``s`` below the weakest card of ``s`` its value rests on (``relevant``), the
    suit's cards below that weakest card are not searched at this ply: each has the same value (the
    cards the value rests on and every seat's suit lengths are the same after it). A value that rests
    on no card of ``s`` skips every later card of ``s``."""
    card = frames[p, F_CARD]
    g = cx[CX_EFF + card]
    if g < 0 or (cx[CX_SUPER] >> card) & 1 or frames[p, F_LOW + g] >= 0:
        return
    low = np.int64(1) << 40
    rest = relevant & cx[CX_SUIT + g] & ~cx[CX_SUPER]
    while rest:
        c = _low_bit(rest)
        rest &= rest - 1
        if cx[CX_POW + c] < low:
            low = cx[CX_POW + c]
    if cx[CX_POW + card] < low:
        frames[p, F_LOW + g] = low


@njit(cache=True, inline="always")
def _push(frames, p, t, k, alpha, beta):
    """Frame ``p`` for the position at position ``k`` of trick ``t``, searched in the window
    (``alpha``, ``beta``)."""
    frames[p, F_T] = t
    frames[p, F_K] = k
    frames[p, F_ALPHA] = alpha
    frames[p, F_BETA] = beta


@njit(cache=True)
def _trick_won(cx, tcard, base, leader, side):
    """The result of a finished trick at ``tcard[base:]`` led by ``leader``: ``(winner, won,
    relevant)``, the seat that won it, 1 if that seat is of the counted ``side`` else 0, and the
    winning card where it won by rank (:func:`~whist_env.engine.dd_tricks._trick_relevant`)."""
    n = cx[CX_N]
    win = _winning_position(cx, tcard, base, n)
    winner = (leader + win) % n
    return winner, 1 if cx[CX_SIDE + winner] == side else 0, _trick_relevant(cx, tcard, base, n, win)


@njit(cache=True)
def _last_trick(cx, hands, tcard, leader, t, side):
    """Value of the hand's last trick ``t`` (every card forced) and the card it rests on:
    ``(won, relevant)``."""
    n = cx[CX_N]
    base = t * MAX_SEATS
    for i in range(n):
        tcard[base + i] = _low_bit(hands[(leader + i) % n])
    _, won, relevant = _trick_won(cx, tcard, base, leader, side)
    return won, relevant


@njit(cache=True, inline="always")
def _bound_relevant(cx, hands, n, relevant, depths):
    """The cards a bound rests on: ``relevant`` (a bitmask), and the top cards a stored pattern of
    ``depths`` covers (-1: the bound came from no stored pattern)."""
    if depths >= 0:
        relevant |= _top_cards(cx, hands, n, depths)
    return relevant


@njit(cache=True, inline="always")
def _trick_boundary(cx, hands, leader, left, side, misere, frames, p, tt_b, tt_e, tag):
    """The bounds of the trick-boundary position of frame ``p`` (``left`` tricks left), from the
    sure and quick tricks (:func:`~whist_env.engine.dd_bounds._trick_bounds`) and, where they do
    not decide it, from the table (:func:`~whist_env.engine.dd_table._lookup`; a bound of sure
    tricks rests on fewer cards than a stored pattern, so its value is stored more widely):
    ``(decided, value, relevant)``. Where the
    bounds decide the position (its window lies outside them, or they meet), its value and the
    cards the deciding bounds rest on; else the frame's window narrowed to the bounds and its table
    row kept for the store."""
    n = cx[CX_N]
    a = frames[p, F_ALPHA]
    b = frames[p, F_BETA]
    mine, mine_rel, theirs, theirs_rel = _trick_bounds(cx, hands, n, leader, side, misere)
    if mine >= b:  # the sure tricks decide it before the table is read
        return True, mine, mine_rel
    if left - theirs <= a:
        return True, left - theirs, theirs_rel
    bucket, lo, hi, lo_depths, hi_depths = _lookup(cx, hands, n, leader, left, frames, p, tt_b, tt_e, tag)
    lo_rel = np.int64(0)
    hi_rel = np.int64(0)
    if mine > lo:
        lo, lo_depths, lo_rel = mine, np.int64(-1), mine_rel
    if left - theirs < hi:
        hi, hi_depths, hi_rel = left - theirs, np.int64(-1), theirs_rel
    if lo >= b or lo == hi or hi <= a:
        relevant = np.int64(0)
        value = hi
        if lo >= b or lo == hi:
            value = lo
            relevant |= _bound_relevant(cx, hands, n, lo_rel, lo_depths)
        if hi <= a or lo == hi:
            relevant |= _bound_relevant(cx, hands, n, hi_rel, hi_depths)
        return True, value, relevant
    frames[p, F_ALPHA] = max(a, lo)
    frames[p, F_BETA] = min(b, hi)
    frames[p, F_BUCKET] = bucket
    return False, 0, np.int64(0)


@njit(cache=True, inline="always")
def _open_frame(frames, p, seat, hand, maximise, row, count):
    """Opens frame ``p`` for its ``count`` moves at ``moves[row:]``: the seat to play and its hand,
    whether it maximises, its window as entered, no best value yet."""
    frames[p, F_ALPHA0] = frames[p, F_ALPHA]
    frames[p, F_BETA0] = frames[p, F_BETA]
    frames[p, F_MAX] = maximise
    frames[p, F_BEST] = -1 if maximise else 1 << 20
    frames[p, F_BEST_CARD] = -1
    frames[p, F_REL] = 0
    frames[p, F_ROW] = row
    frames[p, F_COUNT] = count
    frames[p, F_M] = 0
    frames[p, F_SEAT] = seat
    frames[p, F_HAND] = hand
    for g in range(4):
        frames[p, F_LOW + g] = -1


@njit(cache=True, inline="always")
def _credit_cutoff(frames, hist, p):
    """The history heuristic: the card frame ``p`` was cut off by gains the square of the tricks
    left, for its seat (``hist[:MAX_SEATS * 64]``); a lead that cut off becomes its trick's killer
    move (``hist[MAX_SEATS * 64 + t]``, :func:`~whist_env.engine.dd_moves._lead_weights`)."""
    left = _popcount(frames[p, F_HAND]) + (1 if frames[p, F_K] else 0)
    hist[frames[p, F_SEAT] * 64 + frames[p, F_BEST_CARD]] += left * left
    if frames[p, F_K] == 0:
        hist[MAX_SEATS * 64 + frames[p, F_T]] = frames[p, F_BEST_CARD] + 1


@njit(cache=True, inline="always")
def _fail_soft_bounds(best, alpha0, beta0, left):
    """The bounds ``(lo, hi)`` a fail-soft value ``best`` searched in the window (``alpha0``,
    ``beta0``) proves, of ``left`` tricks: an upper bound at or below the window, a lower bound at
    or above it, the exact value within."""
    if best <= alpha0:
        return 0, best
    if best >= beta0:
        return best, left
    return best, best


@njit(cache=True)
def _search(cx, hands, tcard, leaders, t0, k0, side, misere, alpha, beta, ws, only):
    """Fail-soft alpha-beta value of the position at position ``k0`` of trick ``t0`` in the
    window (``alpha``, ``beta``), the seat to play choosing among its legal cards in ``only`` (a
    bitmask; -1 for all, as every position below the root has; the table is neither read nor
    written where it restricts). ``ws`` is the solver's :class:`Workspace`; its frames are an
    explicit stack standing for recursion, which numba cannot cache.

    Each position is entered (at a trick boundary the last trick, the table or the bounds may
    decide it, else its frame opens with its ordered moves), its moves are played one by one, each
    pushing the next position, and it is closed: a cut-off credits the history, a trick boundary
    stores its bounds, and its value returns to the frame below. Partition search (Ginsberg 2001;
    DDS's winning ranks): each value comes back with the bitmask of the cards whose ranks it rests
    on: the winning card of every trick it won by rank, the cards of the bounds it was cut off by.
    Where a card's value rests on no card of its suit at or below it, the suit's cards below the
    weakest card it rests on are not searched at that ply (:func:`_note_low`, DDS's lowest winning
    rank: one small card per suit).
    A trick boundary stores its bounds under the pattern of those cards
    (:func:`~whist_env.engine.dd_table._store`), which every position of the same suit lengths and
    leader, with the same holders of the pattern's cards, shares.

    Speed: the steps of a node are helpers inlined into this loop (``inline="always"``) that take
    few arrays, and the move loop stays written out here: each array an inlined helper takes costs
    reference counting at every node (the move loop as a helper of six arrays made the search 20%
    slower; the ``dd_*`` split as it stands times as the single loop did)."""
    moves, frames, hist, tt_b, tt_e, counters = ws
    tag = counters[C_TAG]
    n = cx[CX_N]
    p = 0
    _push(frames, 0, t0, k0, alpha, beta)
    entering = True
    result = 0
    relevant = np.int64(0)  # the cards ``result`` rests on
    while True:
        decided = False
        if entering:  # enter frame p's position
            counters[C_NODES] += 1
            t = frames[p, F_T]
            k = frames[p, F_K]
            leader = leaders[t]
            frames[p, F_BUCKET] = -1
            frames[p, F_FIRST] = -1
            if k == 0 and (p > 0 or only == -1):  # a trick boundary: the last trick, the table or the bounds may decide it
                left = _popcount(hands[leader])
                if left == 1:
                    decided = True
                    result, relevant = _last_trick(cx, hands, tcard, leader, t, side)
                else:
                    decided, result, relevant = _trick_boundary(cx, hands, leader, left, side, misere, frames, p, tt_b, tt_e, tag)
            if not decided:
                seat = (leader + k) % n
                row = (t * MAX_SEATS + k) * ROW
                count = _moves(cx, hands, tcard, leaders, t, k, side, misere, moves, row, frames[p, F_FIRST], hist)
                _open_frame(frames, p, seat, hands[seat], (cx[CX_SIDE + seat] == side) != misere, row, count)
        if not decided:  # play frame p's next move, pushing the position after it, or close the frame
            t = frames[p, F_T]
            k = frames[p, F_K]
            seat = frames[p, F_SEAT]
            hand = frames[p, F_HAND]
            row = frames[p, F_ROW]
            base = t * MAX_SEATS
            pushed = False
            while not pushed and frames[p, F_M] < frames[p, F_COUNT] and frames[p, F_ALPHA] < frames[p, F_BETA]:
                card = moves[row + 2 * frames[p, F_M]]
                frames[p, F_M] += 1
                if p == 0 and not (only >> card) & 1:
                    continue
                g = cx[CX_EFF + card]
                if g >= 0 and frames[p, F_LOW + g] >= 0 and cx[CX_POW + card] < frames[p, F_LOW + g] and not (cx[CX_SUPER] >> card) & 1:
                    continue
                hands[seat] = hand & ~(1 << card)
                frames[p, F_CARD] = card
                tcard[base + k] = card
                if k + 1 < n:  # the trick goes on
                    frames[p, F_WON] = 0
                    frames[p, F_TREL] = 0
                    _push(frames, p + 1, t, k + 1, frames[p, F_ALPHA], frames[p, F_BETA])
                    pushed = True
                    continue
                winner, won, trick_rel = _trick_won(cx, tcard, base, leaders[t], side)
                if hands[winner] == 0:  # the hand's last trick: valued here, without a frame
                    hands[seat] = hand
                    _take(frames, p, won, trick_rel)
                    _note_low(cx, frames, p, trick_rel)
                    continue
                leaders[t + 1] = winner
                frames[p, F_WON] = won
                frames[p, F_TREL] = trick_rel
                _push(frames, p + 1, t + 1, 0, frames[p, F_ALPHA] - won, frames[p, F_BETA] - won)
                pushed = True
            if pushed:
                p += 1
                entering = True
                continue
            result = frames[p, F_BEST]
            relevant = frames[p, F_REL]
            if frames[p, F_ALPHA] < frames[p, F_BETA]:  # no cut-off: the value rests on every move, each class by one card
                relevant = _close_classes(cx, moves, row, frames[p, F_COUNT], relevant)
            elif frames[p, F_BEST_CARD] >= 0:
                _credit_cutoff(frames, hist, p)
            if frames[p, F_BUCKET] >= 0:
                lo, hi = _fail_soft_bounds(result, frames[p, F_ALPHA0], frames[p, F_BETA0], _popcount(hands[leaders[t]]))
                _store(cx, hands, n, tt_b, tt_e, counters, frames[p, F_BUCKET], frames, p, relevant, lo, hi, frames[p, F_BEST_CARD])
        if p == 0:
            return result
        # return the value to the frame below: take back its card, fold in the value and its trick
        p -= 1
        entering = False
        hands[frames[p, F_SEAT]] = frames[p, F_HAND]
        _take(frames, p, result + frames[p, F_WON], relevant | frames[p, F_TREL])
        _note_low(cx, frames, p, relevant | frames[p, F_TREL])


@njit(cache=True)
def _mtd(cx, hands, tcard, leaders, k, side, misere, only, guess, total, ws):
    """Exact value of the root position (trick 0, position ``k``) with the seat to play choosing
    among ``only``, by zero-window tests from ``guess`` (MTD(f), Plaat et al.; DDS's driver of
    ABsearch); the value lies in [0, ``total``]."""
    lo = 0
    hi = total
    g = min(max(guess, lo), hi)
    while lo < hi:
        b = g + 1 if g == lo else g
        g = _search(cx, hands, tcard, leaders, 0, k, side, misere, b - 1, b, ws, only)
        if g < b:
            hi = g
        else:
            lo = g
    return lo


@njit(cache=True)
def _root(cx, hands, trick, leader):
    """The search's trick arrays of a root position, its position in the trick, the seat to play
    and the tricks left (the current one included): ``(tcard, leaders, k, seat, total)``."""
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
def _new_generation(ws):
    """Starts a solver call on workspace ``ws``: a new table generation (rows of earlier calls are
    never read, so the table needs no clearing), an empty entry pool and history, no positions
    searched."""
    ws.counters[C_TAG] += 1
    ws.counters[C_USED] = 0
    ws.counters[C_NODES] = 0
    ws.hist[:] = 0


@njit(cache=True)
def card_values(cx, hands, trick, leader, misere, ws, out):
    """Values of every legal card of the seat to play, written to ``out`` (int64[64], -1 for a
    card that is not legal): the tricks its side takes from the current trick on, each card's by
    its own MTD(f) search (a class of equivalent cards by one), the guess carried from card to card.

    Args:
        cx: the context array (:func:`~whist_env.engine.dd_context.context_array`).
        hands: int64[MAX_SEATS], each seat's remaining cards (the trick's cards removed).
        trick: int64 array of the cards played to the current trick, in order.
        leader: the seat that led (or leads) the current trick.
        misere: the seat's side minimises its tricks.
        ws: the solver's :class:`Workspace`; ``ws.counters[C_NODES]`` is set to the positions
            searched.
    """
    _new_generation(ws)
    tcard, leaders, k, seat, total = _root(cx, hands, trick, leader)
    side = cx[CX_SIDE + seat]
    row = k * ROW
    count = _moves(cx, hands, tcard, leaders, 0, k, side, misere, ws.moves, row, -1, ws.hist)
    reps = ws.moves[row:row + 2 * count].copy()
    for i in range(64):
        out[i] = -1
    guess = total // 2
    for m in range(count):
        card = reps[2 * m]
        value = _mtd(cx, hands, tcard, leaders, k, side, misere, np.int64(1) << card, guess, total, ws)
        guess = value
        group = reps[2 * m + 1]
        while group:
            c = _low_bit(group)
            group &= group - 1
            out[c] = value


@njit(cache=True)
def solve(cx, hands, trick, leader, side, misere, ws):
    """Tricks ``side`` takes from the current trick on, by MTD(f) from half the tricks left
    (arguments as :func:`card_values`)."""
    _new_generation(ws)
    tcard, leaders, k, seat, total = _root(cx, hands, trick, leader)
    return _mtd(cx, hands, tcard, leaders, k, side, misere, -1, total // 2, total, ws)


def _flush_stale_caches() -> None:
    """Flushes every kernel's disk cache when any kernel module's source changed since the cache
    was written. numba keys a cached kernel on its own file only, and a kernel's cached code holds
    the code of the kernels it calls in other modules (``_search`` that of every module here), so
    without this an edit of :mod:`~whist_env.engine.dd_moves` alone would go unseen by the search.
    The sources' digest is kept beside numba's cache files; a cache that cannot be written is left
    alone."""
    modules = [dd_context, dd_tricks, dd_moves, dd_bounds, dd_table, sys.modules[__name__]]
    digest = hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in modules)).hexdigest()
    kernels = [f for m in modules for f in vars(m).values() if isinstance(f, CPUDispatcher) and f.__module__ == m.__name__]
    try:
        stamp = Path(solve.stats.cache_path) / "dd_kernels.stamp"
        if stamp.is_file() and stamp.read_text() == digest:
            return
        stamp.parent.mkdir(parents=True, exist_ok=True)
        for kernel in kernels:
            kernel._cache.flush()
        stamp.write_text(digest)
    except (AttributeError, OSError):
        pass


_flush_stale_caches()
