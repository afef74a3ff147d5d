"""RLlib glue: the MultiAgentEnv view of every game, and one PPO iteration on a local Ray.

Skipped without ``ray[rllib]`` (optional extra ``whist-env[rllib]``).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import whist_env  # noqa: E402
from whist_env.wrappers.rllib import RLlibWhistEnv  # noqa: E402


def _play(env: RLlibWhistEnv, seed: int, rng: np.random.Generator):
    """One random legal episode; returns (actions in order, summed rewards, last step)."""
    obs, _ = env.reset(seed=seed)
    actions, totals = [], dict.fromkeys(env.possible_agents, 0.0)
    while True:
        (agent,) = obs
        assert env.observation_spaces[agent].contains(obs[agent])
        action = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))
        actions.append((agent, action))
        obs, rewards, terms, truncs, infos = env.step({agent: action})
        for a, r in rewards.items():
            totals[a] += r
        if terms["__all__"] or truncs["__all__"]:
            return actions, totals, (obs, rewards, terms, truncs, infos)


@pytest.mark.parametrize("game", sorted(whist_env.GAMES))
def test_rewards_match_the_aec_env(game):
    env = RLlibWhistEnv({"game": game, "options": {"episode": "hand"}})
    actions, totals, (obs, _, terms, truncs, infos) = _play(env, seed=3, rng=np.random.default_rng(0))
    assert set(obs) == set(env.possible_agents) == set(infos)  # every agent's last observation
    assert all(terms.values()) and not any(truncs.values())
    assert not any(i["illegal_action"] for i in infos.values())
    aec = whist_env.GAMES[game].env(episode="hand")
    aec.reset(seed=3)
    expected = dict.fromkeys(aec.possible_agents, 0.0)
    for agent, action in actions:
        assert aec.agent_selection == agent
        aec.step(action)
        for a, r in aec.rewards.items():
            expected[a] += r
    assert totals == pytest.approx(expected)


def test_spaces_and_rllib_env_check():
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    env = RLlibWhistEnv({"game": "classic_whist"})
    space = env.get_observation_space("player_0")
    assert set(space.spaces) == {"observations", "action_mask"}
    assert space["action_mask"].dtype == np.float32 and env.get_action_space("player_0").n == 52
    check_multiagent_environments(env)  # steps with an unmasked random action: must not raise


def test_illegal_action_modes():
    env = RLlibWhistEnv({"game": "classic_whist", "illegal_action": "raise"})
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    bad = int(np.flatnonzero(obs[agent]["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="illegal action"):
        env.step({agent: bad})
    env = RLlibWhistEnv({"game": "classic_whist"})
    obs, _ = env.reset(seed=0)
    _, rewards, terms, _, infos = env.step({agent: bad})
    assert rewards[agent] == -1.0 and terms["__all__"] and infos[agent]["illegal_action"]
    assert env.illegal_actions == 1
    with pytest.raises(ValueError, match="unknown RLlibWhistEnv config"):
        RLlibWhistEnv({"game": "classic_whist", "honours": False})
    with pytest.raises(ValueError):
        RLlibWhistEnv({"game": "classic_whist", "options": {"honours": "maybe"}})


def test_one_ppo_iteration_with_two_env_runners(tmp_path):
    """One PPO iteration on 2 env runners takes no illegal action; the policy written by
    save_policy (tensors, no pickle) plays exactly as RLlib's own checkpoint of the module."""
    import ray
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModule

    from agents.registry import make_agent
    from training.learn.rllib.algorithm import ppo_config, save_policy, summarize

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        config = ppo_config("classic_whist", honours=False, num_env_runners=2, train_batch_size=512, minibatch_size=256, num_epochs=1,
                            seed=0, hidden_sizes=(32, 16))
        algo = config.build_algo()
        try:
            result = summarize(algo.train())
            assert result["env_steps"] >= 512
            assert result["illegal_actions"] == 0
            assert result["episode_len_mean"] == 52  # an illegal move would cut a hand short
            assert set(result["agent_returns"]) == {f"player_{i}" for i in range(4)}
            assert result["episode_return_mean"] == pytest.approx(0.0)  # zero-sum: read per agent
            path = algo.save_to_path(str(tmp_path / "ckpt"))
            save_policy(algo, tmp_path / "policy")
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    rllib_module = RLModule.from_checkpoint(f"{path}/learner_group/learner/rl_module/shared")  # RLlib's own loader (pickles)
    agent = make_agent(f"rllib:{tmp_path / 'policy'}", "classic_whist")
    assert agent.module_for(2) == "shared" and agent.trained_options["honours"] is False
    env = RLlibWhistEnv({"game": "classic_whist", "options": {"honours": False}})
    obs, _ = env.reset(seed=1)
    for _ in range(20):
        (seat,) = obs
        batch = {"obs": {k: torch.as_tensor(v)[None] for k, v in obs[seat].items()}}
        expected = rllib_module.forward_inference(batch)["action_dist_inputs"][0].detach().numpy()
        seen = {"observation": obs[seat]["observations"], "action_mask": obs[seat]["action_mask"].astype(np.int8)}
        np.testing.assert_array_equal(agent.logits(seen, "shared"), expected)
        action = agent.act(seen, {"seat": int(seat.rpartition("_")[2])})
        assert obs[seat]["action_mask"][action] == 1.0
        obs, *_ = env.step({seat: action})


def test_module_mapping():
    from training.learn.rllib.algorithm import module_mapping

    assert set(module_mapping("classic_whist").values()) == {"shared"}
    assert module_mapping("classic_whist", "side") == {"player_0": "side_0", "player_1": "side_1", "player_2": "side_0", "player_3": "side_1"}
    assert sorted(set(module_mapping("cutthroat_whist", "side").values())) == ["side_0", "side_1", "side_2"]
    with pytest.raises(ValueError, match="policies must be"):
        module_mapping("classic_whist", "per_seat")
