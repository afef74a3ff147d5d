"""``whist replay``: a self-contained HTML page that steps through a game record (issue 6, item 5).

``whist replay RECORD.jsonl [--index N] [--viewer player_k] --html out.html`` replays record ``N``
of a JSON Lines file of game records (docs/records.md) through its game's environment and writes
one HTML file with inline CSS and JavaScript (no network access, no external fonts) that shows,
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

import argparse
import dataclasses
import html
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whist_env.records import read_records, replay_record

#: Keys of ``information_state`` that every game has; the rest are the game's own facts. The rule
#: ``options`` are the same for every seat and state: the page shows them once, in its header.
_BASE_KEYS = frozenset(
    {"seat", "hand", "dealer", "trump", "phase", "hand_number", "scores", "tricks_won", "trick", "leader", "events", "games_won",
     "options"}
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

    def visible(self) -> list[str]:
        return [self.viewer] if self.viewer else list(self.agents)

    def snapshot(self, kind: str) -> dict[str, Any]:
        """The state of the table now (``kind``: ``"deal"`` or ``"action"``)."""
        env, g, agents = self.env, self.g, self.agents
        views = {a: env.information_state(a) for a in agents}
        ref = views[self.viewer or agents[0]]
        public = dict(g.public_state())
        facts, per_agent, per_side = _split_facts(public, agents, g.num_sides)
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
        ``phase``, ``hand_number``, ``dealer``, ``to_act``, ``trump``, ``hands`` (agent -> sorted
        card texts, visible agents only), ``counts``, ``table`` (``cards`` agent -> card,
        ``leader``, ``winner``), ``tricks_won``, ``score``, ``hand_points``, ``facts``,
        ``agent_facts``, ``side_facts``, ``private``, ``action``, ``caption``, ``stop`` (a
        trick-by-trick stopping point), ``tricks_done``, ``winners``), ``tricks`` (hand number
        -> completed tricks), ``replay`` (the :func:`~whist_env.records.replay_record` report),
        ``result`` (as replayed: ``scores``, ``winners``), ``options`` (the record's options),
        ``rule_options`` (every rule option in force) and ``changed_options`` (those that differ
        from the game's defaults): the page shows the rule options once, in its header.
    Raises:
        ValueError: on a record that is not a game record, an unknown game, or an unknown viewer.
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
    actions = record.get("actions") or []
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
        # a card put down face down (a bid card, a discard) is hidden from a viewer who is not its owner
        hidden = viewer is not None and agent != viewer and not is_card and action < g.NUM_CARD_ACTIONS
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


def render_html(data: Mapping[str, Any]) -> str:
    """The self-contained page for ``data`` (:func:`build_page_data`) as an HTML string."""
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    payload = payload.replace("</", "<\\/").replace("<!--", "<\\!--")
    return (
        _PAGE.replace("__TITLE__", html.escape(str(data["title"])))
        .replace("__CSS__", _CSS)
        .replace("__JS__", _JS)
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


# ---------------------------------------------------------------------------------- command line
def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the ``whist replay`` arguments to ``parser``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (
        "Keys in the page: → / ← one action, ↓ / ↑ (PageDown / PageUp) one trick, Home / End.\n\n"
        "example: whist replay runs/records/classic_whist__heuristic__vs__random.jsonl --index 3 --html replay.html"
    )
    parser.add_argument("record", metavar="RECORD.jsonl", help="JSON Lines file of game records (docs/records.md)")
    parser.add_argument("--index", type=int, default=0, help="which record of the file, 0-based; negative counts from the end (default: %(default)s)")
    parser.add_argument("--viewer", default=None, metavar="AGENT", help="show only this agent's cards, e.g. player_0 (default: every hand)")
    parser.add_argument("--html", required=True, metavar="OUT.html", help="the page to write")


def _error(message: str) -> int:
    print(f"whist replay: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run ``whist replay``: write the page; returns 0, or 2 on an unreadable file, a bad index,
    a record that is not a game record, or an unknown viewer. A record whose replay does not
    reproduce it is still written (up to the first differing step), with a warning."""
    try:
        records = read_records(args.record)
    except (OSError, ValueError) as err:
        return _error(str(err))
    if not records:
        return _error(f"{args.record} holds no records")
    if not -len(records) <= args.index < len(records):
        return _error(f"--index {args.index} is out of range: {args.record} holds {len(records)} record(s)")
    record = records[args.index]
    try:
        data = build_page_data(record, viewer=args.viewer)
    except ValueError as err:
        return _error(str(err))
    if not data["replay"]["ok"]:
        print(f"whist replay: warning: the record does not replay exactly: {data['replay']['message']}", file=sys.stderr)
    out = Path(args.html)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_html(data), encoding="utf-8")
    except OSError as err:
        return _error(f"cannot write {out}: {err}")
    n = len(data["states"])
    print(f"wrote {out} ({n} states, {len(record.get('actions') or [])} actions, {record['game']})")
    return 0


# ---------------------------------------------------------------------------------- the page
_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>__CSS__</style>
</head>
<body>
<header>
  <h1 id="title">__TITLE__</h1>
  <div id="subtitle"></div>
  <details id="rules"><summary id="rules-summary">rule options</summary><div id="rules-all"></div></details>
  <div id="mismatch" class="banner" hidden></div>
</header>
<main>
  <section id="board" aria-label="table"></section>
  <aside id="panel">
    <div class="box"><h2>Hand</h2><dl id="facts"></dl></div>
    <div class="box"><h2>Score</h2><div id="score" data-scores="{}"></div>
      <div id="final-score" hidden></div></div>
    <div class="box"><h2>Tricks this hand</h2><ol id="tricks"></ol></div>
    <div class="box"><h2>Actions this hand</h2><div id="log"></div></div>
  </aside>
</main>
<footer>
  <div id="caption" aria-live="polite"></div>
  <div id="controls">
    <button id="first" title="first (Home)">&#x21E4; first</button>
    <button id="prev-trick" title="previous trick (&#x2191; / PageUp)">&laquo; trick</button>
    <button id="prev" title="previous action (&#x2190;)">&#x2039; prev</button>
    <span id="step" data-step="0">0 / 0</span>
    <button id="next" title="next action (&#x2192;)">next &#x203A;</button>
    <button id="next-trick" title="next trick (&#x2193; / PageDown)">trick &raquo;</button>
    <button id="last" title="last (End)">last &#x21E5;</button>
    <input id="slider" type="range" min="0" max="0" value="0" aria-label="step">
  </div>
  <div class="help">&#x2190; &#x2192; action &middot; &#x2191; &#x2193; trick &middot; Home / End</div>
</footer>
<script id="data" type="application/json">__DATA__</script>
<script>__JS__</script>
</body>
</html>
"""

_CSS = """
:root { --felt:#1f6f4a; --felt-dark:#175a3b; --ink:#1d2330; --muted:#5b6475; --red:#c8102e; --gold:#f2b705; --panel:#ffffff; }
* { box-sizing: border-box; }
body { margin:0; font-family: "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; color:var(--ink); background:#eef1f5; }
header { padding:10px 18px 4px; }
h1 { font-size:20px; margin:0; }
#subtitle { color:var(--muted); font-size:13px; margin-top:2px; }
#rules { color:var(--muted); font-size:12px; margin-top:2px; }
#rules summary { cursor:pointer; }
#rules-all { columns:3 220px; padding:4px 0 2px 14px; } #rules-all div { break-inside:avoid; } #rules-all b { color:var(--ink); font-weight:600; }
.banner { margin-top:6px; padding:6px 10px; background:#fde8e8; color:#8a1020; border:1px solid #f3b4b4; border-radius:6px; font-size:13px; }
main { display:flex; gap:14px; padding:8px 18px; align-items:flex-start; }
#board { flex:1 1 auto; min-width:640px; background:radial-gradient(ellipse at center, var(--felt) 0%, var(--felt-dark) 100%);
  border-radius:18px; padding:14px; display:grid; grid-template-columns:1fr 1.15fr 1fr; grid-template-rows:auto minmax(210px,auto) auto; gap:12px;
  box-shadow: inset 0 0 40px rgba(0,0,0,.25); }
.seat { background:rgba(255,255,255,.93); border-radius:12px; padding:8px 10px; min-height:90px; border:3px solid transparent; }
.seat.to-act { border-color:var(--gold); box-shadow:0 0 0 3px rgba(242,183,5,.35); }
.seat .name { font-weight:700; font-size:14px; display:flex; gap:6px; align-items:center; flex-wrap:wrap; }
.seat .label { font-weight:400; color:var(--muted); font-size:12px; }
.tag { font-size:11px; font-weight:700; padding:1px 6px; border-radius:9px; background:#dfe5ee; color:#334; }
.tag.dealer { background:#334; color:#fff; }
.tag.tricks { background:#e7f3ec; color:#175a3b; }
.tag.act { background:var(--gold); color:#332400; }
.seat .facts { font-size:12px; color:var(--muted); margin:3px 0 2px; }
.seat .facts b { color:var(--ink); font-weight:600; }
.hand { display:flex; flex-wrap:wrap; gap:4px 10px; margin-top:5px; }
.suit { display:flex; gap:2px; }
.card { display:inline-flex; align-items:center; justify-content:center; min-width:30px; height:40px; padding:0 4px; border-radius:5px;
  background:#fff; border:1px solid #b9c0cc; font-weight:700; font-size:16px; color:#111; box-shadow:0 1px 1px rgba(0,0,0,.15); white-space:nowrap; }
.card.red { color:var(--red); }
.card.next { outline:3px dashed var(--gold); outline-offset:1px; }
.card.back { min-width:18px; width:18px; padding:0; margin-right:-8px; background:repeating-linear-gradient(45deg,#2b4c8c,#2b4c8c 3px,#3d63ad 3px,#3d63ad 6px); border-color:#fff; }
.inline-card { font-weight:700; white-space:nowrap; }
.inline-card.red { color:var(--red); }
.empty { color:var(--muted); font-size:12px; font-style:italic; }
#table { grid-column:2; grid-row:2; position:relative; border-radius:50%; border:2px dashed rgba(255,255,255,.35); min-height:210px; }
#table .slot { position:absolute; transform:translate(-50%,-50%); text-align:center; }
#table .slot .card { min-width:44px; height:60px; font-size:22px; }
#table .slot .who { font-size:11px; color:#e8f5ee; margin-top:2px; }
#table .slot.winner .card { border:3px solid var(--gold); box-shadow:0 0 12px rgba(242,183,5,.9); }
#table .center { position:absolute; left:50%; top:50%; transform:translate(-50%,-50%); color:#e8f5ee; font-size:12px; text-align:center; }
#table .center .trump { font-size:30px; line-height:1; }
#table .center .trump.red { color:#ff8a9a; }
.pos-S { grid-column:2; grid-row:3; } .pos-N { grid-column:2; grid-row:1; } .pos-W { grid-column:1; grid-row:2; } .pos-E { grid-column:3; grid-row:2; }
.pos-NW { grid-column:1; grid-row:1; } .pos-NE { grid-column:3; grid-row:1; } .pos-SW { grid-column:1; grid-row:3; } .pos-SE { grid-column:3; grid-row:3; }
#panel { flex:0 0 300px; display:flex; flex-direction:column; gap:10px; }
.box { background:var(--panel); border-radius:10px; padding:8px 12px; box-shadow:0 1px 3px rgba(0,0,0,.1); }
.box h2 { font-size:12px; text-transform:uppercase; letter-spacing:.06em; color:var(--muted); margin:0 0 6px; }
dl { display:grid; grid-template-columns:auto 1fr; gap:3px 10px; margin:0; font-size:13px; }
dt { color:var(--muted); } dd { margin:0; font-weight:600; }
#score table { width:100%; border-collapse:collapse; font-size:13px; }
#score th { text-align:left; color:var(--muted); font-weight:400; font-size:11px; }
#score td { padding:2px 0; } #score td.num { text-align:right; font-weight:700; font-variant-numeric:tabular-nums; }
#final-score { margin-top:6px; padding:6px 8px; background:#fff7d6; border:1px solid #f2d36b; border-radius:6px; font-size:13px; font-weight:600; }
#tricks { margin:0; padding-left:22px; font-size:13px; max-height:220px; overflow:auto; }
#tricks li { margin:1px 0; } #tricks .w { color:var(--muted); font-size:12px; }
#log { font-size:12px; line-height:1.55; max-height:170px; overflow:auto; position:relative; }
#log .cur { background:#fff1b8; border-radius:3px; padding:0 2px; }
footer { position:sticky; bottom:0; background:#fff; border-top:1px solid #d6dbe3; padding:8px 18px; }
#caption { font-size:15px; min-height:22px; margin-bottom:6px; }
#controls { display:flex; align-items:center; gap:6px; flex-wrap:wrap; }
button { font:inherit; font-size:14px; padding:5px 12px; border-radius:7px; border:1px solid #b9c0cc; background:#f7f8fa; cursor:pointer; }
button:hover:not(:disabled) { background:#e8ecf2; } button:disabled { opacity:.45; cursor:default; }
#next { background:#1f6f4a; color:#fff; border-color:#175a3b; } #next:hover:not(:disabled) { background:#175a3b; }
#step { min-width:90px; text-align:center; font-variant-numeric:tabular-nums; font-weight:600; }
#slider { flex:1 1 160px; min-width:120px; }
.help { color:var(--muted); font-size:11px; margin-top:4px; }
"""

_JS = r"""
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("data").textContent);
  var S = DATA.states, AG = DATA.agents, N = AG.length;
  var SYM = {S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663"};
  var POS = {2: ["S", "N"], 3: ["S", "W", "E"], 4: ["S", "W", "N", "E"], 5: ["S", "W", "NW", "NE", "E"], 6: ["S", "W", "NW", "N", "NE", "E"]};
  var SLOT = {S: [50, 80], N: [50, 20], W: [18, 50], E: [82, 50], NW: [28, 24], NE: [72, 24], SW: [28, 76], SE: [72, 76]};
  var south = DATA.viewer ? AG.indexOf(DATA.viewer) : 0;
  var posOf = {};
  AG.forEach(function (a, i) { posOf[a] = (POS[N] || POS[4])[(i - south + N) % N] || "S"; });
  var cur = 0;
  var $ = function (id) { return document.getElementById(id); };
  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]; }); }
  function isRed(c) { return c === "JKR" || /[HD]$/.test(c); }
  function cardFace(c) {
    if (c === "JKR" || c === "JKB") return "Jk\u2605";
    var r = c.slice(0, -1); return (r === "T" ? "10" : r) + SYM[c.slice(-1)];
  }
  function card(c, extra) { return '<span class="card' + (isRed(c) ? " red" : "") + (extra ? " " + extra : "") + '" title="' + esc(c) + '">' + esc(cardFace(c)) + "</span>"; }
  function fmt(text) {
    return esc(text).replace(/\b(10|[2-9TJQKA])([CDHS])\b|\bJK[RB]\b/g, function (m) {
      var c = m.indexOf("10") === 0 ? "T" + m.slice(2) : m;
      return '<span class="inline-card' + (isRed(c) ? " red" : "") + '">' + esc(cardFace(c)) + "</span>";
    });
  }
  function sideOf(a) { for (var i = 0; i < DATA.sides.length; i++) if (DATA.sides[i].indexOf(a) >= 0) return i; return 0; }
  function handHtml(st, a) {
    var cards = st.hands[a];
    if (!cards) {
      var n = st.counts[a], h = "";
      for (var i = 0; i < n; i++) h += '<span class="card back"></span>';
      return '<div class="hand"><div class="suit">' + (h || '<span class="empty">no cards</span>') + "</div>" + (n ? '<span class="empty" style="margin-left:10px">' + n + " cards</span>" : "") + "</div>";
    }
    if (!cards.length) return '<div class="hand"><span class="empty">no cards</span></div>';
    var groups = [], last = null;
    cards.forEach(function (c) { var s = c.indexOf("JK") === 0 ? "J" : c.slice(-1); if (s !== last) { groups.push([]); last = s; } groups[groups.length - 1].push(c); });
    var nxt = st.next && st.next.agent === a ? st.next.label : null;
    return '<div class="hand">' + groups.map(function (g) { return '<div class="suit">' + g.map(function (c) { return card(c, c === nxt ? "next" : ""); }).join("") + "</div>"; }).join("") + "</div>";
  }
  function renderBoard(st) {
    var h = "";
    AG.forEach(function (a) {
      var tags = "";
      if (st.dealer === a) tags += '<span class="tag dealer" title="dealer">D</span>';
      tags += '<span class="tag tricks" title="tricks won this hand">' + st.tricks_won[a] + " tricks</span>";
      if (st.to_act === a) tags += '<span class="tag act">to act</span>';
      var facts = (st.agent_facts[a] || []).concat(st.private[a] || []);
      var fh = facts.length ? '<div class="facts">' + facts.map(function (f) { return esc(f[0]) + ": <b>" + fmt(f[1]) + "</b>"; }).join(" &middot; ") + "</div>" : "";
      var nxt = st.next && st.next.agent === a && !(st.hands[a] || []).includes(st.next.label) ? '<div class="facts">next: <b>' + fmt(st.next.label) + "</b></div>" : "";
      h += '<div class="seat pos-' + posOf[a] + (st.to_act === a ? " to-act" : "") + '" id="seat-' + a + '"><div class="name">' + esc(a) +
        ' <span class="label">' + esc(DATA.players[a]) + "</span>" + tags + "</div>" + fh + nxt + handHtml(st, a) + "</div>";
    });
    var t = '<div id="table">';
    var tr = st.table || {cards: {}};
    Object.keys(tr.cards).forEach(function (a) {
      var p = SLOT[posOf[a]];
      t += '<div class="slot' + (tr.winner === a ? " winner" : "") + '" style="left:' + p[0] + "%;top:" + p[1] + '%">' + card(tr.cards[a]) +
        '<div class="who">' + esc(a) + (tr.leader === a ? " (led)" : "") + "</div></div>";
    });
    var trump = st.trump ? '<div class="trump' + (isRed(st.trump) ? " red" : "") + '">' + SYM[st.trump] + "</div>trump" : '<div class="trump">&ndash;</div>no trump';
    if (!Object.keys(tr.cards).length) t += '<div class="center">' + trump + '<br><span style="opacity:.8">' + esc(st.phase) + "</span></div>";
    else if (tr.winner) t += '<div class="center" style="top:50%"><b>' + esc(tr.winner) + "</b><br>wins</div>";
    t += "</div>";
    $("board").innerHTML = h + t;
  }
  function renderPanel(st, i) {
    var f = [["hand", (st.hand_number + 1) + (st.game_number ? " (game " + (st.game_number + 1) + ")" : "")], ["phase", st.phase], ["dealer", st.dealer],
      ["trump", st.trump ? st.trump : "none"]];
    f = f.concat(st.facts);
    $("facts").innerHTML = f.map(function (x) {
      var v = x[0] === "trump" && st.trump ? '<span class="inline-card' + (isRed(st.trump) ? " red" : "") + '">' + SYM[st.trump] + "</span>" : fmt(x[1]);
      return "<dt>" + esc(x[0]) + "</dt><dd>" + v + "</dd>";
    }).join("");
    var rows = DATA.sides.map(function (side, k) {
      var a = side[0], tricks = side.reduce(function (s, b) { return s + st.tricks_won[b]; }, 0);
      var hp = st.hand_points ? (st.hand_points[a] >= 0 ? "+" : "") + st.hand_points[a] : "";
      var extra = st.side_facts.map(function (x) { return x[0] + " " + x[1].split(" / ")[k]; }).join(", ");
      return '<tr><td>' + esc(side.join(" + ")) + (extra ? ' <span class="label">' + esc(extra) + "</span>" : "") + '</td><td class="num">' + tricks + '</td><td class="num">' + hp +
        '</td><td class="num score-value" data-side="' + k + '">' + st.score[a] + "</td></tr>";
    }).join("");
    var head = "<tr><th>side</th><th>tricks</th><th>hand</th><th style='text-align:right'>score</th></tr>";
    $("score").innerHTML = "<table>" + head + rows + "</table>";
    $("score").setAttribute("data-scores", JSON.stringify(st.score));
    var fin = $("final-score");
    if (i === S.length - 1) {
      var txt = "Final score: " + DATA.sides.map(function (side) { return side.join(" + ") + " " + st.score[side[0]]; }).join(", ");
      if (DATA.result.winners.length) txt += ". Winners: " + DATA.result.winners.join(", ");
      else if (DATA.result.truncated) txt += " (truncated)";
      fin.textContent = txt; fin.hidden = false; fin.setAttribute("data-scores", JSON.stringify(st.score));
    } else { fin.hidden = true; fin.textContent = ""; }
    var tricks = (DATA.tricks[String(st.hand_number)] || []).slice(0, st.tricks_done);
    $("tricks").innerHTML = tricks.length ? tricks.map(function (t) {
      var order = [], k = AG.indexOf(t.leader);
      for (var j = 0; j < N; j++) { var a = AG[(k + j) % N]; if (t.cards[a]) order.push(t.cards[a]); }
      return "<li>" + order.map(function (c) { return fmt(c); }).join(" ") + ' <span class="w">&rarr; ' + esc(t.winner) + "</span></li>";
    }).join("") : '<span class="empty">none yet</span>';
    var start = i; while (start > 0 && S[start].kind !== "deal") start--;
    var log = [];
    for (var j = start; j <= i; j++) if (S[j].action) log.push('<span' + (j === i ? ' class="cur"' : "") + ">" + esc(S[j].action.agent.replace("player_", "P")) + ": " + fmt(S[j].action.label) + "</span>");
    $("log").innerHTML = log.length ? log.join(" &middot; ") : '<span class="empty">none yet</span>';
    var box = $("log"), cl = box.querySelector(".cur");
    box.scrollTop = cl ? Math.max(0, cl.offsetTop - box.clientHeight / 2) : 0;
  }
  function show(i) {
    cur = Math.max(0, Math.min(S.length - 1, i));
    var st = S[cur];
    renderBoard(st); renderPanel(st, cur);
    $("caption").innerHTML = fmt(st.caption);
    $("step").textContent = cur + " / " + (S.length - 1);
    $("step").setAttribute("data-step", String(cur));
    $("slider").value = String(cur);
    $("prev").disabled = $("first").disabled = $("prev-trick").disabled = cur === 0;
    $("next").disabled = $("last").disabled = $("next-trick").disabled = cur === S.length - 1;
  }
  function nextStop(i) { for (var j = i + 1; j < S.length; j++) if (S[j].stop) return j; return S.length - 1; }
  function prevStop(i) { for (var j = i - 1; j > 0; j--) if (S[j].stop) return j; return 0; }
  $("next").onclick = function () { show(cur + 1); };
  $("prev").onclick = function () { show(cur - 1); };
  $("first").onclick = function () { show(0); };
  $("last").onclick = function () { show(S.length - 1); };
  $("next-trick").onclick = function () { show(nextStop(cur)); };
  $("prev-trick").onclick = function () { show(prevStop(cur)); };
  $("slider").max = String(S.length - 1);
  $("slider").oninput = function () { show(parseInt(this.value, 10)); };
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "INPUT" && e.target.type !== "range") return;
    var k = e.key, handled = true;
    if (k === "ArrowRight") show(e.shiftKey ? nextStop(cur) : cur + 1);
    else if (k === "ArrowLeft") show(e.shiftKey ? prevStop(cur) : cur - 1);
    else if (k === "ArrowDown" || k === "PageDown") show(nextStop(cur));
    else if (k === "ArrowUp" || k === "PageUp") show(prevStop(cur));
    else if (k === "Home") show(0);
    else if (k === "End") show(S.length - 1);
    else handled = false;
    if (handled) e.preventDefault();
  });
  function optText(v) { return Array.isArray(v) ? v.join(" ") : v === null ? "none" : String(v); }
  var changed = Object.keys(DATA.changed_options || {});
  $("rules-summary").textContent = changed.length ? "rules: " + changed.map(function (k) { return k + "=" + optText(DATA.changed_options[k]); }).join(", ")
    : "rules: the game's defaults";
  $("rules-all").innerHTML = Object.keys(DATA.rule_options || {}).map(function (k) {
    return "<div>" + esc(k) + " = <b>" + esc(optText(DATA.rule_options[k])) + "</b></div>";
  }).join("");
  var sub = [];
  if (DATA.meta && DATA.meta.match) sub.push(DATA.meta.match + (DATA.meta.deal_index !== undefined ? ", deal " + DATA.meta.deal_index : ""));
  if (DATA.viewer) sub.push("viewer: " + DATA.viewer + " (other hands hidden)");
  $("subtitle").textContent = sub.join(" \u00b7 ");
  $("subtitle").hidden = !sub.length;
  if (!DATA.replay.ok) { $("mismatch").hidden = false; $("mismatch").textContent = "This record does not replay exactly: " + DATA.replay.message; }
  show(0);
})();
"""
