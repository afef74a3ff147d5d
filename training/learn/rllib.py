"""RLlib path: a ready PPO configuration for any whist_env game (new API stack, Ray's RLlib).

Needs the optional extra ``whist-env[rllib]`` (``ray[rllib]``, which pins its own gymnasium).
The environment is :class:`whist_env.wrappers.rllib.RLlibWhistEnv`, registered as ``"whist_env"``
with the game and its rule options in ``env_config``; the model is RLlib's action-masking PPO
module (``ActionMaskingTorchRLModule``); every seat maps to one shared module (self-play) or one
module per side.

Example::

    import ray
    from training.learn.rllib import ppo_config, summarize

    ray.init(num_cpus=2)
    algo = ppo_config("classic_whist", honours=False, num_env_runners=2).build_algo()
    result = algo.train()
    print(summarize(result))      # env steps, per-agent returns, illegal actions
    algo.save_to_path("/tmp/ckpt")

What to read in a result: ``result["env_runners"]["episode_return_mean"]`` is the sum over all
agents, so 0 in a zero-sum game; the per-agent figures are
``result["env_runners"]["agent_episode_returns_mean"][agent]`` and per module
``...["module_episode_returns_mean"][module]``; ``...["illegal_actions"]`` counts masked-out actions
taken (0 unless something is broken).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from whist_env.wrappers.rllib import RLlibWhistEnv, register_rllib_env

#: How seats map to RLlib modules: one ``"shared"`` module, or ``"side_<k>"`` per side.
POLICY_MODES = ("shared", "side")
#: The metric the episode callback adds under ``result["env_runners"]``.
ILLEGAL_ACTIONS = "illegal_actions"


def module_mapping(game: str = "classic_whist", policies: str = "shared", options: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Agent id → module id for ``policies`` (``"shared"`` or ``"side"``).

    Raises:
        ValueError: unknown mode, game or rule option.
    """
    if policies not in POLICY_MODES:
        raise ValueError(f"policies must be one of {list(POLICY_MODES)}, got {policies!r}")
    env = RLlibWhistEnv({"game": game, "options": dict(options or {})})
    if policies == "shared":
        return dict.fromkeys(env.possible_agents, "shared")
    rules = env.raw.game
    return {a: f"side_{rules.side_of(i)}" for i, a in enumerate(env.possible_agents)}


def _on_episode_end(*, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
    """Count the illegal actions of a finished episode (from the last infos the env gave)."""
    infos = episode.get_infos(-1)
    illegal = int(any(bool(info.get("illegal_action")) for info in infos.values()))
    metrics_logger.log_value(ILLEGAL_ACTIONS, illegal, reduce="sum")
    metrics_logger.log_value(ILLEGAL_ACTIONS + "_lifetime", illegal, reduce="lifetime_sum")


def ppo_config(
    game: str = "classic_whist",
    *,
    policies: str = "shared",
    num_env_runners: int = 2,
    num_envs_per_env_runner: int = 1,
    hidden_sizes: Sequence[int] = (128, 128),
    train_batch_size: int = 2048,
    minibatch_size: int = 512,
    num_epochs: int = 4,
    lr: float = 1e-3,
    illegal_action: str = "terminate",
    seed: int | None = None,
    **options: Any,
) -> PPOConfig:
    """A PPO configuration for ``game`` with its rule ``options`` (RULES.md; ``episode``
    defaults to ``"hand"``: one deal per episode).

    Returns an ``ray.rllib.algorithms.ppo.PPOConfig`` (new API stack) with the masking module
    (MLP ``hidden_sizes``, separate value network), the policy mapping of ``policies`` (see
    :func:`module_mapping`; every module is trained), ``num_env_runners`` × ``num_envs_per_env_runner``
    environments, batch sizes in env steps (all seats), gamma 1 and GAE lambda 0.8 as ``whist
    train``, and an episode callback counting illegal actions. Adjust it further with RLlib's
    own methods (``.training(...)``, ``.env_runners(...)``, ``.learners(...)``…) and build it with
    ``.build_algo()``.

    Raises:
        ValueError: unknown game, rule option, policy mode or illegal-action mode (checked here,
            before any Ray worker starts).
    """
    options.setdefault("episode", "hand")
    env_config = {"game": game, "options": dict(options), "illegal_action": illegal_action}
    RLlibWhistEnv(env_config)  # validate now: a bad option would otherwise fail inside every worker
    mapping = module_mapping(game, policies, options)
    module_ids = sorted(set(mapping.values()))
    model = DefaultModelConfig(fcnet_hiddens=list(hidden_sizes), fcnet_activation="tanh", vf_share_layers=False)

    def policy_mapping_fn(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        return mapping[agent_id]

    config = (
        PPOConfig()
        .environment(register_rllib_env(), env_config=env_config)
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=num_envs_per_env_runner,
            num_cpus_per_env_runner=1,
            rollout_fragment_length="auto",
            # Ray 2.60 numpy-izes every finished episode of a sample() call again after each
            # env step (inside its sampling loop), which makes sampling quadratic in the
            # episodes per call: 2x slower at 2048 steps per call. List episodes avoid it, and
            # the learner connectors take them as they are.
            episodes_to_numpy=False,
        )
        .multi_agent(policies=set(module_ids), policy_mapping_fn=policy_mapping_fn, policies_to_train=module_ids)
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={m: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model) for m in module_ids}
            )
        )
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=lr,
            gamma=1.0,
            lambda_=0.8,
            entropy_coeff=0.01,
            vf_loss_coeff=0.5,
            clip_param=0.2,
            use_kl_loss=False,
            grad_clip=0.5,
        )
        .callbacks(on_episode_end=_on_episode_end)
    )
    if seed is not None:
        config = config.debugging(seed=seed)
    return config


def summarize(result: Mapping[str, Any]) -> dict[str, Any]:
    """The figures worth reading from one ``Algorithm.train()`` result (flat, JSON-friendly)."""
    runners = result.get("env_runners", {})
    out = {
        "iteration": result.get("training_iteration"),
        "env_steps": runners.get("num_env_steps_sampled"),
        "env_steps_lifetime": runners.get("num_env_steps_sampled_lifetime"),
        "episodes": runners.get("num_episodes"),
        "episode_len_mean": runners.get("episode_len_mean"),
        "episode_return_mean": runners.get("episode_return_mean"),
        "agent_returns": dict(runners.get("agent_episode_returns_mean", {})),
        "module_returns": dict(runners.get("module_episode_returns_mean", {})),
        ILLEGAL_ACTIONS: runners.get(ILLEGAL_ACTIONS),
    }
    return {k: (float(v) if hasattr(v, "__float__") and not isinstance(v, (int, dict)) else v) for k, v in out.items()}


__all__ = ["ILLEGAL_ACTIONS", "POLICY_MODES", "module_mapping", "ppo_config", "summarize"]
