"""Double-dummy card values of a world's position, by the project's compiled solver
(:mod:`whist_env.engine.compiled_double_dummy`) in every game, so that search plays the same with
or without endplay installed. DDS (endplay, bridge's C++ solver) stays a reference that the tests
and ``benchmarks/bench_solver.py`` hold the solver to (:func:`dds_card_values`); search never
calls it."""

from __future__ import annotations

from typing import Any

import numpy as np

from whist_env.engine.compiled_double_dummy import CompiledDoubleDummySolver
from whist_env.engine.tricks import natural_context

try:  # DDS, bridge's C++ solver: 4 hands, 52 cards, natural ranking, two partnerships
    from endplay.dds import solve_board as _dds_solve_board
    from endplay.types import Card as _Card
    from endplay.types import Deal as _Deal
    from endplay.types import Denom as _Denom
    from endplay.types import Player as _Player
    from endplay.types import Rank as _Rank
    _RANKS = sorted(_Rank, key=lambda r: r.value)  # two .. ace, as the card ids count them
    _DENOMS = [_Denom.clubs, _Denom.diamonds, _Denom.hearts, _Denom.spades]
except ImportError:  # pragma: no cover - endplay is optional
    _dds_solve_board = None

_RANK_TEXT = "23456789TJQKA"


def solver_applies(game: Any) -> bool:
    """Whether a double-dummy solver (the compiled one, DDS) can value ``game``'s card play from
    here: no lead may be restricted beyond follow suit any more in this hand
    (``game.leads_restricted()`` false; Spades' unbroken spades, RULES.md §8.4, are a rule the
    solvers do not know, so Spades is solved only once spades are broken). It reads public facts
    only: the same answer in every world of a decision."""
    return not game.leads_restricted()


def bridge_like(game: Any) -> bool:
    """Whether DDS can value ``game``'s card play: 4 seats in two partnerships (seat i on side
    i % 2), a deck without jokers (a Bid Whist no-trump hand may rank its jokers as nothing, yet
    DDS cannot hold them), the natural ranking with a trump suit or none, no must-trump, and no
    lead that may still be restricted beyond follow suit (:func:`solver_applies`). It reads the
    rules and public facts only, never the hands: the same answer in every world of a decision."""
    ctx = game.ctx
    return (solver_applies(game) and game.deck_mask() >> 52 == 0 and game.num_players == 4 and game.num_sides == 2 and all(game.side_of(p) == p % 2 for p in range(4))
            and ctx.eff_suit == natural_context(ctx.trump).eff_suit and ctx.power == natural_context(ctx.trump).power
            and not ctx.must_trump and not ctx.super_mask)


def dds_applies(game: Any) -> bool:
    """Whether :func:`dds_card_values` can value ``game`` here: endplay is installed and the game
    is :func:`bridge_like` (the trick objective aside: DDS only counts tricks won)."""
    return _dds_solve_board is not None and bridge_like(game)


def dds_card_values(game: Any) -> dict[int, int]:
    """DDS's value of every legal card of the seat to play (tricks its side takes from the
    current trick on); ``game`` must be :func:`bridge_like` and endplay installed (the reference
    of the tests and benchmarks).

    Raises:
        RuntimeError: endplay is not installed.
    """
    hands = [h | sum(1 << c for s, c in game.trick if s == seat) for seat, h in enumerate(game.hands)]
    return dds_solve(hands, game.ctx.trump, game.leader, [c for _, c in game.trick])


def dds_solve(hands: Any, trump: int | None, leader: int, played: Any = ()) -> dict[int, int]:
    """DDS's value of every legal card of the seat to play in a bridge deal: ``hands`` the four
    seats' card bitmasks (North 0 .. West 3, the cards of the current trick still in them),
    ``trump`` a suit 0..3 or ``None``, ``leader`` the seat that led the trick, ``played`` its
    cards so far in order. Values are the tricks the side to play takes from the current trick on.

    Raises:
        RuntimeError: endplay is not installed.
    """
    if _dds_solve_board is None:
        raise RuntimeError("DDS needs endplay: pip install endplay")
    denoms = _DENOMS
    pbn = "N:" + " ".join(".".join("".join(_RANK_TEXT[r] for r in range(12, -1, -1) if hands[seat] >> (suit * 13 + r) & 1)
                                   for suit in (3, 2, 1, 0)) for seat in range(4))
    deal = _Deal(pbn)
    deal.trump = _Denom.nt if trump is None else denoms[trump]
    deal.first = [_Player.north, _Player.east, _Player.south, _Player.west][leader]
    for c in played:
        deal.play(_Card(suit=denoms[c // 13], rank=_RANKS[c % 13]))
    return {denoms.index(card.suit) * 13 + _RANKS.index(card.rank): int(tricks) for card, tricks in _dds_solve_board(deal)}


def solver_of(game: Any) -> CompiledDoubleDummySolver:
    """The project's double-dummy solver of ``game``'s hand (a rules object in card play): its
    trick context, its sides, its deck and its own trick-winner rule.

    Raises:
        ValueError: ``game``'s rules may still restrict a lead in this hand (:func:`solver_applies`
            is false): the solver would play leads the rules forbid.
    """
    if not solver_applies(game):
        raise ValueError(f"the double-dummy solver cannot value {type(game).__name__} here: its rules may still restrict "
                         "a lead beyond follow suit in this hand (leads_restricted(): Spades' unbroken spades), which the "
                         "solver does not know")
    return CompiledDoubleDummySolver(game.ctx, [game.side_of(p) for p in range(game.num_players)], game.deck_mask(),
                                     winner=game.trick_winner_rule)


def solved_points(game: Any) -> np.ndarray | None:
    """The points by which a double-dummy trick count scores the hand exactly for the player to
    act in ``game``, where it wants neither many nor few tricks: its ``side_trick_points`` (float64
    ``(N + 1,)``, entry ``t`` the hand's points of its side minus the others' with ``t`` tricks),
    or ``None`` where there is no such table or where the points fall somewhere as the side takes
    more of the tricks still to play (Spades' bags near the penalty: there a side may want fewer
    tricks and the other side to give it more, which a double-dummy trick count does not model).
    Where the reachable points never fall, fighting for every trick is both sides' best play, so
    the minimax of the points is the points of the double-dummy trick count. Public facts only:
    the same answer in every world of a decision."""
    seat = game.current_player
    points = game.side_trick_points(seat)
    if points is None:
        return None
    taken = game.tricks_by_side()[game.side_of(seat)]
    reach = points[taken: taken + game.hands[seat].bit_count() + 1]  # one card in hand for each trick left
    return points if bool(np.all(np.diff(reach) >= 0)) else None


def card_values(game: Any, misere: bool = False) -> dict[int, int]:
    """Value of every legal card of the seat to play in ``game`` (a rules object in card play,
    every hand known: a sampled world): the tricks the seat's side takes from the current trick
    on under double-dummy play (fewest best when ``misere``), by the compiled solver.

    Raises:
        ValueError: as :func:`solver_of`.
    """
    solver = solver_of(game)
    return solver.card_values(game.hands, game.leader, game.trick, misere=misere)
