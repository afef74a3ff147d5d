"""Cutthroat Whist (RULES.md §7) as a PettingZoo AEC environment (three players).

Options (RULES.md §7.5, §1.9): ``deck`` ("54" / "52"), ``jokers_high``, ``big_joker``,
``target_score``, ``num_hands``, ``first_dealer``, ``reward``, ``episode``, ``max_hands``.
Actions 0..53 are card ids (52 = ``JKR``, 53 = ``JKB``).
"""

import sys

from whist_env.envs.factory import make_env_functions
from whist_env.games import CARD_PLAY, Decision, GameDocs, GameSpec, register
from whist_env.rules.cutthroat import CutthroatWhist

SPEC = GameSpec(
    name="cutthroat_whist",
    version=0,
    rules=CutthroatWhist,
    decisions={"play": Decision(CARD_PLAY, "solve")},
    solver_depth=10,
    vector="whist_env.vector.cutthroat:VectorCutthroatWhist",
    heuristic="agents.heuristics.cutthroat:CutthroatHeuristicAgent",
    golden_options={
        "defaults": {},
        "deck52_two_hands": {"deck": "52", "num_hands": 2},
        "jokers_high_hand": {"jokers_high": True, "big_joker": "black", "episode": "hand"},
    },
    docs=GameDocs(
        "Cutthroat Whist",
        7,
        "Three players, each for themselves, no bids and no trump: the highest card of the led suit wins. With the "
        'default `deck="54"` each player holds 18 cards; the jokers have no suit and no power (super cards with '
        '`jokers_high`). With `deck="52"` each holds 17 and one card is dead. Each player scores a point per '
        "trick above the book (6, or 5 with 52 cards); game to `target_score` (default 7).",
    ),
)
raw_env, env = make_env_functions(SPEC.rules, SPEC.module_name)
register(SPEC, sys.modules[__name__])

__all__ = ["SPEC", "env", "raw_env"]
