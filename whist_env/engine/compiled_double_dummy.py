"""The compiled double-dummy solver: the semantics and API of
:class:`whist_env.engine.double_dummy.DoubleDummySolver` (every trick context of RULES.md, 2 to 6
seats, partnerships or each for self, misère), searched by numba-compiled kernels
(:mod:`whist_env.engine.dd_kernel`) fast enough to solve whole hands.

The pure-Python :class:`~whist_env.engine.double_dummy.DoubleDummySolver` stays as the reference
the tests hold this solver equal to (with DDS on bridge-like hands and brute force through the
rules). The kernels compile on first use and are cached on disk beside the module (numba's
``cache=True``): the first call in a fresh install takes the compile, about half a minute; later
processes load the cache.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import numpy as np

from whist_env.engine import dd_kernel
from whist_env.engine.cards import FULL_DECK_54
from whist_env.engine.double_dummy import DoubleDummySolver
from whist_env.engine.tricks import TrickContext, trick_winner, trick_winner_or_leader

#: log2 of the transposition table's rows (position shapes) and of its entries (patterns) of each
#: solver's workspace: 21 MB and 75 MB (pages the search never touches are never allocated).
TABLE_BITS = 19
ENTRY_BITS = 20
#: The trick-winner rules the kernels implement.
COMPILED_RULES = (trick_winner, trick_winner_or_leader)
#: Workspaces of solvers that were garbage collected, at most _SPARE_MAX: the next solvers take
#: them rather than allocate (search builds a solver per sampled world, and fresh pages cost more
#: to touch than a small search takes).
_SPARE: list[dd_kernel.Workspace] = []
_SPARE_MAX = 4


def _release(ws: dd_kernel.Workspace) -> None:
    if len(_SPARE) < _SPARE_MAX:
        _SPARE.append(ws)


class CompiledDoubleDummySolver(DoubleDummySolver):
    """Solves positions of one hand's card play, as :class:`DoubleDummySolver` does, in compiled
    code.

    Args:
        ctx: the hand's trick context.
        side_of: side of each seat (length N, 2 <= N <= 6).
        deck: bitmask of the game's cards; positions holding another card are refused.
        winner: the game's trick-winner rule: :func:`whist_env.engine.tricks.trick_winner` or
            :func:`whist_env.engine.tricks.trick_winner_or_leader` (the rules the kernels
            implement; in positions the generic rule can decide, the two agree).
    Raises:
        ValueError: fewer than 2 or more than 6 seats; a rule the kernels do not implement. The
            solving methods raise it as :class:`DoubleDummySolver`'s do, and for a position of more
            than 19 tricks (no game deals one).
        TypeError: ``winner`` is not callable.
    """

    def __init__(self, ctx: TrickContext, side_of: Sequence[int], deck: int = FULL_DECK_54,
                 winner: Callable[[Sequence[tuple[int, int]], TrickContext], int] = trick_winner) -> None:
        super().__init__(ctx, side_of, deck, winner)
        if winner not in COMPILED_RULES:
            raise ValueError(f"the compiled solver implements the trick-winner rules {[r.__name__ for r in COMPILED_RULES]}, "
                             f"not {getattr(winner, '__name__', winner)!r}: use DoubleDummySolver")
        self._cx = dd_kernel.context_array(ctx.eff_suit, ctx.power, ctx.suit_masks, ctx.trump, ctx.must_trump, ctx.super_mask,
                                           self.side_of)
        self._workspace: dd_kernel.Workspace | None = None

    @property
    def workspace(self) -> dd_kernel.Workspace:
        """This solver's scratch memory (:class:`whist_env.engine.dd_search.Workspace`: move rows,
        search stack, history, transposition table), its own while it lives: taken at its first
        search (a garbage-collected solver's, else allocated) and reused by every later one."""
        if self._workspace is None:
            self._workspace = _SPARE.pop() if _SPARE else dd_kernel.workspace(TABLE_BITS, ENTRY_BITS)
            weakref.finalize(self, _release, self._workspace).atexit = False
        return self._workspace

    def _position(self, hands: Sequence[int], leader: int, trick: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        hands, trick = self._check(hands, leader, trick)
        left = self._tricks_left(hands, trick)
        if left > dd_kernel.MAX_TRICKS - 1 or left > dd_kernel.MOVE_WIDTH:
            raise ValueError(f"{left} tricks left: the compiled solver holds at most {dd_kernel.MAX_TRICKS - 1}")
        packed = np.zeros(dd_kernel.MAX_SEATS, dtype=np.int64)
        packed[: len(hands)] = hands
        return packed, np.array([c for _, c in trick], dtype=np.int64)

    def solve(self, hands: Sequence[int], leader: int, trick: Sequence[tuple[int, int]] = (), side: int = 0,
              misere: bool = False) -> int:
        """Tricks ``side`` takes from the current trick to the end under double-dummy play
        (:meth:`DoubleDummySolver.solve`: the same arguments, value and errors)."""
        packed, cards = self._position(hands, leader, trick)
        if side not in self.side_of:
            raise ValueError(f"side {side!r} is not one of the sides {sorted(set(self.side_of))}")
        if not packed.any():
            return 0
        ws = self.workspace
        value = dd_kernel.solve(self._cx, packed, cards, int(leader), int(side), bool(misere), ws)
        self.nodes += int(ws.counters[dd_kernel.C_NODES])
        return int(value)

    def card_values(self, hands: Sequence[int], leader: int, trick: Sequence[tuple[int, int]] = (),
                    misere: bool = False) -> dict[int, int]:
        """Value of each legal card of the seat to play (:meth:`DoubleDummySolver.card_values`:
        the same arguments, value and errors)."""
        packed, cards = self._position(hands, leader, trick)
        ws = self.workspace
        out = np.empty(64, dtype=np.int64)
        dd_kernel.card_values(self._cx, packed, cards, int(leader), bool(misere), ws, out)
        self.nodes += int(ws.counters[dd_kernel.C_NODES])
        return {int(c): int(out[c]) for c in np.flatnonzero(out >= 0)}
