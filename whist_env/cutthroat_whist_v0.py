"""Cutthroat Whist (RULES.md §7) as a PettingZoo AEC environment (three players).

Options (RULES.md §7.5, §1.9): ``deck`` ("54" / "52"), ``jokers_high``, ``big_joker``,
``target_score``, ``num_hands``, ``first_dealer``, ``reward``, ``episode``, ``max_hands``.
Actions 0..53 are card ids (52 = ``JKR``, 53 = ``JKB``).
"""

from whist_env.envs.factory import make_env_functions
from whist_env.rules.cutthroat import CutthroatWhist

raw_env, env = make_env_functions(CutthroatWhist)
__all__ = ["env", "raw_env"]
