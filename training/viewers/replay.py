"""``whist replay``: a self-contained HTML page that steps through a game record.

``whist replay RECORD.jsonl [--index N] [--viewer player_k] --html out.html`` replays record ``N``
of a JSON Lines file of game records (docs/records.md) through its game's environment and writes
one HTML file with inline CSS and JavaScript (no network access, no external fonts; the template,
style sheet and script are the package data ``assets/replay.html``, ``replay.css`` and ``replay.js``,
inlined at run time) that shows,
action by action and trick by trick: the hands (all of them, or only the viewer's with
``--viewer``; the others as card backs), the trick on the table, trump, the game's public facts
(turn-up, contract, bids, declarer …), tricks won, hand points and scores; the rule options once,
in the header (those that differ from the game's defaults, and all of them in a collapsible list).

Every state of the page is computed here, in Python, by stepping the environment (the page's
script only renders them): state 0 is the first deal; each action adds one state, and each hand
ends with a state that shows the finished hand before the next deal. The page's elements that
tests read: ``#step`` (``"i / N"``, ``data-step``), ``#score`` (current scores, ``data-scores``:
agent -> score JSON), ``#final-score`` (shown on the last state), ``#next``, ``#prev``,
``#first``, ``#last``, ``#next-trick``, ``#prev-trick``. Keys: → / ← one action, ↓ / ↑ (or
PageDown / PageUp) one trick, Home / End.
"""

from __future__ import annotations

import dataclasses
import html
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from training.errors import CommandError
from whist_env.envs.render import said_bids
from whist_env.records import read_records, replay_record

#: Keys of ``information_state`` that every game has; the rest are the game's own facts. The rule
#: ``options`` are the same for every seat and state: the page shows them once, in its header; the
#: ``history`` of actions is the page's own sequence of states.
_BASE_KEYS = frozenset(
    {"seat", "hand", "dealer", "trump", "phase", "hand_number", "scores", "tricks_won", "trick", "leader", "events", "games_won",
     "options", "history"}
)
#: Public facts whose int value is a seat.
_SEAT_KEYS = frozenset({"declarer", "grand_player", "first_player", "leader", "dealer", "maker", "bidder"})
#: Display order of suits (alternating colours): spades, hearts, clubs, diamonds.
_SUIT_ORDER = {"S": 0, "H": 1, "C": 2, "D": 3}
_RANK_ORDER = {r: i for i, r in enumerate("23456789TJQKA")}


def _card_key(card: str) -> tuple[int, int]:
    if card.startswith("JK"):
        return (-1, 0 if card == "JKB" else 1)
    return (_SUIT_ORDER.get(card[-1], 9), -_RANK_ORDER.get(card[:-1], 0))


def sort_cards(cards: list[str] | tuple[str, ...]) -> list[str]:
    """Card texts sorted for display: jokers, then ♠ ♥ ♣ ♦, high rank first within a suit."""
    return sorted(cards, key=_card_key)


def _plain(value: Any, agents: list[str], key: str = "") -> Any:
    """A JSON-ready display value: tuples become lists, seat ints in seat keys become agent names."""
    if isinstance(value, (list, tuple)):
        return [_plain(v, agents) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v, agents) for k, v in value.items()}
    if key in _SEAT_KEYS and isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(agents):
        return agents[value]
    if hasattr(value, "item"):
        return value.item()
    return value


def _fact_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return " ".join(_fact_text(v) for v in value) if value else "–"
    return str(value)


def rule_options(game: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(all rule options, the ones that differ from the game's defaults)`` of a game's rules
    object, as JSON-ready dicts in the options' declaration order."""
    options = game.options
    every = {f.name: _plain(getattr(options, f.name), []) for f in dataclasses.fields(options)}
    changed = {}
    for f in dataclasses.fields(options):
        default = f.default if f.default is not dataclasses.MISSING else None
        if getattr(options, f.name) != default:
            changed[f.name] = every[f.name]
    return every, changed


def _split_facts(facts: Mapping[str, Any], agents: list[str], num_sides: int) -> tuple[list[list[str]], dict[str, list[list[str]]], list[list[str]]]:
    """Game facts as ``(table facts, per-agent facts, per-side facts)`` of ``[label, text]`` pairs.

    A list with one entry per player is shown beside each player, one with one entry per side
    (when that differs) beside the side's score; anything else in the facts panel; ``None`` is
    left out.
    """
    table: list[list[str]] = []
    per_agent: dict[str, list[list[str]]] = {a: [] for a in agents}
    per_side: list[list[str]] = []
    n = len(agents)
    for key, value in facts.items():
        label = key.replace("_", " ")
        value = _plain(value, agents, key)
        if isinstance(value, list) and len(value) == n and n != num_sides:
            for a, v in zip(agents, value):
                if v is not None and v != []:
                    per_agent[a].append([label, _fact_text(v)])
        elif isinstance(value, list) and len(value) == n:  # one seat per side (Cutthroat, German)
            for a, v in zip(agents, value):
                if v is not None and v != []:
                    per_agent[a].append([label, _fact_text(v)])
        elif isinstance(value, list) and len(value) == num_sides:
            per_side.append([label, " / ".join(_fact_text(v) for v in value)])
        elif value is not None:
            table.append([label, _fact_text(value)])
    return table, per_agent, per_side


class _Snapshotter:
    """Builds the page's states from a raw env being stepped through a record."""

    def __init__(self, env: Any, players: Mapping[str, str], viewer: str | None) -> None:
        self.env = env
        self.g = env.game
        self.agents = list(env.possible_agents)
        self.viewer = viewer
        self.players = players
        # games whose declarer names trump by an action (Bid Whist) have no trump until then
        self.trump_named = any(self.g.action_label(a).startswith("trump:") for a in range(self.g.num_actions))

    def trump_pending(self, public: Mapping[str, Any]) -> bool:
        """Whether trump is still to be named (before the contract and the declarer's choice):
        the page then shows no trump indicator instead of "no trump"."""
        g = self.g
        if not self.trump_named or g.trump is not None or g.phase in g.CARD_PLAY_PHASES:
            return False
        return not str(public.get("contract") or "").endswith(":notrump")

    def visible(self) -> list[str]:
        return [self.viewer] if self.viewer else list(self.agents)

    def snapshot(self, kind: str) -> dict[str, Any]:
        """The state of the table now (``kind``: ``"deal"`` or ``"action"``)."""
        env, g, agents = self.env, self.g, self.agents
        views = {a: env.information_state(a) for a in agents}
        ref = views[self.viewer or agents[0]]
        public = dict(g.public_state())
        facts, per_agent, per_side = _split_facts(said_bids(public, ref["events"]), agents, g.num_sides)
        private: dict[str, list[list[str]]] = {}
        for a in self.visible():
            extra = {k: v for k, v in views[a].items() if k not in _BASE_KEYS and k not in public}
            t, pa, _ = _split_facts(extra, agents, g.num_sides)
            private[a] = t + pa[a]
        info = env.infos[agents[0]]
        trick = {agents[s]: c for s, c in ref["trick"]}
        return {
            "kind": kind,
            "phase": g.phase,
            "hand_number": g.hand_number,
            "game_number": int(getattr(g, "game_number", 0)),
            "dealer": agents[ref["dealer"]],
            "to_act": None if (g.done or g.truncated) else env.agent_selection,
            "trump": ref["trump"],
            "trump_pending": self.trump_pending(public),
            "hands": {a: sort_cards(list(views[a]["hand"])) for a in self.visible()},
            "counts": {a: len(views[a]["hand"]) for a in agents},
            "table": {"cards": trick, "leader": agents[ref["leader"]] if trick else None, "winner": None},
            "tricks_won": {a: int(info["tricks_won"][a]) for a in agents},
            "score": {a: int(info["score"][a]) for a in agents},
            "hand_points": None,
            "games_won": [int(x) for x in ref.get("games_won", ())],
            "facts": facts,
            "agent_facts": per_agent,
            "side_facts": per_side,
            "private": private,
            "action": None,
            "caption": "",
            "stop": True,
            "tricks_done": 0,
            "winners": None,
        }


def _deal_caption(state: Mapping[str, Any]) -> str:
    text = f"Hand {state['hand_number'] + 1}: {state['dealer']} deals."
    for label, value in state["facts"]:
        if label in ("turn up", "stock top", "deal size"):
            text += f" {label.capitalize()}: {value}."
    if state["to_act"]:
        text += f" {state['to_act']} to act."
    return text


def build_page_data(record: Mapping[str, Any], viewer: str | None = None, title: str | None = None) -> dict[str, Any]:
    """Replay ``record`` and compute every state the page shows.

    Args:
        record: a game record (``whist_env.records`` schema, version 1).
        viewer: an agent name to show only that agent's cards (the others as counts of card
            backs; hidden cards are not put in the page at all), or ``None`` to show every hand.
        title: page title (default: game, players and seed).
    Returns:
        a JSON-ready dict: ``game``, ``title``, ``agents``, ``players``, ``sides`` (list of agent
        lists), ``viewer``, ``states`` (list of state dicts: ``kind`` deal/action/hand_end,
        ``phase``, ``hand_number``, ``dealer``, ``to_act``, ``trump``, ``trump_pending`` (trump is still to be named, Bid Whist before the
        declarer names it), ``hands`` (agent -> sorted
        card texts, visible agents only), ``counts``, ``table`` (``cards`` agent -> card,
        ``leader``, ``winner``), ``tricks_won``, ``score``, ``hand_points``, ``facts``,
        ``agent_facts``, ``side_facts``, ``private``, ``action``, ``caption``, ``stop`` (a
        trick-by-trick stopping point), ``tricks_done``, ``winners``), ``tricks`` (hand number
        -> completed tricks), ``replay`` (the :func:`~whist_env.records.replay_record` report),
        ``result`` (as replayed: ``scores``, ``winners``), ``options`` (the record's options),
        ``rule_options`` (every rule option in force) and ``changed_options`` (those that differ
        from the game's defaults): the page shows the rule options once, in its header.
    Raises:
        ValueError: on a malformed record (:func:`whist_env.records.check_record`), an unknown
            game, or an unknown viewer.
    """
    from whist_env import GAMES

    report = replay_record(record)  # raises ValueError on a wrong schema or game
    env = GAMES[record["game"]].raw_env(**(record.get("options") or {}))
    env.reset(seed=record.get("seed"), options=record.get("reset_options"))
    agents = list(env.possible_agents)
    if viewer is not None and viewer not in agents:
        raise ValueError(f"unknown viewer {viewer!r}; agents: {agents}")
    g = env.game
    players = {a: str((record.get("players") or {}).get(a, a)) for a in agents}
    snap = _Snapshotter(env, players, viewer)
    first = snap.snapshot("deal")
    first["caption"] = _deal_caption(first)
    states = [first]
    tricks: dict[int, list[dict[str, Any]]] = {g.hand_number: []}
    error = None
    actions = record["actions"]
    for i, entry in enumerate(actions):
        before = states[-1]
        agent, action = env.agent_selection, int(entry["action"])
        hand_number, phase = g.hand_number, g.phase
        try:
            label = env.action_label(action)
            env.step(action)
        except (ValueError, KeyError) as err:
            error = f"step {i}: {err}"
            break
        info = env.infos[agent]
        ended = g.hand_number != hand_number or g.done or g.truncated
        is_card = phase in g.CARD_PLAY_PHASES  # a card played face up to a trick
        # a choice made face down (a bid card, a discard) is hidden from a viewer who is not its owner
        hidden = viewer is not None and agent != viewer and phase in g.HIDDEN_ACTION_PHASES
        shown_label = "a hidden card" if hidden else label
        caption = f"{agent} plays {label}." if is_card else f"{agent}: {shown_label}."
        if ended:
            # The env already dealt the next hand: show the finished one from the state before.
            state = json.loads(json.dumps(before))
            state["kind"] = "hand_end"
            in_hand = action < g.NUM_CARD_ACTIONS
            if agent in state["hands"] and label in state["hands"][agent]:
                state["hands"][agent].remove(label)
            if in_hand:
                state["counts"][agent] = max(0, state["counts"][agent] - 1)
            state["phase"] = "game over" if g.done else ("truncated" if g.truncated else "hand over")
            state["to_act"] = None
            state["score"] = {a: int(info["score"][a]) for a in agents}
            state["hand_points"] = {a: int(info["hand_points"][a]) for a in agents}
            state["games_won"] = [int(x) for x in g.games_won]
            table = before["table"] if not before["table"]["winner"] else {"cards": {}, "leader": None}
            state["table"] = {"cards": dict(table["cards"]), "leader": table["leader"], "winner": None}
            if is_card:
                state["table"]["cards"][agent] = label
                state["table"]["leader"] = state["table"]["leader"] or agent
        else:
            state = snap.snapshot("action")
        if "last_trick" in info:
            lt = info["last_trick"]
            state["table"] = {"cards": dict(lt["cards"]), "leader": lt["leader"], "winner": lt["winner"]}
            tricks.setdefault(hand_number, []).append({"cards": dict(lt["cards"]), "leader": lt["leader"], "winner": lt["winner"]})
            if ended:
                state["tricks_won"] = dict(before["tricks_won"])
                state["tricks_won"][lt["winner"]] += 1
            caption += f" {lt['winner']} wins the trick."
        state["tricks_done"] = len(tricks.get(hand_number, []))
        state["action"] = {"step": i, "agent": agent, "label": shown_label, "phase": phase, "action": None if hidden else action}
        state["stop"] = ("last_trick" in info) or ended or (g.phase != phase)
        if ended:
            sides = _sides(g, agents)
            parts = [f"{' + '.join(side)} {state['hand_points'][side[0]]:+d}" for side in sides]
            caption += f" Hand {hand_number + 1} over: " + ", ".join(parts) + "."
            if g.done:
                winners = [agents[s] for s in g.winners]
                state["winners"] = winners
                caption += " Game over; winners: " + (", ".join(winners) or "none") + "."
        state["caption"] = caption
        states.append(state)
        if ended and not (g.done or g.truncated):
            deal = snap.snapshot("deal")
            deal["caption"] = _deal_caption(deal)
            tricks.setdefault(g.hand_number, [])
            states.append(deal)
    # what each state's actor will do next (only where the viewer may know it)
    for k, state in enumerate(states):
        nxt = states[k + 1]["action"] if k + 1 < len(states) else None
        if nxt and state["kind"] != "hand_end" and (viewer is None or nxt["agent"] == viewer):
            state["next"] = {"agent": nxt["agent"], "label": nxt["label"]}
        else:
            state["next"] = None
    final = states[-1]
    winners = [agents[s] for s in g.winners]
    if g.done and final["winners"] is None:
        final["winners"] = winners
    meta = record.get("meta") or {}
    every_option, changed_options = rule_options(g)
    default_title = f"{record['game'].replace('_', ' ').title()} · " + " vs ".join(
        dict.fromkeys(players[a] for a in agents)
    ) + f" · seed {record.get('seed')}"
    return {
        "schema": "whist-env/replay-page",
        "game": record["game"],
        "title": title or default_title,
        "agents": agents,
        "players": players,
        "sides": _sides(g, agents),
        "viewer": viewer,
        "options": record.get("options") or {},
        "rule_options": every_option,
        "changed_options": changed_options,
        "meta": meta,
        "states": states,
        "tricks": {str(k): v for k, v in tricks.items()},
        "replay": {"ok": report.ok, "step": report.step, "message": report.message if not error else f"{report.message}; stopped at {error}"},
        "result": {"scores": dict(final["score"]), "winners": winners, "terminated": bool(g.done), "truncated": bool(g.truncated)},
    }


def _sides(g: Any, agents: list[str]) -> list[list[str]]:
    return [[agents[s] for s in g.seats_of(side)] for side in range(g.num_sides)]


def _asset(name: str) -> str:
    """The text of ``assets/<name>``, shipped as package data."""
    return resources.files("training.viewers").joinpath("assets", name).read_text(encoding="utf-8")


def render_html(data: Mapping[str, Any]) -> str:
    """The self-contained page for ``data`` (:func:`build_page_data`) as an HTML string: the
    ``assets/replay.html`` template with ``replay.css``, ``replay.js`` and the data inlined."""
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    payload = payload.replace("</", "<\\/").replace("<!--", "<\\!--")
    return (
        _asset("replay.html").replace("__TITLE__", html.escape(str(data["title"])))
        .replace("__CSS__", _asset("replay.css"))
        .replace("__JS__", _asset("replay.js"))
        .replace("__DATA__", payload)
    )


def write_replay_html(record: Mapping[str, Any], path: str | Path, viewer: str | None = None) -> Path:
    """Write the replay page of ``record`` to ``path`` (parent folders created); returns the path.

    Raises:
        ValueError: see :func:`build_page_data`.
        OSError: when the file cannot be written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(build_page_data(record, viewer=viewer)), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------- the command
def run_replay(args: Any) -> int:
    """Carry out ``whist replay`` (arguments: :func:`training.cli.configure_replay`): write the page.

    Without ``--index`` the first record is shown; when the file holds more than one, stdout
    says which one is shown, how many there are and how to pick another (``--index N``).

    Returns:
        0 when the record replays exactly; 1 when it does not (the page is still written, up to
        the first differing step, with a red banner; stderr names that step).
    Raises:
        CommandError: an unreadable file, a bad index, a malformed record (not a game record,
            a missing or ill-typed field), an unknown viewer, or a page that cannot be written;
            no page is written then.
    """
    try:
        records = read_records(args.record)
    except (OSError, ValueError) as err:
        raise CommandError(str(err)) from None
    if not records:
        raise CommandError(f"{args.record} holds no records")
    index = 0 if args.index is None else args.index
    if not -len(records) <= index < len(records):
        raise CommandError(f"--index {index} is out of range: {args.record} holds {len(records)} record(s)")
    record = records[index]
    try:
        data = build_page_data(record, viewer=args.viewer)
    except ValueError as err:
        raise CommandError(f"{args.record} record {index}: {err}") from None
    out = Path(args.html)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_html(data), encoding="utf-8")
    except OSError as err:
        raise CommandError(f"cannot write {out}: {err}") from None
    print(f"wrote {out} ({len(data['states'])} states, {len(record['actions'])} actions, {record['game']})")
    if args.index is None and len(records) > 1:
        print(f"showing record 0 of {len(records)} in {args.record} (0-based); "
              f"pick another with --index N, N from 0 to {len(records) - 1} (negative counts from the end)")
    if not data["replay"]["ok"]:
        step = data["replay"]["step"]
        where = f"first differing step {step}" if step is not None else "it differs"
        raise CommandError(f"the record does not replay ({where}): {data['replay']['message']}", status=1)
    return 0
