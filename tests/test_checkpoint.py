"""Checkpoints (agents/learned/checkpoint.py) and NeuralAgent.from_checkpoint (agents/learned/neural.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from registry_helpers import set_version

from agents.learned.checkpoint import load_checkpoint, make_checkpoint, save_checkpoint
from agents.learned.network import ActorCritic
from agents.learned.neural import NeuralAgent
from whist_env import classic_whist_v0

OBS = 624  # Classic Whist observation size (whist_env.envs.encoding)
ACT = 52


def small_ckpt(game: str = "classic_whist", obs_size: int = OBS, num_actions: int = ACT, **kw):
    torch.manual_seed(0)
    net = ActorCritic(obs_size, num_actions, [16])
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    net.value(torch.zeros(2, obs_size)).sum().backward()
    opt.step()
    rng = np.random.default_rng(3)
    ckpt = make_checkpoint(model=net, game=game, options={"episode": "hand", "trump_rotation": ("S", "H", "D", "C")}, obs_size=obs_size,
                           num_actions=num_actions, hidden_sizes=[16], config={"game": game, "train": {"lr": 1e-3}},
                           optimizer=opt, global_step=123, update=4,
                           rng={"numpy": rng.bit_generator.state, "torch": torch.get_rng_state()}, **kw)
    return net, opt, ckpt


def test_round_trip_weights_only(tmp_path):
    net, opt, ckpt = small_ckpt(opponent_pool=[ActorCritic(OBS, ACT, [16]).state_dict()])
    path = save_checkpoint(ckpt, tmp_path / "c" / "latest.pt")
    raw = torch.load(path, weights_only=True)  # no arbitrary pickle needed
    assert raw["game"] == "classic_whist" and raw["global_step"] == 123
    loaded = load_checkpoint(path, game="classic_whist", obs_size=OBS, num_actions=ACT)
    assert loaded["options"]["trump_rotation"] == ["S", "H", "D", "C"]
    assert loaded["versions"]["torch"] == torch.__version__ and "whist_env" in loaded["versions"]
    for k, v in net.state_dict().items():
        assert torch.equal(loaded["model"][k], v)
    opt2 = torch.optim.Adam(ActorCritic(OBS, ACT, [16]).parameters(), lr=1e-3)
    opt2.load_state_dict(loaded["optimizer"])
    g = np.random.default_rng()
    g.bit_generator.state = loaded["rng"]["numpy"]
    assert g.integers(1 << 30) == np.random.default_rng(3).integers(1 << 30)
    assert len(loaded["opponent_pool"]) == 1


def test_atomic_save_leaves_no_partial_file(tmp_path, monkeypatch):
    _, _, ckpt = small_ckpt()
    path = tmp_path / "latest.pt"
    save_checkpoint(ckpt, path)
    good = path.read_bytes()
    real_save = torch.save

    def failing_save(obj, f, *a, **kw):
        f.write(b"partial garbage")
        raise KeyboardInterrupt  # e.g. Ctrl-C in the middle of writing

    monkeypatch.setattr(torch, "save", failing_save)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(dict(ckpt, global_step=999), path)
    monkeypatch.setattr(torch, "save", real_save)
    assert path.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["latest.pt"]
    assert load_checkpoint(path)["global_step"] == 123


def test_refuses_other_game_and_shapes(tmp_path):
    _, _, ckpt = small_ckpt(game="german_whist")
    path = save_checkpoint(ckpt, tmp_path / "g.pt")
    with pytest.raises(ValueError, match="german_whist.*not 'classic_whist'"):
        load_checkpoint(path, game="classic_whist")
    with pytest.raises(ValueError, match="german_whist.*classic_whist"):
        NeuralAgent.from_checkpoint(path, game="classic_whist")
    _, _, ckpt = small_ckpt(obs_size=100)
    path = save_checkpoint(ckpt, tmp_path / "s.pt")
    with pytest.raises(ValueError, match="observation size 100.*624"):
        load_checkpoint(path, obs_size=OBS)
    with pytest.raises(ValueError, match="observation size 100.*624"):
        NeuralAgent.from_checkpoint(path)
    _, _, ckpt = small_ckpt(num_actions=60)
    path = save_checkpoint(ckpt, tmp_path / "a.pt")
    with pytest.raises(ValueError, match="60 actions.*52"):
        load_checkpoint(path, num_actions=ACT)


def test_corrupted_and_foreign_files(tmp_path):
    _, _, ckpt = small_ckpt()
    path = save_checkpoint(ckpt, tmp_path / "ok.pt")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ValueError, match="cannot read checkpoint"):
        load_checkpoint(bad)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    with pytest.raises(ValueError, match="not a whist-env checkpoint"):
        load_checkpoint(foreign)

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    evil = tmp_path / "evil.pt"
    torch.save({"format": "whist-env-checkpoint", "x": Evil()}, evil)
    with pytest.raises(ValueError, match="cannot read checkpoint"):
        load_checkpoint(evil)  # weights_only refuses arbitrary pickle
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "missing.pt")


def test_non_plain_values_are_refused():
    net = ActorCritic(OBS, ACT, [8])
    with pytest.raises(TypeError, match="plain types"):
        make_checkpoint(model=net, game="classic_whist", options={"x": object()}, obs_size=OBS, num_actions=ACT, hidden_sizes=[8])


def test_neural_agent_from_checkpoint_plays_legal_moves(tmp_path):
    net, _, ckpt = small_ckpt()
    path = save_checkpoint(ckpt, tmp_path / "n.pt")
    for greedy in (True, False):
        agent = NeuralAgent.from_checkpoint(path, game="classic_whist", greedy=greedy, seed=1)
        assert agent.name == "ppo:n"
        env = classic_whist_v0.raw_env(episode="hand")
        env.reset(seed=5)
        while not all(env.terminations.values()):
            obs = env.observe(env.agent_selection)
            a = agent.act(obs)
            assert obs["action_mask"][a] == 1
            env.step(a)
    with pytest.raises(ValueError, match="shape"):
        agent.act({"observation": np.zeros(10, np.float32), "action_mask": np.ones(ACT, np.int8)})


def test_checkpoint_file_mode_follows_the_umask(tmp_path):
    import os
    import stat

    _, _, ckpt = small_ckpt()
    old = os.umask(0o022)
    try:
        path = save_checkpoint(ckpt, tmp_path / "mode.pt")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_checkpoint_spec_on_a_directory_lists_its_pt_files(tmp_path, capsys):
    from training.cli import main

    run = tmp_path / "run" / "checkpoints"
    run.mkdir(parents=True)
    (run / "latest.pt").write_bytes(b"x")
    (run / "final.pt").write_bytes(b"x")
    assert main(["eval", "--agents", f"checkpoint:{tmp_path / 'run'}", "random", "--deals", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("whist eval: error: ") and "is a directory" in err and "does not exist" not in err
    assert "checkpoints/final.pt, checkpoints/latest.pt" in err
    (tmp_path / "empty").mkdir()
    assert main(["eval", "--agents", f"checkpoint:{tmp_path / 'empty'}", "random", "--deals", "2", "--quiet"]) == 2
    assert "holds no .pt files" in capsys.readouterr().err
    assert main(["eval", "--agents", f"checkpoint:{tmp_path / 'missing.pt'}", "random", "--deals", "2", "--quiet"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_checkpoint_records_the_env_version_it_was_trained_on(tmp_path, monkeypatch, capsys):
    """docs/versioning.md: an agent trained on an env version since changed plays with a note saying so."""
    from agents.learned.checkpoint import trained_env_version
    from training.cli import main
    from whist_env import versions

    _, _, ckpt = small_ckpt()
    assert ckpt["env_version"] == versions.env_version("classic_whist") == 0
    old = dict(ckpt)
    del old["env_version"]  # a file made before the key was recorded: of -v0, the only version there was
    assert trained_env_version(old) == 0
    path = save_checkpoint(ckpt, tmp_path / "n.pt")
    assert NeuralAgent.from_checkpoint(path, game="classic_whist").trained_env_version == 0
    argv = ["eval", "--game", "classic_whist", "--agents", f"checkpoint:{path}", "random", "--deals", "1", "--quiet"]
    assert main(argv) == 0
    assert "was trained on" not in capsys.readouterr().err
    set_version(monkeypatch, "classic_whist", 1)  # as if the env had been bumped since
    assert small_ckpt()[2]["env_version"] == 1
    assert small_ckpt(env_version=0)[2]["env_version"] == 0  # a re-export keeps the version it was trained on
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert (f"whist eval: note: checkpoint:{path} was trained on whist/classic_whist-v0, not on today's "
            "whist/classic_whist-v1: the env has changed since") in err, err
