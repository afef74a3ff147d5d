"""Builds the ``env()`` / ``raw_env()`` pair of a game module (PettingZoo convention)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whist_env.envs.whist_env import WhistEnv
from whist_env.envs.wrapped import WhistWrapper
from whist_env.rules.base import TrickTakingGame


def make_env_functions(rules_cls: type[TrickTakingGame], name: str) -> tuple[Callable[..., WhistEnv], Callable[..., Any]]:
    """``(raw_env, env)`` for ``rules_cls``; ``name`` is the envs' ``metadata["name"]``, the name of the
    game's env module (``"classic_whist_v0"``: ``GameSpec.module_name``).

    ``raw_env(render_mode=None, **options)`` is the bare :class:`WhistEnv`; ``env(...)`` wraps it
    as PettingZoo's classic games do, in one flat layer (:class:`WhistWrapper`): an illegal action
    ends the game with reward −1 for the offender, out-of-range actions assert, and the call
    order is enforced.
    """

    def raw_env(render_mode: str | None = None, **options: Any) -> WhistEnv:
        return WhistEnv(rules_cls, render_mode=render_mode, env_name=name, **options)

    def env(render_mode: str | None = None, **options: Any) -> WhistWrapper:
        return WhistWrapper(raw_env(render_mode=render_mode, **options), illegal_reward=-1)

    raw_env.__doc__ = f"The unwrapped {rules_cls.NAME} environment: ``WhistEnv({rules_cls.__name__}, ...)``."
    env.__doc__ = f"The {rules_cls.NAME} environment with PettingZoo's standard wrappers."
    return raw_env, env
