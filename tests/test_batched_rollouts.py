"""Rollouts of a policy network played in lockstep (agents/search/rollout.py ``Rollout.values``,
``NeuralAgent.act_batch``): the same values as the rollouts one by one, the same choices as
``act``, and ``pimc:rollout=zoo`` plays the decisions it played one rollout at a time."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import whist_env  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.search.rollout import Rollout  # noqa: E402


def _table(game: str, steps: int, seed: int = 2):
    env = whist_env.GAMES[game].raw_env(episode="hand")
    env.reset(seed=seed)
    heuristic = make_agent("heuristic", game)
    from whist_env.envs.policy_action import policy_action

    for _ in range(steps):
        env.step(policy_action(heuristic, env, env.agent_selection))
    return env


@pytest.mark.parametrize(("game", "steps"), [("classic_whist", 9), ("bid_whist", 14), ("romanian_whist", 6), ("cutthroat_whist", 4)])
def test_lockstep_rollouts_equal_the_rollouts_one_by_one(game, steps):
    env = _table(game, steps)
    agent = env.agent_selection
    legal = np.flatnonzero(env.observe(agent)["action_mask"])
    rng = np.random.default_rng(0)
    worlds = [env.resample_from_infostate(agent, rng) for _ in range(3)]
    rollout = Rollout(make_agent("zoo", game))
    assert rollout.batched
    seat = env.game.current_player
    before = [(list(w.game.hands), list(w.game.history()), w.agent_selection) for w in worlds]
    got = rollout.values(worlds, seat, legal)
    assert [(list(w.game.hands), list(w.game.history()), w.agent_selection) for w in worlds] == before  # left untouched
    expected = np.array([[rollout.value(world, seat, int(a)) for a in legal] for world in worlds])
    assert got.shape == (3, len(legal)) and np.array_equal(got, expected)


def test_act_batch_is_act_one_by_one_and_checks_its_input():
    env = _table("classic_whist", 5)
    agent = make_agent("zoo", "classic_whist")
    rng = np.random.default_rng(1)
    worlds = [env.resample_from_infostate(env.agent_selection, rng) for _ in range(4)]
    observations = [w.observe(w.agent_selection) for w in worlds]
    assert agent.act_batch(observations) == [agent.act(o) for o in observations]
    assert agent.act_batch([]) == []
    bad = dict(observations[0], action_mask=np.zeros_like(observations[0]["action_mask"]))
    with pytest.raises(ValueError, match="no legal action"):
        agent.act_batch([observations[0], bad])


def test_a_heuristic_rollout_is_not_batched_and_gives_the_same_values():
    env = _table("classic_whist", 9)
    agent = env.agent_selection
    legal = np.flatnonzero(env.observe(agent)["action_mask"])
    worlds = [env.resample_from_infostate(agent, np.random.default_rng(3)) for _ in range(2)]
    rollout = Rollout(make_agent("heuristic", "classic_whist"))
    assert not rollout.batched
    expected = np.array([[rollout.value(world, env.game.current_player, int(a)) for a in legal] for world in worlds])
    assert np.array_equal(rollout.values(worlds, env.game.current_player, legal), expected)


def test_pimc_with_a_network_rollout_plays_as_one_rollout_at_a_time(monkeypatch):
    env = _table("classic_whist", 6)
    spec = "pimc:worlds=4,exact=0,rollouts=0,rollout=zoo,seed=5"
    batched = make_agent(spec, "classic_whist", seed=5)
    one_by_one = make_agent(spec, "classic_whist", seed=5)
    monkeypatch.setattr(one_by_one.rollout, "batched", False)
    a = batched.act_in_env(env, env.agent_selection)
    b = one_by_one.act_in_env(env, env.agent_selection)
    assert a == b and np.array_equal(batched.last_values, one_by_one.last_values, equal_nan=True)
