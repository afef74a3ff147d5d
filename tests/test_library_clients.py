"""One line from the RL libraries our users run, with no adapter code: stable-baselines3 /
sb3-contrib through Gymnasium's registry, and (when installed) TorchRL and Tianshou through
PettingZoo."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import whist_env


@pytest.mark.parametrize("vec", ["DummyVecEnv", "SubprocVecEnv"])
def test_sb3_make_vec_env_trains_maskable_ppo(vec):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common import vec_env
    from stable_baselines3.common.env_util import make_vec_env

    kwargs = {"start_method": "spawn"} if vec == "SubprocVecEnv" else {}
    env = make_vec_env("whist_env/ClassicWhist-v0", n_envs=2, vec_env_cls=getattr(vec_env, vec), vec_env_kwargs=kwargs)
    try:
        model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, policy_kwargs={"net_arch": [16]}, device="cpu")
        model.learn(64)
        masks = env.env_method("action_masks")
        assert len(masks) == 2 and all(m.dtype == bool and m.any() for m in masks)
    finally:
        env.close()


@pytest.mark.parametrize("game", sorted(whist_env.GAMES))
def test_gymnasium_make_reaches_the_masks(game):
    env = gymnasium.make(whist_env.wrappers.gymnasium_id(game), render_mode="rgb_array")  # warns, renders nothing
    env.reset(seed=0)
    mask = env.get_wrapper_attr("action_masks")()
    assert mask.dtype == bool and mask.any()
    assert env.unwrapped.render() is None
    env.step(int(np.flatnonzero(mask)[0]))
