"""DDS's test hands (``benchmarks/dds/list100.txt``, from the dds-bridge/dds repository, see
``benchmarks/dds/NOTICE``) and their solutions, read into the project's card ids.

Each hand of the file is a ``PBN`` line and a ``FUT`` line:

- ``PBN dealer vul trump first "N:<north> <east> <south> <west>"``: trump 0..3 = spades, hearts,
  diamonds, clubs, 4 = no trump; ``first`` 0..3 = North .. West, the seat on lead; a hand is
  ``spades.hearts.diamonds.clubs``;
- ``FUT n suit[n] rank[n] equals[n] score[n]``: DDS's SolveBoard with every card's value (target
  -1, solutions 3): for each of the ``n`` distinct cards of the seat on lead, its suit (as above),
  its rank (2..14), a bitmask of the lower ranks of the same suit equal to it (bit r for rank r),
  and the tricks the side on lead takes when it is led.

Seats are the project's: North 0, East 1, South 2, West 3 (sides 0 and 1); a card id is
``suit * 13 + rank - 2`` with suits clubs 0, diamonds 1, hearts 2, spades 3.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from agents.search.solving import dds_solve
from whist_env.engine.cards import FULL_DECK_52
from whist_env.engine.compiled_double_dummy import CompiledDoubleDummySolver
from whist_env.engine.tricks import natural_context

LIST100 = Path(__file__).resolve().parent / "dds" / "list100.txt"
_SEATS = "NESW"
_RANKS = "23456789TJQKA"


@dataclass(frozen=True)
class Board:
    """One deal of a DDS hands file.

    Attributes:
        pbn: the deal as the file gives it (``"N:..."``).
        hands: card bitmask of each seat, North .. West.
        trump: trump suit 0..3 (project suits), or ``None`` for no trump.
        leader: seat on lead, 0..3.
        values: DDS's tricks for the leader's side of every card in the leader's hand.
    """

    pbn: str
    hands: tuple[int, int, int, int]
    trump: int | None
    leader: int
    values: dict[int, int]


def _card(dds_suit: int, rank: int) -> int:
    return (3 - dds_suit) * 13 + rank - 2


def parse_pbn(pbn: str) -> tuple[int, int, int, int]:
    """Card bitmasks of North .. West from a PBN deal ``"X:h h h h"`` (X the seat of the first hand
    listed, hands clockwise, each ``spades.hearts.diamonds.clubs``).

    Raises:
        ValueError: not four hands of four suits of rank letters, or a card held twice.
    """
    first, _, rest = pbn.partition(":")
    texts = rest.split()
    if first not in _SEATS or len(texts) != 4:
        raise ValueError(f"not a PBN deal: {pbn!r}")
    hands = [0, 0, 0, 0]
    for i, text in enumerate(texts):
        suits = text.split(".")
        if len(suits) != 4:
            raise ValueError(f"not a PBN hand (four suits): {text!r}")
        seat = (_SEATS.index(first) + i) % 4
        for dds_suit, ranks in enumerate(suits):
            for letter in ranks:
                if letter not in _RANKS:
                    raise ValueError(f"not a rank: {letter!r} in {text!r}")
                bit = 1 << _card(dds_suit, _RANKS.index(letter) + 2)
                if any(h & bit for h in hands):
                    raise ValueError(f"card held twice in {pbn!r}")
                hands[seat] |= bit
    return hands[0], hands[1], hands[2], hands[3]


def _solutions(fields: list[str]) -> dict[int, int]:
    n = int(fields[0])
    suits, ranks, equals, scores = (list(map(int, fields[1 + k * n: 1 + (k + 1) * n])) for k in range(4))
    values = {}
    for suit, rank, eq, score in zip(suits, ranks, equals, scores, strict=True):
        values[_card(suit, rank)] = score
        for r in range(2, 15):
            if eq >> r & 1:
                values[_card(suit, r)] = score
    return values


def read_boards(path: str | Path = LIST100) -> list[Board]:
    """Every deal of a DDS hands file with its ``FUT`` solution, in file order.

    Raises:
        ValueError: a ``PBN`` line without a ``FUT`` line after it, or a malformed line.
    """
    boards, pending = [], None
    for line in Path(path).read_text().splitlines():
        fields = shlex.split(line)
        if not fields:
            continue
        if fields[0] == "PBN":
            _dealer, _vul, trump, first, pbn = fields[1:6]
            pending = (pbn, parse_pbn(pbn), None if int(trump) == 4 else 3 - int(trump), int(first))
        elif fields[0] == "FUT":
            if pending is None:
                raise ValueError(f"{path}: FUT line without a deal: {line!r}")
            boards.append(Board(*pending, values=_solutions(fields[1:])))
            pending = None
    if pending is not None:
        raise ValueError(f"{path}: the last deal has no FUT line")
    return boards


def solver_values(board: Board, solver: CompiledDoubleDummySolver | None = None) -> dict[int, int]:
    """The compiled solver's tricks for the leader's side of every card of the leader's hand
    (bridge: four seats, sides North-South 0 and East-West 1, the natural ranking)."""
    solver = solver or CompiledDoubleDummySolver(natural_context(board.trump), [0, 1, 0, 1], FULL_DECK_52)
    return solver.card_values(board.hands, board.leader)


def dds_values(board: Board) -> dict[int, int]:
    """DDS's own values (endplay's SolveBoard, every card) of ``board``'s leader's cards, in the
    project's card ids (:func:`agents.search.solving.dds_solve`): the CPU time of the reference.

    Raises:
        RuntimeError: endplay is not installed.
    """
    return dds_solve(board.hands, board.trump, board.leader)
