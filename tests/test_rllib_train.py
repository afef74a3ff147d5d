"""``whist rllib-train`` and the ``rllib:PATH`` agent spec.

The config tests run everywhere (the config module does not import Ray); the training run and
the agent need ``ray[rllib]`` (optional extra ``whist-env[rllib]``) and are skipped without it.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from training.cli import main
from training.learn.config import ConfigError
from training.learn.rllib.config import load_rllib_config, rllib_config_from_dict

EXAMPLE = Path(__file__).resolve().parent.parent / "configs" / "rllib_classic.yaml"
HAS_RLLIB = importlib.util.find_spec("ray") is not None and importlib.util.find_spec("ray.rllib") is not None
needs_rllib = pytest.mark.skipif(not HAS_RLLIB, reason="needs ray[rllib]: run in README's Ray venv (.venv-ray)")


def _config(**changes):
    data = yaml.safe_load(EXAMPLE.read_text())
    for dotted, value in changes.items():
        *parents, key = dotted.split(".")
        node = data
        for p in parents:
            node = node[p]
        node[key] = value
    return data


def test_example_config_is_valid():
    config = load_rllib_config(EXAMPLE)
    assert config.game == "classic_whist" and config.opponents == "heuristic"
    assert config.train.lambda_ == 0.8 and config.train.total_env_steps


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"train.lr": "fast"}, "train.lr: Input should be a valid number"),
        ({"train.lr": -1}, "train.lr: Input should be greater than 0"),
        ({"train.total_env_steps": None}, "train: give iterations or total_env_steps"),
        ({"train.minibatch_size": 4096}, "train: minibatch_size 4096 exceeds train_batch_size 2048"),
        ({"train.learning_rate": 0.1}, "train.learning_rate: unknown key"),
        ({"opponents": "heuristik"}, "opponents: unknown agent spec 'heuristik'"),
        ({"opponents": {"heuristic": 0.8, "random": 0.4}}, "opponents: the shares add up to 1.200 > 1"),
        ({"opponents": 3}, "opponents: expected an agent spec"),
        ({"learner_side": 2}, "learner_side: classic_whist has sides 0..1"),
        ({"learner_side": "north"}, "learner_side: expected 'random' or a side index"),
        ({"policies": "per_seat"}, "policies: Input should be 'shared' or 'side'"),
        ({"game": "bridge"}, "game: unknown game 'bridge'"),
        ({"options.honours": "maybe"}, "options: invalid value 'maybe' for option 'honours'"),
        ({"env_runners.num_env_runners": 3}, "ray.num_cpus: 3 env runners x 1.0 CPU need 3 CPUs"),
        ({"eval.opponents": ["heuristic", "alphazero"]}, "eval.opponents: unknown agent spec 'alphazero'"),
        ({"eval.num_deals": -5}, "eval.num_deals: Input should be greater than or equal to 0"),
    ],
)
def test_config_errors_name_the_key(changes, message):
    with pytest.raises(ConfigError) as err:
        rllib_config_from_dict(_config(**changes), source="x.yaml")
    assert message in str(err.value)


def test_command_refuses_a_bad_config(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(_config(**{"train.num_epochs": 0})))
    assert main(["rllib-train", str(bad)]) == 2
    assert "train.num_epochs: Input should be greater than or equal to 1" in capsys.readouterr().err


@pytest.mark.skipif(HAS_RLLIB, reason="checks the message shown without Ray")
def test_without_ray_the_errors_name_the_extra(tmp_path, capsys):
    from agents.registry import make_agent

    with pytest.raises(ImportError, match=r"whist-env\[rllib\]"):
        make_agent(f"rllib:{tmp_path}", "classic_whist")
    assert main(["eval", "--agents", f"rllib:{tmp_path}", "random", "--deals", "1"]) == 2
    assert "whist-env[rllib]" in capsys.readouterr().err
    assert main(["rllib-train", str(EXAMPLE), "--run-dir", str(tmp_path / "run")]) == 2
    assert "whist-env[rllib]" in capsys.readouterr().err


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """One iteration of the example config on 2 env runners with a tiny batch against the
    heuristic, with a 4-deal final evaluation; returns (run folder, printed output)."""
    if not HAS_RLLIB:
        pytest.skip("needs ray[rllib]: run in README's Ray venv (.venv-ray)")
    tmp = tmp_path_factory.mktemp("rllib")
    config = tmp / "tiny.yaml"
    config.write_text(yaml.safe_dump(_config(**{
        "env_runners.num_env_runners": 2, "env_runners.num_envs_per_env_runner": 2, "ray.num_cpus": 2,
        "train.train_batch_size": 256, "train.minibatch_size": 128, "train.num_epochs": 1, "train.hidden_sizes": [32],
        "eval.num_deals": 4, "eval.opponents": ["heuristic"], "log_dir": str(tmp), "run_name": "tiny"})))
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["rllib-train", str(config), "--iterations", "1", "--no-progress"])
    assert status == 0, out.getvalue()
    return tmp / "tiny", out.getvalue()


@needs_rllib
def test_one_iteration_ends_with_the_evaluation_table(trained_run):
    run_dir, printed = trained_run
    meta = json.loads((run_dir / "checkpoints" / "latest" / "whist_rllib.json").read_text())
    assert meta["iteration"] == 1 and meta["env_steps"] >= 256 and meta["game"] == "classic_whist"
    assert meta["illegal_actions"] == 0  # an illegal move would also cut a hand short
    assert meta["mapping"] == dict.fromkeys([f"player_{i}" for i in range(4)], "shared")
    assert "win rate A, per hand [95% CI]" in printed and "rllib:tiny  heuristic" in printed
    results = json.loads((run_dir / "results.json").read_text())
    assert [r["agent_b"] for r in results] == ["heuristic"] and results[0]["deals"] == 4
    assert list(run_dir.glob("events.out.tfevents.*"))
    assert not (run_dir / "checkpoints" / ".latest.tmp").exists()


@needs_rllib
def test_rllib_agent_loads_and_plays(trained_run, capsys):
    from agents.registry import make_agent
    from whist_env import classic_whist_v0

    run_dir, _ = trained_run
    assert main(["eval", "--agents", f"rllib:{run_dir}", "random", "--deals", "3", "--option", "honours=false", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"rllib:{run_dir}" in out and "random" in out
    agent = make_agent(f"rllib:{run_dir / 'checkpoints' / 'latest'}", "classic_whist")
    assert agent.trained_options["honours"] is False
    env = classic_whist_v0.raw_env(honours=False)
    env.reset(seed=5)
    for _ in range(12):
        agent_id = env.agent_selection
        action = agent.act(env.observe(agent_id), env.information_state(agent_id))
        assert env.observe(agent_id)["action_mask"][action] == 1
        env.step(action)
    module_dir = run_dir / "checkpoints" / "latest" / "learner_group" / "learner" / "rl_module" / "shared"
    assert make_agent(f"rllib:{module_dir}", "classic_whist").module_for(None) == "shared"
    with pytest.raises(ValueError, match="trained on classic_whist, not german_whist"):
        make_agent(f"rllib:{run_dir}", "german_whist")
    with pytest.raises(ValueError, match="not an RLlib checkpoint"):
        make_agent(f"rllib:{run_dir.parent}", "classic_whist")


@needs_rllib
def test_rllib_agent_never_unpickles(trained_run, monkeypatch, tmp_path):
    """rllib:PATH reads tensors (weights_only) and JSON: with every unpickler disabled it still
    loads; a checkpoint with only RLlib's pickled module files, or damaged policy files, is refused."""
    import pickle
    import shutil

    import ray.cloudpickle

    from agents.learned.rllib import WEIGHTS_FILE
    from agents.registry import make_agent

    run_dir, _ = trained_run

    def refuse(*args, **kwargs):
        raise AssertionError("something was unpickled")

    with monkeypatch.context() as m:
        for module in (pickle, ray.cloudpickle):
            m.setattr(module, "load", refuse)
            m.setattr(module, "loads", refuse)
        m.setattr(pickle, "Unpickler", refuse)
        agent = make_agent(f"rllib:{run_dir}", "classic_whist")
    assert sorted(agent.modules) == ["shared"]

    rllib_only = tmp_path / "rllib_only"
    shutil.copytree(run_dir / "checkpoints" / "latest", rllib_only)
    (rllib_only / WEIGHTS_FILE).unlink()
    with pytest.raises(ValueError, match="does not unpickle"):
        make_agent(f"rllib:{rllib_only}", "classic_whist")

    damaged = tmp_path / "damaged"
    shutil.copytree(run_dir / "checkpoints" / "latest", damaged)
    (damaged / WEIGHTS_FILE).write_bytes((damaged / WEIGHTS_FILE).read_bytes()[:100])
    with pytest.raises(ValueError, match="cannot read the policy files"):
        make_agent(f"rllib:{damaged}", "classic_whist")


@needs_rllib
def test_rllib_agent_refuses_weights_that_do_not_fit(trained_run, tmp_path):
    import json
    import shutil

    from agents.learned.rllib import METADATA_FILE
    from agents.registry import make_agent

    run_dir, _ = trained_run
    other = tmp_path / "other"
    shutil.copytree(run_dir / "checkpoints" / "latest", other)
    meta = json.loads((other / METADATA_FILE).read_text())
    meta["model"]["shared"]["config"]["fcnet_hiddens"] = [64]
    (other / METADATA_FILE).write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="cannot rebuild RLlib module 'shared'"):
        make_agent(f"rllib:{other}", "classic_whist")


@needs_rllib
def test_resume_with_other_network_sizes_is_refused_and_changes_nothing(trained_run, tmp_path, capsys):
    run_dir, _ = trained_run
    before = (run_dir / "config.yaml").read_text()
    data = yaml.safe_load(before)
    data["train"]["hidden_sizes"] = [64]
    other = tmp_path / "wider.yaml"
    other.write_text(yaml.safe_dump(data))
    assert main(["rllib-train", str(other), "--run-dir", str(run_dir), "--resume", "--iterations", "2"]) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "train.hidden_sizes [32], the config has [64]" in err
    assert (run_dir / "config.yaml").read_text() == before


@needs_rllib
def test_an_address_where_no_ray_listens_is_refused_at_once(tmp_path, capsys):
    import socket
    import time

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(_config(log_dir=str(tmp_path))))
    t0 = time.monotonic()
    assert main(["rllib-train", str(config), "--address", f"127.0.0.1:{port}", "--iterations", "1"]) == 2
    assert time.monotonic() - t0 < 60
    assert f"--address: cannot reach a Ray cluster at 127.0.0.1:{port}" in capsys.readouterr().err
    assert not (tmp_path / "rllib_classic").exists()  # nothing written
