"""Romanian Whist (RULES.md §5) as a PettingZoo AEC environment (3–6 players).

Options (RULES.md §5.9, §1.9): ``num_players``, ``schedule``, ``streak_bonus``,
``streak_length``, ``streak_points``, ``trump_on_one_card_deals``, ``first_player``, ``reward``,
``episode``, ``max_hands``. Actions: card ids 0..51 (only the 8 × N deck cards are legal), then
``"bid:0"`` … ``"bid:8"`` = 52..60. Reset extras: ``"turn_up"``, ``"deal_index"``.
"""

from whist_env.envs.factory import make_env_functions
from whist_env.rules.romanian import RomanianWhist

raw_env, env = make_env_functions(RomanianWhist)
__all__ = ["env", "raw_env"]
