"""The generic AEC environment, observation encoding and rendering."""

from whist_env.envs.whist_env import WhistEnv

__all__ = ["WhistEnv"]
