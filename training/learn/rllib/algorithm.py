"""RLlib path: a ready PPO configuration for any whist_env game (new API stack, Ray's RLlib).

Needs the optional extra ``whist-env[rllib]`` (``ray[rllib]``, which pins its own gymnasium).
The environment is :class:`whist_env.wrappers.rllib.RLlibWhistEnv` (self-play, registered as
``"whist_env"``) or, with ``opponents``, :class:`training.learn.rllib.opponents.RLlibOpponentsEnv`
(fixed agents play the other sides' seats, registered as ``"whist_env_opponents"``), with the
game and its rule options in ``env_config``; the model is RLlib's action-masking PPO module
(``ActionMaskingTorchRLModule``); every seat maps to one shared module or one module per side.

Example::

    import ray
    from training.learn.rllib.algorithm import ppo_config, save_policy, summarize

    ray.init(num_cpus=2)
    algo = ppo_config("classic_whist", opponents="heuristic", honours=False, num_env_runners=2).build_algo()
    result = algo.train()
    print(summarize(result))      # env steps, per-agent returns, learner's win rate per opponent
    save_policy(algo, "/tmp/policy")  # then: whist eval --agents rllib:/tmp/policy heuristic

What to read in a result: ``result["env_runners"]["episode_return_mean"]`` is the sum over all
agents, so 0 in a zero-sum self-play game; the per-agent figures are
``result["env_runners"]["agent_episode_returns_mean"][agent]`` and per module
``...["module_episode_returns_mean"][module]``; ``...["illegal_actions"]`` counts masked-out actions
taken (0 unless something is broken). Against fixed opponents, ``...["learner"][opponent]``
holds per-iteration sums (``episodes``, ``wins``, ``return``) that :func:`summarize` turns into
the learner's mean return and win rate against each opponent (``"self"``: self-play episodes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from training.learn.rllib.opponents import SELF_PLAY, RLlibOpponentsEnv, parse_opponents, register_opponents_env
from whist_env.wrappers.rllib import RLlibWhistEnv, register_rllib_env

#: How seats map to RLlib modules: one ``"shared"`` module, or ``"side_<k>"`` per side.
POLICY_MODES = ("shared", "side")
#: The metric the episode callback adds under ``result["env_runners"]``.
ILLEGAL_ACTIONS = "illegal_actions"
#: The key of the learner's per-opponent sums under ``result["env_runners"]``.
LEARNER = "learner"


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
    summary = next((info["learner"] for info in infos.values() if isinstance(info, Mapping) and "learner" in info), None)
    if summary is not None:
        opponent = str(summary["opponent"])
        metrics_logger.log_value((LEARNER, opponent, "episodes"), 1, reduce="sum")
        metrics_logger.log_value((LEARNER, opponent, "return"), float(summary["return"]), reduce="sum")
        if opponent != SELF_PLAY:
            metrics_logger.log_value((LEARNER, opponent, "wins"), float(summary["win"]), reduce="sum")


def ppo_config(
    game: str = "classic_whist",
    *,
    policies: str = "shared",
    opponents: str | Sequence[str] | Mapping[str, float] | None = None,
    learner_side: int | str = "random",
    num_env_runners: int = 2,
    num_envs_per_env_runner: int = 1,
    num_cpus_per_env_runner: float = 1,
    hidden_sizes: Sequence[int] = (128, 128),
    train_batch_size: int = 2048,
    minibatch_size: int = 512,
    num_epochs: int = 4,
    lr: float = 1e-3,
    gamma: float = 1.0,
    lambda_: float = 0.8,
    entropy_coeff: float = 0.01,
    illegal_action: str = "terminate",
    seed: int | None = None,
    **options: Any,
) -> PPOConfig:
    """A PPO configuration for ``game`` with its rule ``options`` (RULES.md; ``episode``
    defaults to ``"hand"``: one deal per episode).

    Returns an ``ray.rllib.algorithms.ppo.PPOConfig`` (new API stack) with the masking module
    (MLP ``hidden_sizes``, separate value network), the policy mapping of ``policies`` (see
    :func:`module_mapping`; every module is trained), ``num_env_runners`` × ``num_envs_per_env_runner``
    environments (``num_env_runners=0``: sampling in the driver), batch sizes in env steps, gamma
    1 and GAE lambda 0.8 as ``whist train``, and an episode callback counting illegal actions and
    the learner's results against each opponent (see the module docstring). Adjust it further
    with RLlib's own methods (``.training(...)``, ``.env_runners(...)``, ``.learners(...)``…) and
    build it with ``.build_algo()``.

    ``opponents`` (see :func:`training.learn.rllib.opponents.parse_opponents`): ``None``
    (default) is pure self-play, every seat RLlib's; a spec (``"heuristic"``, ``"zoo:GAME"``,
    ``"checkpoint:PATH"``...), a list of specs (one drawn per episode) or ``{spec: share}`` (the
    rest self-play) puts fixed agents on every side but the learner's (``learner_side``: a side
    index or ``"random"`` per episode), and RLlib sees only the learner's seats. An env step is
    then one learner decision (the opponents' moves happen inside it).

    Raises:
        ValueError: unknown game, rule option, policy mode, illegal-action mode, opponent spec
            or learner side (checked here, before any Ray worker starts).
    """
    options.setdefault("episode", "hand")
    env_config: dict[str, Any] = {"game": game, "options": dict(options), "illegal_action": illegal_action}
    if opponents is None:
        env_name = register_rllib_env()
        RLlibWhistEnv(env_config)  # validate now: a bad option would otherwise fail inside every worker
    else:
        env_config.update(opponents=parse_opponents(opponents), learner_side=learner_side, seed=seed)
        env_name = register_opponents_env()
        RLlibOpponentsEnv(env_config)  # builds every opponent: a bad spec or a missing checkpoint fails here
    mapping = module_mapping(game, policies, options)
    module_ids = sorted(set(mapping.values()))
    model = DefaultModelConfig(fcnet_hiddens=list(hidden_sizes), fcnet_activation="tanh", vf_share_layers=False)

    def policy_mapping_fn(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        return mapping[agent_id]

    config = (
        PPOConfig()
        .environment(env_name, env_config=env_config)
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=num_envs_per_env_runner,
            num_cpus_per_env_runner=num_cpus_per_env_runner,
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
            gamma=gamma,
            lambda_=lambda_,
            entropy_coeff=entropy_coeff,
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


def save_policy(algo: Any, folder: str | Path, metadata: Mapping[str, Any] | None = None) -> Path:
    """Write the trained modules of ``algo`` (an algorithm of :func:`ppo_config`) into ``folder``
    so that the agent spec ``rllib:FOLDER`` loads them without unpickling anything
    (:mod:`agents.learned.rllib`): the learner's weights as tensors (``whist_rllib_weights.pt``)
    and a JSON file (``whist_rllib.json``) with the game, every rule option, the seat -> module
    mapping, each module's model config and ``metadata``.

    ``algo.save_to_path`` is still the way to save an algorithm for ``restore_from_path``; both
    may share one folder (``whist rllib-train`` does that).

    Returns:
        ``folder`` as a ``Path``.
    Raises:
        ValueError: ``algo`` was not built from :func:`ppo_config` (no whist_env game in its
            env config, or a module other than RLlib's action-masking module).
    """
    from agents.learned.rllib import MODULE_CLASS, plain_model_config, write_policy
    from whist_env.rules.options import options_dict

    env_config = dict(algo.config.env_config or {})
    if "game" not in env_config:
        raise ValueError("save_policy needs an algorithm of training.learn.rllib.ppo_config (no game in its env_config)")
    env = RLlibWhistEnv({"game": env_config["game"], "options": env_config.get("options") or {}})
    mapping = {agent: str(algo.config.policy_mapping_fn(agent, None)) for agent in env.possible_agents}
    specs = algo.config.rl_module_spec.rl_module_specs
    model = {}
    for module_id in sorted(set(mapping.values())):
        spec = specs[module_id]
        if spec.module_class is not ActionMaskingTorchRLModule:
            raise ValueError(f"module {module_id!r} is a {getattr(spec.module_class, '__name__', spec.module_class)}, not {MODULE_CLASS}")
        model[module_id] = {"class": MODULE_CLASS, "config": plain_model_config(spec.model_config)}
    weights = algo.learner_group.get_weights(sorted(model))
    return write_policy(folder, weights, {**dict(metadata or {}), "game": env.game_name,
                                         "options": options_dict(env.raw.game.options), "mapping": mapping, "model": model})


def learner_results(result: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """The learner's figures per opponent in one ``Algorithm.train()`` result.

    Returns:
        ``{opponent spec or "self": {"episodes": int, "return_mean": float, "win_rate": float}}``
        over the episodes that ended in this iteration (``win_rate`` in [0, 1], ties half; ``nan``
        for self-play); empty without fixed opponents.
    """
    out: dict[str, dict[str, float]] = {}
    for opponent, sums in dict(result.get("env_runners", {}).get(LEARNER, {}) or {}).items():
        n = int(_number(sums.get("episodes", 0)))
        if n <= 0:
            continue
        wins = sums.get("wins")
        out[str(opponent)] = {"episodes": n, "return_mean": _number(sums.get("return", 0.0)) / n,
                              "win_rate": float("nan") if wins is None else _number(wins) / n}
    return out


def _number(v: Any) -> float:
    return float(v.peek() if hasattr(v, "peek") else v)


def summarize(result: Mapping[str, Any]) -> dict[str, Any]:
    """The figures worth reading from one ``Algorithm.train()`` result (flat, JSON-friendly):
    ``iteration``, ``env_steps`` (this iteration), ``env_steps_lifetime``, ``episodes``,
    ``episode_len_mean``, ``episode_return_mean``, ``agent_returns`` (agent -> mean return),
    ``module_returns``, ``illegal_actions`` and ``learner`` (:func:`learner_results`)."""
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
    out = {k: (float(v) if hasattr(v, "__float__") and not isinstance(v, (int, dict)) else v) for k, v in out.items()}
    out[LEARNER] = learner_results(result)
    return out


__all__ = ["ILLEGAL_ACTIONS", "LEARNER", "POLICY_MODES", "learner_results", "module_mapping", "ppo_config", "save_policy", "summarize"]
