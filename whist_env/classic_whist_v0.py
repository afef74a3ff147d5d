"""Classic Whist (RULES.md §2) as a PettingZoo AEC environment.

``env(**options)`` / ``raw_env(**options)``; options as RULES.md §2.10 and §1.9
(``target_score``, ``honours``, ``trump_mode``, ``trump_rotation``, ``best_of``, ``num_hands``,
``allow_revoke``, ``first_dealer``, ``reward``, ``episode``, ``max_hands``). Actions 0..51 are
the card ids. Reset extras: ``"turn_up"`` (a card of the dealer's hand).
"""

import sys

from whist_env.envs.factory import make_env_functions
from whist_env.games import CARD_PLAY, Decision, GameDocs, GameSpec, register
from whist_env.rules.classic import ClassicWhist

SPEC = GameSpec(
    name="classic_whist",
    version=0,
    rules=ClassicWhist,
    decisions={"play": Decision(CARD_PLAY, "solve")},
    solver_depth=8,
    vector="whist_env.vector.classic:VectorClassicWhist",
    heuristic="agents.heuristics.classic:ClassicHeuristicAgent",
    evaluation_options={"honours": False},  # honours are dealt luck (RULES.md §2.7)
    golden_options={
        "defaults": {},
        "no_honours_fixed_trump": {"honours": False, "trump_mode": "fixed_rotation", "reward": "win_loss"},
        "hand_score_dealer_2": {"episode": "hand", "reward": "score", "first_dealer": 2},
        # revoke mode over one hand (a whole game of uniform play revokes in nearly every hand)
        "revoke_hand": {"allow_revoke": True, "episode": "hand", "reward": "score"},
    },
    docs=GameDocs(
        "Classic Whist",
        2,
        "Four players in two fixed partnerships play 13 tricks with the full 52-card deck. Trump is the suit of "
        "the dealer's last card, turned up and kept in the dealer's hand (or follows a fixed rotation with "
        '`trump_mode="fixed_rotation"`). Players must follow suit if able. A side that takes *t* ≥ 7 tricks '
        "scores *t* − 6; honours (A, K, Q, J of trump, as dealt) add 4 or 2 points unless the side is one point "
        "from the target. A game ends at `target_score` (default 5), or after `num_hands` hands; `best_of` "
        "makes a match, and `allow_revoke` turns on the optional revoke mode.",
    ),
)
raw_env, env = make_env_functions(SPEC.rules, SPEC.module_name)
register(SPEC, sys.modules[__name__])

__all__ = ["SPEC", "env", "raw_env"]
