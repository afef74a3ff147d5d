"""The seed ranges (training/evaluation/seed_ranges.py): disjoint, and each drawn from where it belongs:
training deals in TRAINING, in-training evaluations in DEVELOPMENT, published figures in REPORT."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

import whist_env
from agents.registry import make_agent
from training import cli
from training.evaluation.seed_ranges import DEVELOPMENT, RANGES, REPORT, TRAINING, check_range, describe, range_of
from training.learn.config import ConfigError, config_from_dict
from training.learn.ppo import PPOTrainer
from training.learn.warm_start import teacher_samples
from whist_env.envs.whist_env import WhistEnv


def tiny(tmp_path: Path, backend: str = "aec", **eval_keys) -> dict:
    return {
        "game": "classic_whist", "options": {"episode": "hand"}, "seed": 5, "log_dir": str(tmp_path), "run_name": "tiny",
        "env": {"backend": backend},
        "train": {"total_steps": 128, "num_envs": 2, "rollout_steps": 32, "hidden_sizes": [16], "minibatch_size": 64,
                  "update_epochs": 1, "opponents": {"pool": 0.5}, "snapshot_interval": 1, "checkpoint_interval": 10},
        "eval": {"interval_steps": 0, "num_deals": 2, "final_num_deals": 0, "opponents": ["random"], **eval_keys},
    }


# ------------------------------------------------------------------------------ the ranges
def test_the_three_ranges_are_disjoint_half_open_and_in_order():
    assert [(r.name, r.start, r.stop) for r in RANGES] == [
        ("REPORT", 0, 10_000), ("DEVELOPMENT", 10_000, 1_000_000), ("TRAINING", 2**32, 2**33)]
    for i, a in enumerate(RANGES):
        for b in RANGES[i + 1:]:
            assert a.stop <= b.start  # disjoint: each ends before the next begins
        assert a.start in a and a.stop - 1 in a and a.stop not in a and a.start - 1 not in a
    assert describe() == "REPORT [0, 10,000), DEVELOPMENT [10,000, 1,000,000), TRAINING [2**32, 2**33)"
    assert True not in REPORT and 1.0 not in REPORT and "1" not in REPORT  # seeds are ints


def test_a_match_deal_seed_is_32_bit_so_it_never_is_a_training_deal_seed():
    from training.evaluation.match import _deal_seed

    seeds = [_deal_seed(s, i) for s in (REPORT.start, REPORT.stop - 1, DEVELOPMENT.start, DEVELOPMENT.stop - 1) for i in range(200)]
    assert max(seeds) < 2**32 == TRAINING.start


def test_range_of_names_the_range_of_a_seed_or_span():
    assert range_of(0) is REPORT and range_of(9_999) is REPORT and range_of(12_345) is DEVELOPMENT
    assert range_of(2**32) is TRAINING and range_of(2**33 - 1) is TRAINING
    assert range_of(9_000, 1_000) is REPORT and range_of(10_000, 990_000) is DEVELOPMENT
    with pytest.raises(ValueError) as exc:
        range_of(9_995, 10)
    assert str(exc.value) == ("seeds 9,995 .. 10,004 straddle REPORT and DEVELOPMENT; the seed ranges are REPORT [0, 10,000), "
                              "DEVELOPMENT [10,000, 1,000,000), TRAINING [2**32, 2**33)")
    with pytest.raises(ValueError, match=r"^seed 1,000,000 lies in no seed range; the seed ranges are REPORT"):
        range_of(1_000_000)
    with pytest.raises(ValueError, match=r"^seed -1 lies in no seed range"):
        range_of(-1)
    with pytest.raises(ValueError, match=r"^seeds 999,999 .. 1,000,000 do not lie in one seed range"):
        range_of(999_999, 2)
    with pytest.raises(ValueError, match="at least 1 seed"):
        range_of(5, 0)
    with pytest.raises(ValueError, match="must be an integer"):
        range_of(True)


def test_check_range_returns_the_seed_or_says_where_it_lies():
    assert check_range(12_345, DEVELOPMENT) == 12_345
    assert check_range(9_990, REPORT, count=10) == 9_990
    with pytest.raises(ValueError) as exc:
        check_range(2027, DEVELOPMENT, "eval.seed")
    assert str(exc.value) == ("eval.seed 2,027 lies in REPORT [0, 10,000) (the figures README and the docs publish); expected a "
                              "seed in DEVELOPMENT [10,000, 1,000,000) (tuning: in-training evaluations, search defaults)")
    with pytest.raises(ValueError) as exc:
        check_range(9_995, REPORT, "--seed", count=10)
    assert str(exc.value) == ("--seed 9,995 (and the 9 seeds after it) straddle REPORT and DEVELOPMENT; expected a seed in "
                              "REPORT [0, 10,000) (the figures README and the docs publish)")
    with pytest.raises(ValueError, match=r"^--seed 2,000,000 lies in no seed range; expected a seed in REPORT"):
        check_range(2_000_000, REPORT, "--seed")


def test_draw_stays_in_its_range():
    rng = np.random.default_rng(0)
    draws = [TRAINING.draw(rng) for _ in range(1000)]
    assert all(type(s) is int and s in TRAINING for s in draws) and len(set(draws)) == 1000


# ------------------------------------------------------------------------------ training draws from TRAINING
def test_self_play_deals_are_training_seeds(tmp_path, monkeypatch):
    seeds: list = []
    reset = WhistEnv.reset

    def spy(self, seed=None, options=None):
        seeds.append(seed)
        return reset(self, seed=seed, options=options)

    monkeypatch.setattr(WhistEnv, "reset", spy)
    PPOTrainer(config_from_dict(tiny(tmp_path))).train()
    assert len(seeds) >= 4  # 2 envs, several hands each
    assert all(isinstance(s, int) and s in TRAINING for s in seeds), [s for s in seeds if s not in TRAINING]


def test_warm_start_teacher_data_are_training_seeds():
    seeds: list = []

    def make_env():
        env = whist_env.GAMES["classic_whist"].raw_env(episode="hand")
        reset = env.reset

        def spy(seed=None, options=None):
            seeds.append(seed)
            return reset(seed=seed, options=options)

        env.reset = spy
        return env

    samples = teacher_samples(make_env, make_agent("heuristic", "classic_whist"), 60, np.random.default_rng(0))
    assert len(samples) == 104 and len(seeds) == 2  # two whole hands of 52 decisions
    assert all(isinstance(s, int) and s in TRAINING for s in seeds)


def test_the_batched_engine_deals_from_a_training_seed(tmp_path):
    trainer = PPOTrainer(config_from_dict(tiny(tmp_path, backend="vector")))
    trainer.collector.reset_all(trainer.pool)
    assert trainer.collector.env.generator.initial_seed() in TRAINING


# ------------------------------------------------------------------------------ evaluations draw elsewhere
@pytest.mark.parametrize("command", ["eval", "league"])
def test_eval_and_league_default_seeds_are_report_seeds_and_their_help_says_so(command, capsys):
    args = cli.build_parser(command).parse_args([command, "--agents", "random", "heuristic"])
    assert args.seed == 0 and range_of(args.seed) is REPORT
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default: 0, in REPORT [0, 10,000), the seed range of published figures" in text
    assert "DEVELOPMENT [10,000, 1,000,000) is for tuning" in text and "TRAINING [2**32, 2**33)" in text


def test_zoo_export_default_seed_is_a_report_seed():
    args = cli.build_parser("zoo-export").parse_args(["zoo-export", "runs/x"])
    assert args.seed == 2027 and range_of(args.seed) is REPORT


def test_config_evaluation_seeds_default_to_development_and_report():
    cfg = config_from_dict({"game": "classic_whist"})
    assert (cfg.eval.seed, cfg.eval.final_seed) == (12_345, 0)
    assert range_of(cfg.eval.seed) is DEVELOPMENT and range_of(cfg.eval.final_seed) is REPORT


@pytest.mark.parametrize(("key", "seed", "message"), [
    ("seed", 2027, "eval.seed: the in-training evaluation seed 2,027 lies in REPORT [0, 10,000) (the figures README and the docs "
                   "publish); expected a seed in DEVELOPMENT [10,000, 1,000,000)"),
    ("seed", 2**32 + 7, "eval.seed: the in-training evaluation seed 4,294,967,303 lies in TRAINING [2**32, 2**33) (the deals "
                        "training plays: self-play and teacher data); expected a seed in DEVELOPMENT"),
    ("final_seed", 12_345, "eval.final_seed: the final evaluation seed 12,345 lies in DEVELOPMENT [10,000, 1,000,000) (tuning: "
                           "in-training evaluations, search defaults); expected a seed in REPORT [0, 10,000)"),
    ("final_seed", -1, "eval.final_seed: the final evaluation seed -1 lies in no seed range; expected a seed in REPORT"),
])
def test_an_evaluation_seed_in_the_wrong_range_is_refused(tmp_path, key, seed, message):
    with pytest.raises(ConfigError) as exc:
        config_from_dict(tiny(tmp_path, **{key: seed}))
    assert message in str(exc.value)


def test_whist_train_evaluates_in_training_on_development_and_the_final_table_on_report(tmp_path, monkeypatch, capsys):
    import training.evaluation.match as match

    seen: list[int] = []
    evaluate_pair = match.evaluate_pair

    def spy(*args, seed=0, **kwargs):
        seen.append(seed)
        return evaluate_pair(*args, seed=seed, **kwargs)

    monkeypatch.setattr(match, "evaluate_pair", spy)
    data = tiny(tmp_path, final_seed=7)
    data["eval"].update(interval_steps=64, final_num_deals=2)
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data))
    assert cli.main(["train", str(path), "--quiet"]) == 0
    assert seen == [12_345, 12_345, 7]  # two in-training evaluations (steps 64 and 128), then the final table
    assert [r["seed"] for r in json.loads((tmp_path / "tiny" / "results.json").read_text())] == [7]
