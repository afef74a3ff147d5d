"""Warm start from a teacher dataset (training/learn/dataset.py, ``warm_start.dataset``): blocks
and hold-out, discounted returns, value targets, training through the trainer and ``whist
train``, resuming at the next block, refusing a dataset of another game or rules; and the
agreement of a student with a teacher (training/evaluation/agreement.py, ``whist agree``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import yaml
from stop_harness import stop_after_first_fit

import training.learn.dataset as dataset_module
from agents.learned.checkpoint import load_checkpoint
from training import cli
from training.evaluation.agreement import Agreement, format_agreement, measure_agreement
from training.evaluation.seed_ranges import REPORT, TRAINING
from training.learn.config import config_from_dict
from training.learn.dataset import (
    check_dataset,
    dataset_blocks_total,
    epoch_blocks,
    samples_of,
    training_shards,
)
from training.learn.ppo import PPOTrainer
from training.learn.teach import MANIFEST, TeachSpec, discounted_returns, read_manifest, teach, write_shard

GAME = "classic_whist"
OPTIONS = {"honours": False}


def fake_shards(decisions):
    return [{"index": k, "file": f"shard-{k:05d}.npz", "decisions": d} for k, d in enumerate(decisions)]


# ------------------------------------------------------------------------------ blocks and hold-out
def test_the_last_shards_by_index_are_held_out():
    shards = fake_shards([10] * 6)
    manifest = {"shards": [shards[k] for k in (3, 5, 0, 4, 1, 2)]}  # the manifest's order does not matter
    train, held = training_shards(manifest, 2)
    assert [s["index"] for s in train] == [0, 1, 2, 3] and [s["index"] for s in held] == [4, 5]
    assert training_shards(manifest, 0) == (shards, [])
    with pytest.raises(ValueError, match="holding out 6 leaves none"):
        training_shards(manifest, 6)


@pytest.mark.parametrize(("decisions", "chunk", "sizes"), [
    ([100] * 7, 250, [2, 2, 2, 1]),       # 2.5 shards a block rounds to 2
    ([100] * 7, 260, [3, 3, 1]),
    ([100] * 7, 10, [1] * 7),             # at least one shard a block
    ([50, 150, 100, 100, 100], 400, [4, 1]),  # by the mean shard
    ([100] * 3, 10_000, [3]),
])
def test_every_epoch_has_the_same_blocks_covering_each_training_shard_once(decisions, chunk, sizes):
    train, held = training_shards({"shards": fake_shards(decisions + [100])}, 1)
    orders = set()
    for epoch in range(6):
        blocks = epoch_blocks(train, chunk, seed=3, epoch=epoch)
        assert [len(b) for b in blocks] == sizes
        visited = [s["index"] for b in blocks for s in b]
        assert sorted(visited) == list(range(len(decisions)))  # each once, the held-out one never
        assert held[0]["index"] not in visited
        assert epoch_blocks(train, chunk, seed=3, epoch=epoch) == blocks  # drawn from (seed, epoch) alone
        orders.add(tuple(visited))
    assert len(orders) > 1 or len(decisions) <= 1  # the order changes with the epoch


def test_discounted_returns_per_episode_and_seat():
    reward = np.array([1, 2, 3, 4, 5, 6], dtype=np.float32)
    seat = np.array([0, 1, 0, 1, 0, 0], dtype=np.int8)
    episode = np.array([0, 0, 0, 0, 1, 1], dtype=np.int32)
    out = discounted_returns(reward, seat, episode, 0.5)
    assert out.dtype == np.float32
    # seat 0 of episode 0: 3, then 1 + 0.5 * 3; seat 1: 4, then 2 + 0.5 * 4; seat 0 of episode 1: 6, then 5 + 0.5 * 6
    assert out.tolist() == [2.5, 4.0, 3.0, 4.0, 8.0, 6.0]
    assert discounted_returns(reward, seat, episode, 1.0).tolist() == [4.0, 6.0, 3.0, 4.0, 11.0, 6.0]


# ------------------------------------------------------------------------------ samples of a shard
def hand_made_shard(folder):
    """Four decisions of a four-action game: two with teacher values (one of them also valuing an
    illegal action), one without, one the teacher did not label."""
    nan = np.nan
    arrays = {
        "observation": np.arange(12, dtype=np.float32).reshape(4, 3),
        "state": np.arange(20, dtype=np.float32).reshape(4, 5) + 100,
        "action_mask": np.array([[1, 0, 1, 0], [1, 1, 1, 1], [0, 0, 1, 1], [1, 1, 0, 0]], dtype=np.int8),
        "label": np.array([2, 1, 3, -1], dtype=np.int16),
        "action": np.array([2, 1, 3, 0], dtype=np.int16),
        "values": np.array([[1, nan, 2, nan], [0, 7, 0, 0], [nan, nan, nan, nan], [5, 1, nan, nan]], dtype=np.float32),
        "values_kind": np.array([2, 2, 0, 2], dtype=np.int8),
        "reward": np.array([0, 0, 1, 2], dtype=np.float32),
        "episode_return": np.array([1, 2, 1, 2], dtype=np.float32),
        "seat": np.array([0, 1, 0, 1], dtype=np.int8),
        "episode": np.zeros(4, dtype=np.int32),
    }
    arrays["values"][0, 1] = 9.0  # an illegal action with a value: its target stays 0
    entry = {"index": 0, "file": "shard-00000.npz", "decisions": 4, "sha256": write_shard(folder / "shard-00000.npz", arrays)}
    return entry, arrays


def test_value_targets_are_a_softmax_over_legal_actions_and_one_hot_elsewhere(tmp_path):
    entry, arrays = hand_made_shard(tmp_path)
    s = samples_of(tmp_path, [entry], central_critic=True, gamma=1.0, reward_scale=0.5, targets="values", temperature=0.5)
    e1, e2 = math.exp(1 / 0.5), math.exp(2 / 0.5)
    expected = np.array([[e1 / (e1 + e2), 0, e2 / (e1 + e2), 0],
                         [1 / (3 + math.exp(14)), math.exp(14) / (3 + math.exp(14)), 1 / (3 + math.exp(14)), 1 / (3 + math.exp(14))],
                         [0, 0, 0, 1],     # no values: one-hot on the label
                         [0, 0, 0, 0]])    # not labelled: no policy target
    np.testing.assert_allclose(s.targets, expected, rtol=1e-6, atol=1e-7)
    assert s.targets.dtype == np.float32
    assert np.allclose(s.targets[:3].sum(-1), 1.0) and (s.targets[arrays["action_mask"] == 0] == 0).all()
    assert s.labelled.tolist() == [True, True, True, False] and s.actions.tolist() == [2, 1, 3, 0]
    assert s.choices.tolist() == [2, 4, 2, 2]
    assert s.returns.tolist() == [0.5, 1.0, 0.5, 1.0]  # episode_return times reward_scale
    assert np.array_equal(s.critic_inputs, arrays["state"]) and np.array_equal(s.obs, arrays["observation"])
    plain = samples_of(tmp_path, [entry], central_critic=False, gamma=0.5, reward_scale=1.0)
    assert plain.targets is None and np.array_equal(plain.critic_inputs, arrays["observation"])
    assert plain.returns.tolist() == discounted_returns(arrays["reward"], arrays["seat"], arrays["episode"], 0.5).tolist()


# ------------------------------------------------------------------------------ training on a dataset
@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Five shards of two heuristic hands (104 decisions each)."""
    folder = tmp_path_factory.mktemp("data")
    manifest = teach(TeachSpec(game=GAME, options=OPTIONS, episodes_per_shard=2), 500, folder, progress=False)
    assert len(manifest["shards"]) == 5
    return folder


def warm_config(tmp_path, data, run="run", game=GAME, options=None, **warm):
    return {
        "game": game, "options": {"episode": "hand", **(OPTIONS if options is None else options)}, "seed": 3,
        "log_dir": str(tmp_path), "run_name": run,
        # 4 training shards of 104 decisions, 2 a block (200 / 104 rounds to 2): 2 blocks an epoch, 4 in all
        "warm_start": {"dataset": str(data), "epochs": 2, "chunk": 200, "minibatch_size": 64, "holdout_shards": 1,
                       "anneal_lr": True, "targets": "action", **warm},
        "train": {"total_steps": 0, "actor": "cards", "hidden_sizes": [16], "card_width": 8, "central_critic": True,
                  "num_envs": 2, "rollout_steps": 8},
        "eval": {"interval_steps": 0, "final_num_deals": 0, "opponents": ["random"]},
    }


def record_blocks(monkeypatch):
    """The shard files of every samples_of call of the warm start, in order."""
    calls, real = [], dataset_module.samples_of

    def recorded(folder, shards, *args, **kwargs):
        calls.append(tuple(s["file"] for s in shards))
        return real(folder, shards, *args, **kwargs)

    monkeypatch.setattr(dataset_module, "samples_of", recorded)
    return calls


def test_whist_train_runs_the_dataset_warm_start_alone(tmp_path, data, monkeypatch, capsys):
    calls = record_blocks(monkeypatch)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(warm_config(tmp_path, data)))
    assert cli.main(["train", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "nothing to train" not in out and f"training {GAME} to 0 steps" in out
    final = tmp_path / "run" / "checkpoints" / "final.pt"
    ckpt = load_checkpoint(final)
    assert ckpt["extra"]["warm_blocks"] == 4 and ckpt["global_step"] == 0
    assert ckpt["extra"]["warm_decisions"] == 2 * 4 * 104  # every training decision, once an epoch
    assert 0.0 <= ckpt["extra"]["warm_agreement"] <= 1.0 and ckpt["extra"]["anchor"] is not None
    held = ("shard-00004.npz",)
    assert calls[0] == held  # read once, for the agreement after each epoch
    blocks = calls[1:]
    assert len(blocks) == 4 and all(held[0] not in b for b in blocks)
    for epoch in (blocks[:2], blocks[2:]):
        assert sorted(f for b in epoch for f in b) == [f"shard-0000{k}.npz" for k in range(4)]
    # epoch e trains on epoch_blocks(..., seed 3, e) in order; here the two epochs' orders differ
    train, _ = training_shards(read_manifest(data), 1)
    expected = [tuple(s["file"] for s in b) for e in (0, 1) for b in epoch_blocks(train, 200, 3, e)]
    assert blocks == expected and expected[:2] != expected[2:]
    # resumed, a finished warm start is not run again and the checkpoints keep their bytes
    before = final.read_bytes()
    calls.clear()
    assert cli.main(["train", str(path), "--quiet", "--resume"]) == 0
    assert calls == [] and final.read_bytes() == before
    assert "nothing to train" in capsys.readouterr().out


def test_the_trainer_counts_blocks_and_is_done(tmp_path, data):
    cfg = config_from_dict(warm_config(tmp_path, data, targets="values"))  # heuristic: no values, one-hot targets
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    assert dataset_blocks_total(cfg.warm_start, cfg.seed) == 4 and trainer.warm_start_pending()
    trainer.train()
    assert trainer.warm_blocks == 4 and not trainer.warm_start_pending() and trainer.anchor is not None
    assert load_checkpoint(cfg.run_dir() / "checkpoints" / "latest.pt")["extra"]["warm_blocks"] == 4


def stop_after_first_block(monkeypatch, trainer):
    return stop_after_first_fit(monkeypatch, dataset_module, trainer)


def test_a_stopped_warm_start_resumes_at_the_next_block(tmp_path, data, monkeypatch):
    calls = record_blocks(monkeypatch)
    cfg = config_from_dict(warm_config(tmp_path, data, run="whole"))
    PPOTrainer(cfg, run_dir=cfg.run_dir()).train()
    whole = list(calls)
    calls.clear()
    cfg = config_from_dict(warm_config(tmp_path, data, run="stopped"))
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    real = stop_after_first_block(monkeypatch, trainer)
    trainer.train()
    assert trainer.stopped and trainer.warm_blocks == 1
    latest = cfg.run_dir() / "checkpoints" / "latest.pt"
    assert load_checkpoint(latest)["extra"]["warm_blocks"] == 1 and not (cfg.run_dir() / "checkpoints" / "final.pt").exists()
    assert load_checkpoint(latest)["extra"]["anchor"] is None  # the anchor is the finished warm start's policy
    monkeypatch.setattr(dataset_module, "fit_samples", real)
    resumed = PPOTrainer(cfg, run_dir=cfg.run_dir())
    resumed.load_state(load_checkpoint(latest))
    assert resumed.warm_blocks == 1 and resumed.warm_start_pending()
    resumed.train()
    assert resumed.warm_blocks == 4 and not resumed.stopped
    # the held-out shard is read again by the resumed session; the blocks go on from the second
    held = whole[0]
    assert calls == [held, whole[1], held, *whole[2:]]


def test_every_block_is_checkpointed_before_the_next_begins(tmp_path, data, monkeypatch):
    """A crash (here Ctrl-C inside the second block's fit) loses only the block in progress."""
    real, fits = dataset_module.fit_samples, []

    def crashing(*args, **kwargs):
        fits.append(1)
        if len(fits) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(dataset_module, "fit_samples", crashing)
    cfg = config_from_dict(warm_config(tmp_path, data))
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    with pytest.raises(KeyboardInterrupt):
        trainer.train()
    saved = load_checkpoint(cfg.run_dir() / "checkpoints" / "latest.pt")
    assert saved["extra"]["warm_blocks"] == 1 and saved["extra"]["warm_decisions"] == 2 * 104


def test_a_finished_warm_start_resumes_without_its_dataset(tmp_path, data):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(data, copy)
    cfg = config_from_dict(warm_config(tmp_path, copy))
    PPOTrainer(cfg, run_dir=cfg.run_dir()).train()
    shutil.rmtree(copy)
    resumed = PPOTrainer(cfg, run_dir=cfg.run_dir())
    resumed.load_state(load_checkpoint(cfg.run_dir() / "checkpoints" / "final.pt"))
    assert resumed.warm_blocks == 4 and not resumed.warm_start_pending()
    resumed.train(total_steps=16)  # straight to PPO: one update of 2 envs x 8 steps
    assert resumed.global_step == 16 and resumed.warm_blocks == 4


def test_a_resumed_warm_start_ends_with_the_uninterrupted_ones_weights(tmp_path, data, monkeypatch):
    """Weights, Adam's moments, the block counter, the generator and the learning-rate schedule
    all carry over: stopped after its first block and resumed, a warm start ends bit for bit
    where the uninterrupted one does."""
    cfg = config_from_dict(warm_config(tmp_path, data, run="whole"))
    whole = PPOTrainer(cfg, run_dir=cfg.run_dir())
    whole.train()
    cfg = config_from_dict(warm_config(tmp_path, data, run="stopped"))
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    real = stop_after_first_block(monkeypatch, trainer)
    trainer.train()
    monkeypatch.setattr(dataset_module, "fit_samples", real)
    resumed = PPOTrainer(cfg, run_dir=cfg.run_dir())
    resumed.load_state(load_checkpoint(cfg.run_dir() / "checkpoints" / "latest.pt"))
    resumed.train()
    a, b = whole.net.state_dict(), resumed.net.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert whole.warm_agreement == resumed.warm_agreement and whole.warm_decisions == resumed.warm_decisions


def test_value_targets_of_a_pimc_dataset_train(tmp_path):
    folder = tmp_path / "pimc"
    manifest = teach(TeachSpec(game=GAME, options=OPTIONS, teacher="pimc:worlds=2,rollouts=2,exact=0", episodes_per_shard=1),
                     60, folder, progress=False)
    assert len(manifest["shards"]) == 2
    entries = manifest["shards"]
    s = samples_of(folder, entries, True, 1.0, 1.0, targets="values")
    soft = ~np.isclose(s.targets.max(-1), 1.0)  # rows where pimc's values left more than one action likely
    assert soft.any() and np.allclose(s.targets.sum(-1), 1.0)
    cfg = config_from_dict(warm_config(tmp_path, folder, run="pimc", targets="values", holdout_shards=0, epochs=1))
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    trainer.train()
    assert trainer.warm_blocks == dataset_blocks_total(cfg.warm_start, cfg.seed) == 1 and trainer.anchor is not None
    assert trainer.warm_agreement is None  # nothing held out


def test_a_dataset_of_another_game_or_other_rules_is_refused(tmp_path, data):
    cfg = config_from_dict(warm_config(tmp_path, data, run="honours", options={"honours": True}))
    with pytest.raises(ValueError, match="honours: False there, True here"):
        PPOTrainer(cfg, run_dir=cfg.run_dir()).train()
    cfg = config_from_dict({**warm_config(tmp_path, data, run="german", game="german_whist", options={}),
                            "train": {"total_steps": 0, "hidden_sizes": [16], "num_envs": 2, "rollout_steps": 8}})
    with pytest.raises(ValueError, match="holds classic_whist decisions, the config trains german_whist"):
        PPOTrainer(cfg, run_dir=cfg.run_dir()).train()
    manifest = read_manifest(data)
    with pytest.raises(ValueError, match="obs_size"):
        check_dataset(manifest, GAME, manifest["options"], manifest["obs_size"] + 1, manifest["state_size"],
                      manifest["num_actions"], "here")
    check_dataset(manifest, GAME, manifest["options"], manifest["obs_size"], manifest["state_size"], manifest["num_actions"], "here")
    with pytest.raises(FileNotFoundError, match=MANIFEST):
        config = config_from_dict(warm_config(tmp_path, tmp_path / "none", run="none"))
        PPOTrainer(config, run_dir=config.run_dir()).train()


def test_a_damaged_shard_stops_the_warm_start(tmp_path, data):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(data, copy)
    with open(copy / "shard-00002.npz", "r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xFF]))
    cfg = config_from_dict(warm_config(tmp_path, copy, epochs=1))
    with pytest.raises(ValueError, match="sha256"):
        PPOTrainer(cfg, run_dir=cfg.run_dir()).train()


# ------------------------------------------------------------------------------ agreement
def test_a_teacher_agrees_with_itself_and_random_does_not():
    same = measure_agreement(GAME, "heuristic", "heuristic", 3, REPORT.start, OPTIONS, progress=False)
    assert same.deals == 3 and same.share == 1.0 and same.agreed == same.decisions > 0
    assert set(same.by_phase) == {"play"} and same.by_phase["play"] == [same.decisions, same.decisions]
    assert len(same.per_deal) == 3 and all(a == n for a, n in same.per_deal)
    other = measure_agreement(GAME, "heuristic", "random", 3, REPORT.start, OPTIONS, progress=False)
    assert other.decisions == same.decisions  # the teacher plays the same deals whoever is asked
    assert [n for _, n in other.per_deal] == [n for _, n in same.per_deal]
    assert 0.0 < other.share < 1.0
    low, high = other.interval()
    assert low <= other.share <= high and 0.0 <= low < high <= 1.0
    assert same.interval() == (1.0, 1.0)
    text = format_agreement(other, "heuristic", "random")
    assert text.startswith(f"random agrees with heuristic on {other.share:.2%}") and "play:" in text


def test_the_interval_is_the_ratio_estimators_over_deals():
    result = Agreement(decisions=8, agreed=4, deals=2, per_deal=[(3, 4), (1, 4)])
    # r = 0.5; var = ((3 - 2)^2 + (1 - 2)^2) / (2 * 1 * 4^2) = 1/16: half-width 1.96 * 0.25
    low, high = result.interval()
    assert low == pytest.approx(0.5 - 1.959963984540054 * 0.25) and high == pytest.approx(0.5 + 1.959963984540054 * 0.25)
    assert all(math.isnan(x) for x in Agreement(decisions=4, agreed=2, deals=1, per_deal=[(2, 4)]).interval())
    assert math.isnan(Agreement().share)


def test_whist_agree_on_the_command_line(capsys):
    argv = ["agree", "--game", GAME, "--option", "honours=false", "--student", "random", "--deals", "2", "--quiet"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("random agrees with heuristic on ") and "(2 deals)" in out
    for seed in (TRAINING.start, 2_000_000):  # a training deal seed; a seed of no range
        assert cli.main([*argv, "--seed", str(seed)]) == 2
        assert f"--seed {seed:,} is not a match seed" in capsys.readouterr().err


def test_whist_train_refuses_a_dataset_that_does_not_fit_before_it_makes_the_run(tmp_path, data, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(warm_config(tmp_path, data, run="honours", options={"honours": True})))
    assert cli.main(["train", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("whist train: error: warm_start.dataset: ") and "honours: False there, True here" in err
    assert "Traceback" not in err and not (tmp_path / "honours").exists()


def test_a_warm_start_does_not_resume_on_a_dataset_that_changed(tmp_path, data, monkeypatch):
    import shutil

    copy = tmp_path / "grown"
    shutil.copytree(data, copy)
    cfg = config_from_dict(warm_config(tmp_path, copy, run="grown"))
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    stop_after_first_block(monkeypatch, trainer)
    trainer.train()
    monkeypatch.undo()
    teach(TeachSpec(game=GAME, options=OPTIONS, episodes_per_shard=2), 700, copy, progress=False)  # two more shards
    resumed = PPOTrainer(cfg, run_dir=cfg.run_dir())
    resumed.load_state(load_checkpoint(cfg.run_dir() / "checkpoints" / "latest.pt"))
    with pytest.raises(ValueError, match="has changed since this warm start began"):
        resumed.train()
