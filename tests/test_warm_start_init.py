"""Fine-tuning a trained network (training/learn/config.py ``warm_start.init`` and ``clone``):
the learner's actor starts as the named network's, weight for weight; with ``clone: false`` the
warm start trains the critic alone and the actor, hence the KL anchor, stays the network it was
handed; a network of another shape is refused before anything trains, naming the mismatch."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
import yaml

from agents.learned.checkpoint import load_checkpoint
from agents.registry import loaded_files
from training.learn.config import ConfigError, config_from_dict
from training.learn.ppo import PPOTrainer

GAME = "classic_whist"


def config(tmp_path, name, *, hidden=(8,), **warm):
    return config_from_dict({
        "game": GAME, "options": {"episode": "hand"}, "seed": 3, "log_dir": str(tmp_path), "run_name": name,
        "warm_start": {"teacher": "heuristic", "decisions": 60, "chunk": 60, "epochs": 1, "minibatch_size": 32, **warm},
        "train": {"total_steps": 0, "hidden_sizes": list(hidden), "num_envs": 2, "rollout_steps": 16, "minibatch_size": 32},
        "eval": {"interval_steps": 0, "final_num_deals": 0, "opponents": ["random"]},
    })


def actor(state):
    return {k: v.clone() for k, v in state.items() if k.startswith("actor.")}


def critic(state):
    return {k: v.clone() for k, v in state.items() if k.startswith("critic.")}


def equal(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    """A cloned network (60 heuristic decisions), the one the fine-tuning starts from."""
    tmp = tmp_path_factory.mktemp("init")
    cfg = config(tmp, "clone")
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    trainer.train()
    return cfg.run_dir() / "checkpoints" / "final.pt"


def test_init_with_clone_false_keeps_the_actor_and_pretrains_the_critic(tmp_path, start):
    given = load_checkpoint(start)["model"]
    cfg = config(tmp_path, "tune", init=f"checkpoint:{start}", clone=False, teacher=f"checkpoint:{start}")
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    fresh_critic = critic(trainer.net.state_dict())
    trainer.train()
    state = trainer.net.state_dict()
    assert actor(given) and equal(actor(state), actor(given))
    assert not equal(critic(state), fresh_critic) and not equal(critic(state), critic(given))
    assert equal(actor(trainer.anchor.state_dict()), actor(given))  # the KL pulls toward the network handed in
    assert trainer.warm_decisions >= 60
    # the lineage: the network started from is named, with its file's sha256, in every checkpoint
    import hashlib

    record = {"spec": f"checkpoint:{start}", "sha256": hashlib.sha256(Path(start).read_bytes()).hexdigest()}
    assert trainer.init_record == record
    assert load_checkpoint(cfg.run_dir() / "checkpoints" / "final.pt")["extra"]["init"] == record
    assert load_checkpoint(start)["extra"]["init"] is None


def test_init_with_cloning_starts_from_the_network_and_moves_it(tmp_path, start):
    given = load_checkpoint(start)["model"]
    cfg = config(tmp_path, "tune", init=f"checkpoint:{start}", clone=True)
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    trainer.train()
    state = trainer.net.state_dict()
    moved = [k for k in actor(given) if not torch.equal(state[k], given[k])]
    assert moved  # trained on from the given weights: every step is small
    assert max(float((state[k] - given[k]).abs().max()) for k in moved) < 0.1


def test_a_network_of_another_shape_is_refused_before_training(tmp_path, start):
    cfg = config(tmp_path, "wide", hidden=(16,), init=f"checkpoint:{start}", clone=False)
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    with pytest.raises(ValueError, match=r"warm_start.init checkpoint:.*hidden_sizes \[8\].*\[16\]"):
        trainer.train()
    assert trainer.warm_decisions == 0 and not (cfg.run_dir() / "checkpoints" / "latest.pt").exists()


@pytest.mark.parametrize("spec", ["heuristic", "random", "pimc", "sb3:model.zip"])
def test_init_names_a_trained_network_of_this_project(tmp_path, spec):
    with pytest.raises(ConfigError, match="warm_start.init: .*expected checkpoint:PATH or zoo:GAME"):
        config(tmp_path, "bad", init=spec)


FINETUNE = sorted((Path(__file__).resolve().parent.parent / "configs").glob("*_finetune.yaml"))


@pytest.mark.parametrize("path", FINETUNE, ids=lambda p: p.stem)
def test_a_finetune_config_starts_from_its_agent_and_trains_one_update(tmp_path, path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["warm_start"].update(decisions=60, chunk=60, minibatch_size=32)
    data["eval"]["interval_steps"] = 0
    cfg = config_from_dict(data, source=str(path))
    trainer = PPOTrainer(cfg)
    # until the first hands end (a hand is 52 decisions: 13 a seat) and their batch updates the network
    updates = -(-52 // cfg.train.rollout_steps)
    trainer.train(total_steps=updates * cfg.train.num_envs * cfg.train.rollout_steps)
    (start,) = loaded_files(cfg.warm_start.init, cfg.game)
    assert equal(actor(trainer.anchor.state_dict()), actor(load_checkpoint(start)["model"]))
    assert len(trainer.history) == updates
    assert all(math.isfinite(trainer.history[-1][k]) for k in ("policy_loss", "value_loss", "entropy", "approx_kl"))
