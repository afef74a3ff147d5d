"""The batched engine: B games of a Whist variant stepped at once with torch, on CPU or CUDA.

    import torch
    from whist_env import vector

    env = vector.make("classic_whist", num_envs=1024, device="cpu", seed=0, episode="hand")
    obs, mask, seat = env.reset()                      # float32 [B, D], bool [B, 52], int64 [B]
    for _ in range(520):
        actions = torch.multinomial(mask.float(), 1, generator=env.generator).squeeze(1)
        obs, mask, seat, rewards, done = env.step(actions)  # rewards float32 [B, 4], done bool [B]

Observations, masks and rewards equal those of ``<game>_v0.raw_env(**options)`` (same layout,
``env.layout``); ``env.current_deal(i)`` gives game ``i``'s hand in ``raw_env`` reset-options
form. Games supported: :data:`GAMES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from whist_env import games
from whist_env.vector.base import VectorWhistEnv

#: Game name -> batched environment class, for the games the batched engine plays (each game's
#: descriptor names its class: ``GameSpec.vector``); live and read-only.
GAMES: Mapping[str, type[VectorWhistEnv]] = games.view(lambda spec: games.load(spec.vector), where=lambda spec: spec.vector is not None)


def make(game: str, num_envs: int, device: str | torch.device = "cpu", seed: int = 0, **options: Any) -> VectorWhistEnv:
    """A batched environment of ``num_envs`` games of ``game``.

    Args:
        game: a game name of ``whist_env.GAMES`` that the batched engine plays (:data:`GAMES`).
        num_envs: B, the number of games stepped at once.
        device: torch device of every tensor.
        seed: seed of the batch's random generator (deals, first dealers).
        **options: the game's rule options, as ``<game>_v0.raw_env(**options)`` takes them.
    Returns:
        a :class:`VectorWhistEnv`; call ``reset()`` before ``step()``.
    Raises:
        ValueError: ``game`` is not a game of the batched engine (naming those it plays), an
            option is unknown or invalid, ``num_envs`` or ``seed`` is not a valid int, or
            ``device`` is CUDA where CUDA is not available.
    """
    if game not in GAMES:
        raise ValueError(f"the batched engine does not play {game!r}; it plays {sorted(GAMES)}")
    return GAMES[game](num_envs, device=device, seed=seed, **options)


__all__ = ["GAMES", "VectorWhistEnv", "make"]
