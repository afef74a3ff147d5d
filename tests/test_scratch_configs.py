"""The learning-curve configs (``configs/<game>_scratch.yaml``): one per game, PPO from scratch on the
batched engine, each a recipe of the published curves; a smoke run of each until its first update."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
import yaml

import whist_env
from training.learn.config import config_from_dict, load_config
from training.learn.ppo import PPOTrainer

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
SCRATCH = sorted(CONFIGS.glob("*_scratch.yaml"))


def test_every_game_has_a_scratch_config():
    assert sorted(load_config(p).game for p in SCRATCH) == sorted(whist_env.GAMES)


@pytest.mark.parametrize("path", SCRATCH, ids=lambda p: p.stem)
def test_a_scratch_config_is_a_curve_from_scratch(path):
    cfg = load_config(path)
    assert cfg.warm_start is None and cfg.env.backend == "vector"
    # Classic and Bid Whist to 100M steps, the other games to 25M; a point every few million
    assert cfg.train.total_steps >= (100_000_000 if cfg.game in ("classic_whist", "bid_whist") else 25_000_000)
    assert 0 < cfg.eval.interval_steps <= 2_000_000 and cfg.eval.num_deals == 200
    assert cfg.eval.opponents == ["random", "heuristic"] and cfg.eval.duplicate
    assert cfg.train.checkpoint_interval > 0  # a stopped run resumes


@pytest.mark.parametrize("path", SCRATCH, ids=lambda p: p.stem)
def test_a_scratch_config_trains_one_update(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["eval"]["interval_steps"] = 0
    torch.manual_seed(0)
    trainer = PPOTrainer(config_from_dict(data, source=str(path)))
    steps = trainer.cfg.num_envs * trainer.cfg.rollout_steps
    # until the first hands end and their batch updates the network (a rollout may be shorter than a hand)
    updates = 0
    while "policy_loss" not in (trainer.history[-1] if trainer.history else {}) and updates < 8:
        updates += 1
        trainer.train(total_steps=updates * steps)
    assert len(trainer.history) == updates and updates <= -(-80 // trainer.cfg.rollout_steps)  # a hand is under 80 decisions
    assert all(math.isfinite(trainer.history[-1][k]) for k in ("policy_loss", "value_loss", "entropy", "approx_kl"))
