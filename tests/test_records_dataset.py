"""A teacher dataset from game records (``whist teach --records DIR``,
training/learn/records_dataset.py): every decision of the recorded games stored as ``whist teach``
stores it, the chosen players' decisions labelled with the action they played; records that do
not replay or of another game are refused, naming the file and line."""

from __future__ import annotations

import json

import numpy as np
import pytest

import whist_env
from agents.registry import make_agent
from training.learn.dataset import samples_of
from training.learn.records_dataset import dataset_from_records
from training.learn.teach import load_shard, read_manifest
from whist_env.records import record_episode, write_records


def _records(folder, game="classic_whist", episodes=3, options=None):
    """``episodes`` recorded hands with a "human" in seat 0 (played by the heuristic here)."""
    options = {"episode": "hand", **(options or {})}
    module = whist_env.GAMES[game]
    heuristic = make_agent("heuristic", game)
    env = module.raw_env(**options)
    labels = {a: ("human" if a == "player_0" else "heuristic") for a in env.possible_agents}
    records = [record_episode(module, game, options, 40 + k, None, dict.fromkeys(env.possible_agents, heuristic), labels)
               for k in range(episodes)]
    write_records(records, folder / "served.jsonl")
    return records


def test_every_decision_is_stored_and_the_humans_are_labelled(tmp_path):
    (tmp_path / "rec").mkdir()
    records = _records(tmp_path / "rec")
    manifest = dataset_from_records(tmp_path / "rec", tmp_path / "data", episodes_per_shard=2)
    assert manifest["teacher"] == "records:human" and manifest["seed"] is None
    assert [s["episodes"] for s in manifest["shards"]] == [2, 1]
    assert manifest["decisions"] == sum(len(r["actions"]) for r in records) == 3 * 52
    human = [e for r in records for e in r["actions"] if e["agent"] == "player_0"]
    assert manifest["labelled"] == len(human) == 3 * 13
    assert read_manifest(tmp_path / "data")["records"]["files"][0]["file"] == "served.jsonl"
    arrays = [load_shard(tmp_path / "data", s) for s in manifest["shards"]]
    action = np.concatenate([a["action"] for a in arrays])
    label = np.concatenate([a["label"] for a in arrays])
    seat = np.concatenate([a["seat"] for a in arrays])
    assert action.tolist() == [e["action"] for r in records for e in r["actions"]]
    assert np.array_equal(label[seat == 0], action[seat == 0]) and (label[seat != 0] == -1).all()
    # the observations are the recorded players' own: the first decision's is the reset table's
    env = whist_env.classic_whist_v0.raw_env(episode="hand")
    env.reset(seed=records[0]["seed"])
    assert np.array_equal(arrays[0]["observation"][0], env.observe(env.agent_selection)["observation"])
    # the tricks each side took, as in a teacher's dataset; a warm start reads the labelled rows
    assert (np.concatenate([a["tricks"] for a in arrays]) >= 0).all()
    samples = samples_of(tmp_path / "data", manifest["shards"], False, 1.0, 1.0)
    assert len(samples) == 3 * 52 and int(samples.labelled.sum()) == 3 * 13  # the critic learns from every row


def test_records_that_do_not_fit_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    records = _records(tmp_path / "a", episodes=1)
    broken = json.loads(json.dumps(records[0]))
    broken["actions"][5]["action"], broken["actions"][6]["action"] = broken["actions"][6]["action"], broken["actions"][5]["action"]
    write_records([broken], tmp_path / "a" / "z.jsonl")
    with pytest.raises(ValueError, match=r"z.jsonl line 1 does not replay at action 5"):
        dataset_from_records(tmp_path / "a", tmp_path / "out")
    assert not (tmp_path / "out" / "manifest.json").exists()
    (tmp_path / "b").mkdir()
    _records(tmp_path / "b", episodes=1)
    (tmp_path / "c").mkdir()
    _records(tmp_path / "c", episodes=1)
    (tmp_path / "d").mkdir()
    _records(tmp_path / "d", game="german_whist", episodes=1)
    (tmp_path / "d" / "served.jsonl").rename(tmp_path / "c" / "z_german.jsonl")
    with pytest.raises(ValueError, match="z_german.jsonl line 1 is german_whist"):
        dataset_from_records(tmp_path / "c", tmp_path / "out")
    with pytest.raises(ValueError, match=r"no decision of \['nobody'\]"):
        dataset_from_records(tmp_path / "b", tmp_path / "out", players=["nobody"])
    with pytest.raises(FileNotFoundError, match="no game records"):
        dataset_from_records(tmp_path / "out", tmp_path / "out2")
    with pytest.raises(ValueError, match="not one made from records"):
        (tmp_path / "teacher").mkdir()
        (tmp_path / "teacher" / "manifest.json").write_text(json.dumps({"format": "whist-env-teacher-dataset", "format_version": 1,
                                                                        "teacher": "heuristic", "shards": []}))
        dataset_from_records(tmp_path / "b", tmp_path / "teacher")


def test_a_rerun_makes_the_dataset_again(tmp_path):
    (tmp_path / "rec").mkdir()
    _records(tmp_path / "rec", episodes=2)
    first = dataset_from_records(tmp_path / "rec", tmp_path / "data")
    _records(tmp_path / "rec", episodes=3)  # write_records appends: the file now holds five games
    second = dataset_from_records(tmp_path / "rec", tmp_path / "data")
    assert (first["decisions"], second["decisions"]) == (2 * 52, 5 * 52)
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["manifest.json", "shard-00000.npz"]
