"""Evaluation: who is stronger, by how much, and how sure we are.

=================  ===========================================================================
module             what it holds
=================  ===========================================================================
``stats``          Wilson score intervals and Student t summaries (95% level), used everywhere
``match``          duplicate-deal matches (:func:`~training.evaluation.match.evaluate_pair`),
                   their result table and files, and ``whist eval``
``bidding``        bidding statistics from game records (Romanian exact bids, Bid Whist
                   contracts made, Spades side contracts and nils), ``whist bid-stats``
``store``          the SQLite results store (one transaction per deal)
``ratings``        openskill ratings and pairwise results recomputed from the store
``league``         ``whist league`` (stored round robin) and ``whist leaderboard``
``seed_ranges``    the disjoint seed ranges TRAINING, DEVELOPMENT and REPORT, and their checks
=================  ===========================================================================

Imports point down: ``stats`` ← ``match`` ← ``bidding``, ``store`` ← ``ratings`` ← ``league``;
nothing here imports :mod:`training.learn` or :mod:`training.viewers`.
"""
