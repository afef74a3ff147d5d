"""DDS's own test deals (benchmarks/dds/list100.txt with DDS's solutions): the reader gives the
file's cards and values, DDS itself agrees with the file in every deal, and the compiled solver
gives every card's value of the cheapest deals (benchmarks/bench_solver.py --dds-hands checks all
100)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from whist_env.engine.cards import card_from_str

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
dds_hands = pytest.importorskip("dds_hands")
BOARDS = dds_hands.read_boards()


def cards(text: str) -> int:
    return sum(1 << card_from_str(c) for c in text.split())


def test_the_file_holds_100_deals_with_a_value_for_every_card_on_lead():
    assert len(BOARDS) == 100
    assert sum(b.trump is None for b in BOARDS) == 29
    for b in BOARDS:
        assert sum(h.bit_count() for h in b.hands) == 52 and (b.hands[0] | b.hands[1] | b.hands[2] | b.hands[3]).bit_count() == 52
        assert set(b.values) == {c for c in range(52) if b.hands[b.leader] >> c & 1}


def test_the_first_deal_reads_as_written():
    """PBN 0 0 0 0 "N:QJ6.K652.J85.T98 ...": spades trump, North on lead; its FUT line gives
    5 tricks for D5 D8 DJ, the clubs T98 (T with equals 768: the 9 and 8), S6, SQJ (Q with equals
    2048: the J), and 4 for H2 H65 (6 with equals 32: the 5) HK."""
    b = BOARDS[0]
    assert (b.trump, b.leader) == (3, 0)
    assert b.hands[0] == cards("QS JS 6S KH 6H 5H 2H JD 8D 5D TC 9C 8C")
    assert b.hands[3] == cards("AS TS 9S 4S 2S AH QH 4H 3D 2D KC JC 3C")
    five = cards("5D 8D JD TC 9C 8C 6S QS JS")
    assert b.values == {c: 5 if five >> c & 1 else 4 for c in range(52) if b.hands[0] >> c & 1}


def test_malformed_deals_are_refused():
    with pytest.raises(ValueError, match="PBN deal"):
        dds_hands.parse_pbn("QJ6.K652.J85.T98")
    with pytest.raises(ValueError, match="held twice"):
        dds_hands.parse_pbn("N:A... A... ... ...")
    with pytest.raises(ValueError, match="rank"):
        dds_hands.parse_pbn("N:1... ... ... ...")


@pytest.mark.skipif(importlib.util.find_spec("endplay") is None, reason="DDS needs endplay (the dev extra)")
def test_dds_agrees_with_its_file_in_every_deal():
    assert [i for i, b in enumerate(BOARDS) if dds_hands.dds_values(b) != b.values] == []


@pytest.mark.parametrize("index", [2, 4, 21])  # spades, no trump, no trump: one or two seconds each
def test_the_compiled_solver_values_every_card_as_dds(index):
    b = BOARDS[index]
    assert dds_hands.solver_values(b) == b.values
