"""Self-play PPO (training/learn/ppo.py), the masked network (agents/learned/network.py) and ``whist train``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from agents.learned.checkpoint import load_checkpoint
from agents.learned.network import ActorCritic, masked_entropy, masked_log_probs, sample_actions
from agents.learned.neural import NeuralAgent
from training.learn.config import config_from_dict
from training.learn.ppo import PPOTrainer, SelfPlayCollector, build_batch, compute_gae, seat_sides
from whist_env import classic_whist_v0
from whist_env.envs.whist_env import WhistEnv
from whist_env.rules.classic import ClassicWhist

TINY_TRAIN = {
    "total_steps": 512, "num_envs": 2, "rollout_steps": 64, "hidden_sizes": [32], "minibatch_size": 64,
    "update_epochs": 2, "snapshot_interval": 1, "pool_size": 2, "opponents": {"pool": 0.5}, "checkpoint_interval": 2,
}


def tiny_config(tmp_path: Path, **train) -> dict:
    return {
        "game": "classic_whist", "options": {"episode": "hand"}, "seed": 7, "log_dir": str(tmp_path), "run_name": "tiny",
        "train": {**TINY_TRAIN, **train}, "eval": {"interval_steps": 0, "num_deals": 2, "final_num_deals": 2, "opponents": ["random"]},
    }


# --------------------------------------------------------------------------- masked distribution
def test_masked_sampling_never_picks_illegal_actions():
    torch.manual_seed(0)
    net = ActorCritic(624, 52, [32])
    gen = torch.Generator().manual_seed(1)
    obs = torch.randn(64, 624)
    mask = (torch.rand(64, 52, generator=gen) < 0.1).to(torch.int8)
    mask[torch.arange(64), torch.randint(0, 52, (64,), generator=gen)] = 1  # at least one legal action
    with torch.no_grad():
        logits = net.logits(obs, mask) + 20 * torch.randn(64, 52, generator=gen) * (1 - mask)  # tempt illegal ones
        logits = logits.masked_fill(mask == 0, -1e9)
        for _ in range(50):
            a = sample_actions(logits, gen)
            assert bool(mask[torch.arange(64), a].all())
        a = net.logits(obs, mask).argmax(-1)
        assert bool(mask[torch.arange(64), a].all())


def test_masked_log_probs_and_entropy_are_those_of_the_legal_distribution():
    torch.manual_seed(0)
    raw = torch.randn(3, 6)
    mask = torch.tensor([[1, 0, 1, 0, 0, 1], [0, 0, 0, 1, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=torch.int8)
    logits = raw.masked_fill(mask == 0, -1e9)
    logp = masked_log_probs(logits)
    ent = masked_entropy(logits, mask)
    for row in range(3):
        legal = mask[row].bool()
        ref = torch.distributions.Categorical(logits=raw[row][legal])
        assert torch.allclose(logp[row][legal], ref.logits, atol=1e-6)
        assert torch.allclose(ent[row], ref.entropy(), atol=1e-6)
        assert float(logp[row][~legal].exp().sum()) == 0.0
    assert torch.isfinite(ent).all() and float(ent[1]) == 0.0


# --------------------------------------------------------------------------- GAE
def test_gae_hand_computed():
    rewards = np.array([0.0, 0.0, 1.0])
    values = np.array([0.5, 0.2, 0.4])
    gamma, lam = 0.9, 0.8
    # deltas: d2 = 1 - 0.4 = 0.6; d1 = 0 + 0.9*0.4 - 0.2 = 0.16; d0 = 0 + 0.9*0.2 - 0.5 = -0.32
    # A2 = 0.6; A1 = 0.16 + 0.72*0.6 = 0.592; A0 = -0.32 + 0.72*0.592 = 0.10624
    adv, ret = compute_gae(rewards, values, gamma, lam)
    np.testing.assert_allclose(adv, [0.10624, 0.592, 0.6], atol=1e-6)
    np.testing.assert_allclose(ret, [0.60624, 0.792, 1.0], atol=1e-6)
    # gamma = lambda = 1: advantage = (sum of future rewards) - value
    adv, ret = compute_gae(np.array([0.0, 2.0, -1.0]), np.array([0.3, 0.1, 0.2]), 1.0, 1.0)
    np.testing.assert_allclose(ret, [1.0, 1.0, -1.0], atol=1e-6)
    np.testing.assert_allclose(adv, [0.7, 0.9, -1.2], atol=1e-6)
    adv, ret = compute_gae(np.array([1.0]), np.array([0.25]), 0.5, 0.5, last_value=2.0)
    np.testing.assert_allclose(adv, [1.0 + 1.0 - 0.25])


def test_seat_sides_from_layout():
    assert seat_sides(classic_whist_v0.raw_env()) == [0, 1, 0, 1]


# --------------------------------------------------------------------------- reward credit
class RecordingEnv(WhistEnv):
    """Classic Whist env that remembers, per finished episode, who acted last and the rewards paid."""

    def __init__(self, **options):
        super().__init__(ClassicWhist, **options)
        self.finished: list[tuple[int, dict[str, float]]] = []

    def step(self, action):
        seat = int(self.agent_selection.split("_")[1])
        super().step(action)
        if any(self.terminations.values()):
            self.finished.append((seat, dict(self.rewards)))


def test_learner_seat_gets_its_hand_reward_on_its_last_decision_whoever_ends_the_hand():
    envs: list[RecordingEnv] = []

    def make_env():
        envs.append(RecordingEnv(episode="hand"))
        return envs[-1]

    torch.manual_seed(0)
    net = ActorCritic(624, 52, [16])
    opponent = ActorCritic(624, 52, [16])
    scale = 0.1
    col = SelfPlayCollector(make_env, 2, np.random.default_rng(0), torch.Generator().manual_seed(0), reward_scale=scale, mix={"pool": 1.0})
    pool = [(0, opponent)]
    col.reset_all(pool)
    lineups = [list(c) for c in col.controllers]
    finished, stats = col.collect(net, pool, 52)  # exactly one hand per env
    assert len(stats.episode_lengths) == 2 and stats.episode_lengths == [52, 52]
    by_env = [finished[:2], finished[2:]]  # envs finish in index order within the last step
    for env, lineup, trajs in zip(envs, lineups, by_env):
        ((_, rewards),) = env.finished
        learner_seats = [s for s in range(4) if lineup[s] == -1]
        assert len(learner_seats) == 2 and learner_seats[0] % 2 == learner_seats[1] % 2  # one partnership
        assert sorted(t.seat for t in trajs) == learner_seats  # only the learner's decisions are kept
        for t in trajs:
            assert len(t) == 13
            assert t.rewards[:-1] == [0.0] * 12
            assert t.rewards[-1] == pytest.approx(scale * rewards[f"player_{t.seat}"])


def test_reward_when_opponent_plays_last_card():
    """Force the case: search seeds until an opponent plays the hand's last card, then check the credit."""
    for seed in range(20):
        env = RecordingEnv(episode="hand")
        net = ActorCritic(624, 52, [8])
        col = SelfPlayCollector(lambda env=env: env, 1, np.random.default_rng(seed), torch.Generator().manual_seed(seed), reward_scale=1.0, mix={"pool": 1.0})
        pool = [(0, ActorCritic(624, 52, [8]))]
        col.reset_all(pool)
        lineup = list(col.controllers[0])
        finished, _ = col.collect(net, pool, 52)
        ((last_seat, rewards),) = env.finished
        if lineup[last_seat] == -1:
            continue
        assert rewards[f"player_{last_seat}"] != 0 or all(v == 0 for v in rewards.values())
        for t in finished:
            assert lineup[t.seat] == -1
            assert t.rewards[-1] == rewards[f"player_{t.seat}"]
        return
    pytest.fail("no seed in 20 had an opponent play the last card")


def test_build_batch_shapes():
    net = ActorCritic(624, 52, [8])
    col = SelfPlayCollector(lambda: classic_whist_v0.raw_env(episode="hand"), 1, np.random.default_rng(0), torch.Generator().manual_seed(0))
    col.reset_all([])
    finished, stats = col.collect(net, [], 60)
    assert len(finished) == 4 and stats.learner_steps == 60
    batch = build_batch(finished, 1.0, 0.95)
    assert len(batch) == 52
    assert batch.obs.shape == (52, 624) and batch.obs.dtype == torch.float32
    assert batch.masks.shape == (52, 52) and batch.actions.dtype == torch.int64
    assert bool(batch.masks[torch.arange(52), batch.actions].all())
    assert build_batch([], 1.0, 0.95) is None
    # the 8 decisions of the second hand stay open for the next rollout
    assert sum(len(t) for t in col.trajs[0].values()) == 8


# --------------------------------------------------------------------------- training runs
def test_tiny_training_writes_checkpoint_and_tensorboard(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    data = tiny_config(tmp_path)
    data["eval"]["interval_steps"] = 256
    cfg = config_from_dict(data)
    run_dir = cfg.run_dir()
    writer = SummaryWriter(str(run_dir))
    seen = []
    trainer = PPOTrainer(cfg, run_dir=run_dir, writer=writer, evaluator=lambda net, step: seen.append(step) or {"eval/x": 1.0})
    history = trainer.train()
    writer.close()
    assert trainer.global_step == 512 and len(history) == 4
    assert all(math.isfinite(h["policy_loss"]) and math.isfinite(h["value_loss"]) for h in history)
    assert len(trainer.pool) == 2
    assert list(run_dir.glob("events.out.tfevents.*"))
    ckpt = load_checkpoint(run_dir / "checkpoints" / "final.pt", game="classic_whist")
    assert ckpt["global_step"] == 512 and ckpt["config"]["train"]["num_envs"] == 2
    assert ckpt["options"]["episode"] == "hand" and ckpt["options"]["target_score"] == 5
    agent = NeuralAgent.from_checkpoint(run_dir / "checkpoints" / "latest.pt", game="classic_whist")
    env = classic_whist_v0.raw_env(episode="hand")
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs)] == 1
    assert seen == [256, 512]  # evaluation every eval.interval_steps


def test_same_seed_same_learning_curve(tmp_path):
    runs = []
    for i in range(2):
        cfg = config_from_dict(tiny_config(tmp_path / str(i), total_steps=384))
        runs.append(PPOTrainer(cfg).train())
    keys = ("policy_loss", "value_loss", "entropy", "approx_kl", "episode_return")
    assert [[h[k] for k in keys] for h in runs[0]] == [[h[k] for k in keys] for h in runs[1]]
    other = PPOTrainer(config_from_dict({**tiny_config(tmp_path / "x", total_steps=384), "seed": 8})).train()
    assert [h["policy_loss"] for h in other] != [h["policy_loss"] for h in runs[0]]


def test_resume_continues_from_latest(tmp_path):
    cfg = config_from_dict(tiny_config(tmp_path, total_steps=256))
    first = PPOTrainer(cfg, run_dir=cfg.run_dir())
    first.train()
    latest = cfg.run_dir() / "checkpoints" / "latest.pt"
    resumed = PPOTrainer(cfg, run_dir=cfg.run_dir())
    resumed.load_state(load_checkpoint(latest))
    assert resumed.global_step == 256 and resumed.update == 2 and len(resumed.pool) == 2
    for k, v in first.net.state_dict().items():
        assert torch.equal(resumed.net.state_dict()[k], v)
    history = resumed.train(total_steps=512)
    assert resumed.global_step == 512 and resumed.update == 4 and len(history) == 4
    assert load_checkpoint(latest)["global_step"] == 512
    bigger = config_from_dict(tiny_config(tmp_path, hidden_sizes=[64]))
    with pytest.raises(ValueError, match="hidden_sizes"):
        PPOTrainer(bigger).load_state(load_checkpoint(latest))


TIMINGS = ("rollout_seconds", "update_seconds", "env_seconds", "inference_seconds")


def stop_after(trainer: PPOTrainer, rollouts: int) -> None:
    """Ask ``trainer`` to stop (as Ctrl-C does) once ``rollouts`` rollouts have been collected."""
    real, calls = trainer.collector.rollout, []

    def rollout(*args, **kwargs):
        calls.append(1)
        if len(calls) == rollouts:
            trainer.request_stop()
        return real(*args, **kwargs)

    trainer.collector.rollout = rollout


@pytest.mark.parametrize(("backend", "central_critic"), [("aec", False), ("aec", True), ("vector", False), ("vector", True)])
def test_a_stopped_and_resumed_run_equals_an_uninterrupted_one_bit_for_bit(tmp_path, backend, central_critic):
    """Open episodes, trajectories, line-ups, pool snapshots that left the pool, the random
    opponent's generator and every random stream carry over: a run stopped after update 6 (not
    a checkpoint update) and resumed ends with the uninterrupted run's weights, optimizer state
    and learning curve."""
    train = {"total_steps": 1024, "num_envs": 3, "rollout_steps": 32, "snapshot_interval": 1, "pool_size": 2,
             "opponents": {"pool": 0.4, "random": 0.3}, "checkpoint_interval": 4, "central_critic": central_critic}
    base = {**tiny_config(tmp_path, **train), "env": {"backend": backend}}
    whole = PPOTrainer(config_from_dict({**base, "run_name": "whole"}))
    whole.train()
    cfg = config_from_dict({**base, "run_name": "stopped"})
    stopped = PPOTrainer(cfg, run_dir=cfg.run_dir())
    stop_after(stopped, 6)
    stopped.train()
    assert stopped.stopped and stopped.update == 6
    if backend == "aec":  # the random opponent has played: its generator has moved
        fresh = PPOTrainer(cfg).collector.fixed["random"].random_state()
        assert stopped.collector.fixed["random"].random_state() != fresh
    resumed = PPOTrainer(cfg, run_dir=cfg.run_dir())
    resumed.load_state(load_checkpoint(cfg.run_dir() / "checkpoints" / "latest.pt"))
    resumed.train()
    assert resumed.global_step == whole.global_step
    a, b = whole.net.state_dict(), resumed.net.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    def curve(history):  # NaN (no episode ended in an update) compares equal to NaN here
        return [{k: "nan" if v != v else v for k, v in h.items() if k not in TIMINGS} for h in history]

    assert curve(resumed.history) == curve(whole.history)
    oa, ob = whole.optimizer.state_dict()["state"], resumed.optimizer.state_dict()["state"]
    assert all(torch.equal(oa[k]["exp_avg_sq"], ob[k]["exp_avg_sq"]) for k in oa)


def test_a_checkpoint_of_another_backends_collector_is_refused_and_changes_nothing(tmp_path):
    base = {**tiny_config(tmp_path, total_steps=128), "env": {"backend": "aec"}}
    cfg = config_from_dict(base)
    PPOTrainer(cfg, run_dir=cfg.run_dir()).train()
    ckpt = load_checkpoint(cfg.run_dir() / "checkpoints" / "latest.pt")
    vector = PPOTrainer(config_from_dict({**base, "env": {"backend": "vector"}}))
    before = vector.collector.env.state_dict()
    with pytest.raises(ValueError, match="aec"):
        vector.collector.load_state_dict(ckpt["extra"]["collector"], [], None)
    after = vector.collector.env.state_dict()
    assert all(torch.equal(before["tensors"][k], after["tensors"][k]) for k in before["tensors"])


def whist_train(config_path: Path, **kw) -> int:
    """``whist train CONFIG --no-progress [--key value ...]`` through the real command line."""
    from training.cli import main

    argv = ["train", str(config_path), "--no-progress"]
    for k, v in kw.items():
        argv += [f"--{k.replace('_', '-')}"] + ([] if v is True else [str(v)])
    return main(argv)


def test_whist_train_cli_end_to_end_and_resume(tmp_path, capsys):
    path = tmp_path / "tiny.yaml"
    data = tiny_config(tmp_path, total_steps=256)
    data["eval"].update(interval_steps=128, opponents=["random", "heuristic"])  # the real evaluate_pair, mid-run
    path.write_text(yaml.safe_dump(data))
    assert whist_train(path) == 0
    out = capsys.readouterr().out
    run_dir = tmp_path / "tiny"
    assert "random" in out and "heuristic" in out and (run_dir / "checkpoints" / "final.pt").exists()
    # one printed line per opponent and in-training evaluation, then the next commands to try
    evals = [line for line in out.splitlines() if line.startswith("eval @ step ")]
    assert [line.split(":")[0] for line in evals] == ["eval @ step 128 vs random", "eval @ step 128 vs heuristic",
                                                       "eval @ step 256 vs random", "eval @ step 256 vs heuristic"]
    assert all("win rate" in line and "%" in line and "[" in line and "(2 deals)" in line for line in evals)
    final = run_dir / "checkpoints" / "final.pt"
    assert "next:" in out and f"tensorboard --logdir {tmp_path}" in out
    assert f"--agents checkpoint:{final} heuristic" in out and f"whist play --game classic_whist --opponents checkpoint:{final}" in out
    assert (run_dir / "config.yaml").exists() and list(run_dir.glob("events.out.tfevents.*"))
    assert any(p.suffix == ".json" for p in run_dir.iterdir()) and any(p.suffix == ".csv" for p in run_dir.iterdir())
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    expected = {"charts/episode_return", "charts/steps_per_second", "losses/policy_loss", "losses/value_loss", "losses/entropy",
                "losses/approx_kl", "losses/clip_fraction", "eval/random/win_rate", "eval/heuristic/points_per_hand"}
    assert expected <= tags
    assert whist_train(path) == 2  # refuses to overwrite a run
    assert "--resume" in capsys.readouterr().err
    assert whist_train(path, resume=True, total_steps=512, eval_deals=0) == 0
    assert load_checkpoint(run_dir / "checkpoints" / "latest.pt")["global_step"] == 512


def test_whist_train_cli_bad_config(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("game: classic_whist\ntrain:\n  lr: fast\n")
    assert whist_train(path) == 2
    assert "train.lr" in capsys.readouterr().err


def test_resume_of_a_finished_run_leaves_its_checkpoints_alone(tmp_path, capsys):
    """The results store identifies a checkpoint agent by its file hash: a no-op resume must not
    rewrite final.pt (nor latest.pt)."""
    import hashlib

    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(tiny_config(tmp_path, total_steps=256)))
    assert whist_train(path, eval_deals=0) == 0
    ckpts = tmp_path / "tiny" / "checkpoints"
    before = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in ckpts.iterdir()}
    assert set(before) == {"latest.pt", "final.pt"}
    capsys.readouterr()
    assert whist_train(path, resume=True, eval_deals=0) == 0
    out = capsys.readouterr().out
    assert "nothing to train" in out and "kept" in out
    after = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in ckpts.iterdir()}
    assert after == before
    # a missing final.pt (an interrupted run that reached its last step) is still written
    (ckpts / "final.pt").unlink()
    assert whist_train(path, resume=True, eval_deals=0) == 0
    assert load_checkpoint(ckpts / "final.pt")["global_step"] == 256
    assert hashlib.sha256((ckpts / "latest.pt").read_bytes()).hexdigest() == before["latest.pt"][0]


@pytest.mark.parametrize("where", ["flag", "config"])
def test_cuda_without_cuda_is_a_one_line_error(tmp_path, capsys, monkeypatch, where):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    data = tiny_config(tmp_path, total_steps=128)
    if where == "config":
        data["device"] = "cuda"
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data))
    assert whist_train(path, **({"device": "cuda"} if where == "flag" else {})) == 2
    err = capsys.readouterr().err
    assert "torch.cuda.is_available() is False" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert ("--device cuda" if where == "flag" else "device: cuda") in err
    assert not (tmp_path / "tiny").exists()


def test_progress_bar_shows_the_return_only_once_defined():
    nan = float("nan")
    fields = PPOTrainer._progress_fields({"episode_return_vs_pool": nan, "entropy": 1.234}, 2000.4)
    assert fields == {"sps": "2000", "ent": "1.23"}
    fields = PPOTrainer._progress_fields({"episode_return_vs_pool": -0.5}, 10.0)
    assert fields == {"sps": "10", "ret": "-0.50"}


# --------------------------------------------------------------------------- resuming keeps the run's backend
def test_resume_keeps_the_runs_backend_and_refuses_another_one_given_explicitly(tmp_path, capsys):
    path = tmp_path / "tiny.yaml"
    data = tiny_config(tmp_path, total_steps=128, num_envs=2, rollout_steps=32, checkpoint_interval=1)  # the config says aec
    path.write_text(yaml.safe_dump(data))
    assert whist_train(path, backend="vector", eval_deals=0) == 0
    run_dir = tmp_path / "tiny"
    latest, config_yaml = run_dir / "checkpoints" / "latest.pt", run_dir / "config.yaml"
    assert load_checkpoint(latest)["config"]["env"]["backend"] == "vector"
    capsys.readouterr()
    # an explicit other backend: one line, and nothing changes
    before = (latest.read_bytes(), config_yaml.read_text())
    assert whist_train(path, resume=True, backend="aec", total_steps=192, eval_deals=0) == 2
    err = capsys.readouterr().err
    assert err == (f"whist train: error: --backend aec: the run of {latest} was trained on the vector backend; "
                   "resume it with --backend vector, or without --backend\n")
    assert (latest.read_bytes(), config_yaml.read_text()) == before
    # without --backend: the run's backend, not the config file's
    assert whist_train(path, resume=True, total_steps=192, eval_deals=0) == 0
    out = capsys.readouterr().out
    assert f"resuming on the vector backend the run was trained on ({path} says env.backend: aec)" in out
    assert "(vector backend, 2 games)" in out
    assert yaml.safe_load(config_yaml.read_text())["env"]["backend"] == "vector"
    ckpt = load_checkpoint(latest)
    assert ckpt["global_step"] == 192 and ckpt["config"]["env"]["backend"] == "vector"
    # the same backend given explicitly is accepted
    assert whist_train(path, resume=True, backend="vector", total_steps=256, eval_deals=0) == 0
    assert load_checkpoint(latest)["global_step"] == 256


def test_resume_of_an_aec_run_stays_on_aec_when_the_config_says_vector(tmp_path, capsys):
    path = tmp_path / "tiny.yaml"
    data = tiny_config(tmp_path, total_steps=128, num_envs=2, rollout_steps=32, checkpoint_interval=1)
    path.write_text(yaml.safe_dump(data))
    assert whist_train(path, eval_deals=0) == 0
    data["env"] = {"backend": "vector"}
    path.write_text(yaml.safe_dump(data))
    capsys.readouterr()
    assert whist_train(path, resume=True, backend="vector", total_steps=192, eval_deals=0) == 2
    assert "--backend vector: the run of" in capsys.readouterr().err
    assert whist_train(path, resume=True, total_steps=192, eval_deals=0) == 0
    assert "(aec backend, 2 games)" in capsys.readouterr().out
    assert load_checkpoint(tmp_path / "tiny" / "checkpoints" / "latest.pt")["config"]["env"]["backend"] == "aec"


def test_the_progress_bar_counts_the_steps_the_run_takes(tmp_path, capsys):
    """The run stops after whole updates (2 envs x 64 steps): 200 steps asked, 256 taken, and the
    bar's total and final count are both 256."""
    cfg = config_from_dict(tiny_config(tmp_path, total_steps=200, checkpoint_interval=1000))
    trainer = PPOTrainer(cfg, progress=True)
    trainer.train()
    assert trainer.global_step == 256
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("train: ")]
    assert lines and lines[-1].startswith("train: 256/256 step (100%)"), lines
