"""Classic Whist (RULES.md §2) as a PettingZoo AEC environment.

``env(**options)`` / ``raw_env(**options)``; options as RULES.md §2.10 and §1.9
(``target_score``, ``honours``, ``trump_mode``, ``trump_rotation``, ``best_of``, ``num_hands``,
``allow_revoke``, ``first_dealer``, ``reward``, ``episode``, ``max_hands``). Actions 0..51 are
the card ids. Reset extras: ``"turn_up"`` (a card of the dealer's hand).
"""

from whist_env.envs.factory import make_env_functions
from whist_env.rules.classic import ClassicWhist

raw_env, env = make_env_functions(ClassicWhist)
__all__ = ["env", "raw_env"]
