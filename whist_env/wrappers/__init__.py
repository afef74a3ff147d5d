"""Single-agent (Gymnasium) views of the whist_env games, for stable-baselines3 and sb3-contrib.

Every game of ``whist_env.GAMES`` is registered as a Gymnasium id ``whist_env/<CamelName>-v0``
(``classic_whist`` → ``whist_env/ClassicWhist-v0``) when ``whist_env`` is imported;
``gymnasium.make(id, **kwargs)`` passes ``kwargs`` to :class:`SingleAgentWhistEnv`; the
PettingZoo ids ``whist/<game>-v0`` are registered here too. Versions come from
:mod:`whist_env.versions`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from whist_env.versions import env_id, module_name, refuse_retired, retired_versions
from whist_env.versions import gymnasium_id as _versioned_gymnasium_id
from whist_env.wrappers.single_agent import SingleAgentWhistEnv, UniformRandomPolicy

ENTRY_POINT = "whist_env.wrappers.single_agent:SingleAgentWhistEnv"


def gymnasium_id(game: str) -> str:
    """Gymnasium id of a game name: ``"classic_whist"`` → ``"whist_env/ClassicWhist-v0"``.

    The version is the game's current one (:data:`whist_env.versions.ENV_VERSIONS`).
    """
    return _versioned_gymnasium_id(game)


def register_pettingzoo_envs(games: Iterable[str]) -> list[str]:
    """Register each game's ``env()`` in PettingZoo's registry under :func:`whist_env.versions.env_id`.

    Each retired version of a game is registered too, with an entry point that refuses it naming
    the current id (``ValueError``). Returns the current ids; with a PettingZoo older than 1.27,
    which has no registry, registers nothing and returns ``[]``.
    """
    try:
        from pettingzoo import register
    except ImportError:  # PettingZoo < 1.27 has no registry
        return []
    ids = []
    for game in games:
        register("aec", env_id(game), entry_point=f"whist_env.{module_name(game)}:env")
        for old in retired_versions(game):
            register("aec", env_id(game, old), entry_point=functools.partial(refuse_retired, game, old))
        ids.append(env_id(game))
    return ids


def register_gymnasium_envs(games: Iterable[str]) -> list[str]:
    """Register :class:`SingleAgentWhistEnv` under :func:`gymnasium_id` for each game name.

    Ids already registered are left alone (re-importing is harmless). Each retired version of a
    game is registered too, with an entry point that refuses it naming the current id. Returns the
    current ids.
    """
    import gymnasium

    ids = []
    for game in games:
        env_id = gymnasium_id(game)
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"game": game})
        for old in retired_versions(game):
            old_id = _versioned_gymnasium_id(game, old)
            if old_id not in gymnasium.registry:
                gymnasium.register(id=old_id, entry_point=functools.partial(refuse_retired, game, old, registry="gymnasium"))
        ids.append(env_id)
    return ids


__all__ = ["SingleAgentWhistEnv", "UniformRandomPolicy", "gymnasium_id", "register_gymnasium_envs", "register_pettingzoo_envs"]
