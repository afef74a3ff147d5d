"""Teacher datasets: the decisions of a teacher (``whist teach``), stored in shards for training.

A teacher (any agent spec: ``heuristic``, ``pimc``, ``zoo:GAME`` ...) plays every seat of
fresh hands, or, with a student (DAgger, Ross et al. 2011), the student plays and the teacher
labels a share of the student's decisions: the dataset then holds the states the student
reaches, with what the teacher would have done there.

Layout of the dataset folder::

    DIR/manifest.json        what the dataset is (below), rewritten atomically after each shard
    DIR/shard-00000.npz ...  numpy .npz (compressed), read with allow_pickle=False

The manifest (JSON) holds ``format`` (``"whist-env-teacher-dataset"``), ``format_version``,
``game``, ``options`` (every rule option's value), ``teacher`` and ``student`` (canonical agent
specs; ``student`` null without DAgger), ``label_share``, ``double_dummy`` (bool), ``seed``,
``episodes_per_shard``, ``obs_size``, ``state_size``, ``num_actions``, ``commit``, ``versions``,
``wall_seconds`` (the time spent making it, over every resumed run), ``decisions`` and
``labelled`` (totals), and ``shards``: one entry
per finished shard with its ``index``, ``file``, ``episodes``,
``decisions``, ``labelled``, ``deal_seeds`` (``[first, count]``: episode ``j`` of shard ``k`` is
dealt with ``env.reset(seed=first + j)``) and ``sha256``. Deal seeds lie in
``training.evaluation.seed_ranges.TRAINING``, which no evaluation deal equals:
``first = TRAINING.start + seed * 2**24 + k * episodes_per_shard``.

Each shard holds M decisions, in play order:

* ``observation`` float32 ``(M, D)``, ``action_mask`` int8 ``(M, A)``, ``state`` float32
  ``(M, Ds)`` (the global ``state()``, for centralised critics only);
* ``action`` int16 ``(M,)``: the action played; ``label`` int16 ``(M,)``: the teacher's action,
  -1 where the teacher did not label the decision (DAgger);
* ``values`` float32 ``(M, A)``: the teacher's own value of every legal action where it has them
  (``pimc``: its mean over the worlds, in tricks its side takes when it solved double dummy for a
  trick objective, in points of its side when it rolled out or scored the double-dummy tricks
  (Spades); ``values_kind`` int8 ``(M,)`` says which: 0 none, 1 tricks, 2 points), NaN elsewhere;
* ``double_dummy`` float32 ``(M, A)`` (with ``--double-dummy``): the double-dummy value of every
  legal card in the real deal, the tricks the acting seat's side takes from the current trick
  on (its negation where the seat wants few tricks, a Minnesota Low hand), NaN where there is
  none: bids and other non-card decisions, Romanian Whist (exact bids: neither many nor few
  tricks is the aim), German Whist's stock phase (the solver values trick play, not the
  draws: these decisions are left unlabelled), Spades (the side's points, not its trick count,
  are the aim), and wherever a lead may still be restricted beyond follow suit
  (``leads_restricted()``: the solver knows follow suit only);
* ``reward`` float32 ``(M,)``: the rewards the acting seat received after this decision and
  before its next one (raw game points); ``episode_return`` float32 ``(M,)``: the sum of its
  rewards from this decision to the end of the episode (undiscounted);
* ``tricks`` int8 ``(M,)``: the tricks the acting seat's side took in the hand of this decision
  (what a forecast bid head learns to predict, ``agents.learned.network``);
* ``seat`` int8 ``(M,)`` and ``episode`` int32 ``(M,)`` (index within the shard).

Shards are the unit of resumption: each is written atomically once complete, then the manifest;
a stopped run keeps every finished shard, and the same command resumes. Episodes are the unit of
work: episode ``j`` of shard ``k`` is the same whichever process plays it and whatever it played
before, so shard ``k`` is the same with any number of workers, here or on Ray (workers play runs of
a shard's episodes, sized to take a few seconds each, so that progress shows however slow the
teacher).

A run stops at the end of the episode in which the dataset reaches the decisions asked for
(episodes are stored whole: at most one episode more). The shard it was playing is then kept with
the episodes played so far (its manifest entry's ``episodes`` and ``deal_seeds`` say how many), and
a later run that asks for more decisions completes it first: the dataset is then the one a single
run would have made. A shard missing or damaged on disk (its sha256 differs from the manifest's)
is made again by the next run, which says so.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import ActionValues, Reseedable
from agents.learned.checkpoint import write_file_atomic
from training.errors import CommandError, Interrupted
from training.evaluation.bidding import json_ready
from training.evaluation.seed_ranges import TRAINING
from training.evaluation.store import file_sha256

FORMAT = "whist-env-teacher-dataset"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
#: The seed spans of two dataset seeds never overlap: each holds 2**24 episodes.
SEED_STRIDE = 2**24
#: Largest dataset seed: its span still ends inside TRAINING.
MAX_SEED = len(TRAINING) // SEED_STRIDE - 1
#: The identity of a dataset: a folder holding another is refused.
IDENTITY_KEYS = ("format", "game", "options", "teacher", "student", "label_share", "double_dummy", "seed",
                 "episodes_per_shard")
#: ``values_kind`` of a decision without teacher values (else pimc's VALUES_TRICKS or VALUES_POINTS).
VALUES_NONE = 0


@dataclass
class TeachSpec:
    """What a dataset is made of (the manifest's identity).

    Attributes:
        game: a key of ``whist_env.GAMES``. options: rule options given (merged over ``episode: hand``).
        teacher, student: agent specs (``student`` ``None``: the teacher plays).
        label_share: with a student, the share of its decisions the teacher labels (0 < p <= 1).
        double_dummy: also store the double-dummy value of every legal card in the real deal.
        seed: the dataset seed (0 .. :data:`MAX_SEED`): the span of deal seeds.
        episodes_per_shard: episodes (one hand each by default) per shard.
    """

    game: str
    options: Mapping[str, Any] = field(default_factory=dict)
    teacher: str = "heuristic"
    student: str | None = None
    label_share: float = 1.0
    double_dummy: bool = False
    seed: int = 0
    episodes_per_shard: int = 100

    def check(self) -> None:
        """Raises ``ValueError`` naming the first bad field."""
        from whist_env import GAMES

        if self.game not in GAMES:
            raise ValueError(f"unknown game {self.game!r}; known games: {sorted(GAMES)}")
        if not isinstance(self.seed, int) or not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"the dataset seed must be an integer in [0, {MAX_SEED}], got {self.seed!r}")
        if not isinstance(self.episodes_per_shard, int) or self.episodes_per_shard < 1:
            raise ValueError(f"episodes per shard must be an integer >= 1, got {self.episodes_per_shard!r}")
        if not 0.0 < float(self.label_share) <= 1.0:
            raise ValueError(f"the label share must lie in (0, 1], got {self.label_share!r}")
        if self.student is None and float(self.label_share) != 1.0:
            raise ValueError("a label share below 1 needs a student (DAgger): without one the teacher plays and labels every decision")


def first_deal_seed(seed: int, shard: int, episodes_per_shard: int) -> int:
    """The deal seed of episode 0 of shard ``shard`` (module docstring)."""
    return TRAINING.start + seed * SEED_STRIDE + shard * episodes_per_shard


class ShardPlayer:
    """Plays the shards of a dataset (picklable: the agents are built in the process that plays).

    Args:
        spec: the dataset's :class:`TeachSpec` (checked).
        options: the full rule options of the plays.
    """

    def __init__(self, spec: TeachSpec, options: Mapping[str, Any]) -> None:
        self.spec, self.options = spec, dict(options)
        self._built: tuple[Any, Any, Any] | None = None
        #: called with no argument after every decision played here (progress); not sent to workers
        self.on_decision: Callable[[], Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "options": self.options, "_built": None, "on_decision": None}

    def _agents(self) -> tuple[Any, Any, Any]:
        if self._built is None:
            from agents.registry import make_agent
            from whist_env import GAMES

            env = GAMES[self.spec.game].raw_env(**self.options)
            teacher = make_agent(self.spec.teacher, self.spec.game, seed=0)
            student = None if self.spec.student is None else make_agent(self.spec.student, self.spec.game, seed=1)
            self._built = (env, teacher, student)
        return self._built

    def play(self, unit: int | tuple[int, int, int, int | None]) -> tuple[dict[str, np.ndarray], float]:
        """Play part of a shard: ``(arrays, seconds)``, the arrays of its rows (module docstring)
        and the seconds spent playing them.

        Args:
            unit: a shard index (every episode of that shard), or ``(shard, start, stop, limit)``:
                its episodes ``start .. stop - 1``, ending early after the episode in which the
                rows reach ``limit`` (``None``: no early end). Episode ``j`` is the same either way.
        """
        from whist_env.envs.policy_action import policy_action

        began = time.perf_counter()
        shard, start, stop, limit = (unit, 0, self.spec.episodes_per_shard, None) if isinstance(unit, int) else unit
        env, teacher, student = self._agents()
        valued = teacher if isinstance(teacher, ActionValues) else None  # asked once: a protocol check is slow
        spec = self.spec
        first = first_deal_seed(spec.seed, shard, spec.episodes_per_shard)
        rows = DecisionRows(env.action_space(env.possible_agents[0]).n, spec.double_dummy)
        nan_row = rows.nan_row
        for j in range(start, stop):
            if limit is not None and len(rows) >= limit:
                break
            deal_seed = first + j
            sub = np.random.SeedSequence([spec.seed, shard, j]).generate_state(3)
            for agent, s in ((teacher, sub[0]), (student, sub[1])):
                if isinstance(agent, Reseedable):  # the student may be None
                    agent.reseed(int(s))
            label_rng = np.random.default_rng(int(sub[2]))
            env.reset(seed=deal_seed)
            rows.start_episode(env, j)
            for agent in env.agent_iter():
                if env.terminations[agent] or env.truncations[agent]:
                    env.step(None)
                    continue
                ob = env.observe(agent)
                values, kind = nan_row, VALUES_NONE
                if student is None:
                    label = action = int(policy_action(teacher, env, agent, ob))
                    values, kind = _teacher_values(valued, nan_row)
                else:
                    action = int(policy_action(student, env, agent, ob))
                    label = -1
                    if label_rng.random() < spec.label_share:
                        label = int(policy_action(teacher, env, agent, ob))
                        values, kind = _teacher_values(valued, nan_row)
                rows.add(env, agent, ob, action, label, values, kind)
                env.step(action)
                if self.on_decision is not None:
                    self.on_decision()
                rows.after_step(env)
            rows.end_episode()
        return rows.arrays(), time.perf_counter() - began


class DecisionRows:
    """The rows of a shard, gathered as its episodes are played (module docstring: what each
    array holds): a decision's observation, mask, state, action and label when it is taken, its
    rewards as they arrive, its side's tricks once its hand is scored.

    Args:
        num_actions: A. double_dummy: also store each legal card's double-dummy value in the
            real deal (:func:`double_dummy_values`).
    """

    KEYS = ("observation", "action_mask", "state", "action", "label", "values", "values_kind", "double_dummy",
            "reward", "seat", "episode", "tricks")

    def __init__(self, num_actions: int, double_dummy: bool = False) -> None:
        self.double_dummy = bool(double_dummy)
        #: the value row of a decision without values: NaN for every action
        self.nan_row = np.full(num_actions, np.nan, dtype=np.float32)
        self.rows: dict[str, list] = {key: [] for key in self.KEYS}

    def __len__(self) -> int:
        return len(self.rows["action"])

    def start_episode(self, env: Any, episode: int) -> None:
        """Begin episode ``episode`` (its index in the shard), ``env`` just reset."""
        self.episode = episode
        self.seats = {a: i for i, a in enumerate(env.possible_agents)}
        self.last: dict[str, int] = {}  # agent -> row of its latest decision in this episode
        self.hand_start, self.last_hand = len(self), env.game.last_hand  # the rows of the hand under way

    def add(self, env: Any, agent: str, ob: Mapping[str, np.ndarray], action: int, label: int,
            values: np.ndarray | None = None, kind: int = VALUES_NONE) -> None:
        """The decision of ``agent`` at ``env`` (its observation ``ob``), about to play ``action``;
        ``label`` the teacher's action (-1: none), ``values`` its value of every action."""
        rows = self.rows
        self.last[agent] = len(self)
        rows["observation"].append(ob["observation"])
        rows["action_mask"].append(ob["action_mask"])
        rows["state"].append(env.state())
        rows["action"].append(int(action))
        rows["label"].append(int(label))
        rows["values"].append(self.nan_row if values is None else values)
        rows["values_kind"].append(kind)
        rows["double_dummy"].append(double_dummy_values(env, self.nan_row) if self.double_dummy else self.nan_row)
        rows["reward"].append(0.0)
        rows["seat"].append(self.seats[agent])
        rows["episode"].append(self.episode)

    def after_step(self, env: Any) -> None:
        """Credit the step's rewards to each seat's latest decision; once a hand is scored, its
        rows learn their side's tricks."""
        rows = self.rows
        for a, r in env.rewards.items():
            if r and a in self.last:
                rows["reward"][self.last[a]] += float(r)
        if env.game.last_hand is not self.last_hand:
            self.last_hand = env.game.last_hand
            side_tricks = env.game.tricks_by_side(self.last_hand[1])
            for row in range(self.hand_start, len(self)):
                rows["tricks"].append(side_tricks[env.game.side_of(rows["seat"][row])])
            self.hand_start = len(self)

    def end_episode(self) -> None:
        """A hand cut off by the episode's end: its rows' tricks are -1."""
        self.rows["tricks"].extend([-1] * (len(self) - len(self.rows["tricks"])))

    def arrays(self) -> dict[str, np.ndarray]:
        """The shard's arrays (module docstring), ``episode_return`` included."""
        rows = self.rows
        arrays = {
            "observation": np.asarray(rows["observation"], dtype=np.float32),
            "action_mask": np.asarray(rows["action_mask"], dtype=np.int8),
            "state": np.asarray(rows["state"], dtype=np.float32),
            "action": np.asarray(rows["action"], dtype=np.int16),
            "label": np.asarray(rows["label"], dtype=np.int16),
            "values": np.asarray(rows["values"], dtype=np.float32),
            "values_kind": np.asarray(rows["values_kind"], dtype=np.int8),
            "reward": np.asarray(rows["reward"], dtype=np.float32),
            "seat": np.asarray(rows["seat"], dtype=np.int8),
            "episode": np.asarray(rows["episode"], dtype=np.int32),
            "tricks": np.asarray(rows["tricks"], dtype=np.int8),
        }
        arrays["episode_return"] = discounted_returns(np.asarray(rows["reward"]), arrays["seat"], arrays["episode"], 1.0)
        if self.double_dummy:
            arrays["double_dummy"] = np.asarray(rows["double_dummy"], dtype=np.float32)
        return arrays


def discounted_returns(reward: np.ndarray, seat: np.ndarray, episode: np.ndarray, gamma: float) -> np.ndarray:
    """Per decision, its seat's rewards from it to the end of its episode, discounted by ``gamma``
    per own decision: float32 ``(M,)`` of ``reward``, ``seat`` and ``episode`` (each ``(M,)``, in
    play order)."""
    out = np.zeros(len(reward), dtype=np.float64)
    running: dict[tuple[int, int], float] = {}
    for k in range(len(reward) - 1, -1, -1):
        key = (int(episode[k]), int(seat[k]))
        running[key] = float(reward[k]) + gamma * running.get(key, 0.0)
        out[k] = running[key]
    return out.astype(np.float32)


def _teacher_values(teacher: ActionValues | None, nan_row: np.ndarray) -> tuple[np.ndarray, int]:
    """The teacher's per-action values of its last decision and their kind
    (:class:`agents.base.ActionValues`), or NaN and :data:`VALUES_NONE` when it has none
    (``teacher`` is ``None`` for a teacher without the capability)."""
    values = None if teacher is None else teacher.last_values
    if values is None:
        return nan_row, VALUES_NONE
    return np.asarray(values, dtype=np.float32), int(teacher.last_values_kind)


def double_dummy_values(env: Any, nan_row: np.ndarray) -> np.ndarray:
    """The double-dummy value of every legal card of the seat to act in the real deal of ``env``
    (a raw environment): float32 ``(A,)``, the tricks its side takes from the current trick on
    (negated where the seat wants few tricks), NaN for other actions and where the module
    docstring says there is no such value. Solved by DDS (endplay) where it applies and is
    installed (four seats in two partnerships, no jokers, natural ranking, many tricks wanted),
    else by :mod:`whist_env.engine.compiled_double_dummy`: the same values either way."""
    from agents.search.solving import card_values, dds_applies, dds_card_values, solver_applies
    from whist_env.rules.base import PLAY

    game = env.game
    seat = game.current_player
    if seat is None or game.phase != PLAY or not solver_applies(game):  # German Whist's stock phase is a phase of its own
        return nan_row
    objective = game.trick_objective(seat)
    if objective == 0:
        return nan_row
    out = nan_row.copy()
    # DDS where it applies (bridge's solver, about 100 times faster on a full hand; the tests hold
    # the project's solver equal to it), else the project's compiled solver
    fast = objective > 0 and dds_applies(game)
    values = dds_card_values(game) if fast else card_values(game, misere=objective < 0)
    for card, tricks in values.items():
        out[card] = objective * tricks
    return out


# ------------------------------------------------------------------------------ the dataset folder
def write_shard(path: Path, arrays: Mapping[str, np.ndarray]) -> str:
    """Write ``arrays`` to ``path`` as a compressed .npz, atomically; returns its sha256."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    data = buffer.getvalue()
    write_file_atomic(path, lambda f: f.write(data))
    return hashlib.sha256(data).hexdigest()


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """The manifest of the dataset in ``folder``.

    Raises:
        FileNotFoundError: no manifest there.
        ValueError: the manifest is not a whist-env teacher dataset's or is newer than this code.
    """
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{folder} holds no teacher dataset ({MANIFEST} missing; make one with whist teach)")
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"cannot read {path}: {err}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{path} is not a whist-env teacher dataset manifest (no format={FORMAT!r})")
    if int(manifest.get("format_version", 0)) > FORMAT_VERSION:
        raise ValueError(f"{path} has format_version {manifest['format_version']}, newer than supported {FORMAT_VERSION}")
    return manifest


def load_shard(folder: str | Path, entry: Mapping[str, Any], verify: bool = True,
               keys: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """The arrays of one shard of the manifest (``entry``), read without pickle: all of them, or
    only ``keys`` (the others are not decompressed).

    Raises:
        ValueError: the file is missing, (``verify``) its sha256 differs from the manifest's, or it
            lacks one of ``keys``.
    """
    path = Path(folder) / str(entry["file"])
    if not path.is_file():
        raise ValueError(f"shard {path} is missing; rerun whist teach with the same arguments to make it again")
    if verify and file_sha256(path) != entry["sha256"]:
        raise ValueError(f"shard {path} does not match its sha256 in the manifest (changed or damaged); delete it and "
                         "rerun whist teach with the same arguments to make it again")
    with np.load(path, allow_pickle=False) as data:
        missing = [key for key in keys or () if key not in data.files]
        if missing:
            raise ValueError(f"shard {path} lacks {missing}")
        return {key: data[key] for key in (data.files if keys is None else keys)}


def _identity(manifest: Mapping[str, Any]) -> dict[str, Any]:
    return {key: manifest.get(key) for key in IDENTITY_KEYS}


#: a run of episodes that a worker plays (with ``workers`` or Ray) takes about this many seconds,
#: so that progress moves every few seconds however slow the teacher (one episode at the least,
#: a whole shard at the most)
UNIT_SECONDS = 5.0


@dataclass
class _Job:
    """Episodes ``start .. stop - 1`` of shard ``shard`` to play; ``cut``: the run may end inside
    it, at the end of the episode that reaches the count (else every episode is played)."""

    shard: int
    start: int
    stop: int
    cut: bool
    next: int = -1  # the first episode not yet handed out
    pieces: list[dict[str, np.ndarray]] = field(default_factory=list)  # played, not yet written

    def __post_init__(self) -> None:
        self.next = self.start if self.next < 0 else self.next

    @property
    def rows(self) -> int:
        return sum(len(p["action"]) for p in self.pieces)


class _CountReached(Exception):
    """The dataset holds the decisions asked for: ends the wave in progress (and stops its workers)."""


def _say_on_stderr(message: str) -> None:
    import sys

    from training.progress import progress_write

    progress_write(message, file=sys.stderr)


def teach(spec: TeachSpec, decisions: int, out: str | Path, workers: int = 1, ray_address: str | None = None,
          progress: bool = True, say: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """Make (or resume) the dataset of ``spec`` in ``out`` until it holds ``decisions`` decisions
    (all seats), stopping at the end of the episode that reaches them; returns the manifest.

    First every shard the manifest lists that is missing or damaged on disk is made again (as it
    was, each with a note), then the last shard, when an earlier run left it part-way, is
    completed, then new shards are played (module docstring). Alone (``workers`` 1, no Ray) the
    shards are played here one after the other. With ``workers`` or Ray, one episode is played
    here first (its decisions and seconds size the rest), then the workers play runs of a shard's
    episodes of about :data:`UNIT_SECONDS` each, as many as the decisions still wanted need by the
    mean so far (another wave follows when they fall short). The progress moves at every decision
    played here and as each run of the workers arrives, in order.

    Args:
        spec: what the dataset is made of (checked).
        decisions: the decisions to hold at least (>= 1).
        out: the dataset folder: new, empty, or holding this dataset.
        workers: processes playing at once (>= 1). ray_address: play on Ray (``"local"`` or an address).
        progress: show decisions, decisions/s and the time left on standard error.
        say: where one-line notes go (a shard made again); default: standard error.

    Raises:
        ValueError: a bad spec, ``decisions < 1``, ``workers < 1``, or ``out`` holds a dataset of
            another spec (the message names the differing fields).
        Interrupted: Ctrl-C or SIGTERM; every finished shard is kept.
    """
    from agents.registry import canonical_spec
    from training.evaluation.parallel import played_units
    from whist_env import GAMES
    from whist_env.provenance import source_commit
    from whist_env.rules.options import options_dict

    spec.check()
    if decisions < 1:
        raise ValueError(f"decisions must be >= 1, got {decisions}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    say = _say_on_stderr if say is None else say
    options = {"episode": "hand", **dict(spec.options)}
    env = GAMES[spec.game].raw_env(**options)
    full_options = options_dict(env.game.options)
    agent0 = env.possible_agents[0]
    manifest: dict[str, Any] = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "game": spec.game, "options": json_ready(full_options),
        "teacher": canonical_spec(spec.teacher, spec.game),
        "student": None if spec.student is None else canonical_spec(spec.student, spec.game),
        "label_share": float(spec.label_share), "double_dummy": bool(spec.double_dummy), "seed": int(spec.seed),
        "episodes_per_shard": int(spec.episodes_per_shard),
        "obs_size": int(env.observation_space(agent0)["observation"].shape[0]), "state_size": int(env.state_space.shape[0]),
        "num_actions": int(env.action_space(agent0).n), "commit": source_commit(), "versions": _versions(), "shards": [],
    }
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--out {folder} is a file, not a folder")
    if folder.is_dir() and not (folder / MANIFEST).exists() and any(folder.iterdir()):
        raise ValueError(f"--out {folder} is a folder that holds files but no teacher dataset ({MANIFEST}); choose an empty "
                         "or new folder")
    listed: dict[int, dict[str, Any]] = {}  # the old manifest's shards, by index
    if (folder / MANIFEST).exists():
        old = read_manifest(folder)
        if _identity(old) != _identity(manifest):
            diff = [f"{k}: {old.get(k)!r} there, {manifest.get(k)!r} asked" for k in IDENTITY_KEYS if old.get(k) != manifest.get(k)]
            raise ValueError(f"{folder} holds another teacher dataset ({'; '.join(diff)}); choose another --out")
        listed = {int(s["index"]): s for s in old.get("shards", [])}
        manifest["commit"], manifest["versions"] = old.get("commit"), old.get("versions")
        manifest["wall_seconds"] = float(old.get("wall_seconds") or 0.0)
    eps = spec.episodes_per_shard
    held: dict[int, dict[str, Any]] = {}  # the shards on disk that match the manifest
    jobs: list[_Job] = []
    top = max(listed, default=-1)
    for k in range(top + 1):  # shards the manifest lists, or skips below its last, are made (again) first
        path = folder / (str(listed[k]["file"]) if k in listed else f"shard-{k:05d}.npz")
        if k not in listed:
            say(f"{path} is not in the manifest (a gap below its last shard): it is made")
        elif not path.is_file():
            say(f"{path} is missing: it is made again")
        elif file_sha256(path) != listed[k]["sha256"]:
            say(f"{path} does not match its sha256 in the manifest (damaged or changed): it is made again")
        else:
            held[k] = listed[k]
            continue
        jobs.append(_Job(k, 0, int(listed[k]["episodes"]) if k in listed else eps, cut=False))
    # where the count goes on: the last shard's missing episodes, then new shards
    frontier = (top, int(listed[top]["episodes"])) if top >= 0 and int(listed[top]["episodes"]) < eps else (top + 1, 0)
    manifest["shards"] = [held[k] for k in sorted(held)]
    folder.mkdir(parents=True, exist_ok=True)
    player = ShardPlayer(spec, full_options)
    serial = ray_address is None and workers == 1

    def done() -> int:
        return sum(int(s["decisions"]) for s in held.values())

    def pending() -> int:
        return sum(job.rows for job in jobs)

    bar = None
    if progress:
        from training.progress import progress_bar

        bar = progress_bar(total=decisions, initial=min(done(), decisions), desc=f"teach {manifest['teacher']}", unit="dec",
                           unit_scale=True, dynamic_ncols=True)

        def step_bar() -> None:
            if bar.n < decisions:
                bar.update(1)

        player.on_decision = step_bar  # moves at every decision played here (not by the workers)
    t0, wall0 = time.perf_counter(), float(manifest.get("wall_seconds") or 0.0)
    seen_rows = sum(int(s["decisions"]) for s in held.values())  # for the mean decisions an episode
    seen_episodes = sum(int(s["episodes"]) for s in held.values())
    played_seconds, played_episodes = 0.0, 0  # this run's, for the size of a worker's run of episodes

    def next_job() -> _Job | None:
        """The first job with episodes not yet handed out; a new one at the frontier while the
        count may need it."""
        nonlocal frontier
        for job in jobs:
            if job.next < job.stop:
                return job
        if done() + pending() >= decisions:
            return None
        job = _Job(frontier[0], frontier[1], eps, cut=True)
        jobs.append(job)
        frontier = (frontier[0] + 1, 0)
        return job

    def plan() -> tuple[list[tuple[_Job, tuple[int, int, int, int | None]]], bool]:
        """The units of the next wave, each with its job, and whether the workers play them.
        Alone: the rest of the next job, ending at the count. With workers: first one episode
        here (its decisions and seconds size the rest), then runs of episodes, as many as the
        count needs by the mean so far."""
        if serial or not played_episodes:
            job = next_job()
            if job is None:
                return [], False
            stop = job.stop if serial else job.next + 1
            limit = decisions - done() - pending() if job.cut else None
            unit = (job.shard, job.next, stop, limit)
            job.next = stop
            return [(job, unit)], False
        per_episode = seen_rows / seen_episodes
        chunk = min(eps, max(1, round(UNIT_SECONDS * played_episodes / max(played_seconds, 1e-9))))
        units: list[tuple[_Job, tuple[int, int, int, int | None]]] = []
        planned = 0
        while not (units and done() + pending() + planned * per_episode >= decisions
                   and all(job.next >= job.stop for job in jobs if not job.cut)):
            job = next_job()
            if job is None:
                break
            stop = min(job.next + chunk, job.stop)
            units.append((job, (job.shard, job.next, stop, None)))
            planned += stop - job.next
            job.next = stop
        return units, True

    def finish(job: _Job) -> None:
        """Write the shard of ``job`` (with the rows of the shard it extends), then the manifest."""
        parts = ([load_shard(folder, held[job.shard])] if job.start > 0 else []) + job.pieces
        arrays = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
        episodes = int(arrays["episode"][-1]) + 1
        name = f"shard-{job.shard:05d}.npz"
        digest = write_shard(folder / name, arrays)
        held[job.shard] = {"index": job.shard, "file": name, "episodes": episodes, "decisions": int(len(arrays["action"])),
                           "labelled": int((arrays["label"] >= 0).sum()),
                           "deal_seeds": [first_deal_seed(spec.seed, job.shard, eps), episodes], "sha256": digest}
        jobs.remove(job)
        manifest["shards"] = [held[k] for k in sorted(held)]
        manifest["wall_seconds"] = wall0 + time.perf_counter() - t0
        _write_manifest(folder, manifest)

    try:
        try:
            while True:
                units, by_workers = plan()
                if not units:
                    break
                with played_units(player, [unit for _, unit in units], workers if by_workers else 1,
                                  ray_address if by_workers else None) as results:
                    for (job, (_, _, stop, _)), (arrays, seconds) in zip(units, results):
                        played_seconds += seconds
                        played_episodes += len(np.unique(arrays["episode"]))
                        seen_rows += len(arrays["action"])
                        seen_episodes += len(np.unique(arrays["episode"]))
                        need = decisions - done() - pending()
                        if job.cut and need <= 0:
                            raise _CountReached
                        reached = job.cut and len(arrays["action"]) >= need
                        if reached:  # keep the episodes up to the one that reaches the count
                            arrays = {k: v[arrays["episode"] <= arrays["episode"][need - 1]] for k, v in arrays.items()}
                        job.pieces.append(arrays)
                        if reached or stop == job.stop:
                            finish(job)
                        if bar is not None:
                            bar.update(max(0, min(done() + pending(), decisions) - bar.n))
                            bar.set_postfix({"shards": len(held)}, refresh=False)
                        if reached:
                            raise _CountReached
        except _CountReached:
            pass
    except KeyboardInterrupt:
        raise Interrupted(f"{len(held)} finished shards ({done():,} decisions) are kept in {folder}; "
                          "run the same command again to resume") from None
    finally:
        if bar is not None:
            bar.close()
    manifest["shards"] = [held[k] for k in sorted(held)]
    _write_manifest(folder, manifest)
    return manifest


def _write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    """Write ``manifest`` (its totals updated first) atomically."""
    manifest["decisions"] = sum(int(s["decisions"]) for s in manifest["shards"])
    manifest["labelled"] = sum(int(s["labelled"]) for s in manifest["shards"])
    text = json.dumps(manifest, indent=1) + "\n"
    write_file_atomic(folder / MANIFEST, lambda f: f.write(text.encode()))


def _versions() -> dict[str, str]:
    import platform

    import whist_env

    return {"whist_env": str(whist_env.__version__), "numpy": np.__version__, "python": platform.python_version()}


def run_teach(args: Any) -> int:
    """``whist teach``: make or resume a teacher dataset (:func:`teach`); prints its summary: the
    decisions, shards, a last shard left part-way, and how far the count was passed (episodes
    are stored whole)."""
    if args.decisions is None:
        raise CommandError("--decisions N is required (or --records DIR: a dataset of recorded games)")
    spec = TeachSpec(game=args.game, options=dict(args.option), teacher=args.teacher, student=args.student,
                     label_share=args.label_share, double_dummy=args.double_dummy, seed=args.seed,
                     episodes_per_shard=args.shard_episodes)
    try:
        before = int(read_manifest(args.out).get("decisions") or 0)
    except (OSError, ValueError):  # no dataset yet (teach says what is wrong with one it cannot read)
        before = 0
    try:
        manifest = teach(spec, args.decisions, args.out, workers=args.workers, ray_address=args.ray, progress=not args.quiet)
    except (ValueError, FileNotFoundError) as err:
        raise CommandError(str(err)) from None
    print(summary_line(manifest, args.out, args.decisions, before))
    return 0


def summary_line(manifest: Mapping[str, Any], out: str | Path, decisions: int, before: int = 0) -> str:
    """The line ``whist teach`` ends with: what the dataset in ``out`` holds after a run asked for
    ``decisions`` (``before``: the decisions it held when the run began)."""
    shards = manifest["shards"]
    eps = int(manifest["episodes_per_shard"])
    held = int(manifest["decisions"])
    line = (f"{out}: {held:,} decisions ({manifest['labelled']:,} labelled by {manifest['teacher']}) "
            f"in {len(shards)} shard{'s' if len(shards) != 1 else ''}")
    if shards and int(shards[-1]["episodes"]) < eps:
        line += f", the last with {shards[-1]['episodes']} of its {eps} episodes (a run asking for more completes it)"
    if before >= decisions:
        line += f"; it already held --decisions {decisions:,} or more: nothing added"
    elif held > decisions:
        line += f"; {held - decisions:,} over --decisions {decisions:,}: the run ends with the episode that reaches it"
    return line


__all__ = ["TeachSpec", "ShardPlayer", "teach", "discounted_returns", "read_manifest", "load_shard", "double_dummy_values", "first_deal_seed",
           "run_teach", "summary_line", "UNIT_SECONDS"]
