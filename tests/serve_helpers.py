"""Helpers of the ``whist serve`` tests: a table host with fast settings, and the hidden-card
check, which replays a game record with every card known and says, for each message a seat
received, which cards in it that seat could not see at that moment."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from whist_env import GAMES
from whist_env.engine.cards import card_to_str, mask_to_str

#: Every card text, written independently of the code under test.
CARD = re.compile(r"\b(?:[2-9TJQKA][CDHS]|JK[RB])\b")


def make_host(game: str, seats: list[str], *, episode: str = "hand", seed: int = 4, records_dir: Any = None,
              timeout: float | None = 30.0, fallback: str = "heuristic", worlds: int = 4, **options: Any) -> Any:
    """A :class:`TableHost` with agents acting at once (``pace=0``) and a small pimc for analysis."""
    from training.viewers.serve.analysis import Analyst
    from training.viewers.serve.host import TableHost
    from training.viewers.serve.table import Table

    table = Table(game, seats, options={"episode": episode, **options}, seed=seed, records_dir=records_dir, fallback=fallback)
    return TableHost(table, Analyst(game, worlds=worlds, rollouts=2 * worlds), timeout=timeout, pace=0)


def has_zoo_agent(game: str) -> bool:
    """Whether the model zoo (``agents/zoo``) holds a trained agent of ``game``."""
    from agents.learned.zoo import available

    return game in available()


def default_seats(game: str, human: int = 0, learned: int | None = 1) -> list[str]:
    """A person at ``human``, the zoo agent at ``learned`` (if given and the zoo holds an agent of
    ``game``: :func:`has_zoo_agent`), the rule-based player elsewhere."""
    n = len(GAMES[game].raw_env().possible_agents)
    seats = ["heuristic"] * n
    if learned is not None and has_zoo_agent(game):
        seats[learned % n] = "zoo"
    seats[human] = "human"
    return seats


def _public_cards(value: Any) -> set[str]:
    if isinstance(value, str):
        return set(CARD.findall(value))
    if isinstance(value, Mapping):
        return set().union(*(_public_cards(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(_public_cards(v) for v in value)) if value else set()
    return set()


def visible_cards_by_step(record: Mapping[str, Any], agent: str) -> list[set[str]]:
    """``out[s]``: the cards ``agent`` may have seen once ``s`` actions of the game were applied:
    every card it held at any time (its deal, the kitty it took, the stock cards it drew), every
    card played to a trick, and every card of the rules' public facts (turn-up, stock top,
    revealed bid cards, cards known to be in a hand) and of the rule options, from the start of
    the game on. Computed
    by replaying the record on a raw env, reading the rules object directly (the omniscient
    view the server must never use)."""
    env = GAMES[record["game"]].raw_env(**(record.get("options") or {}))
    env.reset(seed=record["seed"], options=record.get("reset_options"))
    g = env.game
    seat = env.possible_agents.index(agent)
    # the rule options are public (Bid Whist's wild deuces name cards)
    seen: set[str] = _public_cards({f.name: getattr(g.options, f.name) for f in dataclasses.fields(g.options)})

    def look() -> set[str]:
        seen.update(mask_to_str(g.hands[seat]))
        seen.update(card_to_str(c) for _, c in g.trick)
        seen.update(_public_cards(dict(g.public_state())))
        return set(seen)

    out = [look()]
    for entry in record["actions"]:
        acting = env.agent_selection
        env.step(entry["action"])
        info = env.infos[acting]
        if "last_trick" in info:
            seen.update(info["last_trick"]["cards"].values())
        out.append(look())
    return out


def hidden_cards(messages: Iterable[Mapping[str, Any]], record: Mapping[str, Any], agent: str) -> list[tuple[int, str, set[str]]]:
    """The messages ``agent`` received that hold a card it could not see when the message was
    made: ``[(step, message type, cards)]`` (empty when there is none). Each message carries the
    ``step`` at which it was made."""
    visible = visible_cards_by_step(record, agent)
    bad = []
    for m in messages:
        cards = set(CARD.findall(json.dumps(m)))
        step = m["step"]
        extra = cards - visible[min(step, len(visible) - 1)]
        if extra:
            bad.append((step, m["type"], extra))
    return bad
