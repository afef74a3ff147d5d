"""The ``infos`` of the AEC environment in its two forms (env option ``infos``).

* ``"full"`` (default): the documented dicts of agent names, card texts and lists
  (``whist_env.envs.whist_env.WhistEnv``).
* ``"numeric"``: for array libraries (TorchRL, Tianshou, vectorised collectors): the same keys at
  every step from reset to the end, numbers only, fixed shapes, every value an ``int64`` numpy
  array. Seats are in absolute order (``player_i`` is entry ``i``), cards are card ids, and an
  absent value is ``-1``:

  ===========================  =====  ==========================================================
  key                          shape  value
  ===========================  =====  ==========================================================
  ``phase``                    ()     index into the rules' ``PHASES``
  ``hand_number``              ()     hands dealt before this one in the episode
  ``tricks_won``               (N,)   tricks each seat won this hand
  ``score``                    (N,)   its side's game score
  ``hand_points``              (N,)   its side's points from the last scored hand
  ``trick_completed``          ()     1 on the step that completed a trick
  ``last_trick_cards``         (N,)   the card each seat played to that trick (else -1)
  ``last_trick_leader``        ()     its leader (else -1)
  ``last_trick_winner``        ()     its winner (else -1)
  ``hand_ended``               ()     1 on the step that ended a hand
  ``last_hand_number``         ()     that hand's number (else -1)
  ``last_hand_tricks_won``     (N,)   its tricks per seat (else 0)
  ``last_hand_score``          (N,)   the side scores with its points (else 0)
  ``revoke``                   ()     the seat whose revoke annulled the hand (else -1)
  ``game_over``                ()     1 once the episode has ended
  ``winners``                  (N,)   1 for each winning seat at the end (else 0)
  ===========================  =====  ==========================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

INFO_MODES = ("full", "numeric")


def numeric_info(game: Any, last_trick: dict | None, hand_ended: bool, revoke: int | None) -> dict[str, np.ndarray]:
    """The ``"numeric"`` info of a rules object after a step (or a reset).

    Args:
        game: the rules object (:class:`whist_env.rules.base.TrickTakingGame`).
        last_trick: the step's completed trick ``{"cards": {seat: card}, "leader", "winner"}`` or ``None``.
        hand_ended: whether the step ended a hand.
        revoke: the seat whose established revoke annulled the hand, or ``None``.
    Returns:
        key -> ``int64`` array (module docstring).
    """
    n = game.num_players
    sides = [game.side_of(s) for s in range(n)]
    cards = np.full(n, -1, dtype=np.int64)
    leader = winner = -1
    if last_trick is not None:
        for seat, card in last_trick["cards"].items():
            cards[seat] = card
        leader, winner = last_trick["leader"], last_trick["winner"]
    last_number, last_tricks, last_scores = -1, (0,) * n, (0,) * game.num_sides
    if hand_ended and game.last_hand is not None:
        last_number, last_tricks, last_scores = game.last_hand
    winners = np.zeros(n, dtype=np.int64)
    winners[list(game.winners)] = 1
    return {
        "phase": np.asarray(game.PHASES.index(game.phase), dtype=np.int64),
        "hand_number": np.asarray(game.hand_number, dtype=np.int64),
        "tricks_won": np.asarray(game.tricks_won, dtype=np.int64),
        "score": np.asarray([game.scores[s] for s in sides], dtype=np.int64),
        "hand_points": np.asarray([game.last_hand_points[s] for s in sides], dtype=np.int64),
        "trick_completed": np.asarray(int(last_trick is not None), dtype=np.int64),
        "last_trick_cards": cards,
        "last_trick_leader": np.asarray(leader, dtype=np.int64),
        "last_trick_winner": np.asarray(winner, dtype=np.int64),
        "hand_ended": np.asarray(int(hand_ended), dtype=np.int64),
        "last_hand_number": np.asarray(last_number, dtype=np.int64),
        "last_hand_tricks_won": np.asarray(last_tricks, dtype=np.int64),
        "last_hand_score": np.asarray([last_scores[s] for s in sides], dtype=np.int64),
        "revoke": np.asarray(-1 if revoke is None else revoke, dtype=np.int64),
        "game_over": np.asarray(int(game.done or game.truncated), dtype=np.int64),
        "winners": winners,
    }
