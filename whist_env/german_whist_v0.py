"""German Whist (RULES.md §4) as a PettingZoo AEC environment (two players).

Options (RULES.md §4.6, §1.9): ``first_leader``, ``scoring``, ``best_of``, ``target_score``,
``first_dealer``, ``reward``, ``episode``, ``max_hands``. Actions 0..51 are card ids. Reset
extras: ``"stock"`` (26 card strings, top first; the top card's suit is trump).
"""

from whist_env.envs.factory import make_env_functions
from whist_env.rules.german import GermanWhist

raw_env, env = make_env_functions(GermanWhist)
__all__ = ["env", "raw_env"]
