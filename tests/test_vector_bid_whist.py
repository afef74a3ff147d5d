"""The batched Bid Whist engine against the AEC reference (RULES.md §6, §1.9).

Differential tests: B games run through ``whist_env.vector`` and B ``bid_whist_v0.raw_env`` side
by side on the same deals (each hand's deal is read from the batched engine with
``current_deal(i)`` and given to the raw env: ``reset(options=...)`` for an episode's first hand,
``redeal(...)`` for the later hands of a game), under uniform-random legal play (auction calls,
discards, declarations and cards); every decision's seat, mask and observation, every step's
rewards and episode ends, the hand points, scores and winners must be exactly equal.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from whist_env import bid_whist_v0, vector

B = 64


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # B = 64 tensors are tiny: intra-op threads only add start-up and contention costs
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _assert_same_decisions(env, raws, obs, mask, seat, where: str) -> None:
    agents = [raw.agent_selection for raw in raws]
    seen = [raw.observe(agent) for raw, agent in zip(raws, agents)]
    raw_seat = np.array([int(agent[7:]) for agent in agents])  # "player_i"
    np.testing.assert_array_equal(seat.numpy(), raw_seat, err_msg=f"{where}: seat to act")
    np.testing.assert_array_equal(mask.numpy(), np.stack([s["action_mask"] for s in seen]).astype(bool), err_msg=f"{where}: action mask")
    raw_obs = np.stack([s["observation"] for s in seen])
    if not np.array_equal(obs.numpy(), raw_obs):
        game, index = np.argwhere(obs.numpy() != raw_obs)[0]
        name = next(n for n, s in env.layout.items() if s.start <= index < s.stop)
        raise AssertionError(
            f"{where}: observation of game {game} differs first in {name!r} (entry {index}): {obs[game, index]} != {raw_obs[game, index]}"
        )


def play_both(options: dict, steps: int, seed: int = 0, num_envs: int = B, deals=None, script=None) -> dict[str, int]:
    """Play ``steps`` decisions of ``num_envs`` games in both engines, asserting equality at every
    one; returns counts of what was compared (decisions, hands, episodes, truncations, made and
    set contracts, Bostons). ``script``: optional list of action labels played in every game
    for the first steps (random legal play after it)."""
    env = vector.make("bid_whist", num_envs, seed=seed, **options)
    obs, mask, seat = env.reset(options=deals)
    raws = [bid_whist_v0.raw_env(**options) for _ in range(num_envs)]
    for i, raw in enumerate(raws):
        raw.reset(seed=seed * 10_000 + i, options=env.current_deal(i))
    generator = torch.Generator().manual_seed(seed)
    counts = dict.fromkeys(["decisions", "hands", "episodes", "truncated", "made", "set", "boston", "defenders_scored"], 0)
    script = list(script or [])
    for step in range(steps):
        _assert_same_decisions(env, raws, obs, mask, seat, f"step {step}")
        if step % 11 == 0:
            raw_state = np.stack([raw.state() for raw in raws])
            np.testing.assert_array_equal(env.state().numpy(), raw_state, err_msg=f"step {step}: global state")
        if step < len(script):
            actions = torch.full((num_envs,), env.rules.action_id(script[step]), dtype=torch.int64)
        else:
            actions = torch.multinomial(mask.float(), 1, generator=generator).squeeze(1)
        for raw, action in zip(raws, actions.tolist()):
            raw.step(action)
        obs, mask, seat, rewards, done = env.step(actions)
        counts["decisions"] += num_envs
        paid = np.array([[raw.rewards[a] for a in raw.possible_agents] for raw in raws], dtype=np.float32)
        np.testing.assert_array_equal(rewards.numpy(), paid, err_msg=f"step {step}: rewards")
        ended = np.array([raw.game.done or raw.game.truncated for raw in raws])
        np.testing.assert_array_equal(done.numpy(), ended, err_msg=f"step {step}: done")
        truncated = np.array([raw.game.truncated for raw in raws])
        np.testing.assert_array_equal(env.truncated.numpy(), truncated, err_msg=f"step {step}: truncated")
        scored = np.array(["last_hand" in raw.infos[raw.agents[0]] for raw in raws])
        for i in np.flatnonzero(scored | ended):
            raw = raws[i]
            game = raw.game
            if scored[i]:
                counts["hands"] += 1
                points = game.last_hand_points
                assert env.hand_points[i].tolist() == points, f"step {step}, game {i}: hand points"
                assert env.final_scores[i].tolist() == list(game.last_hand[2]), f"step {step}, game {i}: scores"
                declarer, _level, _mode, books = game.last_contract
                counts["made" if points[declarer % 2] > 0 else "set"] += 1
                counts["boston"] += 13 in books
                counts["defenders_scored"] += points[1 - declarer % 2] > 0
            if ended[i]:
                counts["episodes"] += 1
                counts["truncated"] += game.truncated
                assert env.final_scores[i].tolist() == game.scores, f"step {step}, game {i}: final scores"
                assert np.flatnonzero(env.winners[i].numpy()).tolist() == game.winners, f"step {step}, game {i}: winners"
                raw.reset(seed=seed * 10_000 + i + step * num_envs, options=env.current_deal(i))
            else:
                raw.redeal(env.current_deal(i))
    _assert_same_decisions(env, raws, obs, mask, seat, "end")
    return counts


if __name__ == "__main__":
    import sys
    import time

    start = time.perf_counter()
    print(play_both(eval(sys.argv[1]) if len(sys.argv) > 1 else {}, int(sys.argv[2]) if len(sys.argv) > 2 else 200))
    print(time.perf_counter() - start)
