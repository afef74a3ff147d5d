"""Observations written into the caller's buffers: ``step(actions, out=...)`` and
``observe(out=...)`` of every batched game.

A rollout collected with ``out=`` (one slice of a ``[T, B, D]`` buffer per step) equals the one
collected from fresh tensors, step by step; the returned observation is the buffer itself; no
tensor the size of an observation is allocated on that path; a bad buffer is refused, naming what
is wrong, and changes nothing.
"""

from __future__ import annotations

import pytest
import torch
from vector_harness import one_torch_thread  # noqa: F401  (autouse fixture)

from whist_env import vector

GAMES = sorted(vector.GAMES)
#: options per game that reach every phase quickly (a hand per episode) and, for Classic, the revoke mode
OPTIONS = [(game, {"episode": "hand"}) for game in GAMES] + [("classic_whist", {"episode": "game", "allow_revoke": True}),
                                                             ("romanian_whist", {"episode": "game", "num_players": 5})]


def _rollout(game: str, options: dict, steps: int, buffers: torch.Tensor | None, b: int = 16):
    """``steps`` random legal steps of a fresh batch (seed 3); each step's outputs, the observation
    written into ``buffers[t]`` when given."""
    env = vector.make(game, b, seed=3, **options)
    obs, mask, seat = env.reset()
    generator = torch.Generator().manual_seed(3)
    out = [(obs.clone(), mask, seat)]
    for t in range(steps):
        actions = torch.multinomial(mask.float(), 1, generator=generator).squeeze(1)
        kwargs = {} if buffers is None else {"out": buffers[t]}
        obs, mask, seat, rewards, done = env.step(actions, **kwargs)
        if buffers is not None:
            assert obs.data_ptr() == buffers[t].data_ptr()  # the buffer itself, not a copy
        out.append((obs, mask, seat, rewards, done))
    return env, out


@pytest.mark.parametrize(("game", "options"), OPTIONS, ids=[f"{g}-{'-'.join(map(str, o.values()))}" for g, o in OPTIONS])
def test_a_rollout_into_buffers_equals_one_from_fresh_tensors(game, options):
    steps = 120  # several hands: deals, auctions, kitty and stock phases, auto-resets
    _, fresh = _rollout(game, options, steps, None)
    d = fresh[0][0].shape[1]
    buffers = torch.full((steps, 16, d), float("nan"))  # anything left unwritten would show
    env, kept = _rollout(game, options, steps, buffers)
    assert not torch.isnan(buffers).any()
    for t, (a, b) in enumerate(zip(fresh, kept)):
        for x, y in zip(a, b):
            assert torch.equal(x, y), f"step {t}"
    # every kept step still holds its own observation: a rollout of buffers is no copy of its last step
    assert torch.equal(buffers, torch.stack([step[0] for step in fresh[1:]]))
    target = torch.empty_like(buffers[0])
    assert env.observe(out=target) is target and torch.equal(target, env.observe())


@pytest.mark.parametrize("game", GAMES)
def test_no_observation_sized_tensor_is_allocated_on_the_out_path(game):
    b = 512
    env = vector.make(game, b, seed=1, episode="hand")
    obs, mask, _ = env.reset()
    buffer = torch.empty_like(obs)
    size = obs.numel() * obs.element_size()
    generator = torch.Generator().manual_seed(1)
    actions = [torch.multinomial(mask.float(), 1, generator=generator).squeeze(1)]

    def largest_allocation(out) -> int:
        nonlocal mask
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
            _, mask, _, _, _ = env.step(actions[-1], out=out)
        actions.append(torch.multinomial(mask.float(), 1, generator=generator).squeeze(1))
        return max(e.cpu_memory_usage for e in prof.events())

    assert largest_allocation(None) >= size  # the profile sees the fresh observation
    for _ in range(5):
        assert largest_allocation(buffer) < size


@pytest.mark.parametrize("game", GAMES)
def test_a_bad_buffer_is_refused_and_changes_nothing(game):
    env, twin = (vector.make(game, 4, seed=7, episode="hand") for _ in range(2))
    obs, mask, _ = env.reset()
    twin.reset()
    d = obs.shape[1]
    actions = mask.to(torch.uint8).argmax(dim=1)
    bad = [  # a buffer and what the message says of it
        (torch.empty(4, d, dtype=torch.float64), "float64"),
        (torch.empty(4, d + 1), rf"\(4, {d + 1}\)"),
        (torch.empty(3, d), rf"\(3, {d}\)"),
        (torch.empty(d, 4).T, "not contiguous"),
        (obs.numpy().copy(), "ndarray"),
    ]
    for out, said in bad:
        with pytest.raises(ValueError, match=rf"out must be a contiguous float32 tensor of shape \(4, {d}\).*{said}"):
            env.step(actions, out=out)
        with pytest.raises(ValueError, match="out must be a contiguous float32 tensor"):
            env.observe(out=out)
    for _ in range(30):  # the refusals left both batches alike
        a, b = env.step(actions), twin.step(actions)
        for x, y in zip(a, b):
            assert torch.equal(x, y)
        actions = a[1].to(torch.uint8).argmax(dim=1)
