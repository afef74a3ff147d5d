"""Partnership Spades (RULES.md §8) as a PettingZoo AEC environment (four players, two sides).

Options (RULES.md §8.8, §1.9): ``target_score``, ``nil_points``, ``nil_tricks``, ``blind_nil``,
``blind_nil_points``, ``blind_nil_deficit``, ``combined_bid_limit``, ``spade_lead``,
``bag_threshold``, ``bag_penalty``, ``mercy_rule``, ``mercy_threshold``, ``first_dealer``,
``reward``, ``episode``, ``max_hands``. Actions: card ids 0..51, then ``"bid:nil"`` = 52,
``"bid:1"`` … ``"bid:13"`` = 53..65, and ``"bid:blind_nil"`` = 66 with ``blind_nil=True``.
"""

import sys

from whist_env.envs.factory import make_env_functions
from whist_env.games import BID, CARD_PLAY, Decision, GameDocs, GameSpec, register
from whist_env.rules.spades import Spades

SPEC = GameSpec(
    name="spades",
    version=0,
    rules=Spades,
    # bids: each legal bid valued by rollouts of that bid; card play solved once spades are broken
    # and no nil was bid (the side's trick total then decides the hand's points), else by rollouts
    decisions={"bid": Decision(BID, "rollout"), "play": Decision(CARD_PLAY, "solve")},
    solver_depth=8,
    vector="whist_env.vector.spades:VectorSpades",
    heuristic="agents.heuristics.spades:SpadesHeuristicAgent",
    bids="side",
    golden_options={
        "defaults": {},
        "bags_blind_nil_hand": {"nil_tricks": "bags", "blind_nil": True, "blind_nil_deficit": 0, "combined_bid_limit": False,
                                "episode": "hand", "reward": "score"},
        "only_spades_left_short": {"spade_lead": "only_spades_left", "target_score": 100, "mercy_threshold": -100,
                                   "bag_threshold": 3, "bag_penalty": 50},
    },
    docs=GameDocs(
        "Partnership Spades",
        8,
        "Four players in two fixed partnerships, 13 cards each; spades are always trump. Starting left of the "
        "dealer each player bids a number of tricks, or nil (none); a side's contract is the sum of its two bids. "
        "Players must follow suit if able, and spades may not be led until one has been played on another suit "
        "(unless the leader holds only spades). A side that makes its contract scores 10 per trick bid and a "
        "point per overtrick (bag); every 10 bags cost 100; a set side loses 10 per trick bid; a nil scores "
        "±100 (a blind nil, with `blind_nil`, ±200). Game to `target_score` (default 500).",
    ),
)
raw_env, env = make_env_functions(SPEC.rules, SPEC.module_name)
register(SPEC, sys.modules[__name__])

__all__ = ["SPEC", "env", "raw_env"]
