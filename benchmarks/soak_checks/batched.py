"""A batched-engine sample of a soak game: ``whist_env.vector`` played beside ``raw_env`` with the
library's differential check (``whist_env.vector.differential``), on the game's options and seed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from whist_env import GAMES

from .referee import Violation

#: games stepped at once in a batched-engine sample (one torch step serves them all)
BATCH = 8


def batched_differential(game: str, seed: int, options: Mapping[str, Any], num_envs: int = BATCH, state_every: int = 13) -> dict[str, Any]:
    """Play ``num_envs`` episodes of ``game`` on the batched engine (``vector.make(game, num_envs,
    seed=seed, **options)``) and as many ``raw_env`` side by side on the engine's deals, both taking
    the same uniformly random legal actions, until every game has ended an episode (a game that ends
    early plays on from the engine's next deal), holding them equal at every step as
    ``whist_env.vector.differential.play_side_by_side`` does (``state()`` every ``state_every``
    decisions).

    Returns:
        ``{"games": episodes compared, "decisions": decisions compared}``, or ``{"skipped":
        reason}`` when the batched engine refuses the options (``ValueError``).
    Raises:
        Violation: the first difference (check ``"batched"``), naming the step, the game of the batch
            and what differs.
    """
    import torch  # the soak's raw-env games need no torch: imported where a sample is played

    from whist_env import vector
    from whist_env.vector.differential import Mismatch, play_side_by_side, reference_envs

    torch.set_num_threads(1)
    try:
        batched = vector.make(game, num_envs, seed=seed, **options)
    except ValueError as error:
        return {"skipped": str(error).split(";")[0][:200]}
    decision = batched.reset()

    def reset_seed(i: int, step: int | None) -> int:
        return seed + i + (0 if step is None else (step + 1) * num_envs)

    raws = reference_envs(batched, GAMES[game].raw_env, options, reset_seed)
    rng = np.random.default_rng([seed, 2])

    def choose(step: int, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.tensor([int(legal[rng.integers(legal.size)]) for legal in map(np.flatnonzero, mask.numpy())])

    try:
        progress = play_side_by_side(batched, raws, choose, decision=decision, more=lambda p: p.episodes.min() == 0,
                                     reset_seed=reset_seed, state_every=state_every)
    except Mismatch as mismatch:
        raise Violation("batched", f"batched engine, {mismatch}") from None
    return {"games": int(progress.episodes.sum()), "decisions": progress.decisions}
