"""Romanian Whist (RULES.md §5) as a PettingZoo AEC environment (3–6 players).

Options (RULES.md §5.9, §1.9): ``num_players``, ``schedule``, ``streak_bonus``,
``streak_length``, ``streak_points``, ``trump_on_one_card_deals``, ``first_player``, ``reward``,
``episode``, ``max_hands``. Actions: card ids 0..51 (only the 8 × N deck cards are legal), then
``"bid:0"`` … ``"bid:8"`` = 52..60. Reset extras: ``"turn_up"``, ``"deal_index"``.
"""

import sys

from whist_env.envs.factory import make_env_functions
from whist_env.games import BID, CARD_PLAY, Decision, GameDocs, GameSpec, register
from whist_env.rules.romanian import RomanianWhist

SPEC = GameSpec(
    name="romanian_whist",
    version=0,
    rules=RomanianWhist,
    decisions={"bid": Decision(BID, "rollout"), "play": Decision(CARD_PLAY, "rollout")},
    solver_depth=8,
    vector="whist_env.vector.romanian:VectorRomanianWhist",
    heuristic="agents.heuristics.romanian:RomanianHeuristicAgent",
    bids="exact",
    golden_options={
        "defaults": {},
        "five_players_8_1_8": {"num_players": 5, "schedule": "8-1-8", "trump_on_one_card_deals": True, "streak_length": 3},
    },
    docs=GameDocs(
        "Romanian Whist",
        5,
        "Three to six players (`num_players`, default 4), each for themselves, with the 8 × N highest cards. "
        "Deals follow the `schedule` (1-8-1 or 8-1-8 cards each). Each player bids the exact number of tricks "
        "they will take; the dealer, bidding last, may not make the bids add up to the number of tricks. In deals "
        "of 2 to 7 cards a turned-up card sets trump and a player void in the led suit must trump. An exact bid "
        "scores 5 + *t*, a missed one −|*t* − *b*|, with optional streak bonuses.",
    ),
)
raw_env, env = make_env_functions(SPEC.rules, SPEC.module_name)
register(SPEC, sys.modules[__name__])

__all__ = ["SPEC", "env", "raw_env"]
