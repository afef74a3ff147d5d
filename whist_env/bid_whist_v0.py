"""Bid Whist (RULES.md §6) as a PettingZoo AEC environment.

Options: RULES.md §6.11 and §1.9. Actions (``Discrete(82)``): card ids 0..53, ``"pass"`` = 54,
``"bid:L:mode"`` = 55 + 3(L − 1) + {uptown 0, downtown 1, notrump 2}, ``"trump:C"`` …
``"trump:S"`` = 76..79, ``"direction:uptown"`` = 80, ``"direction:downtown"`` = 81. Reset
extras: ``"kitty"`` (6 card strings).
"""

import sys

from whist_env.envs.factory import make_env_functions
from whist_env.games import BID, CARD_PLAY, DECLARATION, DISCARD, Decision, GameDocs, GameSpec, register
from whist_env.rules.bid_whist import BidWhist

SPEC = GameSpec(
    name="bid_whist",
    version=0,
    rules=BidWhist,
    decisions={
        "auction": Decision(BID, "contract"),
        "discard": Decision(DISCARD, "rollout"),
        "declare": Decision(DECLARATION, "rollout"),
        "play": Decision(CARD_PLAY, "solve"),
    },
    solver_depth=9,
    vector="whist_env.vector.bid_whist:VectorBidWhist",
    heuristic="agents.heuristics.bid_whist:BidWhistHeuristicAgent",
    bids="contract",
    golden_options={
        "defaults": {},
        "no_kitty_no_jokers": {"kitty": False, "downtown_aces": "bad", "no_trump_double": False, "episode": "hand"},
        "wild_deuces_sport_kitty": {
            "deuces_wild": True,
            "jokers_high": True,
            "sport_kitty": True,
            "big_joker": "black",
            "dealer_can_match": True,
            "episode": "hand",
        },
    },
    docs=GameDocs(
        "Bid Whist",
        6,
        "Four players in two partnerships, 54 cards with two jokers. One round of bidding (pass, or a level "
        "`min_bid`…7 with a mode: uptown, downtown or no-trump) makes the highest bidder the declarer, who takes "
        "the 6-card kitty, discards 6 cards one at a time, then names trump (or, in no-trump, the direction). "
        "A contract at level *L* needs 6 + *L* books, the discards counting as one; made it scores *L* (doubled "
        "in no-trump), set it loses as much. Game to `target_score` (default 7); `kitty=False` plays 52 cards "
        "without kitty, and the jokers, wild deuces and ace options are in the table below.",
    ),
)
raw_env, env = make_env_functions(SPEC.rules, SPEC.module_name)
register(SPEC, sys.modules[__name__])

__all__ = ["SPEC", "env", "raw_env"]
