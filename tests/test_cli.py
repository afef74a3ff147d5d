"""The ``whist`` command as a user meets it: one error format for every subcommand, Ctrl-C and
SIGTERM ending in exit status 130 with one line saying what was kept, a reader that goes away
(``| head``) ending quietly, help texts that point at real paths."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from training import cli
from training.evaluation.store import ResultsStore

ROOT = Path(__file__).resolve().parents[1]


def _default_sigint() -> None:
    # a test run started in the background ignores SIGINT, and a child would inherit that
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def whist_process():
    """``whist ARGV`` in its own process (unbuffered output, one torch thread, SIGINT as a
    terminal delivers it); every process started is killed at the end of the test."""
    started: list[subprocess.Popen] = []

    def start(*argv: str) -> subprocess.Popen:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "training.cli", *argv], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def wait_for(proc: subprocess.Popen, condition, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "timed out"
        time.sleep(0.1)


# ------------------------------------------------------------------------------ one error format
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "no/such/config.yaml"], "no/such/config.yaml"),
        (["eval", "--game", "bridge", "--agents", "random", "random"], "unknown game"),
        (["sb3-train", "--game", "bridge", "--timesteps", "8"], "unknown game"),
        (["league", "--agents", "random", "grandmaster", "--db", "{tmp}/r.sqlite"], "bad agent spec 'grandmaster'"),
        (["leaderboard", "--db", "{tmp}/none.sqlite"], "no results store"),
        (["bid-stats", "{tmp}/none.jsonl"], "none.jsonl"),
        (["plot", "--db", "{tmp}/none.sqlite", "--out", "{tmp}/plots"], "no results store"),
        (["replay", "{tmp}/none.jsonl", "--html", "{tmp}/x.html"], "none.jsonl"),
        (["play", "--game", "bridge"], "bridge"),
        (["eval", "--agents"], "expected at least one argument"),  # argparse's own errors too
        (["plot"], "--out"),
    ],
)
def test_every_subcommand_error_starts_with_its_name(tmp_path, capsys, argv, message):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        status = cli.main(argv)
    except SystemExit as exc:  # argparse exits by itself
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith(f"whist {argv[0]}: error: "), err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "prog"),
    [
        (["sb3-train", "--quiet", "--no-such-flag"], "whist sb3-train"),
        (["eval", "--agents", "random", "random", "--no-such-flag"], "whist eval"),
        (["--no-such-flag", "eval", "--agents", "random", "random"], "whist"),  # before the subcommand: the top level's
    ],
)
def test_unrecognised_arguments_are_errors_of_the_subcommand_they_follow(capsys, argv, prog):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"{prog}: error: unrecognized arguments: --no-such-flag\n(see '{prog} --help')\n"


def test_plot_help_points_at_the_main_jobs_run_folder(capsys):
    with pytest.raises(SystemExit):
        cli.main(["plot", "--help"])
    text = capsys.readouterr().out
    assert "--logdir runs/classic_default" in text and "runs/classic " not in text


def test_version_names_the_package_and_the_checkout(capsys):
    import whist_env
    from whist_env.provenance import short_commit

    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0
    commit = short_commit()
    suffix = "" if commit is None else "+g" + commit.replace("-dirty", ".dirty")
    assert capsys.readouterr().out == f"whist-env {whist_env.__version__}{suffix}\n"


# ------------------------------------------------------------------------------ Ctrl-C, SIGTERM, | head
def tiny_run(tmp_path: Path, total_steps: int, **train) -> Path:
    data = {"game": "classic_whist", "options": {"episode": "hand"}, "seed": 3, "log_dir": str(tmp_path), "run_name": "run",
            "train": {"total_steps": total_steps, "num_envs": 2, "rollout_steps": 64, "minibatch_size": 64, "update_epochs": 1,
                      "hidden_sizes": [16], "checkpoint_interval": 1000, "snapshot_interval": 2, **train},
            "eval": {"interval_steps": 0, "num_deals": 2, "final_num_deals": 0, "opponents": ["random"]}}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_train_stops_cleanly_on_a_signal_and_resumes(tmp_path, sig, whist_process):
    from agents.learned.checkpoint import load_checkpoint

    config = tiny_run(tmp_path, 10**8)
    proc = whist_process("train", str(config), "--no-progress")
    run = tmp_path / "run"
    # one update is logged before the signal: the event file grows past its header
    wait_for(proc, lambda: any(p.stat().st_size > 200 for p in run.glob("events.out.tfevents.*")))
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    latest = run / "checkpoints" / "latest.pt"
    step = load_checkpoint(latest)["global_step"]
    assert step > 0 and not (run / "checkpoints" / "final.pt").exists()
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 2 and "Traceback" not in err, err
    assert lines[0] == "stopping after the update in progress (again to abandon it)..."  # the signal is acknowledged at once
    assert lines[1].startswith("whist train: interrupted: ") and f"step {step:,}" in lines[1]
    assert f"whist train {config} --resume" in lines[1]
    assert cli.main(["train", str(config), "--no-progress", "--resume", "--total-steps", str(step + 256)]) == 0
    assert load_checkpoint(latest)["global_step"] == step + 256


def test_the_resume_command_keeps_every_override():
    from training.learn.train import resume_command

    args = cli.build_parser("train").parse_args(["train", "my configs/c.yaml", "--backend", "vector", "--total-steps", "5000", "--seed", "3",
                                          "--device", "cpu", "--run-dir", "runs/x", "--eval-deals", "0", "--no-progress"])
    assert resume_command(args) == ("whist train 'my configs/c.yaml' --total-steps 5000 --device cpu --backend vector --seed 3 "
                                     "--run-dir runs/x --eval-deals 0 --resume")
    assert resume_command(cli.build_parser("train").parse_args(["train", "c.yaml"])) == "whist train c.yaml --resume"


def test_resumed_curves_do_not_double_back(tmp_path):
    """A run that logged past its last checkpoint and died: the resumed run's writer purges those
    steps, so every tensorboard curve stays strictly increasing in step."""
    import shutil

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = tiny_run(tmp_path, 256, checkpoint_interval=1)
    ckpts = tmp_path / "run" / "checkpoints"
    assert cli.main(["train", str(config), "--no-progress"]) == 0  # 2 updates, latest at step 256
    shutil.copy(ckpts / "latest.pt", tmp_path / "at_256.pt")
    assert cli.main(["train", str(config), "--no-progress", "--resume", "--total-steps", "768"]) == 0  # logs 384 .. 768
    shutil.copy(tmp_path / "at_256.pt", ckpts / "latest.pt")  # as if the run had died before checkpointing them
    assert cli.main(["train", str(config), "--no-progress", "--resume", "--total-steps", "640"]) == 0
    events = EventAccumulator(str(tmp_path / "run"))
    events.Reload()
    for tag in events.Tags()["scalars"]:
        steps = [e.step for e in events.Scalars(tag)]
        assert steps == sorted(set(steps)), (tag, steps)
        assert max(steps) <= 640, (tag, steps)


def test_eval_ctrl_c_exits_130_with_one_line(tmp_path, whist_process):
    proc = whist_process("eval", "--agents", "heuristic", "random", "--deals", "100000", "--records", str(tmp_path / "rec"))
    wait_for(proc, lambda: any(p.stat().st_size > 0 for p in (tmp_path / "rec").glob("*.jsonl")))
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("whist eval: interrupted: 0 of 1 matches finished") and str(tmp_path / "rec") in last


def test_league_ctrl_c_keeps_the_finished_deals(tmp_path, whist_process):
    db = tmp_path / "r.sqlite"
    proc = whist_process("league", "--agents", "heuristic", "random", "--deals", "100000", "--db", str(db), "--quiet")

    def some_stored() -> bool:  # read only: the league process creates the store
        import sqlite3

        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                return conn.execute("SELECT COUNT(*) FROM outcomes").fetchone()[0] > 0
        except sqlite3.Error:
            return False

    wait_for(proc, some_stored)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith("whist league: interrupted: ") and "stored in" in line and "resume" in line
    played = int(line.split("interrupted: ")[1].split()[0])
    with ResultsStore(db) as store:
        assert len(store.stored_deals(1)) == played > 0


def test_sigterm_outside_training_exits_130_with_one_line(tmp_path, whist_process):
    proc = whist_process("eval", "--agents", "heuristic", "random", "--deals", "100000", "--records", str(tmp_path / "rec"))
    wait_for(proc, lambda: any(p.stat().st_size > 0 for p in (tmp_path / "rec").glob("*.jsonl")))
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip().splitlines()[-1].startswith("whist eval: interrupted: ")


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    db = tmp_path / "r.sqlite"
    assert cli.main(["league", "--agents", "heuristic", "random", "--deals", "2", "--quiet", "--db", str(db)]) == 0
    done = subprocess.run(f"{sys.executable} -m training.cli leaderboard --db {db} | head -n 0", shell=True, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.stderr == "", done.stderr


# ------------------------------------------------------------------------------ one name for "no progress"
@pytest.mark.parametrize(("command", "required"), [
    ("train", ["c.yaml"]), ("zoo-export", ["runs/x"]), ("rllib-train", ["c.yaml"]),
    ("eval", ["--agents", "random", "heuristic"]), ("league", ["--agents", "random", "heuristic"]),
])
def test_every_progress_showing_subcommand_takes_quiet_and_its_alias_no_progress(command, required, capsys):
    parser = cli.build_parser(command)
    assert parser.parse_args([command, *required]).quiet is False
    assert parser.parse_args([command, *required, "--quiet"]).quiet is True
    assert parser.parse_args([command, *required, "--no-progress"]).quiet is True
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    assert "--quiet, --no-progress" in capsys.readouterr().out


def test_the_rllib_resume_command_says_quiet():
    from training.learn.rllib.train import resume_command

    args = cli.build_parser("rllib-train").parse_args(["rllib-train", "c.yaml", "--no-progress"])
    assert resume_command(args) == "whist rllib-train c.yaml --quiet --resume"


# ------------------------------------------------------------------------------ README and docs commands
def test_readmes_vector_backend_example_does_not_collide_with_the_main_jobs_run():
    """After the main job (runs/classic_default holds a run), every ``whist train ... --backend vector``
    command of README and of the docs pages (docs/howto/training.md shows it) must name a fresh run folder
    or it is refused ("already holds a run")."""
    import re
    import shlex

    from training.learn.config import load_config

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    readme = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    assert "--backend vector" in (ROOT / "docs" / "howto" / "training.md").read_text(encoding="utf-8")
    main_job = load_config(ROOT / "configs" / "classic_default.yaml").run_dir(ROOT / "configs" / "classic_default.yaml")
    commands = [m.group(1) for m in re.finditer(r"`(whist train [^`]*--backend vector[^`]*)`", readme)]
    commands += [line.split("#")[0].strip() for line in readme.splitlines() if line.strip().startswith("whist train") and "--backend vector" in line]
    assert commands, "README and docs show no whist train --backend vector command"
    for command in commands:
        args = cli.build_parser("train").parse_args(shlex.split(command)[1:])
        run_dir = Path(args.run_dir) if args.run_dir else load_config(ROOT / args.config).run_dir(args.config)
        assert run_dir != main_job and not args.resume, command
