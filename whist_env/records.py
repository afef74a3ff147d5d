"""Game records: a complete, replayable log of one episode, and its replay check.

Schema ``"whist-env/game-record"``, ``version`` 1 (docs/records.md has the full description).
A record is a JSON-serialisable dict::

    {
      "schema": "whist-env/game-record", "version": 1,
      "game": "classic_whist",                    # a key of whist_env.GAMES
      "options": {...},                           # rule options passed to raw_env(**options)
      "seed": 7,                                  # raw_env.reset(seed=...)
      "reset_options": {...} | null,              # raw_env.reset(options=...): a fixed first deal
      "players": {"player_0": "heuristic", ...},  # who sat where (labels, free text)
      "meta": {...},                              # optional, free-form: match, deal index, date ...
      "hands": [                                  # one entry per hand played, in order
        {"hand_number": 0,
         "deal": {"hands": {agent: [card, ...]}, "dealer": agent, <extras>},  # raw_env.current_deal()
         "tricks": [{"leader": agent, "winner": agent, "cards": {agent: card}}, ...],
         "points": {agent: points of its side in this hand},
         "scores": {agent: its side's score after the hand (0 again when the hand ended a game of a match)}}
      ],
      "actions": [                                # every action of the episode, in order
        {"step": 0, "agent": "player_1", "action": 38, "label": "KH",
         "phase": "play", "hand_number": 0, "check": "3f9a0c1d2b4e"}, ...
      ],
      "result": {"winners": [agent, ...], "scores": {agent: final score}, "returns": {agent: sum of rewards},
                 "terminated": true, "truncated": false, "hands_played": 3}
    }

Cards are card texts (``"QH"``, ``"TC"``, ``"JKR"``), agents ``player_0 …``, points and scores
are game points of the agent's side (partners show the same value), ``returns`` the sum of the
environment's rewards. ``step`` is the index of the action in ``actions``; ``phase`` and
``hand_number`` are the env's state *before* the action (``hand_number`` counts from 0 in
the record; messages and pages number hands and tricks from 1); ``check`` (optional) is
:func:`table_digest` of the env *after* it, so that a changed action is caught at its own step.
``meta`` may be absent.

The record holds every player's cards (it is an omniscient log, for replays and audits, never
for an agent). :func:`replay_record` plays the actions again through the environment from the
same seed and reset options and reports the first step where anything differs: the deal, the
agent to act, the phase, an action's label, a card that disagrees with the recorded trick, the
table after the action (``check``), a trick's cards/leader/winner, a hand's points or scores, or
the result (reported at step ``len(actions)``).

Records are stored one per line in JSON Lines files (:func:`write_records`, :func:`read_records`);
``whist eval --records DIR`` writes one file per match, ``whist play`` one file per game, and
``whist replay FILE --html out.html`` turns one into a page.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whist_env.envs.policy_action import policy_action

SCHEMA = "whist-env/game-record"
VERSION = 1


def table_digest(raw_env: Any) -> str:
    """A 12-hex-digit digest of the table of ``raw_env`` now: phase, hand number, agent to act,
    trump, every hand, the trick in progress, tricks won, scores, the game's public facts and each
    seat's private facts (a bid card, discards).

    Two envs with the same digest are, for a replay check, in the same state; it is stored as
    each action's ``check`` so that a changed action is reported at its own step.
    """
    g = raw_env.game
    state = [
        g.phase,
        g.hand_number,
        None if g.done or g.truncated else raw_env.agent_selection,
        g.trump,
        [int(h) for h in g.hands],
        [[int(s), int(c)] for s, c in g.trick],
        [int(t) for t in g.tricks_won],
        [int(x) for x in g.scores],
        _plain(g.public_state()),
        [_plain(g.private_state(seat)) for seat in range(g.num_players)],
    ]
    text = json.dumps(state, separators=(",", ":"), sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


class GameRecorder:
    """Builds a record while an episode is played on a raw env.

    Usage: ``rec = GameRecorder(raw_env, game, options, seed, reset_options, players)``;
    call ``raw_env.reset(seed=seed, options=reset_options)`` then :meth:`start`; around every
    ``raw_env.step(action)`` of a live agent call ``entry = rec.pre_step(agent, action)`` before
    and ``rec.after_step(entry)`` after; at the end :meth:`finish` returns the record.

    Args:
        raw_env: the unwrapped env the episode is played on.
        game: its game name (a key of ``whist_env.GAMES``).
        options: the rule options ``raw_env`` was built with (only those given, not defaults).
        seed, reset_options: the arguments of the ``reset`` call.
        players: agent -> label of whoever sat there.
        meta: optional free-form JSON-ready facts (match, deal index ...), stored as ``"meta"``.
    """

    def __init__(self, raw_env: Any, game: str, options: Mapping[str, Any], seed: int | None,
                 reset_options: Mapping[str, Any] | None, players: Mapping[str, str],
                 meta: Mapping[str, Any] | None = None) -> None:
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
        if meta is not None:
            self.record["meta"] = _plain(dict(meta))
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
        self.record["actions"].append({**entry, "check": table_digest(env)})
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
        action = policy_action(policies[agent], env, agent)
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


#: Required fields of a record, of each of its hands and of each of its actions, with their types.
_RECORD_FIELDS = {"game": str, "options": (dict, type(None)), "seed": (int, type(None)), "reset_options": (dict, type(None)),
                  "players": dict, "hands": list, "actions": list, "result": dict}
_HAND_FIELDS = {"hand_number": int, "deal": dict, "tricks": list, "points": dict}
_ACTION_FIELDS = {"agent": str, "action": int, "label": str, "phase": str, "hand_number": int}
#: Optional fields, checked for their type when present.
_OPTIONAL_ACTION_FIELDS = {"step": int, "check": str}


def _check_fields(item: Any, fields: Mapping[str, Any], where: str) -> None:
    if not isinstance(item, Mapping):
        raise ValueError(f"malformed record: {where} is a {type(item).__name__}, not an object")
    for key, kind in fields.items():
        if key not in item:
            raise ValueError(f"malformed record: {where} has no {key!r} field")
        value = item[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise ValueError(f"malformed record: {where} field {key!r} is {value!r}, the schema wants {getattr(kind, '__name__', kind)}")


def check_record(record: Any) -> None:
    """Check that ``record`` has the shape of a game record (module docstring): the schema and
    version, and every required field of the record, of each hand and of each action with its
    JSON type. It does not replay anything (:func:`replay_record` does).

    Raises:
        ValueError: naming the first missing or ill-typed field (``malformed record: ...``), a
            wrong schema or version, or an unknown game.
    """
    from whist_env import GAMES

    if not isinstance(record, Mapping) or record.get("schema") != SCHEMA or record.get("version") != VERSION:
        got = (record.get("schema"), record.get("version")) if isinstance(record, Mapping) else (type(record).__name__, None)
        raise ValueError(f"not a {SCHEMA} version {VERSION} record: schema={got[0]!r}, version={got[1]!r}")
    _check_fields(record, _RECORD_FIELDS, "the record")
    if record["game"] not in GAMES:
        raise ValueError(f"unknown game {record['game']!r}; games: {sorted(GAMES)}")
    for k, hand in enumerate(record["hands"]):
        _check_fields(hand, _HAND_FIELDS, f"hands[{k}]")
        for t, trick in enumerate(hand["tricks"]):
            _check_fields(trick, {"cards": dict}, f"hands[{k}].tricks[{t}]")
    for i, entry in enumerate(record["actions"]):
        _check_fields(entry, _ACTION_FIELDS, f"actions[{i}]")
        _check_fields(entry, {k: t for k, t in _OPTIONAL_ACTION_FIELDS.items() if k in entry}, f"actions[{i}]")


def replay_record(record: Mapping[str, Any]) -> ReplayReport:
    """Replay ``record`` through its game's raw env and compare everything it says.

    Checked, action by action: each hand's deal (at its first action), the agent to act, the
    phase and hand number, the action's label, that a card played to a trick is the card the
    recorded trick gives that agent, every completed trick (cards, leader, winner), and at the
    end of each hand its points and scores; after the last action the result (winners, scores,
    returns, how the episode ended).

    Args:
        record: a game record (see the module docstring).
    Returns:
        a :class:`ReplayReport`; ``step`` is the index of the first action whose replay differs
        from the record, or ``len(actions)`` when only the result differs.
    Raises:
        ValueError: when the record is malformed (:func:`check_record`: not a game record of a
            known schema version or game, a missing or ill-typed field), or its options or reset
            options are rejected by the env.
    """
    from whist_env import GAMES

    check_record(record)
    env = GAMES[record["game"]].raw_env(**(record.get("options") or {}))
    env.reset(seed=record.get("seed"), options=record.get("reset_options"))
    try:
        return _replay_actions(env, record)
    except (KeyError, TypeError, IndexError, AttributeError) as err:  # a nested field of the wrong shape
        raise ValueError(f"malformed record: {type(err).__name__}: {err}") from None


def _replay_actions(env: Any, record: Mapping[str, Any]) -> ReplayReport:
    g = env.game
    hands = {h["hand_number"]: h for h in record["hands"]}
    trick_index: dict[int, int] = {}  # hand number -> tricks of it completed so far
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for i, entry in enumerate(record["actions"]):
        if entry.get("step", i) != i:
            return ReplayReport(False, i, f"step {i}: the action is numbered {entry.get('step')!r}")
        if g.done or g.truncated:
            return ReplayReport(False, i, f"step {i}: the game already ended, but the record has more actions")
        hand_number = g.hand_number
        rec_hand = hands.get(hand_number)
        if hand_number not in trick_index:
            trick_index[hand_number] = 0
            if rec_hand is None:
                return ReplayReport(False, i, f"step {i}: hand {hand_number + 1} is missing from the record's hands")
            if env.current_deal() != rec_hand["deal"]:
                return ReplayReport(False, i, f"step {i}: hand {hand_number + 1} was dealt differently from the record")
        agent = env.agent_selection
        if agent != entry["agent"]:
            return ReplayReport(False, i, f"step {i}: {agent} is to act, the record says {entry['agent']}")
        if g.phase != entry["phase"] or hand_number != entry["hand_number"]:
            return ReplayReport(False, i, f"step {i}: phase/hand {g.phase}/{hand_number + 1}, record {entry['phase']}/{entry['hand_number'] + 1}")
        try:
            label = env.action_label(entry["action"])
        except ValueError as err:
            return ReplayReport(False, i, f"step {i}: {err}")
        if label != entry["label"]:
            return ReplayReport(False, i, f"step {i}: action {entry['action']} is {label!r}, the record says {entry['label']!r}")
        k = trick_index[hand_number]
        tricks = rec_hand["tricks"]
        if g.phase in g.CARD_PLAY_PHASES:
            recorded = tricks[k]["cards"].get(agent) if k < len(tricks) else None
            if recorded != label:
                return ReplayReport(False, i, f"step {i}: {agent} plays {label} to trick {k + 1} of hand {hand_number + 1}, the recorded trick says {recorded}")
        try:
            env.step(entry["action"])
        except ValueError as err:
            return ReplayReport(False, i, f"step {i}: {err}")
        for a, r in env.rewards.items():
            returns[a] += float(r)
        info = env.infos[agent]
        if "last_trick" in info:
            if k >= len(tricks) or tricks[k] != info["last_trick"]:
                return ReplayReport(
                    False, i, f"step {i}: trick {k + 1} of hand {hand_number + 1} is {info['last_trick']}, the record says {tricks[k] if k < len(tricks) else None}"
                )
            trick_index[hand_number] = k + 1
        if "check" in entry and entry["check"] != table_digest(env):
            return ReplayReport(False, i, f"step {i}: the table after {agent}'s {label} differs from the record (check {table_digest(env)}, record {entry['check']})")
        if g.hand_number != hand_number or g.done or g.truncated:
            if trick_index[hand_number] != len(tricks):
                return ReplayReport(False, i, f"step {i}: hand {hand_number + 1} ended after {trick_index[hand_number]} tricks, the record has {len(tricks)}")
            if rec_hand["points"] != info["hand_points"]:
                return ReplayReport(False, i, f"step {i}: hand {hand_number + 1} scored {info['hand_points']}, the record says {rec_hand['points']}")
            if rec_hand.get("scores") is not None and rec_hand["scores"] != info["score"]:
                return ReplayReport(False, i, f"step {i}: the scores after hand {hand_number + 1} are {info['score']}, the record says {rec_hand['scores']}")
    n = len(record["actions"])
    played = {h for h, k in trick_index.items() if g.hand_number != h or g.done or g.truncated}
    extra = sorted(set(hands) - played)
    if extra:
        return ReplayReport(False, n, f"result: the record has hand(s) {[h + 1 for h in extra]} that were not played")
    result = record["result"] or {}
    winners = [env.possible_agents[s] for s in g.winners]
    scores = {a: g.scores[g.side_of(s)] for s, a in enumerate(env.possible_agents)}
    if winners != result.get("winners") or scores != result.get("scores"):
        return ReplayReport(False, n, f"result: winners {winners} scores {scores}, the record says {result.get('winners')} {result.get('scores')}")
    if bool(g.done) != bool(result.get("terminated")) or bool(g.truncated) != bool(result.get("truncated")):
        return ReplayReport(False, n, "result: the episode ended differently from the record")
    rec_returns = result.get("returns")
    if rec_returns is not None and (
        set(rec_returns) != set(returns) or any(abs(float(rec_returns[a]) - returns[a]) > 1e-6 for a in returns)
    ):
        return ReplayReport(False, n, f"result: returns {returns}, the record says {rec_returns}")
    if result.get("hands_played", len(played)) != len(played):
        return ReplayReport(False, n, f"result: {len(played)} hands played, the record says {result.get('hands_played')}")
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
