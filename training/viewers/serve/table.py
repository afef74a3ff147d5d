"""The table: one game of any variant with people and agents in its seats, played one action at
a time, logged per seat and stored as a game record.

:class:`Table` holds the raw environment, who sits where (``"human"`` or an agent spec), the
agents, each seat's log of the hand (what that seat saw, in words) and the game record
(:class:`whist_env.records.GameRecorder`), written to the records folder when the game ends. It
checks a person's move (:meth:`Table.parse_move`), applies every action (:meth:`Table.apply`),
and gives each seat its view (:meth:`Table.view`: :func:`~training.viewers.serve.seat_view.seat_view`
and the table's public facts). It is synchronous and knows nothing of time or of the network:
:mod:`training.viewers.serve.host` drives it.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from training.viewers.serve.analysis import NetworkDecision, SolveDecision, network_of
from training.viewers.serve.seat_view import event_text, known_cards, seat_view

#: The seat spec of a person.
HUMAN = "human"
#: The longest move message read (characters); longer ones are refused unread.
MAX_MESSAGE = 2000
#: How many lines of the log a view carries (the most recent).
LOG_LINES = 300

_SPEC_START = re.compile(r"^(human|random|heuristic|zoo|checkpoint|sb3|rllib|pimc|ismcts|python)\b", re.IGNORECASE)


class MoveRefused(ValueError):
    """A person's move that is not applied: malformed, out of turn, stale or illegal. The
    message says why (and lists the legal actions where that helps)."""


def split_seats(items: Sequence[str]) -> list[str]:
    """Seat specs from the command line: each item one spec, or several joined by commas
    (``human,zoo,heuristic,pimc``). A comma inside a search agent's options (``pimc:worlds=8,
    rollouts=16``) stays in its spec: a piece that does not start with a kind of agent is
    joined back to the one before it."""
    out: list[str] = []
    for item in items:
        for piece in str(item).split(","):
            piece = piece.strip()
            if not piece:
                continue
            if out and not _SPEC_START.match(piece):
                out[-1] += "," + piece
            else:
                out.append(piece)
    return out


class Table:
    """A table of one game with people and agents (module docstring).

    Args:
        game: a key of ``whist_env.GAMES``.
        seats: one spec per seat, in seat order: ``"human"`` for a person, else an agent spec
            of :func:`agents.registry.make_agent` (``heuristic``, ``zoo`` or ``zoo:GAME``,
            ``pimc``, ``random``, ``checkpoint:PATH`` ...).
        options: rule options of the game (``raw_env(**options)``).
        seed: seed of the first game's deal and of the agents (game ``k`` is dealt from
            ``seed + k``); ``None``: drawn at random (and stored in the record, which replays).
        records_dir: folder of the game records (one JSON Lines file per game), ``None``: none
            are written.
        fallback: agent spec that makes a person's decision when the person takes too long (and
            an agent's, should that agent fail).
    Raises:
        ValueError: an unknown game or a bad rule option (the env's message), a number of seat
            specs other than the game's number of players, no ``"human"`` seat, or a bad agent
            spec (:func:`agents.registry.make_agent`'s message).
        ImportError: an agent spec whose code cannot be loaded.
    """

    def __init__(self, game: str, seats: Sequence[str], options: Mapping[str, Any] | None = None, seed: int | None = None,
                 records_dir: str | Path | None = None, fallback: str = "heuristic") -> None:
        from agents.registry import make_agent
        from whist_env import GAMES, games

        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}; games: {', '.join(GAMES)}")
        self.game = game
        self.options = dict(options or {})
        self.env = GAMES[game].raw_env(**self.options)
        self.agents: list[str] = list(self.env.possible_agents)
        seats = [str(s).strip() for s in seats]
        if len(seats) != len(self.agents):
            raise ValueError(f"{game} with these options has {len(self.agents)} seats; got {len(seats)} seat specs: {', '.join(seats)}")
        self.specs = {a: (HUMAN if s.lower() == HUMAN else s) for a, s in zip(self.agents, seats)}
        self.humans = [a for a in self.agents if self.specs[a] == HUMAN]
        if not self.humans:
            raise ValueError("no seat is 'human': name at least one, e.g. --seats human,heuristic,...")
        self.base_seed = secrets.randbelow(2**31) if seed is None else int(seed)
        self.policies = {a: make_agent(s, game, seed=self.base_seed + 1 + i)
                         for i, (a, s) in enumerate(self.specs.items()) if s != HUMAN}
        #: seats whose agent is a network (its decisions are kept for the hand review)
        self.learned = {a for a, p in self.policies.items() if network_of(p, game)[0] is not None}
        self._spec = games.spec(game)
        self.fallback_spec = fallback
        # built now for the human seats (a bad spec is an error at start), later for an agent that fails
        self.fallbacks = {a: make_agent(fallback, game, seed=self.base_seed + 101 + i) for i, a in enumerate(self.agents)
                          if a in self.humans}
        self.records_dir = None if records_dir is None else Path(records_dir)
        self.saved: list[Path] = []
        self.game_number = -1
        self.start_game()

    # ------------------------------------------------------------------ a game
    def start_game(self) -> None:
        """Deal a new game (the next seed): empty logs, a new record."""
        from whist_env.records import GameRecorder

        self.game_number += 1
        self.seed = self.base_seed + self.game_number
        env = self.env
        env.reset(seed=self.seed)
        labels = {a: (HUMAN if s == HUMAN else s) for a, s in self.specs.items()}
        meta = {"server": "whist serve", "game_number": self.game_number, "humans": list(self.humans),
                "date": time.strftime("%Y-%m-%d %H:%M:%S"), "timeouts": []}
        self.recorder = GameRecorder(env, self.game, self.options, self.seed, None, labels, meta=meta)
        self.recorder.start()
        self.step = 0
        self.record_path: Path | None = None
        self.timeouts: list[dict[str, Any]] = []
        self.last_trick: dict[str, Any] | None = None
        self.tricks: list[dict[str, Any]] = []  # completed tricks of the hand in progress
        self.previous_tricks: list[dict[str, Any]] = []  # those of the last finished hand
        self.hands_done: list[dict[str, Any]] = []
        self.solve_decisions: list[SolveDecision] = []
        self.network_decisions: list[NetworkDecision] = []
        self.logs: dict[str, list[dict[str, Any]]] = {a: [] for a in self.agents}
        self.known: dict[str, set[str]] = {a: known_cards(env, a) for a in self.agents}
        self._seen_events = {a: 0 for a in self.agents}
        self._log_all(f"Game {self.game_number + 1}, hand 1: {self.agents[env.game.dealer]} deals.", 0)
        self._log_events(None, None)
        self._views: dict[str, dict[str, Any]] = {}
        for a in self.humans:
            self.view(a)

    @property
    def over(self) -> bool:
        """Whether the game has ended (won, or stopped at its hand limit)."""
        return bool(self.env.game.done or self.env.game.truncated)

    @property
    def to_act(self) -> str | None:
        """The agent to act, ``None`` once the game is over."""
        return None if self.over else self.env.agent_selection

    @property
    def hand_number(self) -> int:
        """The hand in progress (from 0)."""
        return int(self.env.game.hand_number)

    def is_human(self, agent: str) -> bool:
        """Whether a person sits at ``agent``."""
        return self.specs.get(agent) == HUMAN

    def legal(self) -> list[int]:
        """The legal action ids of the agent to act (empty once the game is over)."""
        if self.over:
            return []
        return [int(a) for a in self.env.observe(self.env.agent_selection)["action_mask"].nonzero()[0]]

    # ------------------------------------------------------------------ moves
    def parse_move(self, agent: str, message: Any) -> int:
        """The action id of a person's move message, checked against the table now.

        Args:
            agent: the seat the message came from.
            message: the decoded JSON message: ``{"type": "act", "action": label or id,
                "step": int (optional: the number of actions the page had seen; a move made
                for an earlier state is refused)}``.
        Returns:
            a legal action id of ``agent``, who is to act.
        Raises:
            MoveRefused: the game is over, it is not ``agent``'s turn, the message is stale or
                malformed (no ``action``, a wrong type), or the action is unknown or illegal
                now; nothing is changed.
        """
        if not isinstance(message, Mapping):
            raise MoveRefused("a move is a JSON object such as {\"type\": \"act\", \"action\": \"QH\"}")
        if self.over:
            raise MoveRefused("the game is over")
        if self.env.agent_selection != agent:
            raise MoveRefused(f"it is not your turn: {self.env.agent_selection} is to act")
        step = message.get("step")
        if step is not None and (not isinstance(step, int) or isinstance(step, bool) or step != self.step):
            raise MoveRefused(f"stale move: it was made at step {step!r}, the table is at step {self.step}")
        action = message.get("action")
        legal = self.legal()
        labels = [self.env.action_label(a) for a in legal]
        if isinstance(action, bool) or not isinstance(action, (int, str)):
            raise MoveRefused(f"a move needs an action: a label or an id; legal now: {' '.join(labels)}")
        if isinstance(action, str):
            text = action.strip()
            if len(text) > 40:
                raise MoveRefused("an action label is a short text such as QH, pass or bid:5:uptown")
            try:
                action = self.env.action_id(text)
            except ValueError:
                try:
                    action = self.env.action_id(text.upper())
                except ValueError:
                    raise MoveRefused(f"unknown action {text!r}; legal now: {' '.join(labels)}") from None
        if action not in legal:
            name = self.env.action_label(action) if 0 <= action < self.env.game.num_actions else str(action)
            raise MoveRefused(f"{name} is not legal now ({self.env.game.phase.replace('_', ' ')} phase); legal: {' '.join(labels)}")
        return int(action)

    def agent_action(self) -> int:
        """The action of the agent seated at the seat to act (its policy reads only what that
        seat may know; a search agent also draws worlds from it). Meant to run in a thread:
        it reads the env and changes nothing."""
        from whist_env.envs.policy_action import policy_action

        agent = self.env.agent_selection
        return policy_action(self.policies[agent], self.env, agent)

    def fallback_action(self) -> int:
        """The fallback agent's action for the seat to act: a person who made no move in time,
        or an agent that failed (a thread, as :meth:`agent_action`)."""
        from agents.registry import make_agent
        from whist_env.envs.policy_action import policy_action

        agent = self.env.agent_selection
        if agent not in self.fallbacks:
            self.fallbacks[agent] = make_agent(self.fallback_spec, self.game, seed=self.base_seed + 101 + self.agents.index(agent))
        return policy_action(self.fallbacks[agent], self.env, agent)

    def note_failure(self, agent: str, error: BaseException) -> None:
        """Log (for every seat) and record that ``agent``'s agent failed at this decision and the
        fallback agent makes it."""
        self.timeouts.append({"step": self.step, "agent": agent, "fallback": self.fallback_spec, "error": str(error)[:300]})
        self._log_all(f"the agent at {agent} failed ({type(error).__name__}): the fallback agent ({self.fallback_spec}) decides.",
                      self.hand_number)
        self._views = {}

    def note_timeout(self, agent: str, seconds: float) -> None:
        """Log (for every seat) and record that ``agent``'s decision is left to the fallback
        agent after ``seconds`` without a move."""
        self.timeouts.append({"step": self.step, "agent": agent, "fallback": self.fallback_spec, "seconds": seconds})
        self._log_all(f"{agent} made no move in {seconds:g} s: the fallback agent ({self.fallback_spec}) decides for them.",
                      self.hand_number)
        self._views = {}

    def apply(self, action: int, by: str = "agent") -> None:
        """Apply the action of the seat to act, record it and update the logs and views.

        Args:
            action: a legal action id (checked by the env: ``ValueError`` otherwise, nothing
                changed).
            by: who chose it: ``"human"``, ``"agent"`` or ``"fallback"``.
        Raises:
            ValueError: the game is over, or the action is illegal.
        """
        if self.over:
            raise ValueError("the game is over")
        env, g = self.env, self.env.game
        agent = env.agent_selection
        action = int(action)
        if action not in self.legal():
            raise ValueError(f"{env.action_label(action) if 0 <= action < g.num_actions else action} is not legal for {agent} now")
        hand_number, phase = g.hand_number, g.phase
        label = env.action_label(action)
        if self.is_human(agent) and self._spec.decision(phase).search == "solve":
            self.solve_decisions.append(SolveDecision(self.step, hand_number, agent, label, env.clone()))
        elif agent in self.learned:
            obs = env.observe(agent)
            labels = {int(a): env.action_label(int(a)) for a in obs["action_mask"].nonzero()[0]}
            self.network_decisions.append(NetworkDecision(self.step, hand_number, agent, label, phase, self.specs[agent],
                                                          obs, env.information_state(agent), labels))
        entry = self.recorder.pre_step(agent, action)
        env.step(action)
        self.recorder.after_step(entry)
        self.step += 1
        info = env.infos[agent]
        if "last_trick" in info:
            self.last_trick = json.loads(json.dumps(info["last_trick"]))
            self.tricks.append(self.last_trick)
        ended = g.hand_number != hand_number or self.over
        if ended:
            self._end_hand(agent, action, label, phase, hand_number, info)
        else:
            self._log_events(agent, label if phase in g.HIDDEN_ACTION_PHASES else None)
        for a in self.agents:
            self.known[a] |= known_cards(env, a)
        self._views = {}
        for a in self.humans:  # made now, while nothing else reads the env; agents think in threads after
            self.view(a)
        if self.over:
            self.save_record()

    def _end_hand(self, agent: str, action: int, label: str, phase: str, hand_number: int, info: Mapping[str, Any]) -> None:
        """Log the hand's last action, its last trick and its result; start the next hand's log."""
        g = self.env.game
        for a in self.agents:
            if phase in g.CARD_PLAY_PHASES:
                text = f"{agent} plays {label}"
            elif phase in g.HIDDEN_ACTION_PHASES and a != agent:
                text = f"{agent} chooses a card face down"
            else:
                text = f"{agent}: {label}"
            self._log(a, text, hand_number)
            if "last_trick" in info:
                self._log(a, f"{info['last_trick']['winner']} wins the trick", hand_number)
        sides = [[self.agents[s] for s in g.seats_of(side)] for side in range(g.num_sides)]
        points = ", ".join(f"{' + '.join(side)} {info['hand_points'][side[0]]:+d}" for side in sides)
        score = ", ".join(f"{' + '.join(side)} {info['score'][side[0]]}" for side in sides)
        self._log_all(f"Hand {hand_number + 1} over: {points}; score {score}.", hand_number)
        self.hands_done.append({"hand_number": hand_number, "points": dict(info["hand_points"]), "score": dict(info["score"]),
                                "tricks": dict(info.get("last_hand", {}).get("tricks_won", {})) or None})
        self.previous_tricks, self.tricks = self.tricks, []
        if self.over:
            winners = info.get("winners", [])
            self._log_all("Game over" + (f": {', '.join(winners)} win." if winners else " (stopped at the hand limit)."), hand_number)
        else:
            self._seen_events = {a: 0 for a in self.agents}
            self._log_all(f"Hand {g.hand_number + 1}: {self.agents[g.dealer]} deals.", g.hand_number)
            self._log_events(None, None)

    # ------------------------------------------------------------------ logs
    def _log(self, agent: str, text: str, hand_number: int) -> None:
        self.logs[agent].append({"hand": int(hand_number), "step": self.step, "text": text})

    def _log_all(self, text: str, hand_number: int) -> None:
        for a in self.agents:
            self._log(a, text, hand_number)

    def _log_events(self, actor: str | None, own_label: str | None) -> None:
        """Append each seat's new events of the hand (its own information state) to its log;
        ``actor``'s own face-down choice (``own_label``) is named in its own log only."""
        env = self.env
        for a in self.agents:
            info = env.information_state(a)
            events = info["events"][self._seen_events[a]:]
            self._seen_events[a] = len(info["events"])
            for e in events:
                mine = own_label if (a == actor and len(e) > 1 and e[1] == self.agents.index(a)) else None
                self._log(a, event_text(e, self.agents, mine), info["hand_number"])

    # ------------------------------------------------------------------ views
    def view(self, agent: str) -> dict[str, Any]:
        """What ``agent``'s browser shows: :func:`~training.viewers.serve.seat_view.seat_view`
        of the env, and the table's public facts: ``game``, ``game_number``, ``step``,
        ``agents``, ``players`` (agent -> ``"human"`` or its spec), ``sides``, ``humans``,
        ``log`` (this seat's lines, the most recent :data:`LOG_LINES`: ``{"hand", "step",
        "text"}``), ``tricks`` (this hand's completed tricks: ``cards`` agent -> card,
        ``leader``, ``winner``), ``previous_tricks`` (those of the last finished hand),
        ``last_trick``, ``hands_done``
        (each finished hand's points and scores), ``rule_options``, ``changed_options``.

        Raises:
            ValueError: ``agent`` is not a seat of the table.
        """
        if agent not in self.agents:
            raise ValueError(f"unknown seat {agent!r}; seats: {', '.join(self.agents)}")
        if agent not in self._views:
            from training.viewers.replay import rule_options

            g = self.env.game
            view = seat_view(self.env, agent)
            every, changed = rule_options(g)
            view.update({
                "game": self.game,
                "game_number": self.game_number,
                "step": self.step,
                "agents": self.agents,
                "players": dict(self.specs),
                "sides": [[self.agents[s] for s in g.seats_of(side)] for side in range(g.num_sides)],
                "humans": list(self.humans),
                "log": self.logs[agent][-LOG_LINES:],
                "tricks": list(self.tricks),
                "previous_tricks": list(self.previous_tricks),
                "last_trick": self.last_trick,
                "hands_done": list(self.hands_done),
                "rule_options": every,
                "changed_options": changed,
            })
            self._views[agent] = view
        return self._views[agent]

    # ------------------------------------------------------------------ records
    def _record_name(self) -> str:
        return f"{self.game}-{time.strftime('%Y%m%d-%H%M%S')}-seed{self.seed}.jsonl"

    def save_record(self) -> Path | None:
        """Write the finished game's record to the records folder (once); returns its path
        (``None`` without a records folder). Raises ``OSError`` when it cannot be written."""
        from whist_env.records import write_records

        if self.records_dir is None or self.record_path is not None:
            return self.record_path
        self.recorder.record["meta"]["timeouts"] = list(self.timeouts)
        record = self.recorder.finish()
        self.record_path = write_records([record], self.records_dir / self._record_name())
        self.saved.append(self.record_path)
        return self.record_path

    def save_partial_record(self) -> Path | None:
        """Write the record of an unfinished game's completed hands (when the server stops
        mid-game); ``None`` when there is no records folder, the game is over (its record is
        written already) or no hand was completed. The record replays: it stops after the last
        completed hand, and its ``meta`` says ``"complete": false``."""
        from whist_env import GAMES
        from whist_env.records import GameRecorder, write_records

        if self.records_dir is None or self.over or self.record_path is not None or not self.hands_done:
            return None
        actions = self.recorder.record["actions"]
        last_hand = self.hands_done[-1]["hand_number"]
        upto = max(i for i, a in enumerate(actions) if a["hand_number"] == last_hand) + 1
        env = GAMES[self.game].raw_env(**self.options)
        env.reset(seed=self.seed)
        meta = dict(self.recorder.record["meta"], complete=False, timeouts=[t for t in self.timeouts if t["step"] < upto])
        recorder = GameRecorder(env, self.game, self.options, self.seed, None, self.recorder.record["players"], meta=meta)
        recorder.start()
        for entry in actions[:upto]:
            pre = recorder.pre_step(env.agent_selection, entry["action"])
            env.step(entry["action"])
            recorder.after_step(pre)
        self.record_path = write_records([recorder.finish()], self.records_dir / self._record_name())
        self.saved.append(self.record_path)
        return self.record_path


__all__ = ["HUMAN", "MoveRefused", "Table", "split_seats"]
