"""Card-play knowledge and tactics shared by the rule-based agents (DESIGN.md ``agents/``).

Everything here works from what a seat may know: its ``information_state`` (own hand, the trick
in progress and the hand's public events). :class:`CardView` decodes that into card ids and
bitmasks and tracks the cards played and the voids each player has shown; the functions below
turn that knowledge into the tactics a club player uses:

* :func:`play_for_tricks`: second hand low, third hand high, win as cheaply as possible, never
  overtake a partner who is surely winning, ruff cheaply, cash masters, lead from long suits.
* :func:`play_against_tricks`: the same knowledge turned around (Minnesota Low hands): duck
  under the winning card with the highest card that still loses, dump dangerous high cards when
  void or when the trick is lost anyway, lead the card most likely to be beaten.

Rankings come from a :class:`whist_env.engine.tricks.TrickContext`, so trumps, suitless jokers
and super cards (Cutthroat ``jokers_high``) need no special cases in the callers.

:class:`HeuristicAgent` is the base of every game's player: the checks each ``act`` makes (the
information state is required, the legal actions come from the mask, a single legal action is
played at once) before the game's own choice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from whist_env.engine.cards import FULL_DECK_52, NUM_CARDS_WITH_JOKERS, NUM_SUITS, card_from_str, card_to_str, cards_of
from whist_env.engine.tricks import NO_SUIT, TrickContext, led_suit, trick_winner

#: Card text -> card id for the canonical texts of ``information_state`` (``"QH"``, ``"JKR"``).
_CARD_IDS = {card_to_str(c): c for c in range(NUM_CARDS_WITH_JOKERS)}

#: Rank indices of the honours (RULES.md §1.1: 0 is the two, 12 the ace).
ACE, KING, QUEEN, JACK, TEN = 12, 11, 10, 9, 8


def legal_actions(observation: Mapping[str, np.ndarray]) -> list[int]:
    """Action ids allowed by ``observation["action_mask"]``, ascending.

    Raises:
        ValueError: when the mask allows nothing (the agent is not to act).
    """
    legal = [int(a) for a in np.flatnonzero(np.asarray(observation["action_mask"]))]
    if not legal:
        raise ValueError("the action mask has no legal action")
    return legal


class HeuristicAgent(ABC):
    """Base of the rule-based players (DESIGN.md ``agents/``; it implements
    :class:`agents.base.Policy`).

    Deterministic: the same observation and information state always give the same action. A
    player needs ``info_state`` (``raw_env.information_state(agent)``) and reads nothing of the
    observation but its action mask. A subclass implements :meth:`choose_action`.
    """

    name = "heuristic"
    #: It reads only the observation's action mask (search rollouts may skip the encoding).
    uses_observation_vector = False

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """The action to take: the only legal one, else :meth:`choose_action`'s choice.

        Args:
            observation: ``{"observation": float32 (D,), "action_mask": int8 (A,)}``, ``A`` the
                game's number of actions (RULES.md §1.8 lists each game's decisions).
            info_state: the acting agent's ``information_state`` mapping.
        Returns:
            an ``int`` action id whose mask entry is 1 (the first legal one should the choice
            not be legal).
        Raises:
            ValueError: when ``info_state`` is missing or the mask allows nothing.
        """
        if info_state is None:
            raise ValueError(f"{type(self).__name__} needs info_state (raw_env.information_state(agent))")
        legal = legal_actions(observation)
        if len(legal) == 1:
            return legal[0]
        action = self.choose_action(observation, info_state, legal)
        return action if action in legal else legal[0]

    @abstractmethod
    def choose_action(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any],
                      legal: Sequence[int]) -> int:
        """The game's choice among ``legal`` (two or more action ids, ascending) for the seat whose
        ``information_state`` is ``info_state``; ``observation`` as for :meth:`act`."""


def mask_of(cards: Iterable[int]) -> int:
    """Bitmask of card ids."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def card_ids(texts: Iterable[str]) -> list[int]:
    """Card ids of card texts (``"QH"``, ``"JKR"``)."""
    return [card_from_str(t) for t in texts]


class CardView:
    """What the acting seat knows about the cards of the hand in progress.

    Args:
        info_state: the seat's ``information_state`` mapping (``seat``, ``hand``, ``trick``,
            ``events`` with ``("play", seat, card text)`` entries).
        ctx: ranking rules of the hand (trump, effective suits, power, super cards).
        num_players: players at the table (trick size).
        partner: the partner's seat in a partnership game, else ``None``.
        deck: bitmask of the game's deck (52 cards by default; add the jokers for Cutthroat).
        exclude: cards known to be out of every other hand (e.g. a face-up stock card).
        infer_voids: record a void when a player does not follow the led suit (turn off when
            hands are refilled during the hand, as in German Whist's stock phase).

    Attributes (card sets are bitmasks over card ids):
        seat, partner, num_players, ctx; ``hand`` (ids), ``mine``; ``played`` (every card played
        this hand, ours included); ``unseen`` (cards another seat may hold); ``trick``
        (``[(seat, card)]``); ``led`` (led suit or ``None``); ``voids`` (per seat, bitmask over
        suits 0..3 the seat has shown out of); ``known`` (per seat, cards known to be held);
        ``leads`` (``[(seat, card)]``, the first card of every trick of the hand so far, the trick
        in progress included).
    """

    def __init__(
        self,
        info_state: Mapping[str, Any],
        ctx: TrickContext,
        num_players: int,
        partner: int | None = None,
        deck: int = FULL_DECK_52,
        exclude: int = 0,
        infer_voids: bool = True,
    ) -> None:
        self.seat = int(info_state["seat"])
        self.partner = partner
        self.num_players = num_players
        self.ctx = ctx
        self.hand = card_ids(info_state["hand"])
        self.mine = mask_of(self.hand)
        self.trick = [(int(s), card_from_str(c)) for s, c in info_state.get("trick", ())]
        self.voids = [0] * num_players
        self.known = [0] * num_players
        self.played = 0
        self.leads: list[tuple[int, int]] = []
        ids = _CARD_IDS
        plays = [(int(e[1]), ids[e[2]]) for e in info_state.get("events", ()) if e[0] == "play"]
        eff = ctx.eff_suit
        for start in range(0, len(plays), num_players):
            trick = plays[start : start + num_players]
            self.leads.append(trick[0])
            led = None  # the led suit of the cards before this one
            for seat, card in trick:
                self.played |= 1 << card
                suit = eff[card]
                if led is None:
                    if suit != NO_SUIT:
                        led = suit
                elif infer_voids and suit != led:
                    self.voids[seat] |= 1 << led
        self.unseen = deck & ~self.mine & ~self.played & ~exclude
        self.led = led_suit([c for _, c in self.trick], ctx) if self.trick else None

    # ------------------------------------------------------------------ facts about cards
    def power(self, card: int) -> int:
        """Strength of ``card`` in this hand (higher beats lower within a suit)."""
        return self.ctx.power[card]

    def suit(self, card: int) -> int:
        """Effective suit of ``card``, ``NO_SUIT`` (-1) for a suitless joker."""
        return self.ctx.eff_suit[card]

    def is_super(self, card: int) -> bool:
        """Whether ``card`` is a super card (beats everything; Cutthroat ``jokers_high``)."""
        return bool(self.ctx.super_mask >> card & 1)

    def is_dead(self, card: int) -> bool:
        """Whether ``card`` can never win a trick (a suitless joker that is not a super card)."""
        return self.suit(card) == NO_SUIT and not self.is_super(card)

    def higher_unseen(self, card: int) -> int:
        """Number of cards another seat may hold that beat ``card`` within its suit (or, for a
        super card, higher super cards)."""
        pw = self.ctx.power
        if self.is_super(card):
            pool = self.unseen & self.ctx.super_mask
        elif self.suit(card) == NO_SUIT:
            return 0
        else:
            pool = self.unseen & self.ctx.suit_masks[self.suit(card)]
        return sum(1 for c in cards_of(pool) if pw[c] > pw[card])

    def lower_unseen(self, card: int) -> int:
        """Number of cards of ``card``'s suit another seat may hold that ``card`` beats."""
        if self.suit(card) == NO_SUIT:
            return 0
        pw = self.ctx.power
        return sum(1 for c in cards_of(self.unseen & self.ctx.suit_masks[self.suit(card)]) if pw[c] < pw[card])

    def is_master(self, card: int) -> bool:
        """Whether no other seat can hold a card that beats ``card`` in its suit (a sure winner
        of a trick led in that suit, unless someone void in it can ruff)."""
        return not self.is_dead(card) and self.higher_unseen(card) == 0

    def unseen_in(self, suit: int) -> int:
        """Number of cards of ``suit`` other seats may still hold."""
        return (self.unseen & self.ctx.suit_masks[suit]).bit_count()

    def is_void(self, seat: int, suit: int) -> bool:
        """Whether ``seat`` surely holds no card of ``suit``."""
        if seat == self.seat:
            return not self.mine & self.ctx.suit_masks[suit]
        if self.known[seat] & self.ctx.suit_masks[suit]:
            return False
        return bool(self.voids[seat] >> suit & 1) or self.unseen_in(suit) == 0

    def suit_cards(self, suit: int) -> list[int]:
        """Our cards of ``suit``, weakest first."""
        return sorted((c for c in self.hand if self.suit(c) == suit), key=self.power)

    def suit_strength(self, suit: int) -> float:
        """Rough trick-taking value of our holding in ``suit`` (master 4, guarded second 2, …)."""
        cards = self.suit_cards(suit)
        value = 0.0
        for c in cards:
            k = self.higher_unseen(c)
            if k == 0:
                value += 4
            elif k == 1 and len(cards) >= 2:
                value += 2
            elif k == 2 and len(cards) >= 3:
                value += 1
        return value

    def lowest_of_equals(self, card: int) -> int:
        """Our weakest card equivalent to ``card``: no card another seat may hold lies between."""
        suit = self.suit(card)
        if suit == NO_SUIT:
            return card
        pw = self.ctx.power
        best = card
        for c in sorted(cards_of(self.ctx.suit_masks[suit] & (self.mine | self.unseen)), key=lambda x: -pw[x]):
            if pw[c] >= pw[card]:
                continue
            if not self.mine >> c & 1:
                break
            best = c
        return best

    # ------------------------------------------------------------------ the trick in progress
    def current_winner(self) -> tuple[int, int] | None:
        """``(seat, card)`` winning the trick so far, ``None`` when no card can win yet (only
        powerless jokers were played) or the trick is empty."""
        if not self.trick:
            return None
        try:
            seat = trick_winner(self.trick, self.ctx)
        except ValueError:
            return None
        return seat, dict(self.trick)[seat]

    def beats(self, card: int) -> bool:
        """Whether playing ``card`` now makes us the current winner of the trick."""
        try:
            return trick_winner([*self.trick, (self.seat, card)], self.ctx) == self.seat
        except ValueError:
            return False

    def later_seats(self) -> list[int]:
        """Seats that play after us in the trick in progress."""
        n_after = self.num_players - 1 - len(self.trick)
        return [(self.seat + i) % self.num_players for i in range(1, n_after + 1)]

    def later_opponents(self) -> list[int]:
        """Later seats that are not our partner."""
        return [s for s in self.later_seats() if s != self.partner]

    def may_beat(self, seat: int, card: int) -> bool:
        """Whether ``seat``, playing after ``card`` (now winning), may still beat it.

        A seat that may hold the led suit may hold a higher card of it; a seat known to be void in
        the led suit may ruff (or over-ruff) or play a higher super card.
        """
        led = self.led if self.led is not None else self.suit(card)
        trump = self.ctx.trump
        supers_out = self.unseen & self.ctx.super_mask
        if self.is_super(card):
            return self.higher_unseen(card) > 0
        void_led = led == NO_SUIT or self.is_void(seat, led)
        if not void_led and self.suit(card) == led and self.higher_unseen(card):
            return True
        if void_led:
            if supers_out:
                return True
            if trump is not None and led != trump and self.unseen_in(trump) and not self.is_void(seat, trump):
                if self.suit(card) != trump or self.higher_unseen(card):
                    return True
        return False

    def safe(self, card: int, seats: Sequence[int] | None = None) -> bool:
        """Whether ``card``, winning now, wins the trick whatever ``seats`` (default: the later
        opponents) hold, as far as we know."""
        seats = self.later_opponents() if seats is None else seats
        return not any(self.may_beat(s, card) for s in seats)


def weakest(view: CardView, cards: Sequence[int]) -> int:
    """The card of lowest power (ties: lowest id)."""
    return min(cards, key=lambda c: (view.power(c), c))


def strongest(view: CardView, cards: Sequence[int]) -> int:
    """The card of highest power (ties: lowest id)."""
    return max(cards, key=lambda c: (view.power(c), -c))


def cheapest_winner(view: CardView, cards: Sequence[int], safe_only: bool = False) -> int | None:
    """The weakest of ``cards`` that would now win the trick (and, with ``safe_only``, is sure to
    win it against the later opponents), or ``None``."""
    winners = [c for c in cards if view.beats(c) and (not safe_only or view.safe(c))]
    return weakest(view, winners) if winners else None


#: A choice of card for one place in the trick: ``(view, cards) -> one of cards``.
CardChoice = Callable[[CardView, Sequence[int]], int]


def play_by_position(view: CardView, legal: Sequence[int], lead: CardChoice, follow: CardChoice,
                     void: CardChoice) -> int:
    """The card chosen by the rule for the seat's place in the trick (RULES.md §1.4).

    Args:
        view: the acting seat's knowledge.
        legal: legal card ids (non-empty).
        lead: the choice when leading (or when no card of the trick can win yet: only powerless
            jokers were played), given ``legal``.
        follow: the choice when able to follow suit, given the legal cards of the led suit.
        void: the choice when void in the led suit, given ``legal``.
    Returns:
        one of ``legal`` (the only one when there is one).
    """
    if len(legal) == 1:
        return legal[0]
    if view.current_winner() is None:
        return lead(view, legal)
    following = [c for c in legal if view.led is not None and view.suit(c) == view.led]
    if following:
        return follow(view, following)
    return void(view, legal)


# ---------------------------------------------------------------------- playing for tricks
def play_for_tricks(view: CardView, legal: Sequence[int]) -> int:
    """The card a club player chooses to take as many tricks as possible for his side
    (:func:`play_by_position` with :func:`lead_for_tricks`, :func:`follow_for_tricks` and
    :func:`void_for_tricks`).

    Args:
        view: the acting seat's knowledge.
        legal: legal card ids (non-empty).
    Returns:
        one of ``legal``.
    """
    return play_by_position(view, legal, lead_for_tricks, follow_for_tricks, void_for_tricks)


def _partner_holds(view: CardView) -> bool:
    """Whether the partner is winning the trick and nobody after us can take it from him."""
    win = view.current_winner()
    if win is None or view.partner is None or win[0] != view.partner:
        return False
    return view.safe(win[1])


def follow_for_tricks(view: CardView, cards: Sequence[int]) -> int:
    """Follow suit (``cards``: our legal cards of the led suit) trying to take the trick."""
    win_seat, win_card = view.current_winner()
    later = view.later_opponents()
    if _partner_holds(view):
        return weakest(view, cards)
    winners = [c for c in cards if view.beats(c)]
    if not winners:
        return weakest(view, cards)
    if not later:  # last to play (or only the partner follows): win as cheaply as possible
        return weakest(view, winners)
    safe = [c for c in winners if view.safe(c, later)]
    if safe:
        return view.lowest_of_equals(weakest(view, safe))
    top = strongest(view, winners)
    pos = len(view.trick)
    if view.partner is not None and pos == 1:
        # second hand low, but cover an honour led by an opponent
        if view.power(view.trick[0][1]) >= JACK and view.suit(view.trick[0][1]) == view.led:
            return view.lowest_of_equals(weakest(view, winners))
        return weakest(view, cards)
    if view.partner is not None and win_seat == view.partner and view.power(win_card) >= QUEEN:
        return weakest(view, cards)  # don't overtake a partner's high card
    if view.partner is None and view.higher_unseen(top) > 1:
        return weakest(view, cards)  # nobody helps us: don't waste a card that will be beaten
    return view.lowest_of_equals(top)  # third hand high (lowest of equals)


def void_for_tricks(view: CardView, legal: Sequence[int]) -> int:
    """Play when unable to follow suit: ruff cheaply unless the partner holds the trick, else
    discard the least useful card."""
    trump = view.ctx.trump
    if not _partner_holds(view):
        if trump is not None and view.led != trump:
            ruffs = [c for c in legal if view.suit(c) == trump and view.beats(c)]
            if ruffs:
                safe = [c for c in ruffs if view.safe(c)]
                return weakest(view, safe) if safe else weakest(view, ruffs)
    return discard(view, legal)


def discard(view: CardView, legal: Sequence[int], keep_length: bool | None = None) -> int:
    """The least useful card: a powerless joker, else the weakest card of the weakest side suit.

    Args:
        keep_length: keep long suits (no trumps to ruff with); default: whether we hold no trump.
    """
    dead = [c for c in legal if view.is_dead(c)]
    if dead:
        return dead[0]
    trump = view.ctx.trump
    side = [c for c in legal if view.suit(c) not in (trump, NO_SUIT)]
    if not side:
        plain = [c for c in legal if not view.is_super(c)] or list(legal)
        return weakest(view, plain)
    if keep_length is None:
        keep_length = trump is None or not view.suit_cards(trump)

    def key(s: int) -> tuple:
        n = len(view.suit_cards(s))
        return (view.suit_strength(s), -n if keep_length else n)

    suit = min({view.suit(c) for c in side}, key=key)
    return weakest(view, [c for c in side if view.suit(c) == suit])


def lead_for_tricks(view: CardView, legal: Sequence[int]) -> int:
    """Lead (or play into a trick of powerless jokers) trying to take tricks: draw trumps when
    long in them, cash masters from the longest suit, dump a powerless joker, else lead from the
    longest, strongest suit (top of a sequence, fourth best, or low)."""
    trump = view.ctx.trump
    others = [s for s in range(view.num_players) if s != view.seat and s != view.partner]
    suits = sorted({view.suit(c) for c in legal if view.suit(c) != NO_SUIT})
    trumps_out = trump is not None and view.unseen_in(trump) > 0
    opps_have_trumps = trumps_out and not all(view.is_void(o, trump) for o in others)

    def ruffable(s: int) -> bool:
        return opps_have_trumps and s != trump and any(view.is_void(o, s) and not view.is_void(o, trump) for o in others)

    supers = [c for c in legal if view.is_super(c) and view.is_master(c)]
    if trump is not None:
        trumps = view.suit_cards(trump)
        masters = sum(1 for c in trumps if view.is_master(c))
        if trumps and opps_have_trumps and (len(trumps) >= 5 or (len(trumps) >= 4 and masters >= 1)):
            return lead_from(view, trump)
    side = [s for s in suits if s != trump]
    for s in sorted(side, key=lambda s: -len(view.suit_cards(s))):
        top = strongest(view, view.suit_cards(s))
        if view.is_master(top) and not ruffable(s) and view.unseen_in(s) > 0:
            return top
    if trump is not None and view.suit_cards(trump) and not opps_have_trumps:
        top = strongest(view, view.suit_cards(trump))
        if view.is_master(top) and side:
            return top
    dead = [c for c in legal if view.is_dead(c)]
    if dead:
        return dead[0]
    candidates = [s for s in side if not ruffable(s)] or side
    if not candidates:
        if trump is not None and view.suit_cards(trump):
            return lead_from(view, trump)
        return supers[0] if supers else weakest(view, legal)
    if supers and all(view.unseen_in(s) == 0 for s in candidates):
        return supers[0]
    suit = max(candidates, key=lambda s: (len(view.suit_cards(s)) + view.suit_strength(s) / 2, view.suit_strength(s)))
    return lead_from(view, suit)


def lead_from(view: CardView, suit: int) -> int:
    """Which card of ``suit`` to lead: a master, the top of a sequence or of a doubleton, the
    fourth best from four or more, else the lowest."""
    cards = view.suit_cards(suit)
    top = cards[-1]
    if view.is_master(top):
        return top
    if len(cards) >= 2 and view.power(top) >= TEN and view.lowest_of_equals(top) != top:
        return top
    if len(cards) == 2:
        return top
    if len(cards) >= 4:
        return cards[-4]
    return cards[0]


# ---------------------------------------------------------------------- playing against tricks
def danger(view: CardView, card: int) -> tuple[int, int]:
    """How likely ``card`` is to win a trick against our will: (−cards that beat it, power);
    larger is more dangerous."""
    return (-view.higher_unseen(card), view.power(card))


def play_against_tricks(view: CardView, legal: Sequence[int]) -> int:
    """The card a club player chooses to take as few tricks as possible for his side (a Low hand
    of Minnesota Whist, RULES.md §3.4: the side that takes seven tricks or more loses points);
    :func:`play_by_position` with :func:`lead_against_tricks`, :func:`follow_against_tricks` and
    :func:`void_against_tricks`. Arguments and result as for :func:`play_for_tricks`.
    """
    return play_by_position(view, legal, lead_against_tricks, follow_against_tricks, void_against_tricks)


def void_against_tricks(view: CardView, legal: Sequence[int]) -> int:
    """Play when unable to follow suit, avoiding tricks: throw the most dangerous card (a trick
    we win anyway costs nothing more)."""
    return max(legal, key=lambda c: danger(view, c))


def follow_against_tricks(view: CardView, following: Sequence[int]) -> int:
    """Follow suit (``following``: our legal cards of the led suit) trying to lose the trick."""
    win = view.current_winner()
    later = view.later_opponents()
    ours = win[0] == view.partner
    under = [c for c in following if not view.beats(c)]
    if ours and not later:
        return strongest(view, following)  # the trick is ours anyway: unload the highest card
    if under:
        return strongest(view, under)  # duck with the highest card that still loses
    if not later:
        return strongest(view, following)  # forced to win: win with the highest
    return weakest(view, following)  # forced to overtake: the card most likely to be beaten


def lead_against_tricks(view: CardView, legal: Sequence[int]) -> int:
    """Lead the card most likely to be beaten: many cards out above it, few below it, in a suit
    an opponent can still follow."""
    others = [s for s in range(view.num_players) if s != view.seat and s != view.partner]
    plain = [c for c in legal if view.suit(c) != NO_SUIT] or list(legal)

    def key(c: int) -> tuple:
        s = view.suit(c)
        followable = s != NO_SUIT and any(not view.is_void(o, s) for o in others)
        return (followable, view.higher_unseen(c) - view.lower_unseen(c), -view.power(c))

    return max(plain, key=key)


def suits_present(view: CardView, cards: Iterable[int]) -> list[int]:
    """Distinct effective suits of ``cards`` (jokers excluded), ascending."""
    return sorted({view.suit(c) for c in cards if view.suit(c) != NO_SUIT})


__all__ = [
    "ACE",
    "JACK",
    "KING",
    "NUM_SUITS",
    "QUEEN",
    "TEN",
    "CardChoice",
    "CardView",
    "HeuristicAgent",
    "card_ids",
    "cheapest_winner",
    "danger",
    "discard",
    "follow_against_tricks",
    "follow_for_tricks",
    "lead_against_tricks",
    "lead_for_tricks",
    "lead_from",
    "legal_actions",
    "mask_of",
    "play_against_tricks",
    "play_by_position",
    "play_for_tricks",
    "strongest",
    "suits_present",
    "void_against_tricks",
    "void_for_tricks",
    "weakest",
]
