"""whist-env: reinforcement-learning environments for the Whist family of card games.

Game modules (PettingZoo convention): ``from whist_env import classic_whist_v0``;
``classic_whist_v0.env(**options)``. With a PettingZoo that has a registry (1.27 and later) the
games are also registered there: ``pettingzoo.make("aec", "whist/classic_whist-v0")``; older
PettingZoo releases (down to 1.24, which some libraries pin) work without it.
"""

from whist_env import games
from whist_env._version import __version__
from whist_env.engine.cards import card_from_str, card_to_str
from whist_env.versions import env_id
from whist_env.wrappers import register_gymnasium_envs, register_pettingzoo_envs

#: Game name -> env module (``raw_env``, ``env``), for tools that pick a game by name: read from the
#: registered descriptors (:mod:`whist_env.games`), live and read-only.
GAMES = games.view(lambda spec: games.env_module(spec.name))

# Imports every game module (each registers its descriptor), then registers the PettingZoo ids
# (pettingzoo.make("aec", "whist/classic_whist-v0")) and the single-agent Gymnasium ids for SB3
# (gymnasium.make("whist_env/ClassicWhist-v0")) of every game, and of each game registered later.
games.discover()
games.on_register(register_pettingzoo_envs)
games.on_register(register_gymnasium_envs)

__all__ = [
    "GAMES",
    "__version__",
    "card_from_str",
    "card_to_str",
    "env_id",
    "games",
    *(spec.module_name for spec in games.specs()),  # the game modules: from whist_env import classic_whist_v0
]
