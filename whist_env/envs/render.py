"""Text rendering of a table for ``render_mode="ansi"``: the viewer's hand, the trick, trump, score;
and :func:`said_bids`, the bids as the auction said them, which every table view shows (the
replay, ``whist play``, ``whist serve``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whist_env.engine.cards import SUITS, card_to_str, cards_of
from whist_env.rules.base import TrickTakingGame

_SUIT_SYMBOL = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def _hand_by_suit(mask: int) -> str:
    groups: dict[str, list[str]] = {s: [] for s in SUITS}
    other = []
    for c in sorted(cards_of(mask), reverse=True):
        text = card_to_str(c)
        (groups[text[-1]] if c < 52 else other).append(text[:-1] if c < 52 else text)
    parts = [f"{_SUIT_SYMBOL[s]} {' '.join(groups[s]) or '-'}" for s in reversed(SUITS)]
    if other:
        parts.append(" ".join(other))
    return "  ".join(parts)


def said_bids(facts: Mapping[str, Any], events: Any) -> dict[str, Any]:
    """``facts`` with the per-seat ``bids`` written as the auction said them, from the hand's
    ``("bid", seat, text)`` events: Spades' nil and blind nil read ``"nil"`` and ``"blind_nil"``,
    not the stored 0 (RULES.md §8.7); a seat without a bid event keeps its value."""
    said = {e[1]: e[2] for e in events if len(e) == 3 and e[0] == "bid"}
    out = dict(facts)
    if said and isinstance(out.get("bids"), (list, tuple)):
        out["bids"] = tuple(said.get(s, v) for s, v in enumerate(out["bids"]))
    return out


def render_table(game: TrickTakingGame, viewer: int, names: list[str]) -> str:
    """A readable multi-line table as seen by seat ``viewer`` (only the viewer's cards are shown)."""
    g = game
    trump = "none" if g.trump is None else f"{SUITS[g.trump]} {_SUIT_SYMBOL[SUITS[g.trump]]}"
    lines = [
        f"{g.NAME}  game {g.game_number + 1}  hand {g.hand_number + 1}  phase {g.phase}  dealer {names[g.dealer]}  trump {trump}",
    ]
    for name, mask in zip(g.PUBLIC_CARD_SETS, g.public_card_sets(viewer)):
        if mask:
            lines.append(f"{name}: {' '.join(card_to_str(c) for c in cards_of(mask))}")
    for key, value in said_bids(g.public_state(), g.events).items():
        if key not in g.PUBLIC_CARD_SETS:  # already shown above as a card set
            lines.append(f"{key}: {value}")
    sides = " | ".join(
        f"{'+'.join(names[s] for s in g.seats_of(side))}: {g.scores[side]}" for side in range(g.num_sides)
    )
    lines.append(f"score  {sides}")
    lines.append("seat       tricks  trick")
    on_table = dict(g.trick)
    for s, name in enumerate(names):
        marks = ("*" if s == g.current_player else " ") + ("D" if s == g.dealer else " ")
        card = card_to_str(on_table[s]) if s in on_table else ""
        lines.append(f"{marks}{name:<9} {g.tricks_won[s]:>5}   {card}")
    lines.append(f"{names[viewer]} holds: {_hand_by_suit(g.hands[viewer])}")
    if g.done:
        lines.append(f"game over; winners: {', '.join(names[s] for s in g.winners) or 'draw'}")
    elif g.truncated:
        lines.append("truncated (max_hands reached)")
    return "\n".join(lines)
