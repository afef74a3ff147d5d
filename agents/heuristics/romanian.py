"""A rule-based Romanian Whist player (RULES.md §5): exact bids, then play to take exactly them.

Bidding (§5.5): the agent estimates the tricks its hand will take (:func:`estimate_tricks`) and
bids the nearest whole number the mask allows (the dealer's "hook" may forbid one value; the
nearest allowed bid is taken, ties to the lower one, since shedding a trick is easier than
making one). The estimate adds, card by card, the chance the card wins a trick:

* a card with no higher card of its suit out is a winner; one with ``h`` higher cards out wins
  when those are undealt (likely in small deals: only ``N·k`` of the ``8N`` cards are dealt), or,
  less often, when guarded by ``h`` smaller cards of its suit;
* in deals with trump (§5.4) a side-suit winner is lost when an opponent is void in its suit and
  holds a trump (must-trump, §5.6 makes him ruff), more likely in long deals and late rounds;
  small trumps win by ruffing when the hand is short in a side suit, and long trumps win late;
* in deals without trump (1 and 8 cards) only top cards count, plus the long cards of a strong
  suit of five or more in 8-card deals;
* 1-card deals are valued exactly by sampling the others' single cards: the agent bids 1 when it
  wins at least half the time (the leader with an ace or a high trump; seldom anyone else).

Play (§5.6): with tricks still to take (bid − taken > 0) it plays for tricks with the club
player's maxims of :func:`agents.heuristics.card_play.play_for_tricks` (win cheaply, cash masters, ruff
low); once it holds its bid it ducks (:func:`duck`): the highest card that still loses, the most
dangerous card when it cannot win anyway, the card most likely to be beaten when it leads. When
it must take every remaining trick it plays its strongest cards. Other players' needs (their
bid − taken, public) steer its leads when ducking: it leads into a player who still needs tricks.
The must-trump rule is in the action mask.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.heuristics.card_play import (
    CardView,
    HeuristicAgent,
    danger,
    lead_against_tricks,
    mask_of,
    play_for_tricks,
    strongest,
    weakest,
)
from whist_env.engine.cards import NUM_RANKS, SUITS, card_from_str, rank_of, suit_of
from whist_env.engine.tricks import natural_context, trick_winner
from whist_env.rules.romanian import BID_BASE, romanian_deck

#: Chance that a card with ``h`` higher cards out wins thanks to its guards (h = 1, 2).
GUARD_CREDIT = {1: 0.5, 2: 0.25}


def _binom_cdf(x: int, n: int, p: float) -> float:
    """P(Binomial(n, p) <= x)."""
    if x < 0:
        return 0.0
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(min(x, n) + 1))


def one_card_win_chance(card: int, num_players: int, position: int, trump: int | None, excluded: int = 0, samples: int = 400) -> float:
    """Chance that ``card`` wins a 1-card deal (RULES.md §5.3), the others' cards being random.

    Args:
        card: our card id.
        num_players: N (3..6).
        position: our place in the order of play, 0 for the first player (who leads).
        trump: trump suit 0..3 (``trump_on_one_card_deals``) or ``None``.
        excluded: bitmask of cards nobody holds (the turned trump card).
        samples: deals sampled (a fixed seed keeps the agent deterministic).
    Returns:
        a probability in [0, 1].
    """
    pool = [c for c in romanian_deck(num_players) if c != card and not excluded >> c & 1]
    rng = np.random.default_rng(card * 7 + position)
    ctx = natural_context(trump)
    wins = 0
    for _ in range(samples):
        others = rng.choice(len(pool), num_players - 1, replace=False)
        cards = [pool[i] for i in others]
        cards.insert(position, card)
        wins += trick_winner(list(enumerate(cards)), ctx) == position
    return wins / samples


def estimate_tricks(hand: Sequence[int], k: int, num_players: int, trump: int | None, turn_up: int | None = None,
                    position: int = 0) -> float:
    """Expected tricks of a Romanian Whist hand before the play (see the module docstring).

    Args:
        hand: our card ids (``k`` of them).
        k: cards dealt to each player this deal.
        num_players: N (3..6); the deck is the 8·N top cards (RULES.md §5.2).
        trump: trump suit 0..3 or ``None`` (deals of 1 and 8 cards by default, §5.4).
        turn_up: the turned trump card (belongs to nobody), or ``None``.
        position: our place in the order of play (0: the first player, who leads).
    Returns:
        expected tricks, a float in [0, k].
    """
    n = num_players
    excluded = 0 if turn_up is None else 1 << turn_up
    if k == 1:
        return one_card_win_chance(hand[0], n, position, trump, excluded)
    mine = mask_of(hand)
    deck = romanian_deck(n)
    unknown = [c for c in deck if not (mine | excluded) >> c & 1]
    u = len(unknown)
    p_held = min(1.0, (n - 1) * k / u) if u else 1.0
    by_suit = {s: sorted((c for c in hand if suit_of(c) == s), key=rank_of, reverse=True) for s in range(4)}
    unknown_in = {s: sum(1 for c in unknown if suit_of(c) == s) for s in range(4)}
    trumps_out = unknown_in[trump] if trump is not None else 0
    p_opp_trump = 1 - (1 - trumps_out / u) ** k if trump is not None and u else 0.0
    total = 0.0
    low_trumps = 0
    for s, cards in by_suit.items():
        for i, c in enumerate(cards):
            h = sum(1 for x in unknown if suit_of(x) == s and rank_of(x) > rank_of(c))
            below = len(cards) - 1 - i
            p_top = (1 - p_held) ** h
            if h:
                p_top *= 0.7  # a lower card needs its suit to be led, often by someone else
            value = p_top + (1 - p_top) * (GUARD_CREDIT.get(h, 0.0) if below >= h else 0.0)
            if trump is not None and s != trump:
                # must-trump: an opponent short in the suit who holds a trump ruffs it
                p_short = _binom_cdf(i, k, unknown_in[s] / u) if u else 1.0
                value *= (1 - p_short * p_opp_trump) ** (n - 1)
            if trump is None and k == 8 and len(cards) >= 5 and i >= 4 and rank_of(cards[0]) == NUM_RANKS - 1:
                value = max(value, 0.6)  # long cards of a suit headed by the ace run late
            if s == trump and value < 0.4:
                low_trumps += 1
            total += value
    if trump is not None and low_trumps:
        short = sum(1.0 if not by_suit[s] else 0.5 if len(by_suit[s]) == 1 else 0.0 for s in range(4) if s != trump)
        total += 0.55 * min(low_trumps, short)
        n_trumps = len(by_suit[trump])
        if n_trumps >= 3 and n_trumps >= trumps_out * k / u + 2:  # longer than any opponent is likely to be
            total += 0.3 * (n_trumps - 2)
    return min(float(k), total)


def nearest_allowed(target: float, allowed: Sequence[int]) -> int:
    """The allowed bid nearest ``target`` (ties to the lower bid)."""
    return min(allowed, key=lambda b: (abs(b - target), b))


def duck(view: CardView, legal: Sequence[int], needs: Mapping[int, int] | None = None) -> int:
    """The card that best avoids taking the trick (RULES.md §5.6 with must-trump in the mask).

    Following or void: the most dangerous card that does not beat the current winner (it can
    never win: later cards only take the trick from it); when every legal card wins for now, the
    weakest if a later player may still overtake, else (the trick is ours anyway) the strongest.
    Leading: the card most likely to be beaten, preferring suits a player who still needs tricks
    (``needs``: seat -> bid − taken) may follow.

    Args:
        view: the acting seat's knowledge.
        legal: legal card ids (non-empty).
        needs: tricks each other seat still needs, if known.
    Returns:
        one of ``legal``.
    """
    if len(legal) == 1:
        return legal[0]
    if view.current_winner() is None:
        if needs:
            hungry = [s for s, d in needs.items() if d > 0 and s != view.seat]
            good = [c for c in legal if any(not view.is_void(s, view.suit(c)) for s in hungry)
                    and view.higher_unseen(c) > 0]
            if good:
                return lead_against_tricks(view, good)
        return lead_against_tricks(view, legal)
    under = [c for c in legal if not view.beats(c)]
    if under:
        return max(under, key=lambda c: (danger(view, c), -c))
    low = weakest(view, legal)
    if any(view.may_beat(s, low) for s in view.later_seats()):
        return low  # forced to overtake: the card a later player most likely beats
    return strongest(view, legal)  # the trick is ours anyway: unload the highest card


class RomanianHeuristicAgent(HeuristicAgent):
    """Rule-based Romanian Whist player (see the module docstring).

    Deterministic. Needs ``info_state`` (``raw_env.information_state(agent)``); reads the
    action mask (``int8 (61,)``) for the legal bids and cards; :meth:`act` comes from
    :class:`agents.heuristics.card_play.HeuristicAgent`.

    Args:
        bid_bias: subtracted from the trick estimate before rounding to a bid (positive: bid
            lower; an extra trick is as costly as a missing one, but easier to avoid).
    """

    def __init__(self, bid_bias: float = 0.0) -> None:
        self.bid_bias = bid_bias

    def choose_action(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any],
                      legal: Sequence[int]) -> int:
        """A bid in phase ``"bid"`` (RULES.md §5.5), else the card to play (§5.6): an action id
        among ``legal``, ``52 + b`` for the bid b, else a card id."""
        if info_state.get("phase") == "bid":
            bids = [a - BID_BASE for a in legal if a >= BID_BASE]
            return BID_BASE + self.choose_bid(info_state, bids)
        return self.choose_card(info_state, legal)

    @staticmethod
    def _num_players(info_state: Mapping[str, Any]) -> int:
        options = info_state.get("options") or {}
        return int(options.get("num_players", len(info_state.get("tricks_won", ())) or 4))

    def estimate(self, info_state: Mapping[str, Any]) -> float:
        """Expected tricks of the seat's hand (:func:`estimate_tricks`) from its information state."""
        n = self._num_players(info_state)
        hand = [card_from_str(c) for c in info_state["hand"]]
        trump = info_state.get("trump")
        turn_up = info_state.get("turn_up")
        first = int(info_state.get("first_player", info_state.get("leader", 0)))
        return estimate_tricks(
            hand,
            int(info_state.get("deal_size", len(hand))),
            n,
            None if trump is None else SUITS.index(trump),
            None if turn_up is None else card_from_str(turn_up),
            position=(int(info_state["seat"]) - first) % n,
        )

    def choose_bid(self, info_state: Mapping[str, Any], allowed: Sequence[int]) -> int:
        """The bid: the estimate less ``bid_bias``, rounded to the nearest allowed bid.

        Args:
            info_state: the seat's information state (phase ``"bid"``).
            allowed: the bids the mask allows (never empty, RULES.md §5.5).
        """
        k = int(info_state.get("deal_size", len(info_state["hand"])))
        estimate = self.estimate(info_state)
        if k == 1:
            target = 1.0 if estimate >= 0.5 else 0.0
        else:
            target = max(0.0, estimate - self.bid_bias)
        return nearest_allowed(target, allowed)

    def view(self, info_state: Mapping[str, Any]) -> CardView:
        """The seat's :class:`CardView` of the deal: its deck, trump and must-trump rule; the turned
        card is out of every hand."""
        n = self._num_players(info_state)
        trump = info_state.get("trump")
        t = None if trump is None else SUITS.index(trump)
        turn_up = info_state.get("turn_up")
        exclude = 0 if turn_up is None else 1 << card_from_str(turn_up)
        return CardView(info_state, natural_context(t, must_trump=t is not None), n, partner=None,
                        deck=mask_of(romanian_deck(n)), exclude=exclude)

    def choose_card(self, info_state: Mapping[str, Any], legal: Sequence[int]) -> int:
        """The card to play: for tricks while the bid is not reached, else ducking (module docstring)."""
        view = self.view(info_state)
        seat = view.seat
        bids = info_state.get("bids") or ()
        taken = info_state.get("tricks_won") or ()
        bid = bids[seat] if seat < len(bids) and bids[seat] is not None else 0
        need = bid - int(taken[seat]) if seat < len(taken) else bid
        left = len(view.hand)
        if need <= 0:
            needs = {s: int(b) - int(taken[s]) for s, b in enumerate(bids) if b is not None and s < len(taken)}
            return duck(view, legal, needs)
        if need >= left:
            # every remaining trick is needed: win now with the strongest card that can
            winners = [c for c in legal if view.beats(c)] if view.trick else []
            if winners:
                safe = [c for c in winners if view.safe(c)]
                return weakest(view, safe) if safe else strongest(view, winners)
        return play_for_tricks(view, legal)

    def __repr__(self) -> str:
        return f"RomanianHeuristicAgent(bid_bias={self.bid_bias})"


__all__ = ["RomanianHeuristicAgent", "duck", "estimate_tricks", "nearest_allowed", "one_card_win_chance"]
