"""``whist rllib-train`` configs: one YAML file per RLlib run, validated by pydantic before Ray starts.

Layout (every key optional except ``game``; unknown keys are errors; see configs/rllib_classic.yaml)::

    game: classic_whist            # a key of whist_env.GAMES
    options: {episode: hand}       # rule options (RULES.md), checked by building the env
    seed: 0
    opponents: heuristic           # a spec, [specs] (one per episode), {spec: share} (rest self-play), or self-play
    learner_side: random           # the learner's side each episode: random, or a side index
    policies: shared               # shared: one module for every seat; side: one per side
    log_dir: runs                  # the run folder is log_dir/run_name
    run_name: rllib_classic
    ray: {num_cpus: 2}             # the local Ray's CPUs (ignored with --address)
    env_runners: {num_env_runners: 2, num_envs_per_env_runner: 4, num_cpus_per_env_runner: 1}
    train: {iterations: ..., total_env_steps: ..., train_batch_size: ..., lr: ..., ...}
    eval: {opponents: [random, heuristic], num_deals: 500, seed: 12345, duplicate: true}

Nothing here imports Ray: a config is checked (``whist rllib-train`` refuses a bad one at once)
on any machine. :func:`load_rllib_config` raises :class:`training.learn.config.ConfigError`
naming each bad key with its dotted path, e.g. ``train.lr: Input should be greater than 0``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from training.learn.config import (
    _known_spec_kind,
    _spec_forms,
    _Strict,
    check_agent_specs,
    format_validation_error,
    known_game,
    positive_widths,
    read_yaml_config,
    validate_config,
)

#: ``opponents`` values that mean self-play only.
SELF_PLAY_WORDS = ("self", "self-play", "selfplay")


class RayConfig(_Strict):
    """The Ray the run starts when ``--address`` is not given."""

    num_cpus: int | None = Field(None, ge=1, description="CPUs of the local Ray (default: every CPU of this machine); "
                                                         "ignored with --address, where the cluster's CPUs count")


class EnvRunnersConfig(_Strict):
    """Sampling: RLlib ``EnvRunner`` actors, each stepping several environments."""

    num_env_runners: int = Field(2, ge=0, description="remote env runners (0: sample in the driver process)")
    num_envs_per_env_runner: int = Field(4, ge=1, description="environments each runner steps (one batched model call for them)")
    num_cpus_per_env_runner: float = Field(1.0, gt=0, description="CPUs Ray reserves for each runner")


class RLlibTrainConfig(_Strict):
    """PPO hyperparameters (RLlib's names, passed to ``PPOConfig.training``) and the run's length.

    Steps are RLlib env steps: one decision of a learner's seat (against fixed opponents their
    moves happen inside the step), or of any seat in self-play.
    """

    iterations: int | None = Field(None, ge=1, description="training iterations (one sample + update each)")
    total_env_steps: int | None = Field(None, ge=1, description="env steps to train for; with iterations, whichever comes first")
    train_batch_size: int = Field(2048, ge=1, description="env steps per iteration")
    minibatch_size: int = Field(512, ge=1, description="samples per gradient step")
    num_epochs: int = Field(4, ge=1, description="passes over each batch")
    lr: float = Field(1e-3, gt=0, description="Adam learning rate")
    gamma: float = Field(1.0, ge=0, le=1, description="discount per decision")
    lambda_: float = Field(0.8, ge=0, le=1, alias="lambda", description="GAE lambda")
    entropy_coeff: float = Field(0.01, ge=0, description="entropy bonus coefficient")
    clip_param: float = Field(0.2, gt=0, description="PPO ratio clip")
    vf_loss_coeff: float = Field(0.5, ge=0, description="value loss coefficient")
    grad_clip: float = Field(0.5, gt=0, description="gradient norm clip")
    hidden_sizes: list[int] = Field(default_factory=lambda: [128, 128], min_length=1, description="MLP hidden widths")
    checkpoint_interval: int = Field(10, ge=1, description="iterations between checkpoints (and one at the end)")

    model_config = _Strict.model_config | {"populate_by_name": True}

    @field_validator("hidden_sizes")
    @classmethod
    def _positive_widths(cls, v: list[int]) -> list[int]:
        return positive_widths(v)

    @model_validator(mode="after")
    def _length_and_batches(self) -> RLlibTrainConfig:
        if self.iterations is None and self.total_env_steps is None:
            raise ValueError("give iterations or total_env_steps (or both: the run stops at whichever comes first)")
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(f"minibatch_size {self.minibatch_size} exceeds train_batch_size {self.train_batch_size}")
        return self


class RLlibEvalConfig(_Strict):
    """The final duplicate-deal evaluation of the trained policy (``training.evaluation.match``)."""

    opponents: list[str] = Field(default_factory=lambda: ["random", "heuristic"], description="agent specs")
    num_deals: int = Field(500, ge=0, description="deals per opponent (0: no evaluation)")
    seed: int = Field(12345, ge=0, description="seed of the evaluation deals (kept apart from training deals)")
    duplicate: bool = Field(True, description="replay each deal with the sides swapped")

    @field_validator("opponents")
    @classmethod
    def _specs(cls, v: list[str]) -> list[str]:
        return check_agent_specs(v)


class RLlibExperimentConfig(_Strict):
    """One ``whist rllib-train`` run: game, rule options, opponents, Ray, PPO, evaluation, logging."""

    game: str
    options: dict[str, Any] = Field(default_factory=dict)
    seed: int = Field(0, ge=0)
    opponents: str | list[str] | dict[str, float] | None = Field(
        "heuristic", description="a spec (every episode), a list of specs (one drawn per episode), {spec: share} "
                                 "(the rest self-play), or self-play")
    learner_side: int | Literal["random"] = Field("random", description="the learner's side: random per episode, or a side index")
    policies: Literal["shared", "side"] = Field("shared", description="shared: one module for every seat; side: one per side")
    log_dir: str = "runs"
    run_name: str | None = None
    ray: RayConfig = Field(default_factory=RayConfig)
    env_runners: EnvRunnersConfig = Field(default_factory=EnvRunnersConfig)
    train: RLlibTrainConfig
    eval: RLlibEvalConfig = Field(default_factory=RLlibEvalConfig)

    @field_validator("game")
    @classmethod
    def _known_game(cls, v: str) -> str:
        return known_game(v)

    @field_validator("opponents", mode="before")
    @classmethod
    def _opponents(cls, v: Any) -> Any:
        if not (v is None or isinstance(v, str) or (isinstance(v, list) and all(isinstance(s, str) for s in v))
                or (isinstance(v, dict) and all(isinstance(s, str) and isinstance(x, (int, float)) and not isinstance(x, bool)
                                                for s, x in v.items()))):
            raise ValueError(f"expected an agent spec, a list of specs, a mapping {{spec: share}} or 'self-play', got {v!r}")
        if v is None or (isinstance(v, str) and v.strip().lower() in SELF_PLAY_WORDS):
            return None
        specs = [v] if isinstance(v, str) else list(v)
        if not specs:
            raise ValueError("an empty list or mapping; write 'self-play' for self-play only")
        for spec in specs:
            if spec.strip().lower() in SELF_PLAY_WORDS and isinstance(v, dict):
                continue
            if not _known_spec_kind(spec):
                raise ValueError(f"unknown agent spec {spec!r}; expected 'self-play' or one of {_spec_forms()}")
        if isinstance(v, dict):
            for spec, share in v.items():
                if not 0.0 <= share <= 1.0:
                    raise ValueError(f"the share of {spec!r} must lie in [0, 1], got {share}")
            if sum(v.values()) > 1.0 + 1e-9:
                raise ValueError(f"the shares add up to {sum(v.values()):.3f} > 1 (the rest of the episodes is self-play)")
        return v

    @field_validator("learner_side", mode="before")
    @classmethod
    def _side(cls, v: Any) -> Any:
        if v != "random" and not (isinstance(v, int) and not isinstance(v, bool)):
            raise ValueError(f"expected 'random' or a side index (0, 1, ...), got {v!r}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> RLlibExperimentConfig:
        from whist_env import GAMES

        try:
            env = GAMES[self.game].raw_env(**{"episode": "hand", **self.options})
        except (TypeError, ValueError) as exc:
            raise ValueError(f"options: {exc}") from exc
        sides = env.game.num_sides
        if self.learner_side != "random" and not 0 <= self.learner_side < sides:
            raise ValueError(f"learner_side: {self.game} has sides 0..{sides - 1}, got {self.learner_side}")
        runners = self.env_runners
        if self.ray.num_cpus is not None and runners.num_env_runners * runners.num_cpus_per_env_runner > self.ray.num_cpus:
            raise ValueError(f"ray.num_cpus: {runners.num_env_runners} env runners x {runners.num_cpus_per_env_runner} CPU "
                             f"need {runners.num_env_runners * runners.num_cpus_per_env_runner:g} CPUs, the local Ray has "
                             f"{self.ray.num_cpus} (Ray would wait for them forever)")
        return self

    def run_dir(self, config_path: str | os.PathLike | None = None) -> Path:
        """The run folder ``log_dir/run_name`` (``run_name`` defaults to the config file's stem or the game)."""
        name = self.run_name or (Path(config_path).stem if config_path else self.game)
        return Path(self.log_dir) / name


def _error_lines(exc: ValidationError) -> str:
    text = format_validation_error(exc)
    for key in ("learner_side", "ray.num_cpus"):
        text = text.replace(f"(top level): {key}: ", f"{key}: ")
    return text


def rllib_config_from_dict(data: Any, source: str = "config") -> RLlibExperimentConfig:
    """Validate a mapping (e.g. parsed YAML) into an :class:`RLlibExperimentConfig`.

    Raises:
        ConfigError: naming each bad key (``source: key: message`` lines).
    """
    return validate_config(RLlibExperimentConfig, data, source, _error_lines)


def load_rllib_config(path: str | os.PathLike) -> RLlibExperimentConfig:
    """Read and validate a ``whist rllib-train`` YAML file.

    Raises:
        FileNotFoundError: no such file.
        ConfigError: invalid YAML, or a key that is unknown, of the wrong type or out of range
            (an unknown game, an invalid rule option, an unknown opponent spec); the message
            names the key.
    """
    data, source = read_yaml_config(path)
    return rllib_config_from_dict(data, source=source)


__all__ = ["EnvRunnersConfig", "RLlibEvalConfig", "RLlibExperimentConfig", "RLlibTrainConfig", "RayConfig",
           "load_rllib_config", "rllib_config_from_dict"]
