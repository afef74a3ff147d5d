"""Golden playthroughs: one seeded episode per game and option set, step by step, pinning each env version.

A trace (``tests/golden/<game>__<set>.json``, or ``.json.gz`` when the JSON passes
:data:`GZIP_ABOVE` bytes) holds the game, its env id, the options, the seeds, the observation's and
mask's dtype and shape, and one record per iteration of ``env.agent_iter()`` on ``env(**options)``:

* ``agent``: the acting agent (``agent_selection``);
* ``obs``: SHA-256 of the acting agent's observation vector bytes (as ``last()`` returns it);
* ``legal``: the action ids its mask allows (a list of ints);
* ``reward``: its cumulative reward as ``last()`` returns it; ``rewards``: ``env.rewards`` (every agent);
* ``terminations``, ``truncations``: every agent's flags;
* ``infos``: every agent's info in JSON form (``{"*": info}`` when all agents share one info;
  a numpy array becomes ``{"sha256", "dtype", "shape"}``);
* ``state``: SHA-256 of ``env.state()`` (the global state);
* ``action``: the action taken (``None`` for a done agent).

Actions are drawn uniformly among the legal ones by a seeded ``numpy.random.Generator`` (never by
``agents/``, so a change to an agent never touches a trace); a replay feeds the recorded actions.

Re-record every trace after a deliberate change (docs/versioning.md) with
``python -m tests.golden.record`` from the repository root (``--only classic_whist`` for one game).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

GOLDEN_DIR = Path(__file__).resolve().parent

#: A trace whose JSON is longer than this (bytes) is stored gzipped.
GZIP_ABOVE = 200_000

#: Game -> option set name -> rule options. Each game has its defaults and at least one set that
#: changes play or scoring.
OPTION_SETS: dict[str, dict[str, dict[str, Any]]] = {
    "classic_whist": {
        "defaults": {},
        "no_honours_fixed_trump": {"honours": False, "trump_mode": "fixed_rotation", "reward": "win_loss"},
        "hand_score_dealer_2": {"episode": "hand", "reward": "score", "first_dealer": 2},
        # Revoke mode over one hand (a whole game of uniform play revokes in nearly every hand).
        "revoke_hand": {"allow_revoke": True, "episode": "hand", "reward": "score"},
    },
    "minnesota_whist": {
        "defaults": {},
        "doubling_right_two_hands": {"doubling_variation": True, "grand_leader": "right", "num_hands": 2, "reward": "score"},
    },
    "german_whist": {
        "defaults": {},
        "over_six_non_dealer": {"scoring": "over_six", "first_leader": "non_dealer", "target_score": 3},
    },
    "romanian_whist": {
        "defaults": {},
        "five_players_8_1_8": {"num_players": 5, "schedule": "8-1-8", "trump_on_one_card_deals": True, "streak_length": 3},
    },
    "bid_whist": {
        "defaults": {},
        "no_kitty_no_jokers": {"kitty": False, "downtown_aces": "bad", "no_trump_double": False, "episode": "hand"},
        "wild_deuces_sport_kitty": {
            "deuces_wild": True,
            "jokers_high": True,
            "sport_kitty": True,
            "big_joker": "black",
            "dealer_can_match": True,
            "episode": "hand",
        },
    },
    "cutthroat_whist": {
        "defaults": {},
        "deck52_two_hands": {"deck": "52", "num_hands": 2},
        "jokers_high_hand": {"jokers_high": True, "big_joker": "black", "episode": "hand"},
    },
}

#: Seeds of every trace: ``env.reset(seed=RESET_SEED)``, ``numpy.random.default_rng(ACTION_SEED)``.
RESET_SEED = 20240601
ACTION_SEED = 7


def sha256(array: np.ndarray) -> str:
    """Hex SHA-256 of a numpy array's bytes (C order)."""
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def to_json(value: Any) -> Any:
    """``value`` as plain JSON types: numpy scalars unwrapped, tuples as lists, arrays hashed."""
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return {"sha256": sha256(value), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def compact_infos(infos: dict[str, Any]) -> dict[str, Any]:
    """Every agent's info as JSON, ``{"*": info}`` when they are all equal (as they usually are)."""
    encoded = {agent: to_json(info) for agent, info in infos.items()}
    values = list(encoded.values())
    if len(values) > 1 and all(v == values[0] for v in values[1:]):
        return {"*": values[0]}
    return encoded


def trace_path(game: str, set_name: str) -> Path:
    """Where the trace of ``game`` / ``set_name`` lives (the ``.json.gz`` one if it exists)."""
    plain = GOLDEN_DIR / f"{game}__{set_name}.json"
    gz = plain.with_suffix(".json.gz")
    return gz if gz.exists() and not plain.exists() else plain


def make_env(game: str, options: dict[str, Any]) -> Any:
    """``<game>_v<N>.env(**options)``, the wrapped env users get."""
    import whist_env

    return whist_env.GAMES[game].env(**options)


def observe_step(env: Any) -> dict[str, Any]:
    """The record of the current iteration, before its action: what ``last()`` and the env show."""
    obs, reward, _term, _trunc, _info = env.last()
    return {
        "agent": env.agent_selection,
        "obs": sha256(obs["observation"]),
        "legal": [int(a) for a in np.flatnonzero(obs["action_mask"])],
        "reward": float(reward),
        "rewards": {a: float(r) for a, r in env.rewards.items()},
        "terminations": {a: bool(v) for a, v in env.terminations.items()},
        "truncations": {a: bool(v) for a, v in env.truncations.items()},
        "infos": compact_infos(env.infos),
        "state": sha256(env.state()),
    }


def record_trace(game: str, set_name: str, options: dict[str, Any]) -> dict[str, Any]:
    """Play one seeded episode of ``game`` under ``options``, returning its trace (module docstring)."""
    from whist_env.versions import env_id

    env = make_env(game, options)
    env.reset(seed=RESET_SEED)
    rng = np.random.default_rng(ACTION_SEED)
    first_obs = env.observe(env.agent_selection)
    steps = []
    for _agent in env.agent_iter():
        step = observe_step(env)
        if step["terminations"][step["agent"]] or step["truncations"][step["agent"]]:
            action = None
        else:
            legal = step["legal"]
            action = legal[int(rng.integers(len(legal)))]
        step["action"] = action
        steps.append(step)
        env.step(action)
    return {
        "game": game,
        "option_set": set_name,
        "env_id": env_id(game),
        "options": options,
        "reset_seed": RESET_SEED,
        "action_seed": ACTION_SEED,
        "observation": {"dtype": str(first_obs["observation"].dtype), "shape": list(first_obs["observation"].shape)},
        "action_mask": {"dtype": str(first_obs["action_mask"].dtype), "shape": list(first_obs["action_mask"].shape)},
        "num_steps": len(steps),
        "steps": steps,
    }


def dumps(trace: dict[str, Any]) -> str:
    """The trace as JSON text, one step per line (readable diffs)."""
    head = {k: v for k, v in trace.items() if k != "steps"}
    lines = [json.dumps(head, sort_keys=True)[:-1] + ', "steps": [']
    lines += [json.dumps(step, sort_keys=True) + ("," if i < len(trace["steps"]) - 1 else "") for i, step in enumerate(trace["steps"])]
    lines.append("]}")
    return "\n".join(lines) + "\n"


def load_trace(path: Path) -> dict[str, Any]:
    """A trace written by :func:`write_trace` (plain or gzipped JSON)."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    return json.loads(path.read_text(encoding="utf-8"))


def write_trace(trace: dict[str, Any]) -> Path:
    """Write ``trace`` to its file (gzipped above :data:`GZIP_ABOVE` bytes), removing the other form."""
    text = dumps(trace)
    plain = GOLDEN_DIR / f"{trace['game']}__{trace['option_set']}.json"
    gz = plain.with_suffix(".json.gz")
    if len(text.encode("utf-8")) > GZIP_ABOVE:
        # mtime=0: the same trace gives the same bytes, so re-recording an unchanged env changes no file.
        with open(gz, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
            f.write(text.encode("utf-8"))
        plain.unlink(missing_ok=True)
        return gz
    plain.write_text(text, encoding="utf-8")
    gz.unlink(missing_ok=True)
    return plain


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden.record", description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", metavar="GAME", help="record only these games (default: all)")
    args = parser.parse_args(argv)
    games = args.only or list(OPTION_SETS)
    unknown = sorted(set(games) - set(OPTION_SETS))
    if unknown:
        parser.error(f"unknown game(s) {unknown}: one of {list(OPTION_SETS)}")
    for game in games:
        for set_name, options in OPTION_SETS[game].items():
            path = write_trace(record_trace(game, set_name, options))
            print(f"{path.relative_to(GOLDEN_DIR.parent.parent)}: {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
