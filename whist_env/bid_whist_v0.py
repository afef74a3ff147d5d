"""Bid Whist (RULES.md §6) as a PettingZoo AEC environment.

Options: RULES.md §6.11 and §1.9. Actions (``Discrete(82)``): card ids 0..53, ``"pass"`` = 54,
``"bid:L:mode"`` = 55 + 3(L − 1) + {uptown 0, downtown 1, notrump 2}, ``"trump:C"`` …
``"trump:S"`` = 76..79, ``"direction:uptown"`` = 80, ``"direction:downtown"`` = 81. Reset
extras: ``"kitty"`` (6 card strings).
"""

from whist_env.envs.factory import make_env_functions
from whist_env.rules.bid_whist import BidWhist

raw_env, env = make_env_functions(BidWhist)
__all__ = ["env", "raw_env"]
