"""``whist play``: a person plays one game in the terminal against agents.

``whist play --game classic_whist --seat 0 --opponents heuristic [--seed S] [--option k=v]
[--record out.jsonl]``. The person sits at ``player_<seat>``; every other seat is played by an
agent built with :func:`agents.make_agent` (``random``, ``heuristic``, ``checkpoint:PATH`` or ``sb3:PATH``).

The rule options that differ from the game's defaults are printed once, at the start. Before each
of the person's decisions the table is printed from their seat only (their hand sorted by suit,
the trick on the table, trump, the game's public facts such as the turn-up, contract or bids,
tricks won and scores) with the legal actions as text: cards like ``QH``, other actions by label
(``bid:3``, ``pass``, ``bid:5:uptown``, ``trump:H``). Cards are written everywhere as
:func:`whist_env.engine.cards.card_to_str` writes them (``TS`` is the ten of spades; in a hand
grouped by suit, ``♠ A T 3``). Input is read one line at a time from stdin: a card (``QH``,
``TH``, ``10h``, ``qh``, ``th``), an action label (any case), or for Romanian bids a bare number.
Unreadable or illegal input is answered with the reason (during an auction, that no card is
played now) and asked again; ``help`` lists the legal actions, ``quit`` (or end of input)
abandons the game.
At the end the result is printed and the game record (docs/records.md) is saved, by default to
``runs/play/<game>-<date>.jsonl``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from training.errors import CommandError, Interrupted
from whist_env.engine.cards import card_from_str, card_to_str
from whist_env.envs.policy_action import policy_action
from whist_env.envs.render import said_bids

_SUIT_SYMBOL = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
_SUIT_NAME = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
_DISPLAY_SUITS = "SHCD"  # alternating colours
_RANKS = "23456789TJQKA"
#: ``options`` (the rule options) are the same at every prompt: printed once, at the start; ``history``
#: (the hand's actions as ids) is shown through ``events`` and the trick, in words.
_BASE_KEYS = frozenset(
    {"seat", "hand", "dealer", "trump", "phase", "hand_number", "scores", "tricks_won", "trick", "leader", "events", "games_won",
     "options", "history"}
)
_SEAT_KEYS = frozenset({"declarer", "grand_player", "first_player", "maker", "bidder"})


class _Quit(Exception):
    """The person left the game (``quit`` or end of input)."""


def _red(text: str, colour: bool) -> str:
    return f"\033[31m{text}\033[0m" if colour else text


def format_hand(cards: list[str] | tuple[str, ...], colour: bool = False) -> str:
    """A hand as text grouped by suit, high cards first: ``♠ A T 3   ♥ Q 4   ♣ -   ♦ K 9 2``.

    Ranks are written as in the card texts (``T`` for ten), so ``♠ T`` is typed ``TS`` (or ``10s``).

    Args:
        cards: card texts (``"QH"``, ``"TC"``, ``"JKR"``).
        colour: wrap hearts and diamonds (and the red joker) in ANSI red.
    """
    groups: dict[str, list[str]] = {s: [] for s in _DISPLAY_SUITS}
    jokers = []
    for c in cards:
        if c.startswith("JK"):
            jokers.append(c)
        else:
            groups[c[-1]].append(c[:-1])
    parts = [(_red(j, colour) if j == "JKR" else j) for j in sorted(jokers)]
    for s in _DISPLAY_SUITS:
        ranks = sorted(groups[s], key=_RANKS.index, reverse=True)
        text = f"{_SUIT_SYMBOL[s]} {' '.join(ranks) or '-'}"
        parts.append(_red(text, colour) if s in "HD" else text)
    return "   ".join(parts)


def _card_text(card: str, colour: bool) -> str:
    """A card as the person types it (``TS``, ``QH``, ``JKR``), red suits in red with ``colour``."""
    return _red(card, colour) if card == "JKR" or card[-1] in "HD" else card


def _is_card(text: Any) -> bool:
    return isinstance(text, str) and (text in ("JKR", "JKB") or (len(text) == 2 and text[0] in _RANKS and text[1] in _SUIT_SYMBOL))


def _fact(value: Any, agents: list[str], key: str, colour: bool = False) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(_fact(v, agents, "", colour) for v in value) if value else "-"
    if _is_card(value):
        return _card_text(value, colour)
    if key in _SEAT_KEYS and isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(agents):
        return agents[value]
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def describe_table(env: Any, agent: str, players: Mapping[str, str], colour: bool = False) -> str:
    """What ``agent`` sees at the table, as printable lines (never another player's hidden cards).

    Built only from ``env.information_state(agent)`` and the env's infos (scores, tricks).

    Args:
        env: a raw env of any game of the suite.
        agent: the viewing agent (``player_k``).
        players: agent -> label (``"you"``, ``"heuristic"`` …).
        colour: ANSI red for red suits.
    """
    view = env.information_state(agent)
    agents = list(env.possible_agents)
    info = env.infos[agent]
    trump = view["trump"]
    trump_text = f"{_SUIT_SYMBOL[trump]} {_SUIT_NAME[trump]}" if trump else "none"
    lines = [
        f"--- hand {view['hand_number'] + 1} · phase {view['phase']} · dealer {agents[view['dealer']]} · trump {trump_text}",
    ]
    per_seat = []
    for key, value in said_bids(view, view["events"]).items():
        if key in _BASE_KEYS or value is None:
            continue
        label = key.replace("_", " ")
        if isinstance(value, (list, tuple)) and len(value) == len(agents) and key not in ("hand",):
            shown = [f"{agents[s]} {_fact(v, agents, '', colour)}" for s, v in enumerate(value) if v is not None and v != ()]
            if shown:
                per_seat.append(f"{label}: " + ", ".join(shown))
        else:
            lines.append(f"{label}: {_fact(value, agents, key, colour)}")
    lines.extend(per_seat)
    sides: dict[int, list[str]] = {}
    for s, a in enumerate(agents):
        sides.setdefault(env.game.side_of(s), []).append(a)
    lines.append("score: " + " | ".join(f"{' + '.join(m)} {info['score'][m[0]]}" for m in sides.values()))
    lines.append("tricks: " + ", ".join(f"{a}{' (you)' if a == agent else ''} {info['tricks_won'][a]}" for a in agents))
    if view["trick"]:
        lines.append("trick: " + ", ".join(f"{agents[s]} {_card_text(c, colour)}" for s, c in view["trick"]))
    else:
        lines.append("trick: (empty)")
    lines.append(f"your hand: {format_hand(view['hand'], colour)}")
    return "\n".join(lines)


def _normal(label: str) -> str:
    return label.strip().lower().replace(" ", "")


def parse_action(env: Any, text: str, legal: list[int]) -> tuple[int | None, str]:
    """Read one line of the person's input.

    Args:
        env: the raw env (the person is to act).
        text: the line typed.
        legal: the legal action ids now.
    Returns:
        ``(action, "")`` for a legal action, or ``(None, reason)`` saying why the text is not one.
    """
    raw = text.strip()
    if not raw:
        return None, "empty input: type a card such as QH, TH or 10h, or an action label; 'help' lists them"
    labels = {_normal(env.action_label(a)): a for a in legal}
    key = _normal(raw)
    if key in labels:
        return labels[key], ""
    if key.isdigit() and f"bid:{key}" in labels:  # "3" for "bid:3"
        return labels[f"bid:{key}"], ""
    for alias in (raw, f"bid:{key}") if key.isdigit() else (raw,):  # the game's other spellings: Spades' "bid:0" is nil
        try:
            action = env.game.action_id(alias)
        except ValueError:
            continue
        if action in legal:
            return action, ""
    card = None
    try:
        card = card_from_str(raw)
    except ValueError:
        pass
    if card is not None and card in legal:  # "10h", "th"
        return card, ""
    all_labels = {}
    for a in range(env.game.num_actions):
        all_labels[_normal(env.action_label(a))] = a
    if card is None and key not in all_labels:
        return None, f"cannot read {raw!r}: type a card such as QH, TH, 10h or qh, or one of: {_legal_text(env, legal)}"
    view = env.information_state(env.agent_selection)
    if card is not None:
        text_card = card_to_str(card)
        if not any(a < env.game.NUM_CARD_ACTIONS for a in legal):
            return None, f"{text_card}: no card is played now, this is the {_phase_text(view['phase'])}; legal: {_legal_text(env, legal)}"
        if text_card not in view["hand"]:
            return None, f"you do not hold {text_card}; your cards: {' '.join(sorted(view['hand'], key=_display_key))}"
        if view["trick"] and view["phase"] in env.game.CARD_PLAY_PHASES:
            led = view["trick"][0][1]
            return None, f"{text_card} is not legal: you must follow suit ({led} was led) while you can; legal: {_legal_text(env, legal)}"
        return None, f"{text_card} is not legal now; legal: {_legal_text(env, legal)}"
    return None, f"{raw!r} is not legal now (phase {view['phase']}); legal: {_legal_text(env, legal)}"


_PHASE_TEXT = {
    "auction": "auction (bid or pass)",
    "bid": "bidding",
    "declare": "declaration (name trump or a direction)",
}


def _phase_text(phase: str) -> str:
    return _PHASE_TEXT.get(phase, f"{phase.replace('_', ' ')} phase")


def _display_key(label: str) -> tuple[int, int, str]:
    if _is_card(label) and not label.startswith("JK"):
        return (1 + _DISPLAY_SUITS.index(label[1]), -_RANKS.index(label[0]), label)
    return (0, 0, label)


def _legal_text(env: Any, legal: list[int]) -> str:
    """The legal actions' labels: the other actions (bids, calls) in action-id order (bid:nil, bid:1,
    bid:2 … bid:13, not text order), then the cards in the hand's display order (♠ ♥ ♣ ♦, high first)."""
    def order(label_action: tuple[str, int]) -> tuple[int, int, str]:
        label, action = label_action
        key = _display_key(label)
        return key if key[0] else (0, action, label)  # a card's display key, else the action id

    return " ".join(label for label, _ in sorted(((env.action_label(a), int(a)) for a in legal), key=order))


def rules_line(game: Any) -> str:
    """One line naming the rule options of ``game`` (a rules object) that differ from its defaults."""
    from training.viewers.replay import rule_options

    _, changed = rule_options(game)
    if not changed:
        return "rules: the game's defaults"
    text = ", ".join(f"{k}={' '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in changed.items())
    return f"rules: {text} (other options at their defaults)"


def default_record_path(game: str) -> Path:
    """``runs/play/<game>-<YYYYmmdd-HHMMSS>.jsonl`` (relative to the working directory)."""
    return Path("runs") / "play" / f"{game}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"


def play_game(
    game: str,
    seat: int,
    opponents: str,
    seed: int | None = None,
    options: Mapping[str, Any] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    colour: bool | None = None,
) -> dict[str, Any] | None:
    """Play one episode with a person at ``player_<seat>`` reading ``stdin`` and writing ``stdout``.

    Args:
        game: a key of ``whist_env.GAMES``.
        seat: the person's seat, 0-based.
        opponents: agent spec for every other seat (:func:`agents.make_agent`).
        seed: seed of the deal and of the opponents (``None``: random).
        options: rule options of the game.
        stdin, stdout: text streams (default: ``sys.stdin``, ``sys.stdout``).
        colour: ANSI colours (default: when ``stdout`` is a terminal).
    Returns:
        the game record, or ``None`` when the person left before the end.
    Raises:
        ValueError: on an unknown game, a bad option, seat or opponent spec.
    """
    from agents.registry import make_agent
    from whist_env import GAMES
    from whist_env.records import GameRecorder

    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    if colour is None:
        colour = bool(getattr(out, "isatty", lambda: False)())
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; games: {sorted(GAMES)}")
    options = dict(options or {})
    env = GAMES[game].raw_env(**options)
    agents = list(env.possible_agents)
    if not 0 <= seat < len(agents):
        raise ValueError(f"seat {seat} does not exist: {game} has seats 0..{len(agents) - 1}")
    human = agents[seat]
    policies = {a: make_agent(opponents, game, seed=None if seed is None else seed + 1 + i) for i, a in enumerate(agents) if a != human}
    players = {a: ("human" if a == human else opponents) for a in agents}
    env.reset(seed=seed)
    recorder = GameRecorder(env, game, options, seed, None, players, meta={"human": human, "date": time.strftime("%Y-%m-%d %H:%M:%S")})
    recorder.start()
    g = env.game

    def say(text: str = "", end: str = "\n") -> None:
        print(text, file=out, flush=True, end=end)

    side_names = {}
    for s, a in enumerate(agents):
        side_names.setdefault(g.side_of(s), []).append(a)
    say(f"{game.replace('_', ' ')}: you are {human}; opponents: {opponents}. Type 'help' for the legal actions, 'quit' to leave.")
    say(rules_line(g))
    if g.PARTNERSHIPS:
        partner = [a for a in side_names[g.side_of(seat)] if a != human]
        say(f"your partner: {', '.join(partner)}")
    hand_shown = -1
    while not (g.done or g.truncated):
        agent = env.agent_selection
        hand_number = g.hand_number
        if hand_number != hand_shown:
            hand_shown = hand_number
            say(f"\n=== hand {hand_number + 1}, dealt by {agents[g.dealer]} ===")
        if agent == human:
            say()
            say(describe_table(env, human, players, colour))
            action = _ask(env, stdin, say)
        else:
            action = policy_action(policies[agent], env, agent)
        phase = g.phase
        entry = recorder.pre_step(agent, action)
        env.step(action)
        recorder.after_step(entry)
        label = env.action_label(action)
        hidden = agent != human and phase not in g.CARD_PLAY_PHASES and action < g.NUM_CARD_ACTIONS
        who = "you" if agent == human else agent
        if phase in g.CARD_PLAY_PHASES:
            say(f"{who} play{'s' if agent != human else ''} {_card_text(label, colour)}")
        else:
            say(f"{who}: {'a card, face down' if hidden else label}")
        info = env.infos[agent]
        if "last_trick" in info:
            w = info["last_trick"]["winner"]
            say(f"  -> trick to {'you' if w == human else w}")
        if g.hand_number != hand_number or g.done or g.truncated:
            pts = " | ".join(f"{' + '.join(m)} {info['hand_points'][m[0]]:+d}" for m in side_names.values())
            total = " | ".join(f"{' + '.join(m)} {info['score'][m[0]]}" for m in side_names.values())
            say(f"hand {hand_number + 1} over: points {pts}; score {total}")
    record = recorder.finish()
    result = record["result"]
    say("\n=== game over ===" if g.done else "\n=== stopped (hand limit reached) ===")
    say("final score: " + " | ".join(f"{' + '.join(m)} {result['scores'][m[0]]}" for m in side_names.values()))
    winners = result["winners"]
    if winners:
        say(f"winners: {', '.join(winners)} — " + ("you win!" if human in winners else "you lose."))
    else:
        say("no winner")
    return record


def _ask(env: Any, stdin: TextIO, say: Any) -> int:
    legal = env.game.legal_action_list()
    say(f"legal: {_legal_text(env, legal)}")
    while True:
        say("your move> ", end="")
        line = stdin.readline()
        if line == "":
            raise _Quit("end of input")
        text = line.strip()
        if text.lower() in ("quit", "exit", "q"):
            raise _Quit("quit")
        if text.lower() in ("help", "?", "h"):
            say(f"legal: {_legal_text(env, legal)}  (cards as QH / TH / 10h / qh; 'quit' leaves)")
            continue
        action, reason = parse_action(env, text, legal)
        if action is not None:
            return action
        say(f"rejected: {reason}")


# ---------------------------------------------------------------------------------- the command
def run_play(args: Any) -> int:
    """Carry out ``whist play`` (arguments: :func:`training.cli.configure_play`); returns 0 when
    the game was played (or left by the person).

    Raises:
        CommandError: a bad game, seat, option or opponent spec (status 2), or a record that
            cannot be written (status 1).
        Interrupted: Ctrl-C; the game is abandoned and no record saved.
    """
    from whist_env.records import write_records

    try:
        record = play_game(args.game, args.seat, args.opponents, seed=args.seed, options=dict(args.option))
    except _Quit as why:
        print(f"\n{'end of input' if str(why) == 'end of input' else 'you left'}: game abandoned, no record saved", flush=True)
        return 0
    except KeyboardInterrupt:
        raise Interrupted("game abandoned, no record saved") from None
    except (ValueError, TypeError, OSError, ImportError, RuntimeError, KeyError) as err:
        raise CommandError(str(err)) from None
    path = Path(args.record) if args.record else default_record_path(args.game)
    try:
        write_records([record], path)
    except OSError as err:
        raise CommandError(f"cannot save the record to {path}: {err}", status=1) from None
    print(f"record saved to {path} (view it: whist replay {path} --html replay.html)")
    return 0


__all__ = ["default_record_path", "describe_table", "format_hand", "parse_action", "play_game", "rules_line", "run_play"]
