"""Self-play PPO on the batched engine (``env.backend: vector``, training/learn/vector.py)."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from agents.learned.checkpoint import load_checkpoint
from agents.learned.network import ActorCritic, masked_log_probs
from agents.learned.neural import NeuralAgent
from training.learn.config import ConfigError, config_from_dict
from training.learn.ppo import PPOTrainer, compute_gae
from training.learn.vector import UniformPolicy, VectorSelfPlayCollector
from whist_env import classic_whist_v0, vector

TINY = {
    "total_steps": 512, "num_envs": 4, "rollout_steps": 64, "hidden_sizes": [32], "minibatch_size": 64, "update_epochs": 2,
    "snapshot_interval": 1, "pool_size": 2, "opponents": {"pool": 0.5}, "checkpoint_interval": 2,
}


def tiny_config(tmp_path: Path, backend: str = "vector", **train) -> dict:
    return {
        "game": "classic_whist", "options": {"episode": "hand"}, "seed": 7, "log_dir": str(tmp_path), "run_name": "tiny",
        "env": {"backend": backend}, "train": {**TINY, **train},
        "eval": {"interval_steps": 0, "num_deals": 2, "final_num_deals": 2, "opponents": ["random"]},
    }


# --------------------------------------------------------------------------- config validation
def test_backend_defaults_to_aec_and_vector_is_accepted(tmp_path):
    assert config_from_dict({"game": "classic_whist"}).env.backend == "aec"
    cfg = config_from_dict(tiny_config(tmp_path, opponents={"pool": 0.3, "random": 0.2, "checkpoint:x.pt": 0.1, "zoo:classic_whist": 0.1}))
    assert cfg.env.backend == "vector"


def test_vector_backend_refuses_unbatched_opponents(tmp_path):
    for spec in ("heuristic", "pimc:worlds=4", "ismcts:iters=10", "sb3:model.zip"):
        with pytest.raises(ConfigError, match=r"train\.opponents: .*stay on the AEC backend.*env\.backend: aec") as exc:
            config_from_dict(tiny_config(tmp_path, opponents={"pool": 0.2, spec: 0.5}))
        assert spec in str(exc.value)
    config_from_dict(tiny_config(tmp_path, backend="aec", opponents={"heuristic": 0.5}))  # fine on the AEC backend
    config_from_dict(tiny_config(tmp_path, opponents={"pool": 0.2, "heuristic": 0.0}))  # a zero share plays no episode


def test_vector_backend_refuses_a_game_or_options_the_engine_does_not_play(tmp_path, monkeypatch):
    config_from_dict({**tiny_config(tmp_path), "options": {"allow_revoke": True}})  # every option is batched now

    class Refusing:
        def __init__(self, *args, **options):
            raise ValueError("no batched revoke mode")

    monkeypatch.setattr(vector, "GAMES", {"classic_whist": Refusing})
    with pytest.raises(ConfigError, match=r"env\.backend: the batched engine refuses these options: no batched revoke mode\. Use env\.backend: aec"):
        config_from_dict({**tiny_config(tmp_path), "options": {"allow_revoke": True}})
    monkeypatch.setattr(vector, "GAMES", {})
    with pytest.raises(ConfigError, match=r"env\.backend: the batched engine \(whist_env\.vector\) does not play classic_whist yet"):
        config_from_dict(tiny_config(tmp_path))
    with pytest.raises(ConfigError, match=r"env\.backend: Input should be 'aec' or 'vector'"):
        config_from_dict({**tiny_config(tmp_path), "env": {"backend": "gpu"}})


def test_collector_refuses_an_opponent_that_cannot_act_in_batch():
    from agents.registry import make_agent

    env = vector.make("classic_whist", 2, episode="hand")
    with pytest.raises(ValueError, match="use env.backend: aec"):
        VectorSelfPlayCollector(env, [0, 1, 0, 1], np.random.default_rng(0), mix={"heuristic": 0.5},
                                opponents={"heuristic": make_agent("heuristic", "classic_whist")})


# --------------------------------------------------------------------------- the collector against the engine
class SpyEnv:
    """A batched env that records, for every step, what the engine handed out and was given."""

    def __init__(self, env, collector_ref: list) -> None:
        self.env, self.collector_ref, self.log = env, collector_ref, []
        self.num_envs, self.generator = env.num_envs, env.generator

    def reset(self):
        self.out = [x.clone() for x in self.env.reset()]
        self.log.append("reset")
        return self.out

    def state(self):
        self.last_state = self.env.state().clone()
        return self.last_state

    def step(self, actions, out=None):
        """The engine's step, into the collector's buffer ``out``: the log keeps copies of what it
        handed out then, so a buffer the collector wrote again too early would show."""
        obs, mask, seat = self.out
        collector = self.collector_ref[0]
        entry = {"obs": obs, "mask": mask, "seat": seat, "action": actions.clone(), "own": collector._own.clone(),
                 "state": getattr(self, "last_state", None)}
        out = self.env.step(actions, out=out)
        entry["rewards"], entry["done"] = out[3].clone(), out[4].clone()
        self.log.append(entry)
        self.out = [x.clone() for x in out[:3]]
        return out


def expected_samples(log, net, gamma, lam, scale, central):
    """The learner's decisions of every ended episode, as the AEC collector would make them:
    per game, episode and learner seat the decisions in order, every reward a seat receives
    credited to its last decision, GAE and the Monte-Carlo return per trajectory. Keyed by (step, game)."""
    steps = [e for e in log if e != "reset"]
    seat = torch.stack([e["seat"] for e in steps]).numpy()
    own = torch.stack([e["own"] for e in steps]).numpy()
    rewards = torch.stack([e["rewards"] for e in steps]).double().numpy()
    done = torch.stack([e["done"] for e in steps]).numpy()
    with torch.no_grad():
        values = net.value(torch.stack([e["state" if central else "obs"] for e in steps]).flatten(0, 1))
    values = values.double().view(len(steps), -1).numpy()
    out = {}
    for b in range(seat.shape[1]):
        trajs: dict[int, list] = defaultdict(list)  # seat -> [[t, credited reward]]
        for t in range(len(steps)):
            if own[t, b, seat[t, b]]:
                trajs[int(seat[t, b])].append([t, 0.0])
            for s, r in enumerate(rewards[t, b]):
                if r and trajs.get(s):
                    trajs[s][-1][1] += r * scale
            if done[t, b]:
                for seq in trajs.values():
                    ts = [t0 for t0, _ in seq]
                    credited = np.array([r for _, r in seq])
                    adv, ret = compute_gae(credited, values[ts, b], gamma, lam)
                    mc = compute_gae(credited, np.zeros(len(seq)), gamma, 1.0)[0]
                    out.update({(t0, b): (adv[j], ret[j], mc[j]) for j, t0 in enumerate(ts)})
                trajs = defaultdict(list)
    return out, steps


@pytest.mark.parametrize("episode,central,sparse", [("hand", False, True), ("game", True, False)])
def test_collector_batches_are_the_engines_transitions_with_aec_credit_and_gae(episode, central, sparse):
    """Every decision the collector trains on is what the engine handed out (observation, mask,
    global state) with the action taken; rewards and episode ends give each the AEC backend's
    credit, GAE and Monte-Carlo return; no decision is lost or repeated across rollouts. The
    second case runs the path of a GPU (every opponent over every game, no host reads) on the CPU."""
    torch.manual_seed(0)
    obs_size = vector.make("classic_whist", 1).observation_size
    ref: list = []
    env = SpyEnv(vector.make("classic_whist", 6, seed=3, episode=episode, target_score=3), ref)
    probe = vector.make("classic_whist", 1)
    probe.reset()  # the engine reads no state before a reset
    state_size = probe.state().shape[1]
    net = ActorCritic(obs_size, 52, [16], critic_input_size=state_size if central else None)
    pool = [(1, net.policy())]
    col = VectorSelfPlayCollector(env, [0, 1, 0, 1], np.random.default_rng(1), reward_scale=0.5,
                                  mix={"pool": 0.4, "random": 0.3}, opponents={"random": UniformPolicy()}, central_critic=central)
    col._sparse = sparse
    ref.append(col)
    col.reset_all(pool)
    gamma, lam = 0.99, 0.8
    got, episodes = {}, 0
    for _ in range(5 if episode == "hand" else 8):
        batch, stats = col.rollout(net, pool, 23, gamma, lam)
        episodes += len(stats.episode_returns)
        if batch is None:
            continue
        when, games = col.last_index
        for j, key in enumerate(zip(when.tolist(), games.tolist())):
            assert key not in got, "a decision was trained on twice"
            got[key] = j, batch
    assert episodes >= 6
    expected, steps = expected_samples(env.log, net, gamma, lam, 0.5, central)
    assert set(got) == set(expected) and len(got) > 100
    keys = sorted(got)

    def engine(field):
        return torch.stack([steps[t][field][b] for t, b in keys])

    def collected(field):
        return torch.stack([getattr(got[k][1], field)[got[k][0]] for k in keys])

    assert torch.equal(collected("obs"), engine("obs"))
    assert torch.equal(collected("masks").bool(), engine("mask"))
    actions = collected("actions")
    assert torch.equal(actions, engine("action")) and bool(engine("mask").gather(1, actions[:, None]).all())
    if central:
        assert torch.equal(collected("critic_inputs"), engine("state"))
    with torch.no_grad():
        logp = masked_log_probs(net.logits(engine("obs"), engine("mask"))).gather(1, actions[:, None]).squeeze(1)
    torch.testing.assert_close(collected("logprobs"), logp, atol=1e-5, rtol=0)
    want = torch.tensor([expected[k] for k in keys], dtype=torch.float32)
    torch.testing.assert_close(collected("advantages"), want[:, 0], atol=1e-4, rtol=0)
    torch.testing.assert_close(collected("returns"), want[:, 1], atol=1e-4, rtol=0)
    torch.testing.assert_close(collected("mc_returns"), want[:, 2], atol=1e-5, rtol=0)
    # opponents played only seats that were not the learner's; every kind of line-up occurred
    own = torch.stack([e["own"] for e in steps])
    assert set(own.sum(2).flatten().tolist()) == {2, 4}


def test_snapshots_that_leave_the_pool_finish_their_episodes_and_runs_repeat():
    obs_size = vector.make("classic_whist", 1).observation_size
    net = ActorCritic(obs_size, 52, [8])
    old, new = (1, net.policy()), (2, net.policy())

    def collector(seed):
        env = vector.make("classic_whist", 4, episode="hand")
        return VectorSelfPlayCollector(env, [0, 1, 0, 1], np.random.default_rng(seed), mix={"pool": 1.0})

    col = collector(0)
    col.reset_all([old])
    assert [s for s, _ in col.slots] == [1] and bool((col.opponent_slot == 0).all())
    col.rollout(net, [old], 10, 1.0, 0.9)
    col.rollout(net, [new], 10, 1.0, 0.9)  # the old snapshot keeps playing the episodes it began
    assert [s for s, _ in col.slots] == [2, 1] and bool((col.opponent_slot == 1).all())
    col.rollout(net, [new], 40, 1.0, 0.9)  # the episodes ended: new line-ups meet the new snapshot
    col.rollout(net, [new], 1, 1.0, 0.9)
    assert [s for s, _ in col.slots] == [2] and bool((col.opponent_slot == 0).all())

    a, b = collector(5), collector(5)
    batches = [c.rollout(net, [old], 60, 1.0, 0.9)[0] for c in (a, b)]
    assert torch.equal(batches[0].obs, batches[1].obs) and torch.equal(batches[0].actions, batches[1].actions)


# --------------------------------------------------------------------------- training runs
def test_tiny_vector_training_end_to_end(tmp_path, capsys):
    """``whist train --backend vector``: tensorboard events, checkpoints, the evaluation on the AEC
    env, a loadable agent, a resumed run; then a checkpoint opponent on the vector backend."""
    from training.cli import main

    data = tiny_config(tmp_path, backend="aec", total_steps=256, num_envs=4, rollout_steps=32, hidden_sizes=[16],
                       minibatch_size=128, update_epochs=1, opponents={"pool": 0.4, "random": 0.2})
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["train", str(path), "--no-progress", "--backend", "vector"]) == 0
    out = capsys.readouterr().out
    assert "vector backend" in out and "random" in out  # trained on the batched engine, evaluated on the AEC env
    run_dir = tmp_path / "tiny"
    final = run_dir / "checkpoints" / "final.pt"
    assert list(run_dir.glob("events.out.tfevents.*"))
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["env"]["backend"] == "vector"
    ckpt = load_checkpoint(final, game="classic_whist")
    assert ckpt["global_step"] == 256 and ckpt["config"]["env"]["backend"] == "vector"
    history = ckpt["extra"]["history"]
    assert len(history) == 2 and all(h["env_seconds"] > 0 and h["inference_seconds"] > 0 for h in history)
    assert any(math.isfinite(h.get("policy_loss", math.nan)) for h in history)
    assert "time" in PPOTrainer._progress_fields(history[-1], 1.0)
    agent = NeuralAgent.from_checkpoint(final, game="classic_whist")
    env = classic_whist_v0.raw_env(episode="hand")
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs)] == 1

    assert main(["train", str(path), "--no-progress", "--backend", "vector", "--resume", "--total-steps", "384",
                 "--eval-deals", "0"]) == 0
    assert load_checkpoint(run_dir / "checkpoints" / "latest.pt")["global_step"] == 384

    # the trained network as a checkpoint opponent: neural opponents act in batch
    spec = f"checkpoint:{final}"
    cfg = config_from_dict(tiny_config(tmp_path / "b", total_steps=256, num_envs=4, rollout_steps=32, hidden_sizes=[16],
                                       minibatch_size=128, update_epochs=1, opponents={spec: 0.6}))
    trainer = PPOTrainer(cfg)
    assert isinstance(trainer.collector, VectorSelfPlayCollector)
    history = trainer.train()
    assert any(math.isfinite(h.get(f"return_vs/{spec}", math.nan)) for h in history)
