"""Minnesota Whist (RULES.md §3) as a PettingZoo AEC environment.

Options (RULES.md §3.7, §1.9): ``target_score``, ``doubling_variation``, ``grand_leader``,
``num_hands``, ``best_of``, ``allow_revoke``, ``first_dealer``, ``reward``, ``episode``,
``max_hands``. Actions 0..51 are card ids: in phase ``"bid_card"`` they choose the bid card, in
``"play"`` they play the card.
"""

import sys

from whist_env.envs.factory import make_env_functions
from whist_env.games import BID, CARD_PLAY, Decision, GameDocs, GameSpec, register
from whist_env.rules.minnesota import MinnesotaWhist

SPEC = GameSpec(
    name="minnesota_whist",
    version=0,
    rules=MinnesotaWhist,
    decisions={"bid_card": Decision(BID, "heuristic"), "play": Decision(CARD_PLAY, "solve")},
    solver_depth=8,
    vector="whist_env.vector.minnesota:VectorMinnesotaWhist",
    heuristic="agents.heuristics.minnesota:MinnesotaHeuristicAgent",
    golden_options={
        "defaults": {},
        "doubling_right_two_hands": {"doubling_variation": True, "grand_leader": "right", "num_hands": 2, "reward": "score"},
    },
    docs=GameDocs(
        "Minnesota Whist",
        3,
        "Classic Whist's four players and partnerships, but never a trump suit. Before play each player chooses "
        "one card of their hand as a face-down *bid card*: a black card votes High, a red card Low. The cards are "
        "revealed in turn until the first black one, whose side is *Grand*; the hand is then High (a side with "
        "*t* ≥ 7 tricks scores *t* − 6), and if all four are red it is Low (a side with *t* ≥ 7 tricks *loses* "
        "*t* − 6). Game to `target_score` (default 13).",
    ),
)
raw_env, env = make_env_functions(SPEC.rules, SPEC.module_name)
register(SPEC, sys.modules[__name__])

__all__ = ["SPEC", "env", "raw_env"]
