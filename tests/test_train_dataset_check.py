"""``whist train`` checks a teacher dataset's shards (``warm_start.dataset``) against their sha256 in
the manifest before it trains (``training.learn.dataset.check_dataset_of_config``): a damaged or
missing shard ends the command with one line and exit status 2, before the run folder is made."""

from __future__ import annotations

import shutil

import pytest
import yaml

from training import cli
from training.learn.config import config_from_dict
from training.learn.dataset import check_dataset_of_config
from training.learn.teach import TeachSpec, teach

GAME = "classic_whist"
OPTIONS = {"honours": False}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Three shards of one heuristic hand each (52 decisions a shard), made by the teach code."""
    folder = tmp_path_factory.mktemp("teacher")
    manifest = teach(TeachSpec(game=GAME, options=OPTIONS, episodes_per_shard=1), 3 * 52, folder, progress=False)
    assert [s["file"] for s in manifest["shards"]] == ["shard-00000.npz", "shard-00001.npz", "shard-00002.npz"]
    return folder


def config_file(tmp_path, data):
    """A config that warm-starts from ``data`` and trains nothing after it; its run folder is tmp_path/run."""
    config = {
        "game": GAME, "options": {"episode": "hand", **OPTIONS}, "seed": 3, "log_dir": str(tmp_path), "run_name": "run",
        "warm_start": {"dataset": str(data), "epochs": 1, "chunk": 100, "minibatch_size": 32, "holdout_shards": 1},
        "train": {"total_steps": 0, "hidden_sizes": [16], "num_envs": 2, "rollout_steps": 8},
        "eval": {"interval_steps": 0, "final_num_deals": 0, "opponents": ["random"]},
    }
    path = tmp_path / "warm.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, config


def flip_a_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_an_intact_dataset_passes_the_check(tmp_path, dataset):
    _, config = config_file(tmp_path, dataset)
    check_dataset_of_config(config_from_dict(config))


def test_whist_train_refuses_a_damaged_shard_before_it_makes_the_run(tmp_path, dataset, capsys, monkeypatch):
    copy = tmp_path / "data"
    shutil.copytree(dataset, copy)
    flip_a_byte(copy / "shard-00001.npz")
    path, _ = config_file(tmp_path, copy)

    def no_training(*args, **kwargs):
        raise AssertionError("training began on a damaged dataset")

    monkeypatch.setattr("training.learn.ppo.PPOTrainer", no_training)
    assert cli.main(["train", str(path), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"whist train: error: warm_start.dataset: shard {copy / 'shard-00001.npz'} does not match its "
                            "sha256 in the manifest (damaged or changed); run whist teach again with the dataset's arguments "
                            f"and --out {copy} to make it again\n")
    assert captured.out == ""
    assert not (tmp_path / "run").exists()


def test_whist_train_refuses_a_missing_shard(tmp_path, dataset, capsys):
    copy = tmp_path / "data"
    shutil.copytree(dataset, copy)
    (copy / "shard-00002.npz").unlink()
    path, _ = config_file(tmp_path, copy)
    assert cli.main(["train", str(path), "--quiet"]) == 2
    assert capsys.readouterr().err == (f"whist train: error: warm_start.dataset: shard {copy / 'shard-00002.npz'} is missing; "
                                       f"run whist teach again with the dataset's arguments and --out {copy} to make it again\n")
    assert not (tmp_path / "run").exists()
