"""Experiment config validation (training/learn/config.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import whist_env
from training.learn.config import ConfigError, ExperimentConfig, config_from_dict, load_config

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    return path


def test_minimal_config_gets_defaults(tmp_path):
    cfg = load_config(write(tmp_path, "game: classic_whist\n"))
    assert isinstance(cfg, ExperimentConfig)
    assert cfg.algorithm == "ppo" and cfg.train.lr > 0 and cfg.eval.opponents == ["random", "heuristic"]
    assert cfg.run_dir(tmp_path / "exp.yaml") == Path("runs") / "exp"


# rllib_*.yaml are whist rllib-train configs, checked in tests/test_rllib_train.py
@pytest.mark.parametrize("path", sorted(p for p in CONFIGS.glob("*.yaml") if not p.name.startswith("rllib_")), ids=lambda p: p.name)
def test_shipped_configs_are_valid(path):
    cfg = load_config(path)
    # configs/<game prefix>_<kind>.yaml: the one registered game of that prefix (classic_default.yaml is a
    # classic_whist config, spades_scratch.yaml a spades one)
    assert [g for g in whist_env.GAMES if g.split("_")[0] == path.stem.split("_")[0]] == [cfg.game]
    # a fine-tuning run is measured against the agent it started from too
    assert cfg.eval.opponents == ["random", "heuristic"] + ([cfg.warm_start.init] if path.stem.endswith("_finetune") else [])


def test_unknown_key_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"train\.learning_rate: unknown key"):
        load_config(write(tmp_path, "game: classic_whist\ntrain:\n  learning_rate: 0.1\n"))
    with pytest.raises(ConfigError, match=r"(?m)^colour: unknown key"):
        load_config(write(tmp_path, "game: classic_whist\ncolour: red\n"))


def test_wrong_type_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"train\.lr: Input should be a valid number"):
        load_config(write(tmp_path, "game: classic_whist\ntrain:\n  lr: fast\n"))
    with pytest.raises(ConfigError, match=r"train\.hidden_sizes\.1: Input should be a valid integer"):
        load_config(write(tmp_path, "game: classic_whist\ntrain:\n  hidden_sizes: [64, wide]\n"))
    with pytest.raises(ConfigError, match=r"train\.num_envs: Input should be greater than or equal to 1"):
        config_from_dict({"game": "classic_whist", "train": {"num_envs": 0}})


def test_a_minibatch_larger_than_an_update_is_refused_naming_both(tmp_path):
    with pytest.raises(ConfigError) as refused:
        config_from_dict({"game": "classic_whist", "train": {"num_envs": 2, "rollout_steps": 8}})
    assert str(refused.value) == ("invalid config config:\n"
                                  "train: minibatch_size 512 exceeds the steps per update, num_envs * rollout_steps = 2 * 8 = 16")
    with pytest.raises(ConfigError, match=r"train: minibatch_size 17 exceeds the steps per update, num_envs \* rollout_steps = 2 \* 8 = 16$"):
        load_config(write(tmp_path, "game: classic_whist\ntrain:\n  num_envs: 2\n  rollout_steps: 8\n  minibatch_size: 17\n"))
    assert config_from_dict({"game": "classic_whist", "train": {"num_envs": 2, "rollout_steps": 8, "minibatch_size": 16}})
    # the warm start alone (total_steps 0) runs no PPO update, so its batch sizes are not read
    assert config_from_dict({"game": "classic_whist", "train": {"total_steps": 0, "num_envs": 2, "rollout_steps": 8}})


def test_unknown_game_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"game: unknown game 'hearts'.*classic_whist"):
        load_config(write(tmp_path, "game: hearts\n"))


def test_missing_game(tmp_path):
    with pytest.raises(ConfigError, match=r"game: Field required"):
        load_config(write(tmp_path, "seed: 1\n"))


def test_invalid_rule_option_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"options: .*'reward'"):
        load_config(write(tmp_path, "game: classic_whist\noptions:\n  reward: money\n"))
    with pytest.raises(ConfigError, match=r"options: unknown option.*'trumps'"):
        load_config(write(tmp_path, "game: classic_whist\noptions:\n  trumps: S\n"))


def test_bad_eval_opponent_and_device(tmp_path):
    with pytest.raises(ConfigError, match=r"eval\.opponents: .*'expert'"):
        config_from_dict({"game": "classic_whist", "eval": {"opponents": ["expert"]}})
    with pytest.raises(ConfigError, match=r"device: "):
        config_from_dict({"game": "classic_whist", "device": "tpu"})


def test_not_a_mapping_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="mapping"):
        load_config(write(tmp_path, "- game\n"))
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(write(tmp_path, "game: [classic\n"))


def test_cuda_without_cuda_is_a_config_error(tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cfg = load_config(write(tmp_path, "game: classic_whist\ndevice: cuda\n"))
    with pytest.raises(ConfigError, match="cuda"):
        cfg.resolved_device()
    assert load_config(write(tmp_path, "game: classic_whist\ndevice: auto\n")).resolved_device() == "cpu"


def test_the_main_jobs_config_draws_a_learning_curve_of_seven_points_for_the_old_evaluation_budget():
    """classic_default: an in-training evaluation every 80,000 steps on 30 deals gives 7 points for
    210 deals per opponent, where every 280,000 steps on 100 deals gave 2 points for 200."""
    cfg = load_config(CONFIGS / "classic_default.yaml")
    per_update = cfg.train.num_envs * cfg.train.rollout_steps
    step, every, next_eval, points = 0, cfg.eval.interval_steps, cfg.eval.interval_steps, []
    while step < cfg.train.total_steps:  # the schedule of PPOTrainer.train
        step += per_update
        if step >= next_eval:
            points.append(step)
            next_eval = (step // every + 1) * every
    assert len(points) == 7 and points[0] == 81_920 and points[-1] == 561_152
    assert len(points) * cfg.eval.num_deals == 210
    assert (cfg.eval.seed, cfg.eval.final_seed, cfg.eval.final_num_deals) == (12_345, 0, 500)
