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
