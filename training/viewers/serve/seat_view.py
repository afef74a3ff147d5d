"""What one seat sees at the table now, as a JSON-ready dict for its browser.

A seat's view is built only from ``env.observe(agent)`` (its legal actions),
``env.information_state(agent)`` (its hand, the trick, trump, the public facts of the hand and
its own private facts) and public facts of the table (how many cards each player holds, the
infos' tricks won and scores). Nothing here reads another seat's hidden cards, the rules
object's hands or the global ``state()``; :func:`card_texts` finds every card text in a value,
which the tests use to check that claim on every message a seat receives.

The event log of a hand (``information_state(agent)["events"]``: calls, the contract, discards
face down, the turn-up, stock cards, bid cards shown, cards played, tricks won) is written as
text by :func:`event_text`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# the replay page's display helpers: the live table draws the same facts the same way
from training.viewers.replay import _BASE_KEYS, _split_facts, sort_cards
from whist_env.envs.render import said_bids

#: A card text as the environment writes it: rank then suit (``"TC"`` is the ten of clubs) or a joker.
CARD_TEXT = re.compile(r"\b(?:[2-9TJQKA][CDHS]|JK[RB])\b")

#: How each kind of event of ``information_state(agent)["events"]`` reads, by ``(kind, number of
#: values after the kind)``; ``{0}``, ``{1}`` are those values (seats already as agent names).
_EVENT_TEXT = {
    ("play", 2): "{0} plays {1}",
    ("trick", 2): "{1} wins the trick",
    ("call", 2): "{0}: {1}",
    ("bid", 2): "{0} bids {1}",
    ("contract", 2): "contract {1}, declarer {0}",
    ("discard", 1): "{0} discards a card face down",
    ("kitty_shown", 1): "the kitty, face up: {0}",
    ("declare", 2): "{0} declares {1}",
    ("turn_up", 2): "{0} turns up {1}",
    ("turn_up", 1): "turn-up: {0}",
    ("stock_turn", 1): "stock: {0} turned face up",
    ("stock_take", 2): "{0} takes {1} from the stock",
    ("stock_draw", 1): "{0} draws the next stock card, face down",
    ("bid_card", 1): "{0} lays a bid card face down",
    ("reveal", 2): "{0} shows bid card {1}",
}
#: Events whose seat chose a card face down: its owner's log names the card.
_FACE_DOWN = frozenset({"discard", "bid_card"})


def card_texts(value: Any) -> set[str]:
    """Every card text (``"QH"``, ``"TC"``, ``"JKR"``) found in ``value``: a string, or any
    nesting of mappings (keys and values), lists and tuples of them; other values are skipped."""
    found: set[str] = set()
    if isinstance(value, str):
        found.update(CARD_TEXT.findall(value))
    elif isinstance(value, Mapping):
        for k, v in value.items():
            found |= card_texts(k) | card_texts(v)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            found |= card_texts(v)
    return found


def event_text(event: tuple, agents: list[str], own_label: str | None = None) -> str:
    """One event of a hand (an entry of ``information_state(agent)["events"]``) as a line of text.

    Args:
        event: ``(kind, values...)``; the first value is a seat (an int) where the kind has one,
            and the second too for ``"trick"`` (leader, winner).
        agents: agent names by seat.
        own_label: the card the viewer itself chose face down, for its own discard or bid card
            (the event holds no card: it is public).
    Returns:
        the line, e.g. ``"player_1 plays QH"``; an event of an unknown kind is written as its
        kind and values.
    """
    kind, values = event[0], list(event[1:])
    for i, v in enumerate(values):
        if (i == 0 or kind == "trick") and isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(agents):
            values[i] = agents[v]
        elif isinstance(v, (list, tuple)):
            values[i] = " ".join(map(str, v)) or "-"
    template = _EVENT_TEXT.get((kind, len(values)))
    text = template.format(*values) if template else " ".join([str(kind).replace("_", " "), *map(str, values)])
    if own_label is not None and kind in _FACE_DOWN:
        text += f" ({own_label})"
    return text


def names_trump(env: Any) -> bool:
    """Whether a player names trump by an action in this game (a ``trump:`` label, Bid Whist's
    declarer): trump is then unknown, not "no trump", until it is named."""
    return any(env.action_label(a).startswith("trump:") for a in range(env.game.num_actions))


def hand_sizes(env: Any) -> dict[str, int]:
    """How many cards each player holds now (a public fact at a card table): agent -> count."""
    return {a: len(env.information_state(a)["hand"]) for a in env.possible_agents}


def seat_view(env: Any, agent: str) -> dict[str, Any]:
    """What ``agent`` sees of the hand now.

    Args:
        env: a raw env of any game of the suite, reset.
        agent: the viewing seat (``"player_k"``).
    Returns:
        a JSON-ready dict: ``agent``, ``phase``, ``hand_number`` (from 0), ``dealer``,
        ``to_act`` (an agent, ``None`` once the episode is over), ``trump`` (a suit letter or
        ``None``), ``trump_pending`` (trump is still to be named), ``hand`` (own cards, sorted
        for display), ``counts`` (agent -> cards held), ``table`` (``cards``: agent -> card of
        the trick in progress, ``leader``), ``tricks_won`` / ``score`` / ``hand_points`` (agent
        -> tricks this hand, its side's game points, its side's points of the last scored hand),
        ``games_won`` (per side), ``facts`` (``[label, text]`` pairs of the hand's public facts:
        turn-up, contract, declarer, stock top ...), ``agent_facts`` (agent -> pairs: calls,
        bids, revealed bid cards ...), ``side_facts`` (pairs, one value per side: books),
        ``private`` (agent -> its own private facts: its bid card, its kitty and discards),
        ``legal`` (the legal actions when ``agent`` is to act, else empty: ``{"action": id,
        "label": str, "card": bool}``, cards in display order), ``done``, ``truncated`` and
        ``winners`` (agents, at the end of the episode).
    Raises:
        ValueError: ``agent`` is not an agent of ``env``.
    """
    agents = list(env.possible_agents)
    g = env.game
    info = env.information_state(agent)
    infos = env.infos[agent]
    over = bool(g.done or g.truncated)
    public_keys = set(g.public_state())
    public = {k: v for k, v in info.items() if k in public_keys}
    private = {k: v for k, v in info.items() if k not in _BASE_KEYS and k not in public_keys}
    facts, per_agent, per_side = _split_facts(said_bids(public, info["events"]), agents, g.num_sides)
    own, own_per_agent, _ = _split_facts(private, agents, g.num_sides)
    legal: list[dict[str, Any]] = []
    if not over and env.agent_selection == agent:
        mask = env.observe(agent)["action_mask"]
        for a in map(int, mask.nonzero()[0]):
            legal.append({"action": a, "label": env.action_label(a), "card": a < g.NUM_CARD_ACTIONS})
        order = {c: i for i, c in enumerate(sort_cards([x["label"] for x in legal if x["card"]]))}
        legal.sort(key=lambda x: (0, order[x["label"]]) if x["card"] else (1, x["action"]))
    trump = info["trump"]
    pending = (trump is None and names_trump(env) and info["phase"] not in g.CARD_PLAY_PHASES
               and not str(info.get("contract") or "").endswith(":notrump"))
    trick = {agents[s]: c for s, c in info["trick"]}
    return {
        "agent": agent,
        "phase": "game over" if g.done else ("truncated" if g.truncated else info["phase"]),
        "hand_number": int(info["hand_number"]),
        "dealer": agents[info["dealer"]],
        "to_act": None if over else env.agent_selection,
        "trump": trump,
        "trump_pending": bool(pending),
        "hand": sort_cards(list(info["hand"])),
        "counts": hand_sizes(env),
        "table": {"cards": trick, "leader": agents[info["leader"]] if trick else None, "winner": None},
        "tricks_won": {a: int(infos["tricks_won"][a]) for a in agents},
        "score": {a: int(infos["score"][a]) for a in agents},
        "hand_points": {a: int(infos["hand_points"][a]) for a in agents},
        "games_won": [int(x) for x in info.get("games_won", ())],
        "facts": facts,
        "agent_facts": per_agent,
        "side_facts": per_side,
        "private": {agent: own + own_per_agent[agent]},
        "legal": legal,
        "done": bool(g.done),
        "truncated": bool(g.truncated),
        "winners": list(infos["winners"]) if "winners" in infos else None,
    }


def known_cards(env: Any, agent: str) -> set[str]:
    """The card texts ``agent`` may know of now: every card of its information state (its hand,
    the trick, the events of the hand, the public and its own private facts; never another
    player's hidden card) and of the last completed trick."""
    info = env.information_state(agent)
    cards = card_texts({k: v for k, v in info.items() if k not in ("options", "history")})
    last = env.infos[agent].get("last_trick")
    if last:
        cards |= card_texts(last["cards"])
    return cards


__all__ = ["CARD_TEXT", "card_texts", "event_text", "hand_sizes", "known_cards", "names_trump", "seat_view"]
