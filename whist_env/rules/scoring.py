"""Game-end tests shared by several variants (RULES.md §2.6, §3.6, §7.4)."""

from __future__ import annotations

from collections.abc import Sequence


def strict_leader(scores: Sequence[int]) -> int | None:
    """Index of the strictly highest score, or ``None`` when two or more tie for highest."""
    best = max(scores)
    leaders = [i for i, s in enumerate(scores) if s == best]
    return leaders[0] if len(leaders) == 1 else None


def target_winner(scores: Sequence[int], target_score: int) -> int | None:
    """Winner by target: when some side has ``score ≥ target_score``, the strictly highest side
    wins; no side at the target, or a tie for highest, → ``None`` (play another hand)."""
    if max(scores) < target_score:
        return None
    return strict_leader(scores)


def fixed_hands_winner(scores: Sequence[int], num_hands: int, hands_completed: int) -> int | None:
    """Winner in ``num_hands`` mode: after ``num_hands`` hands the strictly highest side wins;
    a tie → ``None`` (extra hands, one at a time, until untied)."""
    if hands_completed < num_hands:
        return None
    return strict_leader(scores)


def game_winner(scores: Sequence[int], target_score: int, num_hands: int | None, hands_completed: int) -> int | None:
    """End test after a hand: :func:`fixed_hands_winner` when ``num_hands`` is set, else
    :func:`target_winner`."""
    if num_hands is not None:
        return fixed_hands_winner(scores, num_hands, hands_completed)
    return target_winner(scores, target_score)
