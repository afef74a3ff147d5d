"""Golden playthroughs: episodes of every game, step by step, readable, pinning each env version.

A trace (``tests/golden/<game>__<name>.json``, or ``.json.gz`` when the JSON passes
:data:`GZIP_ABOVE` bytes) is one episode of ``env(**options)`` played through
``env.agent_iter()``. Two kinds exist:

* **seeded** (:data:`OPTION_SETS`: each game's descriptor's ``golden_options``):
  ``env.reset(seed=RESET_SEED)``, actions drawn uniformly among the legal ones by
  ``numpy.random.default_rng(ACTION_SEED)`` (never by ``agents/``, so a change to an agent never
  touches a trace), to the end of the episode;
* **scripted** (:data:`SCRIPTS`): a fixed deal through reset options, hand-written actions (and
  fixed deals of later hands through ``redeal``), up to the end of the script.

The file is JSON laid out for reading and diffing: the header's entries, then ``"steps"``, one
record per iteration with one field per line, in this order:

* ``step``: the iteration's index; ``redeal``: the fixed deal given to ``env.redeal`` before it
  (scripts only, where one is);
* ``agent``: the acting agent (``agent_selection``);
* ``obs.<block>``: the acting agent's observation (as ``last()`` returns it), decoded block by
  block of ``observation_layout()`` (``tests/golden/decode.py``: card sets as ``"2C 9C QH"``,
  per-seat lists indexed by relative seat, 0 = the observer; one-hot blocks as their label or seat;
  numbers as the shortest decimal that reads back as the same float32);
* ``state.<block>``: the blocks of the global ``state()`` that follow the observation (``hands`` by
  relative seat, the game's hidden piles); ``state.observation`` only if the state's first part
  ever differs from the observation (the blocks that differ);
* ``legal``: the labels of the actions the mask allows;
* ``reward``: the acting agent's cumulative reward as ``last()`` returns it;
* ``rewards``: ``env.rewards`` (the agents still in ``env.agents``);
* ``terminations``, ``truncations``: the agents whose flag is set;
* ``infos``: every agent's info (``{"*": info}`` when all agents share one);
* ``action``: the label of the action taken (``null`` for a done agent, or where a script ends).

Re-record every trace after a deliberate change (docs/versioning.md) with
``python -m tests.golden.record`` from the repository root (``--only classic_whist`` for one game).
Recording checks at every step that the decoded blocks encode back to the very observation and
state vectors, so a trace holds exactly what the env produced.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from whist_env import games

from .decode import block_codecs, decode_blocks, encode_blocks

GOLDEN_DIR = Path(__file__).resolve().parent

#: A trace whose JSON is longer than this (bytes) is stored gzipped (the long episodes: a readable
#: trace takes about 1.4 KB a step, and gzip shrinks it about 20 times).
GZIP_ABOVE = 300_000

#: Game -> option set name -> rule options, every registered game's: its descriptor's
#: ``golden_options`` (``whist_env.games``; its defaults and at least one set that changes play or
#: scoring), read live from the registry.
OPTION_SETS: Mapping[str, dict[str, dict[str, Any]]] = games.view(
    lambda spec: {name: dict(options) for name, options in spec.golden_options.items()})

#: Seeds of every seeded trace: ``env.reset(seed=RESET_SEED)``, ``numpy.random.default_rng(ACTION_SEED)``.
RESET_SEED = 20240601
ACTION_SEED = 7


@dataclass(frozen=True)
class Script:
    """A hand-written episode prefix: reset options that fix the first deal, then moves.

    Attributes:
        options: rule options of ``env(**options)``.
        reset_options: ``env.reset(seed=RESET_SEED, options=reset_options)``.
        moves: in order, an action label, or ``{"redeal": deal}``: ``env.redeal(deal)`` before the
            next action (a later hand's fixed deal). The trace ends with the record after the
            last move.
    """

    options: dict[str, Any]
    reset_options: dict[str, Any]
    moves: tuple[str | dict[str, Any], ...] = ()


def tricks(*rows: str) -> tuple[str, ...]:
    """The card labels of tricks written one per string in playing order, ``"AS 2C 7C 2D"``."""
    return tuple(card for row in rows for card in row.split())


#: Revoke mode (RULES.md §2.9, example CW-9), Classic Whist, default rules but ``allow_revoke``.
#: Hand 1 (dealer player_3, turn-up 2H: hearts trump) is played out without a revoke: player_0
#: wins the first 8 tricks with spades (8 tricks: 2 points to player_0+player_2), player_3 ruffs
#: the 9th and draws trumps (5 tricks) and holds A K Q J of hearts (4 honours: 4 points to
#: player_1+player_3); score 2 : 4. Hand 2 (dealer player_0, turn-up 9D: diamonds trump): player_2
#: holds 7C but plays 2H to the KC lead (a revoke, pending, announced nowhere); player_3 wins the
#: trick with AC and leads 4C; when player_2 follows with 7C the revoke is established: the hand
#: stops, its trick is not scored, player_0+player_2's score becomes 0 (2 -> 0), player_1+player_3
#: keep 4, and the same dealer (player_0) deals hand 3, which the trace shows before its first card.
REVOKE_SCRIPT = Script(
    options={"allow_revoke": True},
    reset_options={
        "dealer": "player_3",
        "turn_up": "2H",
        "hands": {
            "player_0": "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS".split(),
            "player_1": "2C 3C 4C 5C 6C 7C 8C 9C TC 3H 4H 5H 6H".split(),
            "player_2": "JC QC KC AC TD JD QD KD AD 7H 8H 9H TH".split(),
            "player_3": "2D 3D 4D 5D 6D 7D 8D 9D 2H JH QH KH AH".split(),
        },
    },
    moves=(
        *tricks(  # hand 1: player_0 leads spades, the others have none
            "AS 2C JC 2D", "KS 3C QC 3D", "QS 4C KC 4D", "JS 5C AC 5D",
            "TS 6C TD 6D", "9S 7C JD 7D", "8S 8C QD 8D", "7S 9C KD 9D",
            "6S TC AD 2H",  # player_3 ruffs
            "AH 5S 3H 7H", "KH 4S 4H 8H", "QH 3S 5H 9H", "JH 2S 6H TH",  # player_3 draws trumps
        ),
        {
            "redeal": {
                "turn_up": "9D",
                "hands": {
                    "player_0": "3C 5C 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD".split(),
                    "player_1": "6C KC 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS".split(),
                    "player_2": "7C 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH".split(),
                    "player_3": "2C 4C 8C 9C TC JC QC AC KD AD KS AS AH".split(),
                },
            }
        },
        *tricks(
            "KC 2H AC 3C",  # player_1 leads; player_2 revokes (holds 7C); player_3 wins
            "4C 5C 6C 7C",  # player_2 follows in clubs: the revoke is established at 7C
        ),
    ),
)

#: Game -> script name -> :class:`Script`.
SCRIPTS: dict[str, dict[str, Script]] = {"classic_whist": {"scripted_revoke": REVOKE_SCRIPT}}


def trace_names() -> list[tuple[str, str]]:
    """``(game, name)`` of every trace: the seeded option sets, then the scripts."""
    seeded = [(game, name) for game, sets in OPTION_SETS.items() for name in sets]
    return seeded + [(game, name) for game, scripts in SCRIPTS.items() for name in scripts]


def trace_path(game: str, name: str) -> Path:
    """Where the trace of ``game`` / ``name`` lives (the ``.json.gz`` one if it exists)."""
    plain_path = GOLDEN_DIR / f"{game}__{name}.json"
    gz = plain_path.with_suffix(".json.gz")
    return gz if gz.exists() and not plain_path.exists() else plain_path


def make_env(game: str, options: dict[str, Any]) -> Any:
    """``<game>_v<N>.env(**options)``, the wrapped env users get."""
    import whist_env

    return whist_env.GAMES[game].env(**options)


def plain(value: Any) -> Any:
    """``value`` as plain JSON types: numpy scalars and arrays unwrapped, tuples as lists, whole
    floats as ints."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return int(value) if value.is_integer() else value
    return value


def compact_infos(infos: dict[str, Any]) -> dict[str, Any]:
    """Every agent's info as JSON, ``{"*": info}`` when they are all equal (as they usually are)."""
    encoded = {agent: plain(info) for agent, info in infos.items()}
    values = list(encoded.values())
    if len(values) > 1 and all(v == values[0] for v in values[1:]):
        return {"*": values[0]}
    return encoded


class StepObserver:
    """Builds the record of the current iteration of an env (module docstring), before its action.

    Args:
        env: the wrapped env, reset.
        check: also check that the decoded blocks encode back to the exact vectors
            (``AssertionError`` if not): the recorder does, the replay skips it.
    """

    def __init__(self, env: Any, check: bool = False) -> None:
        raw = env.unwrapped
        self.env, self.raw, self.check = env, raw, check
        self.layout = raw.observation_layout()
        self.obs_size = max(sl.stop for sl in self.layout.values())
        self.state_layout = raw.state_layout()
        self.hidden_layout = {k: sl for k, sl in self.state_layout.items() if k not in self.layout}
        self.codecs = block_codecs(env, self.state_layout)

    def observe(self) -> dict[str, Any]:
        env, raw = self.env, self.raw
        obs, reward, _term, _trunc, _info = env.last()
        vector, state = obs["observation"], env.state()
        record: dict[str, Any] = {"agent": env.agent_selection}
        blocks = decode_blocks(self.codecs, self.layout, vector)
        hidden = decode_blocks(self.codecs, self.hidden_layout, state)
        record.update({f"obs.{k}": v for k, v in blocks.items()})
        record.update({f"state.{k}": v for k, v in hidden.items()})
        if state[: self.obs_size].tobytes() != vector.tobytes():
            seen = decode_blocks(self.codecs, self.layout, state)
            record["state.observation"] = {k: v for k, v in seen.items() if v != blocks[k]}
        if self.check:
            self.check_round_trip(vector, {**blocks, **hidden}, state)
        record["legal"] = [raw.action_label(int(a)) for a in np.flatnonzero(obs["action_mask"])]
        record["reward"] = plain(reward)
        record["rewards"] = {a: plain(r) for a, r in env.rewards.items()}
        record["terminations"] = [a for a, v in env.terminations.items() if v]
        record["truncations"] = [a for a, v in env.truncations.items() if v]
        record["infos"] = compact_infos(env.infos)
        # the JSON round trip gives the types a trace file reads back as (lists, not tuples)
        return json.loads(json.dumps(record))

    def check_round_trip(self, vector: np.ndarray, blocks: dict[str, Any], state: np.ndarray) -> None:
        again = encode_blocks(self.codecs, self.layout, blocks, self.obs_size)
        assert again.tobytes() == vector.tobytes(), "decoded observation blocks do not encode back to the observation"
        tail = encode_blocks(self.codecs, self.state_layout, blocks, state.size)
        assert tail[self.obs_size :].tobytes() == state[self.obs_size :].tobytes(), "decoded state blocks do not encode back"


def header(game: str, name: str, env: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The entries of a trace before its steps (after ``env.reset``)."""
    from whist_env.versions import env_id

    raw = env.unwrapped
    first = env.observe(env.agent_selection)
    return {
        "game": game,
        "name": name,
        "env_id": env_id(game),
        "options": options,
        "agents": list(env.possible_agents),
        "observation": {"dtype": str(first["observation"].dtype), "shape": list(first["observation"].shape)},
        "action_mask": {"dtype": str(first["action_mask"].dtype), "shape": list(first["action_mask"].shape)},
        "layout": {k: [sl.start, sl.stop] for k, sl in raw.observation_layout().items()},
        "state_layout": {k: [sl.start, sl.stop] for k, sl in raw.state_layout().items() if k not in raw.observation_layout()},
    }


def record_seeded(game: str, name: str, options: dict[str, Any]) -> dict[str, Any]:
    """Play the seeded episode of ``game`` under ``options`` (module docstring); its trace."""
    env = make_env(game, options)
    env.reset(seed=RESET_SEED)
    head = header(game, name, env, options) | {"reset_seed": RESET_SEED, "action_seed": ACTION_SEED}
    observer = StepObserver(env, check=True)
    rng = np.random.default_rng(ACTION_SEED)
    steps = []
    for _agent in env.agent_iter():
        record = {"step": len(steps)} | observer.observe()
        mask = env.last()[0]["action_mask"]
        if record["agent"] in record["terminations"] or record["agent"] in record["truncations"]:
            action = None
        else:
            legal = np.flatnonzero(mask)
            action = int(legal[int(rng.integers(len(legal)))])
        record["action"] = None if action is None else env.unwrapped.action_label(action)
        steps.append(record)
        env.step(action)
    return head | {"num_steps": len(steps), "steps": steps}


def record_script(game: str, name: str, script: Script) -> dict[str, Any]:
    """Play ``script`` (module docstring); its trace."""
    env = make_env(game, script.options)
    env.reset(seed=RESET_SEED, options=script.reset_options)
    head = header(game, name, env, script.options) | {"reset_seed": RESET_SEED, "reset_options": script.reset_options}
    observer = StepObserver(env, check=True)
    steps: list[dict[str, Any]] = []
    redeal = None
    for move in [*script.moves, None]:
        if isinstance(move, dict):
            redeal = move["redeal"]
            env.unwrapped.redeal(redeal)
            continue
        record: dict[str, Any] = {"step": len(steps)}
        if redeal is not None:
            record["redeal"], redeal = redeal, None
        record |= observer.observe()
        record["action"] = move
        steps.append(record)
        if move is not None:
            env.step(env.unwrapped.action_id(move))
    return head | {"num_steps": len(steps), "steps": steps}


def record_trace(game: str, name: str) -> dict[str, Any]:
    """The trace of ``game`` / ``name`` (an option set or a script), recorded afresh."""
    if name in SCRIPTS.get(game, {}):
        return record_script(game, name, SCRIPTS[game][name])
    return record_seeded(game, name, OPTION_SETS[game][name])


def dumps(trace: dict[str, Any]) -> str:
    """The trace as JSON text: one header entry per line, then one step field per line (diffs of
    a changed trace show the block that changed)."""
    head = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in trace.items() if k != "steps"]
    steps = ["{" + ",\n ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in step.items()) + "}" for step in trace["steps"]]
    return "{\n" + ",\n".join(head) + ',\n"steps": [\n' + ",\n".join(steps) + "\n]}\n"


def load_trace(path: Path) -> dict[str, Any]:
    """A trace written by :func:`write_trace` (plain or gzipped JSON)."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    return json.loads(path.read_text(encoding="utf-8"))


def write_trace(trace: dict[str, Any]) -> Path:
    """Write ``trace`` to its file (gzipped above :data:`GZIP_ABOVE` bytes), removing the other form."""
    text = dumps(trace).encode("utf-8")
    plain_path = GOLDEN_DIR / f"{trace['game']}__{trace['name']}.json"
    gz = plain_path.with_suffix(".json.gz")
    if len(text) > GZIP_ABOVE:
        # mtime=0: the same trace gives the same bytes, so re-recording an unchanged env changes no file.
        with open(gz, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
            f.write(text)
        plain_path.unlink(missing_ok=True)
        return gz
    plain_path.write_bytes(text)
    gz.unlink(missing_ok=True)
    return plain_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden.record", description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", metavar="GAME", help="record only these games (default: all)")
    args = parser.parse_args(argv)
    names = trace_names()
    chosen = args.only or list(OPTION_SETS)
    unknown = sorted(set(chosen) - set(OPTION_SETS))
    if unknown:
        parser.error(f"unknown game(s) {unknown}: one of {list(OPTION_SETS)}")
    for game, name in names:
        if game in chosen:
            path = write_trace(record_trace(game, name))
            print(f"{path.relative_to(GOLDEN_DIR.parent.parent)}: {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
