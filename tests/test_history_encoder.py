"""The card-centric actor that reads the hand's actions in order (agents/learned/history_encoder.py,
``train.history_width``): the GRU summary reads the actions so far and their order, nothing past
them; an actor without it does not read the history blocks; the architecture is checked."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import whist_env  # noqa: E402
from agents.learned.history_encoder import HistoryEncoder  # noqa: E402
from agents.learned.network import ActorCritic, PolicyNet, architecture  # noqa: E402


def _observations(game: str = "classic_whist", steps: int = 9, seed: int = 4) -> tuple[object, torch.Tensor]:
    """A history env and the observations of the player to act over ``steps`` random actions."""
    env = whist_env.GAMES[game].raw_env(observation="history", episode="hand")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(steps):
        agent = env.agent_selection
        rows.append(env.observe(agent)["observation"])
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    return env, torch.as_tensor(np.stack(rows))


def test_the_summary_reads_the_actions_so_far_in_order():
    torch.manual_seed(0)
    env, obs = _observations()
    lay = env.observation_layout()
    encoder = HistoryEncoder(lay, 4, env.game.num_actions, 16)
    out = encoder(obs)
    assert out.shape == (len(obs), 16) and out.dtype == torch.float32
    assert not out[0].any() and out[1:].abs().sum(1).gt(0).all()  # no action yet: zeros
    # rows past the actions so far are not read
    padded = obs.clone()
    start, count = lay["history"].start, int(obs[3, lay["history_mask"]].sum())
    padded[3, start + 4 * count : lay["history"].stop] = 7.0
    assert torch.equal(encoder(padded)[3], out[3])
    # the order is read: the same actions in another order give another summary
    swapped = obs.clone()
    a, b = slice(start, start + 4), slice(start + 4, start + 8)
    swapped[5, a], swapped[5, b] = obs[5, b], obs[5, a]
    assert not torch.allclose(encoder(swapped)[5], out[5])
    # each observation is summarised on its own (a batch reads as its rows one by one)
    assert torch.allclose(torch.cat([encoder(obs[i : i + 1]) for i in range(len(obs))]), out, atol=1e-6)


def test_a_card_actor_reads_the_history_only_through_its_encoder():
    torch.manual_seed(1)
    env, obs = _observations()
    lay = env.observation_layout()
    size, actions = obs.shape[1], env.game.num_actions
    plain = PolicyNet(size, actions, [32], architecture=architecture("cards", lay, 4))
    rich = PolicyNet(size, actions, [32], architecture=architecture("cards", lay, 4, history_width=16))
    assert rich.architecture["history_width"] == 16 and "history_width" not in plain.architecture
    changed = obs.clone()
    start = lay["history"].start
    changed[4, start + 1] = (changed[4, start + 1] + 1) % 52  # the first action's card
    assert torch.equal(plain.actor(changed), plain.actor(obs))
    assert not torch.allclose(rich.actor(changed)[4], rich.actor(obs)[4])
    # the weights travel with the architecture
    critic = ActorCritic(size, actions, [32], architecture=rich.architecture)
    copy = PolicyNet.from_actor_critic_state(critic.state_dict(), size, actions, [32], (), critic.architecture)
    assert torch.equal(copy.actor(obs), critic.actor(obs))


def test_the_history_actor_is_refused_where_it_cannot_work():
    env = whist_env.classic_whist_v0.raw_env()
    with pytest.raises(ValueError, match="observation='history'"):
        architecture("cards", env.observation_layout(), 4, history_width=16)
    rich = whist_env.classic_whist_v0.raw_env(observation="history")
    with pytest.raises(ValueError, match="history_width needs the 'cards' actor"):
        architecture("mlp", rich.observation_layout(), 4, history_width=16)
    from whist_env.envs.symmetry import SuitSymmetry

    arch = architecture("cards", rich.observation_layout(), 4, history_width=16)
    size = rich.observation_space("player_0")["observation"].shape[0]
    with pytest.raises(ValueError, match="canonical suits"):
        PolicyNet(size, 52, [32], suit_tables=SuitSymmetry(rich).canonical_tables(), architecture=arch)
