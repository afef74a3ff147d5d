"""The numba kernels of the compiled double-dummy solver
(:mod:`whist_env.engine.compiled_double_dummy`): their entry points, and a map of the modules they
live in, one concern each, as DDS's sources are split (imports point down the list):

* :mod:`~whist_env.engine.dd_context`: the layouts the kernels share (the context array of a
  hand's ranking and seating, :func:`context_array`; a search frame; the workspace's counters) and
  bit helpers;
* :mod:`~whist_env.engine.dd_tricks`: the trick rules: led suit, follow suit and must-trump, the
  winning card, whether it won by rank;
* :mod:`~whist_env.engine.dd_moves`: move generation and ordering over classes of equivalent cards
  (DDS's Moves.cpp);
* :mod:`~whist_env.engine.dd_bounds`: quick tricks and sure trump tricks, bounds at a trick boundary
  (DDS's QuickTricks.cpp, LaterTricks.cpp);
* :mod:`~whist_env.engine.dd_table`: the transposition table of partition search: patterns,
  buckets, probe, store (DDS's TransTable*.cpp);
* :mod:`~whist_env.engine.dd_search`: fail-soft alpha-beta with an explicit stack, MTD(f), the
  entry points :func:`card_values` and :func:`solve` and the solver's :class:`Workspace` (DDS's
  ABsearch.cpp).

Search: fail-soft alpha-beta over single card plays, driven by zero-window tests (MTD(f)); the table
holds lower and upper bounds at trick boundaries under the pattern of the cards they rest on
(partition search, Ginsberg 2001; the winning ranks of DDS, Haglund and Hein), and the best lead
found there; quick tricks (the leader's, or a partner's after a crossing) and sure trump tricks
bound a trick boundary before the table is read; equivalent cards are searched once, and below a
suit's lowest winning rank one small card per suit; moves are ordered by DDS's weights for any
number of seats (:mod:`~whist_env.engine.dd_moves`: leads by the suit's holders and who wins it, the
killer lead and the table's best lead raised; follows cheapest safe winner first; in misère,
losing cards first). The value of a position is the tricks the counted side takes from the current
trick on (the paranoid reduction for more than two sides).

The kernels compile on first use and are cached on disk beside the modules (numba's
``cache=True``; :func:`whist_env.engine.dd_search._flush_stale_caches` recompiles them all when any
of their sources changes).
"""

from whist_env.engine.dd_context import C_NODES, MAX_SEATS, MAX_TRICKS, MOVE_WIDTH, context_array
from whist_env.engine.dd_search import Workspace, card_values, solve, workspace

__all__ = ["C_NODES", "MAX_SEATS", "MAX_TRICKS", "MOVE_WIDTH", "Workspace", "card_values", "context_array", "solve", "workspace"]
