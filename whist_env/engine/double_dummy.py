"""Double-dummy solving of the card play: every hand open, every player playing perfectly.

Variant-agnostic: a position is the hands (bitmasks), the trick in progress, the seat to lead it,
the :class:`whist_env.engine.tricks.TrickContext` of the hand (trump, jokers, wild deuces,
downtown orders, must-trump, super cards: RULES.md §1.4 and the variants' sections), the game's
own trick-winner rule (the rules' ``trick_winner_rule``) and the side of each seat, for 2 to 6
players. The value of a position for a side is the number of tricks that side takes from the
current trick (included) to the end of the hand when it maximises them and every other seat
plays to minimise them (exact for two sides; the usual *paranoid* reduction
when each player is a side of their own, as in Cutthroat and Romanian Whist). With
``misere=True`` the side minimises its tricks and the others maximise them (Minnesota Low).

Search: alpha-beta over single card plays; a transposition table keyed on the remaining cards and
the leader at each trick boundary, with lower and upper bounds; equivalent cards pruned (cards of
one hand adjacent in power within their effective suit, with no card between them left in any
hand or in the current trick, play the same, so one of them is searched); moves ordered high
card first. A solver object keeps its table between calls on positions of the same hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from whist_env.engine.cards import FULL_DECK_54, cards_list
from whist_env.engine.tricks import TrickContext, led_suit, legal_cards, trick_winner


class DoubleDummySolver:
    """Solves positions of one hand's card play (one trick context, one seating).

    Args:
        ctx: the hand's trick context.
        side_of: side of each seat (length N, 2 <= N <= 6).
        deck: bitmask of the game's cards (``TrickTakingGame.deck_mask()``); positions holding
            another card are refused (default: all 54 card ids).
        winner: the game's trick-winner rule, ``(plays, ctx) -> seat`` for a complete trick
            (``TrickTakingGame.trick_winner_rule``; default the generic rule of RULES.md §1.4,
            :func:`whist_env.engine.tricks.trick_winner`).
    Raises:
        ValueError: fewer than 2 or more than 6 seats; a deck holding ids outside 0..53.
        TypeError: ``winner`` is not callable.
    """

    def __init__(self, ctx: TrickContext, side_of: Sequence[int], deck: int = FULL_DECK_54,
                 winner: Callable[[Sequence[tuple[int, int]], TrickContext], int] = trick_winner) -> None:
        if not 2 <= len(side_of) <= 6:
            raise ValueError(f"a trick needs 2 to 6 players, got {len(side_of)}")
        if int(deck) < 0 or int(deck) & ~FULL_DECK_54:
            raise ValueError(f"deck must be a bitmask of card ids 0..53, got {deck:#x}")
        if not callable(winner):
            raise TypeError(f"winner must be a trick-winner rule (plays, ctx) -> seat, got {type(winner).__name__}")
        self.ctx = ctx
        self.deck = int(deck)
        self.winner = winner
        self.side_of = tuple(int(s) for s in side_of)
        self.num_players = len(self.side_of)
        self._eff = ctx.eff_suit
        self._power = ctx.power
        # the cards of each effective suit, strongest first (super cards apart)
        self._suit_order = [sorted(cards_list(m & ~ctx.super_mask), key=lambda c: ctx.power[c], reverse=True) for m in ctx.suit_masks]
        self._other_mask = ~(ctx.suit_masks[0] | ctx.suit_masks[1] | ctx.suit_masks[2] | ctx.suit_masks[3]) | ctx.super_mask
        # per (side, misere): bounds of positions at trick boundaries, key (hands, leader)
        self._tables: dict[tuple[int, bool], dict[tuple[tuple[int, ...], int], tuple[int, int]]] = {}
        #: positions searched by the calls so far (a measure of the work done)
        self.nodes = 0

    # ------------------------------------------------------------------ public
    def solve(self, hands: Sequence[int], leader: int, trick: Sequence[tuple[int, int]] = (), side: int = 0,
              misere: bool = False) -> int:
        """Tricks ``side`` takes from the current trick to the end under double-dummy play.

        Args:
            hands: bitmask of each seat's remaining cards (the trick's cards already removed).
            leader: the seat that led (or is to lead) the current trick.
            trick: ``[(seat, card), ...]`` played to the current trick, in order.
            side: the side whose tricks are counted.
            misere: the side minimises its tricks (the others maximise them).
        Returns:
            int in ``[0, tricks left]``.
        Raises:
            ValueError: a position that is not one (cards held twice, a trick out of turn, a
                complete trick, hands of unequal length where they must be equal).
        """
        hands, trick = self._check(hands, leader, trick)
        if side not in self.side_of:
            raise ValueError(f"side {side!r} is not one of the sides {sorted(set(self.side_of))}")
        total = self._tricks_left(hands, trick)
        if total == 0:
            return 0
        return self._search(hands, leader, trick, side, misere, -1, total + 1)

    def card_values(self, hands: Sequence[int], leader: int, trick: Sequence[tuple[int, int]] = (),
                    misere: bool = False) -> dict[int, int]:
        """Value of each legal card of the seat to play: the tricks its side takes from the
        current trick to the end after playing it (fewest best when ``misere``).

        Returns:
            card id -> int, for every legal card (equivalent cards get the same value).
        Raises:
            ValueError: as :meth:`solve`.
        """
        hands, trick = self._check(hands, leader, trick)
        seat = (leader + len(trick)) % self.num_players
        side = self.side_of[seat]
        total = self._tricks_left(hands, trick)
        values: dict[int, int] = {}
        for card, group in self._moves(hands, seat, trick):
            value = self._after(hands, leader, trick, seat, card, side, misere, -1, total + 1)
            for c in group:
                values[c] = value
        return values

    # ------------------------------------------------------------------ search
    def _check(self, hands: Sequence[int], leader: int, trick: Sequence[tuple[int, int]]) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
        n = self.num_players
        hands = tuple(int(h) for h in hands)
        trick = tuple((int(s), int(c)) for s, c in trick)
        if len(hands) != n:
            raise ValueError(f"{len(hands)} hands for {n} seats")
        if not 0 <= leader < n:
            raise ValueError(f"leader {leader} is not a seat 0..{n - 1}")
        if len(trick) >= n:
            raise ValueError("the current trick is complete: give the position after it")
        seen = 0
        for seat, h in enumerate(hands):
            if h < 0 or h & ~self.deck:
                raise ValueError(f"hand of seat {seat} holds cards outside this game's deck (bitmask {h:#x})")
            if seen & h:
                raise ValueError("a card is held twice")
            seen |= h
        cards_before = list(hands)
        for _, c in trick:
            if not 0 <= c < 64 or not self.deck >> c & 1:
                raise ValueError(f"trick card {c} is not a card of this game's deck")
        for k, (s, c) in enumerate(trick):
            if s != (leader + k) % n:
                raise ValueError(f"trick play {k} is by seat {s}, expected seat {(leader + k) % n}")
            if seen >> c & 1:
                raise ValueError(f"card {c} is both in the trick and in a hand")
            seen |= 1 << c
            led = led_suit([card for _, card in trick[:k]], self.ctx) if k else None
            if not legal_cards(cards_before[s] | 1 << c, led, self.ctx) >> c & 1:
                raise ValueError(f"trick play {k} (card {c} by seat {s}) breaks the rules of following suit")
        counts = [h.bit_count() for h in hands]
        played = {s for s, _ in trick}
        base = counts[(leader + len(trick)) % n]  # the seat to play has not played to this trick
        if any(counts[s] != base - (s in played) for s in range(n)):
            raise ValueError(f"hand sizes {counts} do not fit a trick of {len(trick)} card(s) led by seat {leader}")
        return hands, trick

    def _tricks_left(self, hands: tuple[int, ...], trick: tuple[tuple[int, int], ...]) -> int:
        seat = (trick[0][0] if trick else 0)
        return hands[seat].bit_count() + (1 if trick else 0)

    def _moves(self, hands: tuple[int, ...], seat: int, trick: tuple[tuple[int, int], ...]) -> list[tuple[int, list[int]]]:
        """Legal cards of ``seat`` as ``(representative, equivalent cards)``, best first."""
        ctx, power = self.ctx, self._power
        led = led_suit([c for _, c in trick], ctx) if trick else None
        legal = legal_cards(hands[seat], led, ctx)
        groups: list[tuple[int, list[int]]] = [(c, [c]) for c in cards_list(legal & self._other_mask)]
        rest = legal & ~self._other_mask
        if rest:
            live = 0
            for h in hands:
                live |= h
            for _, c in trick:
                live |= 1 << c
            for s, mask in enumerate(ctx.suit_masks):
                if not rest & mask:
                    continue
                run: list[int] = []
                for c in self._suit_order[s]:
                    if rest >> c & 1:
                        run.append(c)
                    elif run and live >> c & 1:
                        groups.append((run[0], run))
                        run = []
                if run:
                    groups.append((run[0], run))
        groups.sort(key=lambda g: power[g[0]], reverse=True)
        return groups

    def _after(self, hands: tuple[int, ...], leader: int, trick: tuple[tuple[int, int], ...], seat: int, card: int,
               side: int, misere: bool, alpha: int, beta: int) -> int:
        """Value after ``seat`` plays ``card`` (tricks of ``side`` from the current trick on)."""
        n = self.num_players
        new_hands = hands[:seat] + (hands[seat] & ~(1 << card),) + hands[seat + 1 :]
        new_trick = trick + ((seat, card),)
        if len(new_trick) < n:
            return self._search(new_hands, leader, new_trick, side, misere, alpha, beta)
        winner = self.winner(new_trick, self.ctx)
        won = 1 if self.side_of[winner] == side else 0
        if not any(new_hands):
            return won
        return won + self._search(new_hands, winner, (), side, misere, alpha - won, beta - won)

    def _search(self, hands: tuple[int, ...], leader: int, trick: tuple[tuple[int, int], ...], side: int, misere: bool,
                alpha: int, beta: int) -> int:
        self.nodes += 1
        table = None
        if not trick:
            table = self._tables.setdefault((side, misere), {})
            key = (hands, leader)
            lower, upper = table.get(key, (0, hands[leader].bit_count()))
            if lower >= beta or lower == upper:
                return lower
            if upper <= alpha:
                return upper
            alpha, beta = max(alpha, lower - 1), min(beta, upper + 1)
            alpha0, beta0 = alpha, beta
        seat = (leader + len(trick)) % self.num_players
        maximise = (self.side_of[seat] == side) != misere
        best = -1 if maximise else 10**6
        for card, _ in self._moves(hands, seat, trick):
            value = self._after(hands, leader, trick, seat, card, side, misere, alpha, beta)
            if maximise:
                if value > best:
                    best = value
                    alpha = max(alpha, value)
            else:
                if value < best:
                    best = value
                    beta = min(beta, value)
            if alpha >= beta:
                break
        if table is not None:
            lower, upper = table.get((hands, leader), (0, hands[leader].bit_count()))
            if best <= alpha0:
                upper = min(upper, best)
            elif best >= beta0:
                lower = max(lower, best)
            else:
                lower = upper = best
            table[(hands, leader)] = (lower, upper)
        return best
