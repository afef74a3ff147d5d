"""Bid Whist (RULES.md §6) for the batched engine.

Four players in two partnerships (``player_0`` + ``player_2`` against ``player_1`` +
``player_3``): the one-round auction of uptown / downtown / no-trump bids (§6.5), the
declarer's kitty pick-up and six discards (§6.6, shown to all with ``sport_kitty``), the
declaration of the trump suit or the no-trump direction, the play under the contract's ranking
with jokers and wild deuces (§6.3, §6.7), books with the kitty as one book, no-trump doubling,
the defenders' score and Boston (§6.8), the no-kitty mode (§6.9) and the game to ±target
(§6.10); every option of §6.11, every reward mode and both episode kinds of §1.9.

The ranking of every contract (one :class:`~whist_env.engine.tricks.TrickContext` per trump suit
or no trump, per direction, under the jokers' and deuces' options), the auction order of the
bids, the points of every contract for every count of books, the options and their validation,
the observation layout, the action labels and the reading of fixed deals all come from the
reference (:mod:`whist_env.rules.bid_whist` and :class:`whist_env.envs.encoding.ObservationEncoder`);
this module re-expresses the state machine over tensors.
"""

from __future__ import annotations

from typing import Any

import torch

from whist_env.engine.cards import FULL_DECK_52, FULL_DECK_54, NUM_CARDS_WITH_JOKERS, mask_to_str
from whist_env.engine.tricks import NO_SUIT
from whist_env.envs.encoding import SCORE_CLIP, ObservationEncoder
from whist_env.rules.base import PLAY
from whist_env.rules.bid_whist import (
    AUCTION,
    BID_BASE,
    DECLARE,
    DECLARE_BASE,
    DISCARD,
    KITTY_SIZE,
    MODES,
    NUM_ACTIONS,
    PASS,
    BidWhist,
    bid_of,
    bid_rank,
    contract_context,
)
from whist_env.vector.base import BlockUnpacker, TrickTables, VectorWhistEnv, card_bits

#: Calls of the auction: pass, then the bids of levels 1..7 in (uptown, downtown, notrump) order.
_NUM_CALLS = DECLARE_BASE - PASS
#: ``calls`` entry of a seat that has not called yet (the "not yet" column of the feature).
_NOT_YET = _NUM_CALLS
_NO_TRUMP_CONTEXT = 4


def _context_id(trump: torch.Tensor, downtown: torch.Tensor) -> torch.Tensor:
    """Index into the trick tables of the contract with ``trump`` (suit, or -1 for no trump) and
    direction ``downtown`` (``bool``): ``2 × (trump or 4) + downtown``."""
    return 2 * torch.where(trump >= 0, trump, _NO_TRUMP_CONTEXT) + downtown.to(torch.int64)


class VectorBidWhist(VectorWhistEnv):
    """B games of Bid Whist stepped at once (RULES.md §6).

    Actions (``Discrete(82)``, the reference's): card ids 0..53 (play and discard; 52 ``JKR``,
    53 ``JKB``), 54 ``"pass"``, 55..75 the bids ``"bid:L:mode"``, 76..81 the declarations
    ``"trump:C"`` … ``"trump:S"``, ``"direction:uptown"``, ``"direction:downtown"``
    (:meth:`action_label`). Observations and masks have the layout and the values of
    ``bid_whist_v0.raw_env(**options).observe(agent)`` (:attr:`layout`, the raw env's
    ``observation_layout()``); rewards are the AEC env's, paid on the step that ends a hand.

    Per-game state besides the base's (``int64 [B]`` unless said): :attr:`phase` (index into
    the reference's ``PHASES``: auction, discard, declare, play), :attr:`calls` (``[B, 4]``, each
    seat's call as ``action − 54``, 22 before it calls), :attr:`high_bid` (action id, -1
    before the first bid), :attr:`declarer` (the high bidder, -1 before the first bid),
    :attr:`kitty` (bitmask as dealt), :attr:`discards` (bitmask), :attr:`trump` (suit or -1),
    :attr:`direction` (0 uptown, 1 downtown, -1 before the declaration).

    Args:
        num_envs: B, the number of games.
        device: torch device (``"cpu"``, ``"cuda"``).
        seed: seed of the batch's random generator (deals, random first dealers).
        **options: Bid Whist rule options (RULES.md §6.11, §1.9), validated as the raw env does.
    Raises:
        ValueError: on an unknown or invalid option, naming it and the allowed values.
    """

    NAME = "bid_whist"
    NUM_ACTIONS = NUM_ACTIONS
    NUM_CARD_ACTIONS = NUM_CARDS_WITH_JOKERS

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0, **options: Any) -> None:
        self.rules = BidWhist(**options)  # validates the options, reads fixed deals
        self.options = opts = self.rules.options
        self.HAND_SIZE = self.rules.HAND_SIZE  # 12 with the kitty, 13 without (§6.9)
        super().__init__(num_envs, device, seed)
        dev = self.device
        b = num_envs

        def tensor(values, dtype=torch.int64):
            return torch.tensor(values, dtype=dtype, device=dev)

        # context id 2 × trump + downtown (trump 4: no trump): every ranking a contract can have
        self.tables = TrickTables(
            [contract_context(opts, None if trump == _NO_TRUMP_CONTEXT else trump, downtown) for trump in range(5) for downtown in (False, True)],
            dev,
        )
        self._no_super = self.tables.super_mask == 0
        self._deck = FULL_DECK_54 if opts.kitty else FULL_DECK_52
        self._deck_cards = tensor([c for c in range(NUM_CARDS_WITH_JOKERS) if self._deck >> c & 1])

        # the auction (§6.5): the rank of every bid, and the non-card actions legal in each
        # situation, one row per (phase situation): 0 none (discard, play), 1 a trump
        # declaration, 2 a no-trump direction, 3 + 2 h + d the auction after high bid h (0: none,
        # 1 + i: bid action BID_BASE + i) for a non-dealer (d = 0) or the dealer (d = 1)
        bids = list(range(BID_BASE, DECLARE_BASE))
        ranks = [bid_rank(*bid_of(a), opts.downtown_beats_uptown) for a in bids]
        levels = [bid_of(a)[0] for a in bids]
        rows = [[False] * (NUM_ACTIONS - PASS) for _ in range(3 + 2 * (1 + len(bids)))]
        for k in range(4):
            rows[1][DECLARE_BASE - PASS + k] = True
        for k in (4, 5):
            rows[2][DECLARE_BASE - PASS + k] = True
        for h in range(1 + len(bids)):
            high = -1 if h == 0 else ranks[h - 1]
            for dealer in (0, 1):
                row = rows[3 + 2 * h + dealer]
                row[0] = not (dealer and h == 0)  # the dealer must bid after three passes
                for i, a in enumerate(bids):
                    if levels[i] >= opts.min_bid and (ranks[i] > high or (dealer and opts.dealer_can_match and ranks[i] == high)):
                        row[a - PASS] = True
        self._call_rows = tensor(rows, torch.bool)
        # the hand's points (§6.8) by bid and declaring side's books: (declaring, defending)
        points = []
        for a in bids:
            level, mode = bid_of(a)
            points.append([self.rules.contract_points(0, level, mode, [books, 13 - books]) for books in range(14)])
        self._points = tensor(points)  # [21, 14, 2]
        self._bid_level = tensor(levels)
        self._bid_mode = tensor([MODES.index(bid_of(a)[1]) for a in bids])

        encoder = ObservationEncoder(self.rules)
        #: name -> slice of the observation vector, shared with ``raw_env.observation_layout()``
        self.layout: dict[str, slice] = dict(encoder.layout)
        self.observation_size = encoder.size
        self._score_scale = self.rules.score_scale()
        self._phases = {p: i for i, p in enumerate(self.rules.PHASES)}
        self._tricks_per_hand = float(self.rules.tricks_per_hand())
        # The observation is written by one look-up of 13-bit chunks (BlockUnpacker): the eleven
        # card blocks, then the rest of the vector as bit blocks: the features up to the unseen
        # block (one-hots and voids as bits, the numeric features as 0, written after), the
        # unseen cards, the extra features (one-hots) in blocks of 54 bits.
        lay = self.layout
        cards_end = lay["leader"].start
        extras = self.vector_size - lay["unseen"].stop
        self._extra_blocks = -(-extras // NUM_CARDS_WITH_JOKERS)
        rest = [lay["unseen"].start - cards_end, NUM_CARDS_WITH_JOKERS]
        rest += [min(NUM_CARDS_WITH_JOKERS, extras - k * NUM_CARDS_WITH_JOKERS) for k in range(self._extra_blocks)]
        self._blocks = BlockUnpacker([NUM_CARDS_WITH_JOKERS] * (cards_end // NUM_CARDS_WITH_JOKERS) + rest, b, self._unpacker)
        # observation entry -> (bit block after the card blocks, bit): 0 the features, 1 unseen, 2.. extras
        offset = torch.arange(self.vector_size, device=dev)
        extra = (offset - lay["unseen"].stop).clamp(min=0)
        self._block_of = torch.where(offset < lay["unseen"].start, 0, 2 + torch.div(extra, NUM_CARDS_WITH_JOKERS, rounding_mode="floor"))
        self._bit_of = torch.where(offset < lay["unseen"].start, offset - cards_end, extra % NUM_CARDS_WITH_JOKERS)
        self._void_shift = lay["voids"].start - cards_end
        self._state_blocks = BlockUnpacker([NUM_CARDS_WITH_JOKERS] * (self.NUM_PLAYERS + 2), b, self._unpacker)
        numeric = ("tricks_won", "tricks_by_side", "scores", "games_won", "hand_in_game", "trick_number")
        self._numeric = slice(lay[numeric[0]].start, lay[numeric[-1]].stop)
        spans = [(lay[a].stop, lay[b].start) for a, b in zip(numeric, numeric[1:])]
        if cards_end != 11 * NUM_CARDS_WITH_JOKERS or lay["unseen"].start - cards_end > 64 or any(a != b for a, b in spans):
            raise AssertionError("the Bid Whist observation layout no longer has 11 card blocks, then features that fit a 64-bit block")

        def zeros(*shape):
            return torch.zeros(shape, dtype=torch.int64, device=dev)

        self.phase = zeros(b)
        self.calls = torch.full((b, self.NUM_PLAYERS), _NOT_YET, dtype=torch.int64, device=dev)
        self.high_bid = torch.full((b,), -1, dtype=torch.int64, device=dev)
        self.declarer = torch.full((b,), -1, dtype=torch.int64, device=dev)
        self.kitty = zeros(b)
        self.discards = zeros(b)
        self.num_discards = zeros(b)
        self.trump = torch.full((b,), NO_SUIT, dtype=torch.int64, device=dev)
        self.direction = torch.full((b,), -1, dtype=torch.int64, device=dev)

    # ------------------------------------------------------------------ reset and deals
    def _dealt_by_rules(self) -> tuple[list[int], int, int]:
        """(hands per seat, dealer, kitty) of the deal the reference just made (what a fixed deal
        leaves open, e.g. the kitty, is drawn as it draws it)."""
        return list(self.rules.hands), self.rules.dealer, self.rules.kitty_cards

    def _start_hands(self, games: torch.Tensor) -> None:
        super()._start_hands(games)
        self.calls[games] = _NOT_YET
        self.high_bid[games] = -1
        self.declarer[games] = -1
        self.discards[games] = 0
        self.num_discards[games] = 0
        self.trump[games] = NO_SUIT
        self.direction[games] = -1
        self.phase[games] = self._phases[AUCTION]

    def _deal(self, games: torch.Tensor) -> None:
        """Shuffle and deal a hand in ``games`` (``int64 [k]``): ``d[i]`` to seat
        ``(dealer + 1 + i) mod 4`` for the 48 (52 without the kitty) first cards, the last six
        to the kitty (RULES.md §6.4, §6.9)."""
        k, size = len(games), len(self._deck_cards)
        order = self._deck_cards[torch.rand((k, size), generator=self.generator, device=self.device, dtype=torch.float64).argsort(dim=1)]
        dealt = self.NUM_PLAYERS * self.HAND_SIZE
        positions = torch.arange(dealt, device=self.device)
        seat_of = (self.dealer[games, None] + 1 + positions) % self.NUM_PLAYERS
        hands = torch.zeros((k, self.NUM_PLAYERS), dtype=torch.int64, device=self.device)
        hands.scatter_add_(1, seat_of, card_bits(order[:, :dealt]))  # distinct bits: the sum is the union
        self._set_deal(games, hands, card_bits(order[:, dealt:]).sum(dim=1))

    def _set_deal(self, games: torch.Tensor, hands: torch.Tensor, kitty: torch.Tensor) -> None:
        """Install dealt ``hands`` (``int64 [k, 4]``) and ``kitty`` (``int64 [k]``, 0 without the
        kitty) in ``games``; ``left(dealer)`` calls first (§6.5)."""
        self.hands[games] = hands
        self.dealt[games] = hands
        self.kitty[games] = kitty
        self._open_hand(games)

    def _deal_extras(self, game: int) -> dict[str, Any]:
        """``{"kitty": [card text, ...]}`` (nothing with ``kitty=False``), as ``raw_env.current_deal()``."""
        return {"kitty": mask_to_str(int(self.kitty[game]))} if self.options.kitty else {}

    # ------------------------------------------------------------------ legality and actions
    def _hidden_choice(self) -> torch.Tensor:
        """The declarer's discards are face down (RULES.md §6.6)."""
        return self.phase == self._phases[DISCARD]

    def _legal_mask(self) -> torch.Tensor:
        """``bool [B, 82]``: cards to play (§6.7) or to discard (§6.6), the calls of the auction
        (§6.5), the declarations (§6.6)."""
        phase = self.phase
        hand = self.hands.gather(1, self.current_player[:, None]).squeeze(1)
        cards = torch.where(phase == self._phases[DISCARD], hand, 0)
        play = phase == self._phases[PLAY]
        if bool(play.any()):
            cards = torch.where(play, self._legal_cards(), cards)
        mask = self.card_mask(cards)
        mask[:, PASS:] = self._call_rows[self._call_row()]
        return mask

    def _call_row(self) -> torch.Tensor:
        """Row of the non-card actions' table for each game (see ``__init__``): ``int64 [B]``."""
        phase = self.phase
        high = torch.where(self.high_bid >= 0, self.high_bid - BID_BASE + 1, 0)
        auction = 3 + 2 * high + (self.current_player == self.dealer).to(torch.int64)
        notrump = self._bid_mode[(self.high_bid - BID_BASE).clamp(min=0)] == MODES.index("notrump")
        declare = torch.where(notrump, 2, 1)
        row = torch.where(phase == self._phases[DECLARE], declare, 0)
        return torch.where(phase == self._phases[AUCTION], auction, row)

    def _apply(self, actions: torch.Tensor) -> torch.Tensor:
        """Route each game's legal action by its phase (§6.5-§6.7); return the games whose hand
        ended (``bool [B]``). A phase no game is in is skipped (every hand has as many decisions,
        so the games of a batch usually share one phase)."""
        phases = self._phases
        phase = self.phase
        masks = torch.stack([phase == phases[p] for p in (AUCTION, DISCARD, DECLARE, PLAY)])
        auction, discard, declare, play = masks
        present = masks.any(dim=1).tolist()
        seat = self.current_player
        hand_over = self._play_cards(actions, active=play) if present[3] else torch.zeros_like(play)
        if present[0]:
            self._call(actions, auction, seat)
        if present[1]:
            self._discard(actions, discard, seat)
        if present[2]:
            self._declare(actions, declare)
        return hand_over

    def _call(self, actions: torch.Tensor, auction: torch.Tensor, seat: torch.Tensor) -> None:
        """Auction calls of ``seat`` in the ``auction`` games (§6.5): a bid makes its caller the
        high bidder; the dealer's call closes the auction and the declarer takes up the kitty."""
        at_seat = self._seats == seat[:, None]  # [B, N]
        self.calls = torch.where(auction[:, None] & at_seat, (actions - PASS)[:, None], self.calls)
        bidding = auction & (actions != PASS)
        self.high_bid = torch.where(bidding, actions, self.high_bid)
        declarer = self.declarer = torch.where(bidding, seat, self.declarer)
        closing = auction & (seat == self.dealer)
        if self.options.kitty:  # the declarer takes up the kitty (§6.6)
            taking = closing[:, None] & (self._seats == declarer[:, None])
            self.hands = torch.where(taking, self.hands | self.kitty[:, None], self.hands)
        after_auction = self._phases[DISCARD] if self.options.kitty else self._phases[DECLARE]
        self.phase = torch.where(closing, after_auction, self.phase)
        self.leader = torch.where(closing, declarer, self.leader)
        self.current_player = torch.where(closing, declarer, torch.where(auction, (seat + 1) % self.NUM_PLAYERS, self.current_player))

    def _discard(self, actions: torch.Tensor, discard: torch.Tensor, seat: torch.Tensor) -> None:
        """One discard of the declarer ``seat`` in the ``discard`` games, six in all (§6.6)."""
        bit = torch.where(discard, card_bits(actions), 0)
        self.hands = self.hands & ~torch.where(self._seats == seat[:, None], bit[:, None], 0)
        self.discards = self.discards | bit
        self.num_discards = self.num_discards + discard.to(torch.int64)
        self.phase = torch.where(discard & (self.num_discards == KITTY_SIZE), self._phases[DECLARE], self.phase)

    def _declare(self, actions: torch.Tensor, declare: torch.Tensor) -> None:
        """The declaration in the ``declare`` games (§6.6): a trump suit (the direction is the
        bid's) or a no-trump direction; the contract's ranking; the declarer leads (§6.7)."""
        trump = torch.where(actions < DECLARE_BASE + 4, actions - DECLARE_BASE, NO_SUIT)
        bid_mode = self._bid_mode[(self.high_bid - BID_BASE).clamp(min=0)]
        downtown = torch.where(trump >= 0, bid_mode == MODES.index("downtown"), actions == DECLARE_BASE + 5)
        self.trump = torch.where(declare, trump, self.trump)
        self.direction = torch.where(declare, downtown.to(torch.int64), self.direction)
        self.context = torch.where(declare, _context_id(trump, downtown), self.context)
        self.phase = torch.where(declare, self._phases[PLAY], self.phase)
        self.leader = torch.where(declare, self.declarer, self.leader)
        self.current_player = torch.where(declare, self.declarer, self.current_player)

    def _trick_winner(self) -> torch.Tensor:
        # four powerless suitless cards (two jokers and two wild deuces in no-trump): the leader
        # keeps the trick, as the reference rules it
        winner = super()._trick_winner()
        return torch.where((self.led < 0) & self._no_super[self.context], self.leader, winner)

    # ------------------------------------------------------------------ scoring (RULES.md §6.8, §6.10)
    def _score_hands(self, hand_over: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """Books, contract made or set, no-trump doubling, defenders' score, Boston (§6.8), ±target
        (§6.10), episode progression (§1.9); writes ``rewards`` ``float32 [B, 4]``; returns
        ``done`` ``bool [B]``."""
        if not bool(hand_over.any()):
            return torch.zeros_like(hand_over)
        opts = self.options
        declaring = self.declarer.clamp(min=0) % 2
        tricks = self.tricks_won
        by_side = torch.stack([tricks[:, 0] + tricks[:, 2], tricks[:, 1] + tricks[:, 3]], dim=1)
        books = by_side.gather(1, declaring[:, None]).squeeze(1) + int(opts.kitty)  # the kitty is a book
        pair = self._points[(self.high_bid - BID_BASE).clamp(min=0), books.clamp(max=13)]  # [B, 2]: declaring, defending
        points = torch.where((declaring == 0)[:, None], pair, pair.flip(1))
        points = torch.where(hand_over[:, None], points, 0)
        scores = self.scores + points
        target = opts.target_score
        winner = torch.full_like(declaring, -1)
        if opts.lose_at_negative_target:
            winner = torch.where(scores[:, 1] <= -target, 0, winner)
            winner = torch.where(scores[:, 0] <= -target, 1, winner)
        winner = torch.where(scores[:, 1] >= target, 1, winner)
        winner = torch.where(scores[:, 0] >= target, 0, winner)
        self.scores = scores
        return self._finish_hands(hand_over, points, winner, rewards)

    # ------------------------------------------------------------------ observation (envs/encoding.py)
    def _observe(self, out: torch.Tensor | None) -> torch.Tensor:
        """Observation of the player to act in every game: ``float32 [B, D]``, equal to
        ``raw_env.observe(agent)["observation"]`` (layout :attr:`layout`): seats rotated so that
        the player to act is relative seat 0, sides so that its side is first."""
        return self._observation(self.current_player, out)

    def _observation(self, seat: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        b, n = self.num_envs, self.NUM_PLAYERS
        lay = self.layout
        order = (seat[:, None] + self._seats) & 3  # [B, N]: absolute seat of each relative seat (mod 4)
        hand = self.hands.gather(1, seat[:, None])
        played = self.played.gather(1, order)
        trick = card_bits(self.trick_cards.gather(1, order))
        after_auction = self.phase != self._phases[AUCTION]
        is_declarer = seat == self.declarer
        kitty_seen = after_auction if self.options.sport_kitty else after_auction & is_declarer
        kitty = torch.where(kitty_seen, self.kitty, 0)
        discards = torch.where(is_declarer, self.discards, 0)
        seen = hand.squeeze(1) | kitty | discards
        for p in range(n):
            seen = seen | self.played[:, p]

        # the bit blocks after the card blocks: one-hot features (0 where a feature is unset) and
        # voids, the unseen cards, the extra features
        blocks = torch.zeros((b, 2 + self._extra_blocks), dtype=torch.int64, device=self.device)
        in_contract = (after_auction & (self.declarer >= 0)).to(torch.int64)
        bid = (self.high_bid - BID_BASE).clamp(min=0)
        calls = self.calls.gather(1, order)
        hot = torch.cat(
            [
                torch.stack(
                    [
                        lay["leader"].start + ((self.leader - seat) & 3),
                        lay["current_player"].start + ((self.current_player - seat) & 3),
                        lay["dealer"].start + ((self.dealer - seat) & 3),
                        lay["trump"].start + torch.where(self.trump >= 0, self.trump, 4),
                        lay["phase"].start + self.phase,
                        lay["led_suit"].start + torch.where(self.led >= 0, self.led, 4),
                        lay["contract_level"].start + self._bid_level[bid] - 1,
                        lay["contract_mode"].start + self._bid_mode[bid],
                        lay["direction"].start + self.direction.clamp(min=0),
                        lay["declarer"].start + ((self.declarer - seat) & 3),
                    ],
                    dim=1,
                ),
                lay["calls"].start + (_NUM_CALLS + 1) * self._seats + calls,
            ],
            dim=1,
        )
        on = torch.ones_like(hot)
        on[:, 6:8] = in_contract[:, None]
        on[:, 8] = in_contract & (self.direction >= 0)
        on[:, 9] = in_contract
        blocks.scatter_add_(1, self._block_of[hot], torch.bitwise_left_shift(on, self._bit_of[hot]))  # distinct bits: the sum is the union
        shown = self.shown_out.gather(1, order)
        voids = shown[:, 0] | (shown[:, 1] << 4) | (shown[:, 2] << 8) | (shown[:, 3] << 12)
        blocks[:, 0] |= torch.bitwise_left_shift(voids, self._void_shift)
        blocks[:, 1] = self._deck & ~seen
        out = self._blocks.unpack(torch.cat([hand, played, trick, kitty[:, None], discards[:, None], blocks], dim=1), out)

        # the numeric features, computed in float64 and rounded once, as the reference's Python floats are
        tricks = self.tricks_won.gather(1, order).to(torch.float64)
        side_order = (seat[:, None] + self._seats[: self.NUM_SIDES]) & 1  # two sides: seat mod 2
        by_side = torch.stack([tricks[:, 0] + tricks[:, 2], tricks[:, 1] + tricks[:, 3]], dim=1)  # the observer's side first
        scores = self.scores.gather(1, side_order).to(torch.float64) / self._score_scale
        numeric = [
            tricks / self.HAND_SIZE,
            by_side / self.HAND_SIZE,
            scores.clamp(-SCORE_CLIP, SCORE_CLIP),
            self.games_won.gather(1, side_order).to(torch.float64),
            self.hand_in_game.to(torch.float64)[:, None] / 16.0,
            self.trick_number.to(torch.float64)[:, None] / self._tricks_per_hand,
        ]
        out[:, self._numeric] = torch.cat(numeric, dim=1).to(torch.float32)
        return out

    def state(self) -> torch.Tensor:
        """The privileged global state of every game, for centralised critics only: ``float32
        [B, Ds]``, equal to ``raw_env.state()``: the observation of the player to act, then every
        hand by relative seat (``hands``, 4 × 54), the kitty as dealt and the discards."""
        self._require_reset("state")
        order = (self.current_player[:, None] + self._seats) % self.NUM_PLAYERS
        hidden = self._state_blocks.unpack(torch.cat([self.hands.gather(1, order), self.kitty[:, None], self.discards[:, None]], dim=1))
        return torch.cat([self.observe(), hidden], dim=1)


__all__ = ["VectorBidWhist"]
