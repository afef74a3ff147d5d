"""Experiment configs: one YAML file per experiment, validated by pydantic before anything runs.

Layout (every key optional except ``game``; unknown keys are errors)::

    game: classic_whist          # a key of whist_env.GAMES
    options: {episode: hand}     # rule options (RULES.md), checked by building the env
    algorithm: ppo
    seed: 0
    device: cpu                  # cpu | cuda | auto
    num_threads: 1               # torch CPU threads
    log_dir: runs                # the run folder is log_dir/run_name
    run_name: classic_default
    env: {backend: aec}          # EnvConfig: aec (raw_env per game) or vector (whist_env.vector)
    train: {total_steps: ..., num_envs: ..., ...}   # PPOConfig
    warm_start: {teacher: heuristic, decisions: ...}  # WarmStartConfig, optional
    eval: {interval_steps: ..., num_deals: ..., opponents: [random, heuristic], seed: 12345, final_seed: 0, ...}
                                 # seed: DEVELOPMENT, final_seed: REPORT (training.evaluation.seed_ranges)

:func:`load_config` raises :class:`ConfigError` whose message names each bad key with its
dotted path, e.g. ``train.lr: Input should be a valid number, unable to parse string as a number``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator


class ConfigError(ValueError):
    """A malformed experiment config; the message names the offending key(s)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def _spec_forms() -> str:
    from agents.registry import AGENT_SPECS

    return ", ".join(AGENT_SPECS)


def positive_widths(widths: list[int]) -> list[int]:
    """``widths`` if every hidden layer width is >= 1.

    Raises:
        ValueError: a width below 1.
    """
    if any(h < 1 for h in widths):
        raise ValueError("every hidden size must be >= 1")
    return widths


def known_game(name: str) -> str:
    """``name`` if it is a game of ``whist_env.GAMES``.

    Raises:
        ValueError: an unknown game (the message lists the known ones).
    """
    from whist_env import GAMES

    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; known games: {sorted(GAMES)}")
    return name


def check_agent_specs(specs: list[str]) -> list[str]:
    """``specs`` unchanged when every one is of a known agent kind.

    Raises:
        ValueError: naming the first unknown spec and the known forms.
    """
    for spec in specs:
        if not _known_spec_kind(spec):
            raise ValueError(f"unknown agent spec {spec!r}; expected one of {_spec_forms()}")
    return specs


def _known_spec_kind(spec: str) -> bool:
    """Whether ``spec`` is of a kind :func:`agents.make_agent` builds (its path is checked there)."""
    from agents.registry import AGENT_SPECS

    return spec.strip().partition(":")[0].lower() in {form.partition(":")[0].partition("[")[0] for form in AGENT_SPECS}


class PPOConfig(_Strict):
    """Hyperparameters of self-play PPO (``training.learn.ppo``).

    Steps are environment decisions of any seat (one ``env.step``); ``total_steps`` counts them
    over all environments.
    """

    total_steps: int = Field(200_000, ge=0, description="environment steps (all envs, all seats) to train for (0: the warm "
                                                         "start alone)")
    num_envs: int = Field(16, ge=1, description="AEC environments stepped in lockstep")
    rollout_steps: int = Field(128, ge=1, description="steps per environment between updates")
    lr: float = Field(3e-4, gt=0, description="Adam learning rate")
    anneal_lr: bool = Field(True, description="decay the learning rate linearly to 0")
    gamma: float = Field(1.0, ge=0, le=1, description="discount per own decision")
    gae_lambda: float = Field(0.95, ge=0, le=1, description="GAE lambda")
    clip_coef: float = Field(0.2, gt=0, description="PPO ratio clip")
    ent_coef: float = Field(0.01, ge=0, description="entropy bonus coefficient")
    vf_coef: float = Field(0.5, ge=0, description="value loss coefficient")
    max_grad_norm: float = Field(0.5, gt=0, description="gradient norm clip")
    update_epochs: int = Field(4, ge=1, description="passes over each batch")
    minibatch_size: int = Field(512, ge=1, description="samples per gradient step (at most num_envs * rollout_steps)")
    norm_adv: bool = Field(True, description="normalise advantages per minibatch")
    target_kl: float | None = Field(None, gt=0, description="stop the epochs early when approx_kl exceeds it")
    hidden_sizes: list[int] = Field(default_factory=lambda: [256, 256], min_length=1, description="MLP hidden widths")
    actor: Literal["mlp", "cards"] = Field("mlp", description="the actor: one logit per action off an MLP, or card-centric "
                                                                 "(each card scored from its own features: agents.learned.network.CardActor)")
    card_width: int = Field(128, ge=1, description="width of the card-centric actor's card head")
    history_width: int = Field(0, ge=0, description="H > 0: the card-centric actor also reads the hand's actions in order "
                                                     "through a GRU of width H (needs the rule option observation: history "
                                                     "and canonical_suits false); 0: it does not")
    reward_scale: float = Field(0.1, gt=0, description="rewards are multiplied by this before learning")
    pool_size: int = Field(5, ge=0, description="frozen past policies kept as opponents")
    snapshot_interval: int = Field(10, ge=1, description="updates between snapshots added to the pool")
    opponents: dict[str, float] = Field(default_factory=lambda: {"pool": 0.3},
                                        description="share of episodes in which the learner's side meets each opponent: "
                                                    "'pool' (a frozen snapshot) or an agent spec; the rest is pure self-play")
    central_critic: bool = Field(False, description="the critic reads the global state (every hand), the actor only its observation")
    kl_coef: float = Field(0.0, ge=0, description="weight of KL(warm-start policy || policy), annealed linearly to 0")
    kl_anneal_steps: int = Field(0, ge=0, description="environment steps over which kl_coef falls to 0 (0: the whole run)")
    canonical_suits: bool = Field(False, description="the networks read every position with its suits relabelled so that "
                                                     "trump is clubs (the other suits in order): one lesson serves every trump")
    bid_head: bool = Field(False, description="bids (the rules' BIDDING_PHASES) are chosen by a value per bid learned from "
                                              "Monte-Carlo returns (Deep Monte-Carlo), not by the policy gradient")
    bid_forecast: bool = Field(False, description="the bid head forecasts the tricks the bidder's side will take and values every "
                                                  "bid by its expected score under the rules (the rules' bid_forecast_scores); "
                                                  "it learns from a teacher dataset's hands (warm_start.dataset), and PPO leaves it as it is")
    bid_epsilon: float = Field(0.1, ge=0, le=1, description="share of the learner's bids made uniformly at random (bid head)")
    bid_coef: float = Field(1.0, ge=0, description="weight of the bid head's squared error")
    bid_prior: float = Field(-2.0, description="initial value of every bid (scaled points): pessimistic, so that greedy "
                                               "bidding keeps to bids already tried until exploration values the others")
    exact_open_play: bool = Field(False, description="at play time (evaluation, the zoo) the game's open phase is played exactly, "
                                                     "not by the network: German Whist once the stock is gone (RULES.md §4.4), "
                                                     "where every card's place is known")
    checkpoint_interval: int = Field(10, ge=1, description="updates between checkpoints")

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        if isinstance(data, dict) and "pool_prob" in data:
            raise ValueError(f"pool_prob was replaced by opponents: write 'opponents: {{pool: {data['pool_prob']}}}'")
        return data

    @field_validator("opponents")
    @classmethod
    def _opponent_shares(cls, v: dict[str, float]) -> dict[str, float]:
        for spec, share in v.items():
            if spec != "pool" and not _known_spec_kind(spec):
                raise ValueError(f"unknown opponent {spec!r}; expected 'pool' or an agent spec ({_spec_forms()})")
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"the share of {spec!r} must lie in [0, 1], got {share}")
        if sum(v.values()) > 1.0 + 1e-9:
            raise ValueError(f"the opponents' shares add up to {sum(v.values()):.3f} > 1")
        return v

    @field_validator("hidden_sizes")
    @classmethod
    def _positive_widths(cls, v: list[int]) -> list[int]:
        return positive_widths(v)

    @model_validator(mode="after")
    def _minibatch_fits_an_update(self) -> PPOConfig:
        # a minibatch cannot hold more samples than one update collects; with total_steps 0 (the
        # warm start alone) no update runs, so the PPO batch sizes are not read
        per_update = self.num_envs * self.rollout_steps
        if self.total_steps > 0 and self.minibatch_size > per_update:
            raise ValueError(f"minibatch_size {self.minibatch_size} exceeds the steps per update, num_envs * rollout_steps = "
                             f"{self.num_envs} * {self.rollout_steps} = {per_update}")
        return self


class WarmStartConfig(_Strict):
    """Warm start before PPO (``training.learn.warm_start``): behaviour cloning of a teacher's
    decisions and critic pretraining on their Monte-Carlo returns."""

    teacher: str = Field("heuristic", description="agent spec whose decisions are cloned (it plays every seat)")
    decisions: int = Field(200_000, ge=1, description="teacher decisions generated (all seats)")
    chunk: int = Field(20_000, ge=1, description="decisions generated per round of training (memory bound)")
    epochs: int = Field(2, ge=1, description="passes over each chunk")
    minibatch_size: int = Field(512, ge=1)
    lr: float = Field(1e-3, gt=0, description="Adam learning rate of the warm start")
    suit_augment: bool = Field(False, description="relabel each teacher sample by a random permutation of the interchangeable "
                                                  "suits (Minnesota: black with black, red with red)")
    bid_explore: float = Field(0.25, ge=0, le=1, description="with a bid head: share of the teacher's bids replaced by a "
                                                            "uniformly random legal bid, so that every bid gets a value")
    dataset: str | None = Field(None, description="a teacher dataset folder (whist teach) to train on instead of generating "
                                                   "teacher decisions: epochs passes over it, chunk decisions loaded at a time; "
                                                   "teacher, decisions and bid_explore are then unused")
    holdout_shards: int = Field(1, ge=0, description="with a dataset: its last shards, never trained on, on which the "
                                                     "agreement with the teacher is measured after every epoch")
    targets: Literal["action", "values", "double_dummy"] = Field(
        "action", description="with a dataset: clone the teacher's action, or the softmax at temperature of the teacher's "
                              "per-action values (values) or of each legal card's double-dummy value in the real deal "
                              "(double_dummy, datasets made with --double-dummy), where the decision has them; the "
                              "teacher's action elsewhere")
    temperature: float = Field(1.0, gt=0, description="temperature of the value targets (in the values' units)")
    anneal_lr: bool = Field(False, description="decay the warm start's learning rate linearly to 0 over its samples")
    init: str | None = Field(None, description="a trained network to start from, checkpoint:PATH or zoo:GAME: the learner's actor "
                                               "takes its actor's weights before the warm start (the architecture must be the "
                                               "config's: train.hidden_sizes, actor, card_width, bid_head, canonical_suits); "
                                               "fine-tuning a distilled agent")
    clone: bool = Field(True, description="train the actor toward the teacher's decisions; false: the warm start trains the "
                                          "critic (and a bid head) alone on the teacher's returns, the actor stays as it is "
                                          "(e.g. as init made it)")

    @field_validator("init")
    @classmethod
    def _trained_network(cls, v: str | None) -> str | None:
        if v is not None and v.strip().partition(":")[0].lower() not in ("checkpoint", "zoo"):
            raise ValueError(f"init {v!r} is not a trained network of this project: expected checkpoint:PATH or zoo:GAME")
        return v


class EnvConfig(_Strict):
    """How the training games are stepped (``training.learn.ppo``, ``training.learn.vector``)."""

    backend: Literal["aec", "vector"] = Field(
        "aec", description="aec: num_envs raw AEC environments, one Python call per decision; vector: the batched engine "
                           "(whist_env.vector) steps all num_envs games at once on the training device, with one forward "
                           "pass of the learner per step for all of them (self-play, pool, random, checkpoint: and zoo: "
                           "opponents; the heuristic and search agents stay on aec)")


#: Opponent kinds that act in batch on the vector backend (besides ``pool``).
VECTOR_OPPONENTS = ("random", "checkpoint", "zoo")


class EvalConfig(_Strict):
    """Evaluation of the learner against fixed opponents (``training.evaluation.match``, duplicate deals)."""

    interval_steps: int = Field(0, ge=0, description="steps between evaluations during training (0 = none)")
    num_deals: int = Field(100, ge=1, description="deals per opponent during training")
    final_num_deals: int = Field(1000, ge=0, description="deals per opponent in the final evaluation (0 = skip)")
    opponents: list[str] = Field(default_factory=lambda: ["random", "heuristic"], description="agent specs")
    duplicate: bool = Field(True, description="replay each deal with the sides swapped")
    seed: int = Field(12345, description="match seed of the in-training evaluations, in seed_ranges.DEVELOPMENT "
                                         "(training.evaluation.seed_ranges: training deals never meet them)")
    final_seed: int = Field(0, description="match seed of the final evaluation table, in seed_ranges.REPORT (the range of "
                                           "published figures, the default seed of whist eval)")

    @field_validator("opponents")
    @classmethod
    def _specs(cls, v: list[str]) -> list[str]:
        return check_agent_specs(v)

    @field_validator("seed")
    @classmethod
    def _development_seed(cls, v: int) -> int:
        from training.evaluation.seed_ranges import DEVELOPMENT, check_range

        return check_range(v, DEVELOPMENT, "the in-training evaluation seed")

    @field_validator("final_seed")
    @classmethod
    def _report_seed(cls, v: int) -> int:
        from training.evaluation.seed_ranges import REPORT, check_range

        return check_range(v, REPORT, "the final evaluation seed")


class ExperimentConfig(_Strict):
    """One experiment: game, rule options, algorithm, seeds, evaluation schedule, logging."""

    game: str
    options: dict[str, Any] = Field(default_factory=dict)
    algorithm: Literal["ppo"] = "ppo"
    seed: int = 0
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    num_threads: int = Field(1, ge=1)
    log_dir: str = "runs"
    run_name: str | None = None
    env: EnvConfig = Field(default_factory=EnvConfig)
    train: PPOConfig = Field(default_factory=PPOConfig)
    warm_start: WarmStartConfig | None = None
    eval: EvalConfig = Field(default_factory=EvalConfig)

    @field_validator("game")
    @classmethod
    def _known_game(cls, v: str) -> str:
        return known_game(v)

    @model_validator(mode="after")
    def _options_build_env(self) -> ExperimentConfig:
        from whist_env import GAMES

        try:
            env = GAMES[self.game].raw_env(**self.options)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"options: {exc}") from exc
        if self.train.bid_head and not env.game.BIDDING_PHASES:
            raise ValueError(f"train.bid_head: {self.game} has no bidding phase")
        if self.train.bid_forecast:
            if not self.train.bid_head:
                raise ValueError("train.bid_forecast is a kind of bid head: set train.bid_head: true too")
            if env.game.bid_forecast_scores() is None:
                raise ValueError(f"train.bid_forecast: {self.game}'s bids are not valued by one trick count (no bid_forecast_scores)")
            if self.warm_start is None or self.warm_start.dataset is None:
                raise ValueError("train.bid_forecast learns from a teacher dataset's hands: set warm_start.dataset")
        if self.train.exact_open_play:
            from agents.heuristics import EXACT_OPEN_PLAY

            if self.game not in EXACT_OPEN_PLAY:
                raise ValueError(f"train.exact_open_play: {self.game} has no open phase (games with one: {sorted(EXACT_OPEN_PLAY)})")
        if self.env.backend == "vector":
            self._check_vector_backend()
        return self

    def _check_vector_backend(self) -> None:
        """``env.backend: vector`` needs a game and options the batched engine plays, and opponents
        that act in batch."""
        from whist_env import vector

        if self.game not in vector.GAMES:
            raise ValueError(f"env.backend: the batched engine (whist_env.vector) does not play {self.game} yet; it plays "
                             f"{', '.join(sorted(vector.GAMES))}. Use env.backend: aec for {self.game}")
        try:
            vector.make(self.game, 1, **self.options)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"env.backend: the batched engine refuses these options: {exc}. Use env.backend: aec") from exc
        unbatched = [spec for spec, share in self.train.opponents.items()
                     if share > 0 and spec != "pool" and spec.strip().partition(":")[0].lower() not in VECTOR_OPPONENTS]
        if unbatched:
            raise ValueError(f"train.opponents: {', '.join(map(repr, unbatched))} cannot play on env.backend: vector. Heuristic "
                             "and search opponents (and sb3:) decide one game at a time in Python and stay on the AEC backend: "
                             "use env.backend: aec, or opponents that act in batch (pool, random, checkpoint:PATH, zoo:GAME)")

    def run_dir(self, config_path: str | os.PathLike | None = None) -> Path:
        """The run folder ``log_dir/run_name`` (``run_name`` defaults to the config file's stem or the game)."""
        name = self.run_name or (Path(config_path).stem if config_path else self.game)
        return Path(self.log_dir) / name

    def resolved_device(self) -> str:
        """``"cuda"`` or ``"cpu"`` (``"auto"`` picks CUDA when available).

        Raises:
            ConfigError: ``device: cuda`` on a machine (or torch build) without CUDA.
        """
        import torch

        if self.device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ConfigError("device: 'cuda' was requested but this torch build has no usable CUDA device; use 'cpu' or 'auto'")
        return self.device


def format_validation_error(exc: ValidationError) -> str:
    """One line per error: ``dotted.key: message``."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key (not allowed here)"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        for key in ("options", "env.backend", "train.opponents"):
            if err["type"] == "value_error" and msg.startswith(f"{key}: ") and loc == "(top level)":
                loc, msg = key, msg[len(key) + 2 :]
        lines.append(f"{loc}: {msg}")
    return "\n".join(lines)


M = TypeVar("M", bound=BaseModel)


def validate_config(model: type[M], data: Any, source: str = "config", errors: Callable[[ValidationError], str] | None = None) -> M:
    """Validate a mapping (e.g. parsed YAML) into the pydantic ``model``; ``errors`` formats a
    validation error (default :func:`format_validation_error`).

    Raises:
        ConfigError: naming each bad key (``source: key: message`` lines).
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of keys, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"invalid config {source}:\n{(errors or format_validation_error)(exc)}") from None


def read_yaml_config(path: str | os.PathLike) -> tuple[Any, str]:
    """``(the parsed YAML of path, an empty file as {}; the path as a source name)``.

    Raises:
        FileNotFoundError: no such file.
        ConfigError: invalid YAML.
    """
    path = Path(path)
    text = path.read_text()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML in {path}: {exc}") from None
    return (data if data is not None else {}), str(path)


def config_from_dict(data: Any, source: str = "config") -> ExperimentConfig:
    """Validate a mapping (e.g. parsed YAML) into an :class:`ExperimentConfig`.

    Raises:
        ConfigError: naming each bad key (``source: key: message`` lines).
    """
    return validate_config(ExperimentConfig, data, source)


def load_config(path: str | os.PathLike) -> ExperimentConfig:
    """Read and validate an experiment YAML file.

    Raises:
        FileNotFoundError: no such file.
        ConfigError: invalid YAML, or a key that is unknown, of the wrong type or out of range
            (an unknown game, an invalid rule option); the message names the key.
    """
    data, source = read_yaml_config(path)
    return config_from_dict(data, source=source)
