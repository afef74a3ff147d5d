"""A rule-based Cutthroat Whist player (RULES.md §7): three players, each for himself, no trump.

Every trick counts for the player who takes it, so the agent plays for tricks
(:func:`agents.heuristics.card_play.play_for_tricks` without a partner):

* Following suit: win as cheaply as possible when last to play; earlier, take the trick with the
  cheapest card that is sure to hold (a master, or a card nobody after us can beat); otherwise
  play a card that will probably hold only if just one card out beats it, else duck with the
  lowest card so that high cards keep their control for later.
* Void in the led suit: dump a powerless joker first, else the lowest card of the weakest suit
  (long suits are kept: without trumps, length wins the last tricks).
* Leading: cash masters from the longest suit, dump a powerless joker, else lead from the
  longest, strongest suit (top of a sequence, fourth best, or low).

Jokers (§7.1) are suitless and powerless by default: they can never win, so they are the first
discards. With ``jokers_high`` they are super cards (Big Joker, then Little Joker) and count as
masters. The agent reads the options from ``info_state`` when it exposes them (``"options"`` or
``"jokers_high"`` / ``"big_joker"`` keys); otherwise from its constructor arguments; failing
both, it infers ``jokers_high`` from a finished trick in which a joker won (or lost).
It tracks every card played and every void shown (a player who does not follow suit, jokers
included, holds none of the led suit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.heuristics.card_play import CardView, HeuristicAgent, play_for_tricks
from whist_env.engine.cards import FULL_DECK_52, FULL_DECK_54, JKB, JKR, card_from_str
from whist_env.rules.cutthroat import joker_context

_NUM_SEATS = 3


def _option(info_state: Mapping[str, Any], key: str) -> Any:
    options = info_state.get("options")
    if isinstance(options, Mapping) and key in options:
        return options[key]
    if options is not None and hasattr(options, key):
        return getattr(options, key)
    return info_state.get(key)


def inferred_jokers_high(info_state: Mapping[str, Any]) -> bool | None:
    """Whether this hand's completed tricks show jokers to be super cards: ``True`` when a joker
    won a trick, ``False`` when one lost, ``None`` when no joker has been played in a full trick.

    Args:
        info_state: a Cutthroat ``information_state`` mapping (``events`` with ``("play", seat,
            card)`` and ``("trick", leader, winner)`` entries).
    """
    trick: list[tuple[int, int]] = []
    for event in info_state.get("events", ()):
        if event[0] == "play":
            trick.append((int(event[1]), card_from_str(event[2])))
        elif event[0] == "trick":
            winner = int(event[2])
            jokers = [s for s, c in trick if c in (JKR, JKB)]
            if jokers:
                return winner in jokers
            trick = []
    return None


class CutthroatHeuristicAgent(HeuristicAgent):
    """Rule-based Cutthroat Whist player (see the module docstring).

    Deterministic. Needs ``info_state`` (``raw_env.information_state(agent)``) and reads nothing
    of the observation but its action mask (``int8 (54,)``, whose length tells the deck when
    ``info_state`` does not); :meth:`act` comes from
    :class:`agents.heuristics.card_play.HeuristicAgent`.

    Args:
        jokers_high: the ``jokers_high`` rule option if known (``None``: read it from
            ``info_state`` or infer it from play, assuming ``False`` until shown otherwise).
        big_joker: the ``big_joker`` rule option (``"red"`` / ``"black"``) if known.
    """

    def __init__(self, jokers_high: bool | None = None, big_joker: str | None = None) -> None:
        self.jokers_high = jokers_high
        self.big_joker = big_joker

    def choose_action(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any],
                      legal: Sequence[int]) -> int:
        """The card to play (RULES.md §7.3), a card id 0..53 among ``legal``."""
        return play_for_tricks(self.view(info_state, observation), legal)

    def view(self, info_state: Mapping[str, Any], observation: Mapping[str, np.ndarray] | None = None) -> CardView:
        """The seat's :class:`CardView` with the hand's joker ranking."""
        jokers_high = _option(info_state, "jokers_high")
        if jokers_high is None:
            jokers_high = self.jokers_high
        if jokers_high is None:
            jokers_high = bool(inferred_jokers_high(info_state))
        big = _option(info_state, "big_joker") or self.big_joker or "red"
        hand = [card_from_str(c) for c in info_state["hand"]]
        deck = _option(info_state, "deck")
        if deck is None:
            # a 54-card deal gives 18 cards each; a hand can only hold a joker with deck 54
            has_jokers = observation is None or len(np.asarray(observation["action_mask"])) == 54
            deck = "54" if has_jokers and (_cards_dealt(info_state, hand) == 18 or any(c >= 52 for c in hand)) else "52"
        deck_mask = FULL_DECK_54 if str(deck) == "54" else FULL_DECK_52
        ctx = joker_context(bool(jokers_high), str(big))
        return CardView(info_state, ctx, _NUM_SEATS, partner=None, deck=deck_mask)


def _cards_dealt(info_state: Mapping[str, Any], hand: list[int]) -> int:
    """Cards the seat was dealt this hand: its hand plus the cards it has played."""
    seat = int(info_state["seat"])
    played = sum(1 for e in info_state.get("events", ()) if e[0] == "play" and int(e[1]) == seat)
    return len(hand) + played


__all__ = ["CutthroatHeuristicAgent", "inferred_jokers_high"]
