"""German Whist (RULES.md §4) as a PettingZoo AEC environment (two players).

Options (RULES.md §4.6, §1.9): ``first_leader``, ``scoring``, ``best_of``, ``target_score``,
``first_dealer``, ``reward``, ``episode``, ``max_hands``. Actions 0..51 are card ids. Reset
extras: ``"stock"`` (26 card strings, top first; the top card's suit is trump).
"""

import sys

from whist_env.envs.factory import make_env_functions
from whist_env.games import CARD_PLAY, STOCK_DRAW, Decision, GameDocs, GameSpec, register
from whist_env.rules.german import GermanWhist

SPEC = GameSpec(
    name="german_whist",
    version=0,
    rules=GermanWhist,
    decisions={"stock": Decision(STOCK_DRAW, "rollout"), "play": Decision(CARD_PLAY, "solve")},
    solver_depth=13,
    vector="whist_env.vector.german:VectorGermanWhist",
    heuristic="agents.heuristics.german:GermanHeuristicAgent",
    exact_open_play="agents.heuristics.german:ExactAfterStock",
    golden_options={
        "defaults": {},
        "over_six_non_dealer": {"scoring": "over_six", "first_leader": "non_dealer", "target_score": 3},
    },
    docs=GameDocs(
        "German Whist",
        4,
        "Two players, 13 cards each, the rest a stock whose face-up top card sets trump for the hand. In phase 1 "
        "the winner of each trick takes the face-up stock card, the loser the next one face down, so the first "
        "13 tricks are played for cards; once the stock is gone every card's place is known and the 13 tricks of "
        'phase 2 are the ones that count. The player with more phase-2 tricks wins the hand (`scoring="hand"`, '
        'with `best_of`), or scores tricks − 6 towards `target_score` with `scoring="over_six"`.',
    ),
)
raw_env, env = make_env_functions(SPEC.rules, SPEC.module_name)
register(SPEC, sys.modules[__name__])

__all__ = ["SPEC", "env", "raw_env"]
