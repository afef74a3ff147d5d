"""Single-agent (Gymnasium) views of the whist_env games, for stable-baselines3 and sb3-contrib.

Every game of ``whist_env.GAMES`` is registered as a Gymnasium id ``whist_env/<CamelName>-v0``
(``classic_whist`` → ``whist_env/ClassicWhist-v0``) when ``whist_env`` is imported;
``gymnasium.make(id, **kwargs)`` passes ``kwargs`` to :class:`SingleAgentWhistEnv`.
"""

from __future__ import annotations

from collections.abc import Iterable

from whist_env.wrappers.single_agent import SingleAgentWhistEnv, UniformRandomPolicy

ENTRY_POINT = "whist_env.wrappers.single_agent:SingleAgentWhistEnv"


def gymnasium_id(game: str) -> str:
    """Gymnasium id of a game name: ``"classic_whist"`` → ``"whist_env/ClassicWhist-v0"``."""
    return "whist_env/" + "".join(part.capitalize() for part in game.split("_")) + "-v0"


def register_gymnasium_envs(games: Iterable[str]) -> list[str]:
    """Register :class:`SingleAgentWhistEnv` under :func:`gymnasium_id` for each game name.

    Ids already registered are left alone (re-importing is harmless). Returns the ids.
    """
    import gymnasium

    ids = []
    for game in games:
        env_id = gymnasium_id(game)
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"game": game})
        ids.append(env_id)
    return ids


__all__ = ["SingleAgentWhistEnv", "UniformRandomPolicy", "gymnasium_id", "register_gymnasium_envs"]
