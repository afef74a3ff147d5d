"""German Whist (RULES.md §4) for the batched engine.

Two players, each for themselves, the whole deck dealt as two hands of 13 and a stock of 26 whose
face-up top card names trump for the hand (§4.2). Phase 1 (§4.3): 13 tricks played for cards, the
winner taking the face-up stock card (public), the loser the next one (seen only by the loser).
Phase 2 (§4.4): 13 scoring tricks. Every option of RULES.md §4.6 and §1.9: who leads trick 1,
``scoring`` by hands (best-of matches) or points over six to a target, every reward mode, both
episode kinds and the ``max_hands`` guard.

The ranking tables, the options and their validation, the observation layout and the reading of
fixed deals all come from the reference (:class:`whist_env.rules.german.GermanWhist` and
:class:`whist_env.envs.encoding.ObservationEncoder`); this module re-expresses the state machine
over tensors.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from whist_env.engine.cards import NUM_RANKS, NUM_STANDARD_CARDS, card_to_str
from whist_env.engine.tricks import natural_context
from whist_env.envs.encoding import SCORE_CLIP, ObservationEncoder
from whist_env.rules.base import PLAY
from whist_env.rules.german import STOCK, STOCK_SIZE, GermanWhist
from whist_env.vector.base import TrickTables, VectorWhistEnv, card_bits, unpack_bits

_FULL_DECK = (1 << NUM_STANDARD_CARDS) - 1


def _bits(cards: torch.Tensor) -> torch.Tensor:
    """Bitmask of each card id (0 … 51), 0 for -1 (no card): ``int64``, ``cards``' shape (two
    shifts, cheaper than :func:`~whist_env.vector.base.card_bits`'s test and select)."""
    return torch.bitwise_right_shift(torch.bitwise_left_shift(1, cards + 1), 1)


class VectorGermanWhist(VectorWhistEnv):
    """B games of German Whist stepped at once (RULES.md §4).

    Actions are the 52 card ids; both phases are card play (the stock draws are automatic).
    Observations and masks have the layout and the values of
    ``german_whist_v0.raw_env(**options).observe(agent)`` (:attr:`layout`, the raw env's
    ``observation_layout()``); rewards are the AEC env's, paid on the step that ends a hand.

    State added to the base class's (``int64`` tensors on :attr:`device`):

    * ``stock`` ``[B, 28]``: the stock as dealt, 26 card ids top first, then two -1 (no card: what
      lies past the last card); ``stock_left`` ``[B]``: the cards still in it (26 down to 0 by
      twos), so its face-up top is ``stock[26 - stock_left]``; ``stock_top`` ``[B]``: the bitmask
      of that face-up card (0 once the stock is empty); ``stock_mask`` ``[B]``: the bitmask of the
      cards still in it;
    * ``known`` ``[B, 2]``: per seat, the face-up stock cards it took and still holds (public);
    * ``stock_tricks_won`` ``[B, 2]``: phase-1 tricks per seat (``tricks_won`` counts phase 2 only);
    * ``trump`` ``[B]``: the suit of the first face-up stock card, trump for the whole hand.

    Args:
        num_envs: B, the number of games.
        device: torch device (``"cpu"``, ``"cuda"``).
        seed: seed of the batch's random generator (deals, random first dealers).
        **options: German Whist rule options (RULES.md §4.6, §1.9), validated as the raw env does.
    Raises:
        ValueError: on an unknown or invalid option, naming it and the allowed values.
    """

    NAME = "german_whist"
    NUM_PLAYERS = 2
    NUM_SIDES = 2
    HAND_SIZE = 13
    NUM_ACTIONS = NUM_STANDARD_CARDS

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0, **options: Any) -> None:
        self.rules = GermanWhist(**options)  # validates the options, reads fixed deals
        self.options = self.rules.options
        super().__init__(num_envs, device, seed)
        dev = self.device
        # context id = trump suit: the natural ranking under each trump (§4.1, §4.2)
        self.tables = TrickTables([natural_context(trump) for trump in range(4)], dev)
        encoder = ObservationEncoder(self.rules)
        #: name -> slice of the observation vector, shared with ``raw_env.observation_layout()``
        self.layout: dict[str, slice] = dict(encoder.layout)
        self.observation_size = encoder.size
        #: name -> slice of :meth:`state`, shared with ``raw_env.state_layout()``
        self.state_layout: dict[str, slice] = dict(encoder.state_layout)
        self._build_bit_layout()
        self._phase_stock = self.rules.PHASES.index(STOCK)
        self._phase_play = self.rules.PHASES.index(PLAY)
        self._leads_first = 0 if self.options.first_leader == "dealer" else 1  # seats after the dealer (§4.3)
        self._stock_positions = torch.arange(STOCK_SIZE, device=dev)
        b = num_envs
        self.stock = torch.full((b, STOCK_SIZE + 2), -1, dtype=torch.int64, device=dev)
        self.stock_left = torch.zeros(b, dtype=torch.int64, device=dev)
        self.stock_mask = torch.zeros(b, dtype=torch.int64, device=dev)
        self.stock_top = torch.zeros(b, dtype=torch.int64, device=dev)
        self.known = torch.zeros((b, 2), dtype=torch.int64, device=dev)
        self.stock_tricks_won = torch.zeros((b, 2), dtype=torch.int64, device=dev)
        self.trump = torch.zeros(b, dtype=torch.int64, device=dev)

    def side_of(self, seats: torch.Tensor) -> torch.Tensor:
        """Each player is a side of its own (RULES.md §4.1)."""
        return seats

    def _build_bit_layout(self) -> None:
        """Tables of :meth:`_observation`, from the reference's layout.

        Each 0/1 entry of the observation is a bit of a per-game bit string as long as the
        vector: for each card block (hand, played ×2, trick ×2, stock top, the opponent's known
        cards, unseen), the voids and each one-hot feature, the word (64 entries) it starts in and
        its shift there (a card block may spill into the next word). The vector is a whole number
        of bytes (8 entries), each one row of a byte table. The other features are integers over
        a divisor: their columns and divisors.
        """
        lay, dev = self.layout, self.device
        size = self.vector_size
        names = [name for name in lay if lay[name].start < size]
        one_hots = ("leader", "current_player", "dealer", "trump", "phase", "led_suit")
        numbers = ["tricks_won", "tricks_by_side", "scores", "games_won", "hand_in_game", "trick_number"]
        fits = (
            sys.byteorder == "little"  # the bit strings are read as bytes, low byte first
            and size % 8 == 0
            and names[names.index("tricks_won") : names.index("trick_number") + 1] == numbers
            and names[-2:] == ["stock_size", "stock_tricks_won"]
            and all(lay[name].start // 64 == (lay[name].stop - 1) // 64 for name in (*one_hots, "voids"))
        )
        if not fits:
            raise AssertionError("the German Whist observation layout no longer fits the batched encoding")
        blocks = ("hand", "played", "trick", "stock_top", "opponent_known", "unseen")
        starts = [start for name in blocks for start in range(lay[name].start, lay[name].stop, NUM_STANDARD_CARDS)]
        voids = [lay["voids"].start + 4 * r for r in range(self.NUM_PLAYERS)]
        hots = [lay[name].start for name in one_hots]
        self._words = (size + 63) // 64
        words = [s // 64 for s in starts] + [min(s // 64 + 1, self._words - 1) for s in starts] + [s // 64 for s in voids + hots]

        def tensor(values: list[Any], dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.tensor(values, dtype=dtype, device=dev)

        self._bit_words = tensor(words)[None, :]
        self._block_shift = tensor([s % 64 for s in starts])
        self._block_spill = 64 - self._block_shift
        self._void_shift = tensor([s % 64 for s in voids])
        self._hot_shift = tensor([s % 64 for s in hots])
        self._byte_floats = unpack_bits(torch.arange(256, device=dev), 8, torch.float32).contiguous()
        # per-seat state gathered by relative seat: 9 tensors of [B, 2] side by side (see _observation)
        self._by_seat = tensor([[2 * k + (r + s) % 2 for k in range(9) for r in range(2)] for s in range(2)])[:, None, :]
        self._numbers = slice(lay["tricks_won"].start, lay["trick_number"].stop)
        self._extras = slice(lay["stock_size"].start, size)
        # divisors of tricks_won, tricks_by_side, scores (then clipped), games_won, hand_in_game,
        # trick_number, stock_size, stock_tricks_won (envs/encoding.py)
        hand, scale, tricks = float(self.HAND_SIZE), self.rules.score_scale(), float(self.rules.tricks_per_hand())
        self._divisors = tensor([hand] * 4 + [scale] * 2 + [1.0] * 2 + [16.0, tricks, float(STOCK_SIZE), 13.0, 13.0], torch.float64)
        self._score_columns = slice(4, 6)

    # ------------------------------------------------------------------ deals (RULES.md §4.2)
    def _deal(self, games: torch.Tensor) -> None:
        """Shuffle and deal a hand in ``games`` (``int64 [k]``): ``d[i]`` to seat
        ``(dealer + 1 + i) mod 2`` for ``i < 26``, ``d[26:]`` the stock, ``d[26]`` face up."""
        k = len(games)
        order = torch.rand((k, NUM_STANDARD_CARDS), generator=self.generator, device=self.device, dtype=torch.float64).argsort(dim=1)
        seat_of = (self.dealer[games, None] + 1 + self._stock_positions) % self.NUM_PLAYERS
        hands = torch.zeros((k, self.NUM_PLAYERS), dtype=torch.int64, device=self.device)
        hands.scatter_add_(1, seat_of, card_bits(order[:, :STOCK_SIZE]))  # distinct bits: the sum is the union
        self._set_deal(games, hands, order[:, STOCK_SIZE:])

    def _set_deal(self, games: torch.Tensor, hands: torch.Tensor, stock: torch.Tensor) -> None:
        """Install dealt ``hands`` (``int64 [k, 2]``) and ``stock`` (``int64 [k, 26]``, top first)
        in ``games``: trump is the suit of the face-up top card; the dealer leads, or the
        non-dealer with ``first_leader="non_dealer"`` (§4.3)."""
        self.hands[games] = hands
        self.dealt[games] = hands
        self.stock[games, :STOCK_SIZE] = stock
        self.stock_top[games] = card_bits(stock[:, 0])
        self.stock_left[games] = STOCK_SIZE
        self.stock_mask[games] = card_bits(stock).sum(dim=1)
        self.known[games] = 0
        self.stock_tricks_won[games] = 0
        trump = torch.div(stock[:, 0], NUM_RANKS, rounding_mode="floor")
        self.trump[games] = trump
        self.context[games] = trump
        self._open_hand(games, self._leads_first)

    def _dealt_by_rules(self) -> tuple[list[int], int, list[int]]:
        """(hands per seat, dealer, the stock top first) of the deal the reference just made (a
        stock missing from fixed hands is shuffled from the other cards as it shuffles it)."""
        return list(self.rules.hands), self.rules.dealer, list(self.rules.stock)

    def _deal_extras(self, game: int) -> dict[str, Any]:
        """``{"stock": [26 card texts, top first]}``, as ``raw_env.current_deal()`` gives it."""
        return {"stock": [card_to_str(c) for c in self.stock[game, :STOCK_SIZE].tolist()]}

    def _after_card(self, cards: torch.Tensor, playing: torch.Tensor) -> None:
        # a face-up stock card its taker plays is no longer a known card in its hand
        self.known &= ~torch.where(playing, card_bits(cards), 0)[:, None]

    def _apply(self, actions: torch.Tensor) -> torch.Tensor:
        """Play the cards; after a phase-1 trick, the stock draws (§4.3): the winner takes the
        face-up card, the loser the next one, face down, and the card under it is turned; the
        trick counts for cards only."""
        in_stock = self.stock_left > 0
        hand_over = self._play_cards(actions)
        drawn = in_stock & (self.trick_size == 0)  # a phase-1 trick was completed
        if not bool(drawn.any()):
            return hand_over
        winner = (self.leader[:, None] == self._seats) & drawn[:, None]  # [B, 2]
        counted = winner.to(torch.int64)  # _play_cards counted the trick in tricks_won: phase 2's only
        self.tricks_won -= counted
        self.stock_tricks_won += counted
        # the face-down card and the next face-up one: stock[top + 1] and stock[top + 2] (-1 past the end)
        top = STOCK_SIZE - self.stock_left
        following = self.stock.gather(1, torch.stack([top + 1, top + 2], dim=1))
        face_down, turned = _bits(following).unbind(1)
        taken = torch.where(winner, self.stock_top[:, None], 0)
        self.hands |= taken | torch.where(drawn[:, None] & ~winner, face_down[:, None], 0)
        self.known |= taken
        self.stock_mask = torch.where(drawn, self.stock_mask & ~(self.stock_top | face_down), self.stock_mask)
        self.stock_top = torch.where(drawn, turned, self.stock_top)
        self.stock_left -= 2 * drawn.to(torch.int64)
        return hand_over

    # ------------------------------------------------------------------ scoring (RULES.md §4.5)
    def _games_to_win(self) -> int:
        return self.rules.games_to_win()

    def _score_hands(self, hand_over: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """The player with more phase-2 tricks wins the hand (§4.5): one game won in ``"hand"``
        scoring, ``tricks − 6`` points towards ``target_score`` in ``"over_six"``; match and
        episode progression (§1.9). Writes ``rewards`` ``float32 [B, 2]``; returns ``done``."""
        if not bool(hand_over.any()):
            return torch.zeros_like(hand_over)
        opts = self.options
        tricks = self.tricks_won
        winner = torch.where(tricks[:, 0] > tricks[:, 1], 0, 1)
        wins = (winner[:, None] == self._seats) & hand_over[:, None]  # [B, 2]
        if opts.scoring == "hand":
            points = wins.to(torch.int64)
            self.scores = self.scores + points
            game_winner = winner
        else:
            points = torch.where(wins, tricks - 6, 0)
            self.scores = self.scores + points
            reached = self.scores.gather(1, winner[:, None]).squeeze(1) >= opts.target_score
            game_winner = torch.where(reached, winner, -1)
        return self._finish_hands(hand_over, points, game_winner, rewards)

    # ------------------------------------------------------------------ observation (envs/encoding.py)
    def _observe(self, out: torch.Tensor | None) -> torch.Tensor:
        """Observation of the player to act in every game: ``float32 [B, D]``, equal to
        ``raw_env.observe(agent)["observation"]`` (layout :attr:`layout`): seats rotated so that
        the player to act is relative seat 0."""
        return self._observation(self.current_player, out)

    def _observation(self, seat: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """The observation of ``seat`` (``int64 [B]``) in every game.

        Every 0/1 entry (the card blocks, the one-hot features, the voids) is first set as one bit
        of a bit string per game, the whole vector long; one byte-table look-up turns the bit
        strings into the float32 vector, zeros included; the other features are written after.
        """
        b = self.num_envs
        # every per-seat state by relative seat in one gather: rel[:, 2k + r] is the k-th tensor's
        # entry for relative seat r (0 the observer, 1 its opponent)
        per_seat = torch.cat(
            [self.hands, self.played, self.trick_cards, self.known, self.shown_out, self.tricks_won,
             self.scores, self.games_won, self.stock_tricks_won],
            dim=1,
        )
        rel = per_seat.gather(1, torch.where(seat[:, None] == 0, self._by_seat[0], self._by_seat[1]))
        hand, played, trick, opponent_known = rel[:, 0:1], rel[:, 2:4], rel[:, 4:6], rel[:, 7:8]
        top = self.stock_top[:, None]
        trick = _bits(trick)
        unseen = _FULL_DECK ^ (hand | played[:, :1] | played[:, 1:] | top | opponent_known)
        blocks = torch.cat([hand, played, trick, top, opponent_known, unseen], dim=1)  # [B, 8]
        hot = torch.stack(
            [
                self.leader ^ seat,  # relative seats of two players
                self.current_player ^ seat,
                self.dealer ^ seat,
                self.trump,
                torch.where(self.stock_left > 0, self._phase_stock, self._phase_play),
                torch.where(self.led >= 0, self.led, 4),
            ],
            dim=1,
        )
        bits = torch.cat(
            [
                torch.bitwise_left_shift(blocks, self._block_shift),
                torch.bitwise_right_shift(blocks, self._block_spill),  # the part past the block's first word
                torch.bitwise_left_shift(rel[:, 8:10], self._void_shift),
                torch.bitwise_left_shift(1, hot + self._hot_shift),
            ],
            dim=1,
        )
        words = torch.zeros((b, self._words), dtype=torch.int64, device=self.device)
        words.scatter_add_(1, self._bit_words.expand(b, -1), bits)  # the bits are disjoint: the sum is the union
        as_bytes = words.view(torch.uint8)[:, : self.vector_size // 8].to(torch.int32).view(-1)
        if out is None:
            out = torch.empty((b, self.vector_size), dtype=torch.float32, device=self.device)
        torch.index_select(self._byte_floats, 0, as_bytes, out=out.view(-1, 8))

        # the other features, as the reference computes them: integers over a divisor in float64,
        # clipped (scores only), rounded once to float32; tricks_by_side repeats tricks_won (sides are seats)
        counts = torch.cat([rel[:, 10:12], rel[:, 10:16], self.hand_in_game[:, None], self.trick_number[:, None],
                            self.stock_left[:, None], rel[:, 16:18]], dim=1)
        numbers = counts.to(torch.float64) / self._divisors
        numbers[:, self._score_columns].clamp_(-SCORE_CLIP, SCORE_CLIP)
        numbers = numbers.to(torch.float32)
        out[:, self._numbers] = numbers[:, : self._numbers.stop - self._numbers.start]
        out[:, self._extras] = numbers[:, self._numbers.stop - self._numbers.start :]
        return out

    def state(self) -> torch.Tensor:
        """The privileged global state of every game, for centralised critics only: ``float32
        [B, Ds]``, equal to ``raw_env.state()`` (layout :attr:`state_layout`): the observation
        of the player to act, both hands by relative seat (``hands``, 2×52), the stock with its
        face-up top (``stock``) and the card under the top (``stock_next``)."""
        self._require_reset("state")
        order = (self.current_player[:, None] + self._seats) % self.NUM_PLAYERS
        stock_next = _bits(self.stock.gather(1, (STOCK_SIZE - self.stock_left + 1)[:, None]).squeeze(1))
        masks = torch.cat([self.hands.gather(1, order), self.stock_mask[:, None], stock_next[:, None]], dim=1)
        cards = unpack_bits(masks, NUM_STANDARD_CARDS, torch.float32).reshape(self.num_envs, -1)
        return torch.cat([self.observe(), cards], dim=1)
