"""``whist zoo-export`` (training/learn/zoo.py): a run's export goes into the run folder; replacing a
shipped agent takes ``--force`` and as many evaluation deals as its manifest, prints the old and
the new table side by side first, keeps the old files, and writes the new pair atomically.

No test here writes into the repository's ``agents/zoo``: ``ZOO_DIR`` points at a copy in a
temporary folder, and the real folder's file hashes are checked unchanged as well."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
from pathlib import Path

import pytest
from provenance_helpers import EXPORTED_AT, TRAINED_AT, clean_checkout  # noqa: F401  (a fixture)

import agents.learned.zoo as zoo_loader
from agents.learned.checkpoint import load_checkpoint
from training import cli
from training.learn import ppo
from training.learn.config import config_from_dict
from training.learn.ppo import PPOTrainer
from training.learn.zoo import side_by_side, write_files_atomic
from whist_env import provenance

#: Every test trains and exports as from a clean checkout unless it says otherwise.
pytestmark = pytest.mark.usefixtures("clean_checkout")

REAL_ZOO = zoo_loader.ZOO_DIR


def hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def real_zoo_hashes():
    return hashes(REAL_ZOO)


@pytest.fixture
def shipped(tmp_path, monkeypatch, real_zoo_hashes):
    """A copy of the shipped zoo that ``ZOO_DIR`` points at; the real one is checked unchanged at the end."""
    copy = tmp_path / "shipped_zoo"
    shutil.copytree(REAL_ZOO, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(zoo_loader, "ZOO_DIR", copy)
    yield copy
    assert hashes(REAL_ZOO) == real_zoo_hashes


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A finished two-update classic_whist run (training seed 3), trained at the clean commit :data:`TRAINED_AT`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ppo, "source_commit", lambda: TRAINED_AT)
        return train_run(tmp_path_factory.mktemp("zoo_run"))


def train_run(root: Path) -> Path:
    """A finished two-update classic_whist run in ``root`` (training seed 3)."""
    cfg = config_from_dict({
        "game": "classic_whist", "options": {"episode": "hand", "honours": False}, "seed": 3, "log_dir": str(root), "run_name": "run",
        "train": {"total_steps": 128, "num_envs": 2, "rollout_steps": 32, "hidden_sizes": [16], "minibatch_size": 64,
                  "update_epochs": 1, "checkpoint_interval": 1, "opponents": {}},
        "eval": {"interval_steps": 0, "final_num_deals": 0, "opponents": ["random"]},
    })
    PPOTrainer(cfg, run_dir=cfg.run_dir()).train()
    return cfg.run_dir()


def zoo_export(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(["zoo-export", *argv, "--quiet"])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_default_export_goes_to_the_run_folder_and_leaves_the_shipped_zoo_alone(shipped, run_dir, capsys):
    before = hashes(shipped)
    status, out, err = zoo_export(capsys, str(run_dir), "--deals", "2")
    assert status == 0, err
    assert hashes(shipped) == before
    pt, manifest = run_dir / "zoo" / "classic_whist.pt", run_dir / "zoo" / "classic_whist.json"
    assert sorted(p.name for p in (run_dir / "zoo").iterdir()) == ["classic_whist.json", "classic_whist.pt"]
    assert load_checkpoint(pt, game="classic_whist")["extra"]["actor_only"] is True
    evaluation = json.loads(manifest.read_text())["evaluation"]
    assert evaluation["deals_per_opponent"] == 2 and evaluation["seed"] == 2027
    assert [r["agent_b"] for r in evaluation["results"]] == ["random", "heuristic"]
    assert f"wrote {pt} (" in out and "old (shipped)" in out  # the shipped agent's table beside it, for reference
    manifest = json.loads(manifest.read_text())
    assert (manifest["commit"], manifest["export_commit"], manifest["dirty"]) == (TRAINED_AT, EXPORTED_AT, False)
    assert manifest["env_id"] == "whist/classic_whist-v0" and manifest["steps"] == 128 and manifest["teacher"] is None and manifest["init"] is None


def test_a_run_from_uncommitted_code_is_refused_unless_allowed_and_the_manifest_says_so(shipped, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ppo, "source_commit", lambda: "c" * 40 + "-dirty")
    run = train_run(tmp_path)
    status, out, err = zoo_export(capsys, str(run), "--deals", "2")
    assert status == 2 and out == "" and not (run / "zoo").exists()
    assert err == ("whist zoo-export: error: the run was trained from ccccccc with uncommitted changes to the code or configs: "
                   "nobody could rebuild this agent from the repository; commit and train again, or pass --allow-dirty "
                   '(the manifest then records "dirty": true)\n')
    status, _, err = zoo_export(capsys, str(run), "--deals", "0", "--allow-dirty")
    assert status == 0, err
    assert json.loads((run / "zoo" / "classic_whist.json").read_text())["dirty"] is True


def test_an_export_from_a_dirty_checkout_or_of_an_unknown_commit_into_the_shipped_zoo_is_refused(shipped, run_dir, capsys,
                                                                                                monkeypatch, tmp_path):
    monkeypatch.setattr(provenance, "source_commit", lambda: EXPORTED_AT + "-dirty")
    status, _, err = zoo_export(capsys, str(run_dir), "--out", str(tmp_path / "x"), "--deals", "0")
    assert status == 2 and "this checkout (bbbbbbb) has uncommitted changes to the code or configs" in err
    assert not (tmp_path / "x").exists()
    monkeypatch.setattr(provenance, "source_commit", lambda: None)  # an installed package: no checkout
    status, _, err = zoo_export(capsys, str(run_dir), "--out", str(tmp_path / "x"), "--deals", "0")
    assert status == 0, err  # a user's own folder: the commit is not known, and that is no refusal
    monkeypatch.setattr(ppo, "source_commit", lambda: None)
    unknown = train_run(tmp_path / "unknown")
    status, _, err = zoo_export(capsys, str(unknown), "--out", str(shipped), "--force", "--deals", "2000")
    assert status == 2 and "the run was trained outside a git checkout (its commit is unknown)" in err


def test_the_shipped_zoo_without_force_is_refused_before_any_evaluation(shipped, run_dir, capsys):
    before = hashes(shipped)
    status, out, err = zoo_export(capsys, str(run_dir), "--out", str(shipped), "--deals", "2000")
    assert status == 2
    assert err == (f"whist zoo-export: error: --out {shipped} is the shipped model zoo: writing the shipped classic_whist agent "
                   "there takes --force (and --deals 2,000 or more); without --out the agent goes to RUN_DIR/zoo\n")
    assert out == "" and hashes(shipped) == before
    # the same folder named another way is still the shipped zoo
    status, _, err = zoo_export(capsys, str(run_dir), "--out", str(shipped / ".." / shipped.name), "--deals", "2")
    assert status == 2 and "takes --force" in err and hashes(shipped) == before


def test_force_with_fewer_deals_than_the_shipped_manifest_is_refused(shipped, run_dir, capsys):
    before = hashes(shipped)
    status, out, err = zoo_export(capsys, str(run_dir), "--out", str(shipped), "--force", "--deals", "1999")
    assert status == 2 and out == ""
    assert err == ("whist zoo-export: error: replacing the shipped classic_whist agent takes at least 2,000 evaluation deals "
                   "per opponent (its manifest has 2,000), got --deals 1,999: pass --deals 2000\n")
    assert hashes(shipped) == before


def test_a_game_the_shipped_zoo_lacks_takes_the_deals_every_shipped_manifest_has(shipped, run_dir, capsys):
    for suffix in (".pt", ".json"):
        (shipped / f"classic_whist{suffix}").unlink()
    before = hashes(shipped)
    status, _, err = zoo_export(capsys, str(run_dir), "--out", str(shipped), "--deals", "4")
    assert status == 2 and "writing a classic_whist agent there takes --force (and --deals 2,000 or more)" in err
    status, out, err = zoo_export(capsys, str(run_dir), "--out", str(shipped), "--force", "--deals", "4")
    assert status == 2 and out == ""
    assert err == ("whist zoo-export: error: writing a classic_whist agent into the shipped zoo takes at least 2,000 evaluation "
                   "deals per opponent (as every shipped manifest has 2,000), got --deals 4: pass --deals 2000\n")
    assert hashes(shipped) == before


def test_force_with_enough_deals_prints_both_tables_then_replaces_and_keeps_the_old_pair(shipped, run_dir, capsys, tmp_path):
    manifest_path = shipped / "classic_whist.json"
    old = json.loads(manifest_path.read_text())
    old["evaluation"]["deals_per_opponent"] = 3  # this copy's manifest asks for 3 deals, so that the test stays short
    manifest_path.write_text(json.dumps(old, indent=2) + "\n")
    before = hashes(shipped)
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    status, out, err = zoo_export(capsys, str(run), "--out", str(shipped), "--force", "--deals", "3")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "old (shipped): 3 deals per opponent, seed 2027, 10,002,432 steps, 200,044 teacher decisions trained on"
    assert lines[1] == "new (this run): 3 deals per opponent, seed 2027, 128 steps, 0 teacher decisions trained on"
    assert re.split(r"\s{2,}", lines[3]) == ["opponent", "old win rate [95% CI]", "new win rate [95% CI]", "old points/hand",
                                             "new points/hand"]
    new = json.loads(manifest_path.read_text())
    cells = {}
    for spec, line in zip(("random", "heuristic"), lines[4:6]):
        assert line.startswith(spec + " ")
        cells[spec] = re.split(r"\s{2,}", line)[1:]
    assert cells["random"][0] == "82.6% [81.5, 83.6]" and cells["random"][2] == "+2.30 [+2.25, +2.34]"
    assert cells["heuristic"][0] == "52.9% [52.1, 53.7]" and cells["heuristic"][2] == "+0.20 [+0.17, +0.23]"
    r = new["evaluation"]["results"][0]
    assert cells["random"][1] == f"{100 * r['win_rate']:.1f}% [{100 * r['win_rate_ci'][0]:.1f}, {100 * r['win_rate_ci'][1]:.1f}]"
    # the tables come before anything is written
    assert out.index("old (shipped)") < out.index(f"the shipped agent being replaced is kept in {run / 'zoo' / 'replaced'}") \
        < out.index(f"replaced {shipped / 'classic_whist.pt'}")
    after = hashes(shipped)
    assert {k for k in after if after[k] != before[k]} == {"classic_whist.pt", "classic_whist.json"}
    assert hashes(run / "zoo" / "replaced") == {k: before[k] for k in ("classic_whist.json", "classic_whist.pt")}
    assert new["steps"] == 128 and new["evaluation"]["deals_per_opponent"] == 3
    assert not list(shipped.glob(".*.tmp"))
    # a second replacement keeps the first one's backup and puts its own beside it
    replaced_once = hashes(run / "zoo" / "replaced")
    status, out, err = zoo_export(capsys, str(run), "--out", str(shipped), "--force", "--deals", "3")
    assert status == 0, err
    assert f"the shipped agent being replaced is kept in {run / 'zoo' / 'replaced-2'}" in out
    assert hashes(run / "zoo" / "replaced") == replaced_once
    assert hashes(run / "zoo" / "replaced-2") == {k: after[k] for k in ("classic_whist.json", "classic_whist.pt")}


def test_negative_deals_are_refused_before_anything_is_written(shipped, run_dir, capsys, tmp_path):
    out_dir = tmp_path / "neg"
    status, out, err = zoo_export(capsys, str(run_dir), "--out", str(out_dir), "--deals", "-5")
    assert status == 2 and "--deals must be >= 0 (0: no evaluation table), got -5" in err
    assert not out_dir.exists()


def test_side_by_side_shows_a_missing_opponent_as_a_dash():
    old = {"steps": 10, "evaluation": {"deals_per_opponent": 5, "seed": 1, "results": [
        {"agent_b": "random", "win_rate": 0.5, "win_rate_ci": [0.25, 0.75], "points_per_hand": 0.125, "points_per_hand_ci": [-1, 1.25]}]}}
    new = {"steps": 20, "evaluation": {"deals_per_opponent": 6, "seed": 2, "results": [
        {"agent_b": "heuristic", "win_rate": 1.0, "win_rate_ci": [0.9, 1.0], "points_per_hand": -2, "points_per_hand_ci": [-3, -1]}]}}
    assert side_by_side(old, new).splitlines() == [
        "old (shipped): 5 deals per opponent, seed 1, 10 steps, 0 teacher decisions trained on",
        "new (this run): 6 deals per opponent, seed 2, 20 steps, 0 teacher decisions trained on",
        "",
        # columns 9, 21, 21 and 20 wide, two spaces apart
        "opponent" + " " * 3 + "old win rate [95% CI]" + " " * 2 + "new win rate [95% CI]" + " " * 2 + "old points/hand" + " " * 7
        + "new points/hand",
        "random" + " " * 5 + "50.0% [25.0, 75.0]" + " " * 5 + "-" + " " * 22 + "+0.12 [-1.00, +1.25]" + " " * 2 + "-",
        "heuristic" + " " * 2 + "-" + " " * 22 + "100.0% [90.0, 100.0]" + " " * 3 + "-" + " " * 21 + "-2.00 [-3.00, -1.00]",
    ]


def test_an_interrupted_write_leaves_the_old_pair_and_no_temporary_file(tmp_path, monkeypatch):
    a, b = tmp_path / "g.pt", tmp_path / "g.json"
    a.write_bytes(b"old weights")
    b.write_bytes(b"old manifest")
    real_fsync, calls = os.fsync, []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:  # while the second file is being written
            raise KeyboardInterrupt
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        write_files_atomic([(a, b"new weights"), (b, b"new manifest")])
    assert a.read_bytes() == b"old weights" and b.read_bytes() == b"old manifest"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "g.pt"]
    monkeypatch.setattr(os, "fsync", real_fsync)
    write_files_atomic([(a, b"new weights"), (b, b"new manifest")])
    assert a.read_bytes() == b"new weights" and b.read_bytes() == b"new manifest"


def test_ctrl_c_between_the_renames_is_held_back_until_both_are_done(tmp_path, monkeypatch):
    """A SIGINT that arrives after the first rename is delivered only after the second, also in a
    process with other threads (the OS may hand the signal to any of them)."""
    import threading

    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    a, b = tmp_path / "g.pt", tmp_path / "g.json"
    a.write_bytes(b"old weights")
    b.write_bytes(b"old manifest")
    real_replace, done = os.replace, []

    def replace(src, dst):
        real_replace(src, dst)
        done.append(Path(dst).name)
        if len(done) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(os, "replace", replace)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            write_files_atomic([(a, b"new weights"), (b, b"new manifest")])
    finally:
        signal.signal(signal.SIGINT, previous)
        stop.set()
    assert done == ["g.pt", "g.json"]
    assert a.read_bytes() == b"new weights" and b.read_bytes() == b"new manifest"


def test_a_seed_outside_report_is_refused_before_any_evaluation(shipped, run_dir, capsys):
    status, out, err = zoo_export(capsys, str(run_dir), "--out", str(run_dir / "elsewhere"), "--seed", "12345", "--deals", "2")
    assert status == 2 and out == ""
    assert err == ("whist zoo-export: error: the evaluation seed (--seed) 12,345 lies in DEVELOPMENT [10,000, 1,000,000) "
                   "(tuning: in-training evaluations, search defaults); expected a seed in REPORT [0, 10,000) "
                   "(the figures README and the docs publish)\n")
    assert not (run_dir / "elsewhere").exists()
    status, _, err = zoo_export(capsys, str(run_dir), "--out", str(run_dir / "elsewhere"), "--seed", "3", "--deals", "2")
    assert status == 2 and "the evaluation seed 3 is the training seed" in err
