"""A teacher dataset from game records: the decisions of chosen players (``"human"`` by default)
in recorded games (``whist teach --records DIR``), so that a network can learn from people's
games as from a teacher's.

Every record of ``DIR/*.jsonl`` (docs/records.md; ``whist serve --records``, ``whist play``,
``whist eval --records``) is first replayed in full (:func:`whist_env.records.replay_record`: a
record that does not replay, or whose game or rule options differ from the first record's, is
refused, naming its file and line). Then its episode is played again through the game's raw env,
and every decision is stored as ``whist teach`` stores it (training/learn/teach.py, the same
shard format and manifest): the observation, mask, state, the action played, the rewards, the
side's tricks. The ``label`` is the action played where the acting seat's player (the record's
``players``) is one of ``players``, else -1: a warm start trains on those decisions only, as on
DAgger's labelled ones. Records are taken in file-name order, then line order; episodes are
records, ``episodes_per_shard`` to a shard.

The manifest's ``teacher`` is ``"records:<label>,..."`` and ``seed`` is ``null``; ``records``
lists each file's name and sha256 and the players labelled. The dataset is made whole in one run
(records are few; a rerun into the same folder makes it again).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from training.errors import CommandError
from training.evaluation.bidding import json_ready
from training.evaluation.store import file_sha256
from training.learn.teach import FORMAT, FORMAT_VERSION, MANIFEST, DecisionRows, _versions, _write_manifest, write_shard


def record_files(folder: str | Path) -> list[Path]:
    """The record files of ``folder``: ``*.jsonl``, sorted by name.

    Raises:
        FileNotFoundError: no such folder, or it holds no ``.jsonl`` file.
    """
    path = Path(folder)
    if not path.is_dir():
        raise FileNotFoundError(f"--records {path}: no such folder")
    files = sorted(path.glob("*.jsonl"))
    if not files:
        raise FileNotFoundError(f"--records {path}: no game records (*.jsonl) in it")
    return files


def dataset_from_records(folder: str | Path, out: str | Path, players: Sequence[str] = ("human",),
                         episodes_per_shard: int = 100) -> dict[str, Any]:
    """Make the dataset of the records in ``folder`` in ``out`` (module docstring); returns its manifest.

    Args:
        folder: a folder of game record files (``*.jsonl``).
        out: the dataset folder: new or empty, or a dataset made from records before (made again).
        players: the player labels whose decisions are labelled (the records' ``players`` values).
        episodes_per_shard: records per shard (>= 1).
    Raises:
        FileNotFoundError: no such folder or no record in it.
        ValueError: a record that does not replay, of another game or other rule options than the
            first, no decision of ``players`` in any record, ``episodes_per_shard < 1``, or ``out``
            holding something else than a dataset made from records.
    """
    from whist_env import GAMES
    from whist_env.provenance import source_commit
    from whist_env.records import read_records, replay_record
    from whist_env.rules.options import options_dict

    if not isinstance(episodes_per_shard, int) or episodes_per_shard < 1:
        raise ValueError(f"episodes per shard must be an integer >= 1, got {episodes_per_shard!r}")
    labels = [str(p) for p in players]
    if not labels:
        raise ValueError("name at least one player whose decisions are labelled (e.g. human)")
    began = time.perf_counter()
    records: list[tuple[str, dict[str, Any]]] = []
    for path in record_files(folder):
        for line, record in enumerate(read_records(path), start=1):
            where = f"{path.name} line {line}"
            try:
                report = replay_record(record)
            except ValueError as err:
                raise ValueError(f"{where}: {err}") from None
            if not report.ok:
                raise ValueError(f"{where} does not replay at action {report.step}: {report.message}")
            if records and (record["game"], record.get("options") or {}) != (records[0][1]["game"], records[0][1].get("options") or {}):
                first = records[0]
                raise ValueError(f"{where} is {record['game']} with options {record.get('options') or {}}, "
                                 f"{first[0]} is {first[1]['game']} with {first[1].get('options') or {}}: one dataset holds one game")
            records.append((where, record))
    game, options = records[0][1]["game"], dict(records[0][1].get("options") or {})
    env = GAMES[game].raw_env(**options)
    agent0 = env.possible_agents[0]
    manifest: dict[str, Any] = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "game": game, "options": json_ready(options_dict(env.game.options)),
        "teacher": "records:" + ",".join(labels), "student": None, "label_share": 1.0, "double_dummy": False, "seed": None,
        "episodes_per_shard": episodes_per_shard,
        "obs_size": int(env.observation_space(agent0)["observation"].shape[0]), "state_size": int(env.state_space.shape[0]),
        "num_actions": int(env.action_space(agent0).n), "commit": source_commit(), "versions": _versions(),
        "records": {"players": labels, "files": [{"file": p.name, "sha256": file_sha256(p)} for p in record_files(folder)]},
        "shards": [],
    }
    folder_out = _fresh_dataset_folder(Path(out))
    staging = Path(tempfile.mkdtemp(prefix=".records-", dir=folder_out))
    try:
        for index, start in enumerate(range(0, len(records), episodes_per_shard)):
            chunk = records[start : start + episodes_per_shard]
            arrays = _play(env, chunk, labels)
            name = f"shard-{index:05d}.npz"
            digest = write_shard(staging / name, arrays)
            manifest["shards"].append({"index": index, "file": name, "episodes": len(chunk), "decisions": int(len(arrays["action"])),
                                       "labelled": int((arrays["label"] >= 0).sum()), "deal_seeds": None, "sha256": digest})
        if not sum(int(s["labelled"]) for s in manifest["shards"]):
            raise ValueError(f"no decision of {labels} in the records of {folder}; their players are "
                             f"{sorted({p for _, r in records for p in r['players'].values()})}")
        for shard in manifest["shards"]:
            (staging / shard["file"]).replace(folder_out / shard["file"])
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    manifest["wall_seconds"] = time.perf_counter() - began
    _write_manifest(folder_out, manifest)
    return manifest


def _fresh_dataset_folder(out: Path) -> Path:
    """``out`` made ready: new, empty, or a records dataset (its shards and manifest removed)."""
    from training.learn.teach import read_manifest

    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    if (out / MANIFEST).exists():
        old = read_manifest(out)
        if not str(old.get("teacher", "")).startswith("records:"):
            raise ValueError(f"{out} holds a dataset of teacher {old.get('teacher')!r}, not one made from records; choose another --out")
        for shard in old.get("shards", []):
            (out / shard["file"]).unlink(missing_ok=True)
        (out / MANIFEST).unlink()
    elif any(out.iterdir()):
        raise ValueError(f"--out {out} is a folder that holds files but no teacher dataset ({MANIFEST}); choose an empty or new folder")
    return out


def _play(env: Any, records: Sequence[tuple[str, dict[str, Any]]], labels: Sequence[str]) -> dict[str, Any]:
    """The shard arrays of ``records`` played again through ``env`` (their decisions in order)."""
    rows = DecisionRows(env.action_space(env.possible_agents[0]).n)
    for episode, (_, record) in enumerate(records):
        env.reset(seed=record.get("seed"), options=record.get("reset_options"))
        rows.start_episode(env, episode)
        for entry in record["actions"]:
            agent = entry["agent"]
            label = int(entry["action"]) if record["players"].get(agent) in labels else -1
            rows.add(env, agent, env.observe(agent), int(entry["action"]), label)
            env.step(int(entry["action"]))
            rows.after_step(env)
        rows.end_episode()
    return rows.arrays()


def run_records(args: Any) -> int:
    """``whist teach --records DIR``: the dataset of the recorded games (:func:`dataset_from_records`)."""
    if args.student is not None or args.decisions is not None:
        raise CommandError("--records makes the dataset of the recorded games: --student and --decisions do not apply")
    try:
        manifest = dataset_from_records(args.records, args.out, args.records_players, args.shard_episodes)
    except (ValueError, FileNotFoundError) as err:
        raise CommandError(str(err)) from None
    episodes = sum(int(s["episodes"]) for s in manifest["shards"])
    print(f"{args.out}: {manifest['decisions']:,} decisions of {episodes:,} recorded {manifest['game']} episodes "
          f"({manifest['labelled']:,} labelled: {', '.join(manifest['records']['players'])}) in {len(manifest['shards'])} shard(s)")
    return 0
