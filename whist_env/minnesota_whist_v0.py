"""Minnesota Whist (RULES.md §3) as a PettingZoo AEC environment.

Options (RULES.md §3.7, §1.9): ``target_score``, ``doubling_variation``, ``grand_leader``,
``num_hands``, ``best_of``, ``allow_revoke``, ``first_dealer``, ``reward``, ``episode``,
``max_hands``. Actions 0..51 are card ids: in phase ``"bid_card"`` they choose the bid card, in
``"play"`` they play the card.
"""

from whist_env.envs.factory import make_env_functions
from whist_env.rules.minnesota import MinnesotaWhist

raw_env, env = make_env_functions(MinnesotaWhist)
__all__ = ["env", "raw_env"]
