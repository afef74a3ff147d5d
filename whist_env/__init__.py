"""whist-env: reinforcement-learning environments for the Whist family of card games.

Game modules (PettingZoo convention): ``from whist_env import classic_whist_v0``;
``classic_whist_v0.env(**options)``. With a PettingZoo that has a registry (1.27 and later) the
games are also registered there: ``pettingzoo.make("aec", "whist/classic_whist-v0")``; older
PettingZoo releases (down to 1.24, which some libraries pin) work without it.
"""

from whist_env import (
    bid_whist_v0,
    classic_whist_v0,
    cutthroat_whist_v0,
    german_whist_v0,
    minnesota_whist_v0,
    romanian_whist_v0,
)
from whist_env._version import __version__
from whist_env.engine.cards import card_from_str, card_to_str
from whist_env.versions import env_id
from whist_env.wrappers import register_gymnasium_envs, register_pettingzoo_envs

#: Game name -> module, for tools that pick a game by name.
GAMES = {
    "classic_whist": classic_whist_v0,
    "minnesota_whist": minnesota_whist_v0,
    "german_whist": german_whist_v0,
    "romanian_whist": romanian_whist_v0,
    "bid_whist": bid_whist_v0,
    "cutthroat_whist": cutthroat_whist_v0,
}

# PettingZoo ids (whist_env.versions builds them): pettingzoo.make("aec", "whist/classic_whist-v0")
register_pettingzoo_envs(GAMES)
# Single-agent Gymnasium ids for SB3: gymnasium.make("whist_env/ClassicWhist-v0")
register_gymnasium_envs(GAMES)

__all__ = [
    "GAMES",
    "__version__",
    "bid_whist_v0",
    "card_from_str",
    "card_to_str",
    "classic_whist_v0",
    "cutthroat_whist_v0",
    "env_id",
    "german_whist_v0",
    "minnesota_whist_v0",
    "romanian_whist_v0",
]
