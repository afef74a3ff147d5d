"""Game records: a complete, replayable log of one episode, and its replay check.

A record is a JSON-serialisable dict (schema ``"whist-env/game-record"``, ``version`` 1)::

    {
      "schema": "whist-env/game-record", "version": 1,
      "game": "classic_whist", "options": {...rule options...},
      "seed": 7, "reset_options": {...fixed first deal or null...},
      "players": {"player_0": "heuristic", ...},          # who sat where (labels)
      "hands": [                                          # one entry per hand dealt
        {"hand_number": 0, "deal": {"hands": {agent: [cards]}, "dealer": agent, <extras>},
         "points": {agent: side points of the hand},
         "scores": {agent: side score after it (0 again when it ended a game of a match)},
         "tricks": [{"leader": agent, "winner": agent, "cards": {agent: card}}, ...]}
      ],
      "actions": [{"step": 0, "agent": "player_1", "action": 38, "label": "KH",
                   "phase": "play", "hand_number": 0}, ...],
      "result": {"winners": [agents], "scores": {agent: score}, "returns": {agent: sum of rewards},
                 "terminated": true, "truncated": false, "hands_played": 3}
    }

The record holds every player's cards (it is an omniscient log, for replays and audits, never
for an agent). :func:`replay_record` plays the actions again through the environment from the
same seed and reset options and reports the first step where anything differs.
Game records are stored one per line in JSON Lines files (:func:`write_records`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = "whist-env/game-record"
VERSION = 1


class GameRecorder:
    """Builds a record while an episode is played on a raw env.

    Usage: ``rec = GameRecorder(raw_env, game, options, seed, reset_options, players)``;
    call ``raw_env.reset(...)`` then :meth:`start`; after every ``raw_env.step(action)`` with a
    live agent call :meth:`after_step`; at the end :meth:`finish` returns the record.
    """

    def __init__(self, raw_env: Any, game: str, options: Mapping[str, Any], seed: int | None,
                 reset_options: Mapping[str, Any] | None, players: Mapping[str, str]) -> None:
        self.env = raw_env
        self.record: dict[str, Any] = {
            "schema": SCHEMA,
            "version": VERSION,
            "game": game,
            "options": _plain(dict(options)),
            "seed": seed,
            "reset_options": _plain(dict(reset_options)) if reset_options else None,
            "players": dict(players),
            "hands": [],
            "actions": [],
            "result": None,
        }
        self._returns = dict.fromkeys(raw_env.possible_agents, 0.0)

    def start(self) -> None:
        """Record the first hand's deal; call right after ``raw_env.reset``."""
        self._open_hand()

    def _open_hand(self) -> None:
        self.record["hands"].append(
            {"hand_number": self.env.game.hand_number, "deal": self.env.current_deal(), "tricks": [], "points": None, "scores": None}
        )

    def pre_step(self, agent: str, action: int) -> dict[str, Any]:
        """The action entry for ``agent`` about to play ``action`` (call before ``step``)."""
        g = self.env.game
        return {"step": len(self.record["actions"]), "agent": agent, "action": int(action),
                "label": self.env.action_label(int(action)), "phase": g.phase, "hand_number": g.hand_number}

    def after_step(self, entry: Mapping[str, Any]) -> None:
        """Record the step described by ``entry`` (from :meth:`pre_step`) once it was applied."""
        env, g = self.env, self.env.game
        self.record["actions"].append(dict(entry))
        for a, r in env.rewards.items():
            self._returns[a] += float(r)
        info = env.infos[entry["agent"]]
        hand = self.record["hands"][-1]
        if "last_trick" in info:
            hand["tricks"].append(dict(info["last_trick"]))
        if g.hand_number != entry["hand_number"] or g.done or g.truncated:
            hand["points"] = dict(info["hand_points"])
            hand["scores"] = dict(info["score"])
            if g.hand_number != entry["hand_number"]:
                self._open_hand()

    def finish(self) -> dict[str, Any]:
        """The complete record (adds the result)."""
        env, g = self.env, self.env.game
        if self.record["hands"] and self.record["hands"][-1]["points"] is None:
            self.record["hands"].pop()  # the episode stopped before this hand was played
        self.record["result"] = {
            "winners": [env.possible_agents[s] for s in g.winners],
            "scores": {a: g.scores[g.side_of(i)] for i, a in enumerate(env.possible_agents)},
            "returns": dict(self._returns),
            "terminated": bool(g.done),
            "truncated": bool(g.truncated),
            "hands_played": len(self.record["hands"]),
        }
        return self.record


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value


def record_episode(env_module: Any, game: str, options: Mapping[str, Any], seed: int,
                   reset_options: Mapping[str, Any] | None, policies: Mapping[str, Any],
                   labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Play one episode with ``policies`` (agent name → object with ``act(obs, info_state)``)
    and return its record. Raises ``ValueError`` when a policy chooses an illegal action."""
    env = env_module.raw_env(**options)
    env.reset(seed=seed, options=dict(reset_options) if reset_options else None)
    players = labels or {a: getattr(p, "name", type(p).__name__) for a, p in policies.items()}
    rec = GameRecorder(env, game, options, seed, reset_options, players)
    rec.start()
    g = env.game
    while not (g.done or g.truncated):
        agent = env.agent_selection
        action = int(policies[agent].act(env.observe(agent), env.information_state(agent)))
        entry = rec.pre_step(agent, action)
        env.step(action)
        rec.after_step(entry)
    return rec.finish()


@dataclass(frozen=True)
class ReplayReport:
    """Outcome of :func:`replay_record`.

    Attributes:
        ok: the replay reproduced every action, trick, hand score and the result.
        step: index of the first differing action (``None`` when ok, or when only the final
            result differs, then ``len(actions)``).
        message: what differed, or ``"ok"``.
    """

    ok: bool
    step: int | None
    message: str


def replay_record(record: Mapping[str, Any]) -> ReplayReport:
    """Replay ``record`` through its game's raw env and compare everything it says.

    Raises:
        ValueError: when the record is not a game record of a known schema version or game.
    """
    from whist_env import GAMES

    if record.get("schema") != SCHEMA or record.get("version") != VERSION:
        raise ValueError(f"not a {SCHEMA} version {VERSION} record: schema={record.get('schema')!r}, version={record.get('version')!r}")
    if record.get("game") not in GAMES:
        raise ValueError(f"unknown game {record.get('game')!r}; games: {sorted(GAMES)}")
    env = GAMES[record["game"]].raw_env(**record["options"])
    env.reset(seed=record["seed"], options=record["reset_options"])
    g = env.game
    hands = {h["hand_number"]: h for h in record["hands"]}
    trick_index: dict[int, int] = {}
    for entry in record["actions"]:
        i = entry["step"]
        if g.done or g.truncated:
            return ReplayReport(False, i, f"step {i}: the game already ended, but the record has more actions")
        if entry["hand_number"] == g.hand_number and g.hand_number in hands and trick_index.get(g.hand_number) is None:
            trick_index[g.hand_number] = 0
            if env.current_deal() != hands[g.hand_number]["deal"]:
                return ReplayReport(False, i, f"step {i}: hand {g.hand_number} was dealt differently from the record")
        if env.agent_selection != entry["agent"]:
            return ReplayReport(False, i, f"step {i}: {env.agent_selection} is to act, the record says {entry['agent']}")
        if g.phase != entry["phase"] or g.hand_number != entry["hand_number"]:
            return ReplayReport(False, i, f"step {i}: phase/hand {g.phase}/{g.hand_number}, record {entry['phase']}/{entry['hand_number']}")
        try:
            label = env.action_label(entry["action"])
        except ValueError as err:
            return ReplayReport(False, i, f"step {i}: {err}")
        if label != entry["label"]:
            return ReplayReport(False, i, f"step {i}: action {entry['action']} is {label!r}, the record says {entry['label']!r}")
        hand_number = g.hand_number
        try:
            env.step(entry["action"])
        except ValueError as err:
            return ReplayReport(False, i, f"step {i}: {err}")
        info = env.infos[entry["agent"]]
        rec_hand = hands.get(hand_number)
        if "last_trick" in info:
            k = trick_index.get(hand_number, 0)
            tricks = rec_hand["tricks"] if rec_hand else []
            if k >= len(tricks) or tricks[k] != info["last_trick"]:
                return ReplayReport(False, i, f"step {i}: trick {k} of hand {hand_number} is {info['last_trick']}, the record differs")
            trick_index[hand_number] = k + 1
        if g.hand_number != hand_number or g.done or g.truncated:
            if rec_hand is None or rec_hand["points"] != info["hand_points"]:
                return ReplayReport(False, i, f"step {i}: hand {hand_number} scored {info['hand_points']}, the record says {rec_hand and rec_hand['points']}")
    result = record["result"] or {}
    winners = [env.possible_agents[s] for s in g.winners]
    scores = {a: g.scores[g.side_of(s)] for s, a in enumerate(env.possible_agents)}
    n = len(record["actions"])
    if winners != result.get("winners") or scores != result.get("scores"):
        return ReplayReport(False, n, f"result: winners {winners} scores {scores}, the record says {result.get('winners')} {result.get('scores')}")
    if bool(g.done) != bool(result.get("terminated")) or bool(g.truncated) != bool(result.get("truncated")):
        return ReplayReport(False, n, "result: the episode ended differently from the record")
    return ReplayReport(True, None, "ok")


def write_records(records: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Append records to a JSON Lines file (one record per line); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    return path


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Records of a JSON Lines file. Raises ``ValueError`` naming the line of a malformed record."""
    out = []
    with Path(path).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise ValueError(f"{path}:{n}: not a JSON record ({err})") from None
    return out
