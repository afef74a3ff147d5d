"""One line from the RL libraries our users run, with no adapter code: stable-baselines3 /
sb3-contrib through Gymnasium's registry, and (when installed) TorchRL and Tianshou through
PettingZoo."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import whist_env

SB3_SCRIPT = """
import whist_env  # registers the Gymnasium ids (a worker process re-imports this script and so the ids)
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import {vec}

if __name__ == "__main__":
    env = make_vec_env("whist_env/ClassicWhist-v0", n_envs=2, vec_env_cls={vec})
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, policy_kwargs={{"net_arch": [16]}}, device="cpu")
    model.learn(64)
    masks = env.env_method("action_masks")
    assert len(masks) == 2 and all(m.dtype == bool and m.any() for m in masks)
    env.close()
    print("trained")
"""


@pytest.mark.parametrize("vec", ["DummyVecEnv", "SubprocVecEnv"])
def test_sb3_make_vec_env_trains_maskable_ppo(vec, tmp_path):
    """As a user's script does it: SubprocVecEnv workers start by re-importing the script."""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text(SB3_SCRIPT.format(vec=vec))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "trained" in done.stdout, done.stderr[-2000:]


@pytest.mark.parametrize("game", sorted(whist_env.GAMES))
def test_gymnasium_make_reaches_the_masks(game):
    env = gymnasium.make(whist_env.wrappers.gymnasium_id(game), render_mode="rgb_array")  # warns, renders nothing
    env.reset(seed=0)
    mask = env.get_wrapper_attr("action_masks")()
    assert mask.dtype == bool and mask.any()
    assert env.unwrapped.render() is None
    env.step(int(np.flatnonzero(mask)[0]))


@pytest.mark.parametrize("game", sorted(whist_env.GAMES))
def test_torchrl_pettingzoo_wrapper_passes_its_spec_check_and_rolls_out(game):
    pytest.importorskip("torchrl", reason="TorchRL is in the optional 'clients' extra")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    env = PettingZooWrapper(whist_env.GAMES[game].env(infos="numeric"), use_mask=True, categorical_actions=True)
    check_env_specs(env)
    rollout = env.rollout(80)
    assert rollout.batch_size[0] > 0
    env.close()


TIANSHOU_SCRIPT = """
import whist_env
from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import PettingZooEnv, SubprocVectorEnv


def maker(game):
    return lambda: PettingZooEnv(whist_env.GAMES[game].env(infos="numeric", episode="hand"))


if __name__ == "__main__":
    for game in sorted(whist_env.GAMES):
        env = maker(game)()
        algorithm = MultiAgentOffPolicyAlgorithm(
            algorithms=[MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in env.agents], env=env)
        venv = SubprocVectorEnv([maker(game)] * 2)
        collector = Collector(algorithm, venv, VectorReplayBuffer(20000, 2))
        collector.reset()
        print(game, "episodes", collector.collect(n_episode=6).n_collected_episodes, flush=True)
        venv.close()
"""


def test_tianshou_collects_episodes_on_subproc_vector_envs(tmp_path):
    pytest.importorskip("tianshou", reason="Tianshou is in the optional 'clients' extra")
    import subprocess
    import sys

    script = tmp_path / "collect.py"
    script.write_text(TIANSHOU_SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line for line in done.stdout.splitlines() if "episodes" in line] == [f"{g} episodes 6" for g in sorted(whist_env.GAMES)]
