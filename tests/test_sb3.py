"""Smoke tests of the SB3 path: MaskablePPO on the single-agent wrapper, and ``whist sb3-train``."""

from __future__ import annotations

import argparse
import json

import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

import whist_env  # noqa: E402
from training import cli  # noqa: E402
from training.learn import sb3 as sb3_maskable  # noqa: E402
from whist_env.wrappers import SingleAgentWhistEnv  # noqa: E402


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli.configure_sb3_train(parser)
    return parser.parse_args(argv)


def sb3_train(argv: list[str]) -> int:
    return cli.main(["sb3-train", *argv])


def test_tiny_maskable_ppo_run_predicts_legal_actions(tmp_path):
    import torch

    torch.set_num_threads(1)
    env = SingleAgentWhistEnv("classic_whist", learner_seat="random")
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0, device="cpu", policy_kwargs={"net_arch": [32]}
    )
    model.learn(total_timesteps=256)
    path = tmp_path / "model.zip"
    model.save(path)
    loaded = MaskablePPO.load(path, device="cpu")
    eval_env = SingleAgentWhistEnv("classic_whist", learner_seat=2, partner="self")
    for seed in range(3):
        obs, _ = eval_env.reset(seed=seed)
        done = False
        while not done:
            mask = eval_env.action_masks()
            for deterministic in (True, False):
                action, _ = loaded.predict(obs, action_masks=mask, deterministic=deterministic)
                assert mask[int(action)]
            obs, _, terminated, truncated, _ = eval_env.step(int(action))
            done = terminated or truncated


def test_sb3_train_command_end_to_end(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["--timesteps", "256", "--n-steps", "128", "--batch-size", "64", "--n-epochs", "1", "--net-arch", "32",
            "--eval-deals", "4", "--seed", "3", "--out", str(out), "--option", "honours=false", "--log-every", "0",
            "--opponents", "random"]
    assert sb3_train(argv) == 0
    assert (out / "model.zip").is_file()
    assert list((out / "tb").rglob("events.out.tfevents.*"))
    printed = capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())
    assert results["options"]["honours"] is False and results["options"]["episode"] == "hand"
    # whist eval's evaluation: the model, then the random reference, against each opponent spec
    assert [(r["agent_a"], r["agent_b"]) for r in results["eval"]] == [(f"sb3:{out / 'model.zip'}", "random"), ("random", "random")]
    for r in results["eval"]:
        assert r["deals"] == 4 and r["hands"] == 8 and r["duplicate"] is True
        lo, hi = r["win_rate_ci"]
        assert 0.0 <= lo <= r["win_rate"] <= hi <= 1.0
    # printed in whist eval's table format
    from training.evaluation.match import PairResult, format_table

    rows = [PairResult(**{**r, "win_rate_ci": tuple(r["win_rate_ci"]), "points_per_hand_ci": tuple(r["points_per_hand_ci"]),
                          "p_value": float("nan") if r["p_value"] is None else r["p_value"]}) for r in results["eval"]]
    assert format_table(rows) in printed
    model = MaskablePPO.load(out / "model.zip", device="cpu")
    assert model.action_space.n == 52


def test_quiet_prints_no_progress_lines(tmp_path, capsys):
    assert (parse([]).quiet, parse(["--quiet"]).quiet, parse(["--no-progress"]).quiet) == (False, True, True)
    argv = ["--timesteps", "64", "--n-steps", "32", "--batch-size", "32", "--n-epochs", "1", "--net-arch", "8",
            "--eval-deals", "0", "--log-every", "1e-9"]  # a progress line at every step unless quiet
    assert sb3_train([*argv, "--out", str(tmp_path / "loud")]) == 0
    assert "steps/s" in capsys.readouterr().out
    assert sb3_train([*argv, "--out", str(tmp_path / "quiet"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "steps/s" not in printed
    assert printed.startswith(f"sb3-train: classic_whist, 64 steps vs random -> {tmp_path / 'quiet'}\n")


def test_option_values_are_parsed_as_yaml():
    args = parse(["--option", "honours=false", "--option", "target_score=7", "--option", "trump_rotation=[C, D, H, S]"])
    assert dict(args.option) == {"honours": False, "target_score": 7, "trump_rotation": ("C", "D", "H", "S")}
    with pytest.raises(SystemExit):
        parse(["--option", "honours"])
    with pytest.raises(SystemExit):
        parse(["--learner-seat", "north"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--game", "no_such_game"], "unknown game"),
        (["--option", "colour=red"], "colour"),
        (["--opponents", "random", "random"], "1 spec or 3"),
        (["--opponents", "grandmaster"], "grandmaster"),
        (["--timesteps", "0"], "--timesteps"),
        (["--net-arch", "a,b"], "--net-arch"),
    ],
)
def test_bad_arguments_fail_with_a_message(tmp_path, capsys, argv, message):
    extra = [] if "--timesteps" in argv else ["--timesteps", "16"]
    assert sb3_train([*argv, *extra, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("whist sb3-train: error: ")


def test_cuda_without_cuda_is_an_error_not_a_silent_fallback(tmp_path, capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert sb3_train(["--device", "cuda", "--timesteps", "16", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "--device cuda" in err and "torch.cuda.is_available() is False" in err and "Traceback" not in err
    assert not (tmp_path / "x" / "model.zip").exists()


def test_help_states_each_default_once():
    parser = argparse.ArgumentParser(prog="whist sb3-train")
    cli.configure_sb3_train(parser)
    text = " ".join(parser.format_help().split())
    assert "(default: None)" not in text and "(default: False)" not in text
    assert text.count("--seed + 1000") == 1
    assert "learner decisions to train for (default: 50000)" in text
    assert "(default: cpu)" in text


def test_make_opponents_per_seat():
    opponents = sb3_maskable.make_opponents(["random", "heuristic", "random"], "classic_whist", [1, 2, 3], seed=0)
    assert sorted(opponents) == [1, 2, 3]
    assert all(callable(p.act) for p in opponents.values())


# ------------------------------------------------------------------------------ the sb3:PATH agent spec
@pytest.fixture(scope="module")
def sb3_model(tmp_path_factory):
    import torch

    torch.set_num_threads(1)
    model = MaskablePPO("MlpPolicy", SingleAgentWhistEnv("classic_whist"), n_steps=64, batch_size=32, n_epochs=1, seed=0,
                        device="cpu", policy_kwargs={"net_arch": [16]})
    model.learn(total_timesteps=64)
    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    model.save(path)
    return path


def test_sb3_spec_plays_in_eval_league_and_play(sb3_model, tmp_path, capsys):
    assert cli.main(["eval", "--agents", f"sb3:{sb3_model}", "random", "--deals", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"sb3:{sb3_model}" in out and "win rate A" in out
    assert cli.main(["league", "--agents", f"sb3:{sb3_model}", "random", "--deals", "1", "--quiet",
                     "--db", str(tmp_path / "r.sqlite")]) == 0
    from agents.registry import make_agent

    agent = make_agent(f"sb3:{sb3_model}", "classic_whist")
    env = whist_env.classic_whist_v0.raw_env()
    env.reset(seed=0)
    for _ in range(8):  # masks are used at prediction: every action is legal
        obs = env.observe(env.agent_selection)
        a = agent.act(obs)
        assert obs["action_mask"][a] == 1
        env.step(a)


def test_checkpoint_spec_on_an_sb3_zip_names_the_sb3_spec(sb3_model, capsys):
    assert cli.main(["eval", "--agents", f"checkpoint:{sb3_model}", "random", "--deals", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "stable-baselines3 model" in err and f"sb3:{sb3_model}" in err and "truncated" not in err


@pytest.mark.parametrize("kind", ["dir", "missing", "torch", "other_game"])
def test_sb3_spec_errors_name_the_cause(sb3_model, tmp_path, capsys, kind):
    if kind == "dir":
        spec, message = f"sb3:{sb3_model.parent}", "is a directory; give the model file, one of: model.zip"
    elif kind == "missing":
        spec, message = f"sb3:{tmp_path / 'nope.zip'}", "does not exist"
    elif kind == "torch":
        import torch

        torch.save({"x": torch.zeros(1)}, tmp_path / "w.pt")
        spec, message = f"sb3:{tmp_path / 'w.pt'}", "not a stable-baselines3 model zip"
    else:
        spec, message = f"sb3:{sb3_model}", "does not fit german_whist"
    game = "german_whist" if kind == "other_game" else "classic_whist"
    assert cli.main(["eval", "--game", game, "--agents", spec, "random", "--deals", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("whist eval: error: ") and message in err and "Traceback" not in err


def test_sb3_zip_is_loaded_without_unpickling(sb3_model, tmp_path):
    """A cloudpickled entry of the zip's JSON would run code when unpickled; it is never unpickled."""
    import base64
    import pickle
    import zipfile

    from agents.learned.sb3 import SB3Agent

    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(sb3_model) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "data":
                doc = json.loads(data)
                doc["observation_space"][":serialized:"] = base64.b64encode(pickle.dumps(Payload())).decode()
                doc["extra_entry"] = {":type:": "x", ":serialized:": base64.b64encode(pickle.dumps(Payload())).decode()}
                data = json.dumps(doc).encode()
            dst.writestr(item, data)
    agent = SB3Agent.from_zip(bad, "classic_whist")
    assert not marker.exists()
    env = whist_env.classic_whist_v0.raw_env()
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs)] == 1
