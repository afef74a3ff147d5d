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

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from whist_env.engine.cards import NUM_RANKS, NUM_STANDARD_CARDS, card_to_str, mask_to_str
from whist_env.engine.tricks import natural_context
from whist_env.envs.encoding import SCORE_CLIP, ObservationEncoder
from whist_env.rules.base import PLAY
from whist_env.rules.german import STOCK, STOCK_SIZE, GermanWhist
from whist_env.vector.base import TrickTables, VectorWhistEnv, card_bits, unpack_bits

_FULL_DECK = (1 << NUM_STANDARD_CARDS) - 1


class VectorGermanWhist(VectorWhistEnv):
    """B games of German Whist stepped at once (RULES.md §4).

    Actions are the 52 card ids; both phases are card play (the stock draws are automatic).
    Observations and masks have the layout and the values of
    ``german_whist_v0.raw_env(**options).observe(agent)`` (:attr:`layout`, the raw env's
    ``observation_layout()``); rewards are the AEC env's, paid on the step that ends a hand.

    State added to the base class's (``int64`` tensors on :attr:`device`):

    * ``stock`` ``[B, 26]``: the stock as dealt, card ids, top first; ``stock_left`` ``[B]``: the
      cards still in it (26 down to 0 by twos), so its face-up top is ``stock[26 - stock_left]``;
      ``stock_mask`` ``[B]``: the bitmask of the cards still in it;
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
        self.agents = [f"player_{s}" for s in range(self.NUM_PLAYERS)]
        # context id = trump suit: the natural ranking under each trump (§4.1, §4.2)
        self.tables = TrickTables([natural_context(trump) for trump in range(4)], dev)
        encoder = ObservationEncoder(self.rules)
        #: name -> slice of the observation vector, shared with ``raw_env.observation_layout()``
        self.layout: dict[str, slice] = dict(encoder.layout)
        self.observation_size = encoder.size
        #: name -> slice of :meth:`state`, shared with ``raw_env.state_layout()``
        self.state_layout: dict[str, slice] = dict(encoder.state_layout)
        lay = self.layout
        blocks = ("hand", "played", "trick", "stock_top", "opponent_known")
        if [name for name in lay][: len(blocks) + 1] != [*blocks, "leader"] or lay["unseen"].stop != lay["stock_size"].start:
            raise AssertionError("the German Whist observation layout is no longer card blocks, features, unseen, extras")
        self._cards_end = lay["leader"].start
        self._features = lay["unseen"].start - self._cards_end
        self._one_hots = lay["tricks_won"].start - self._cards_end  # leader, current player, dealer, trump, phase
        self._numbers = lay["led_suit"].start - lay["tricks_won"].start  # tricks_won ... voids
        self._score_scale = self.rules.score_scale()
        self._phase_stock = self.rules.PHASES.index(STOCK)
        self._phase_play = self.rules.PHASES.index(PLAY)
        self._leads_first = 0 if self.options.first_leader == "dealer" else 1  # seats after the dealer (§4.3)
        #: entry k: k / 13 and k / 26 as the reference rounds them (a Python float cast to float32)
        self._thirteenths = torch.tensor([k / 13 for k in range(27)], dtype=torch.float32, device=dev)
        self._per_stock = torch.tensor([k / STOCK_SIZE for k in range(STOCK_SIZE + 1)], dtype=torch.float32, device=dev)
        self._per_trick = torch.tensor([k / self.rules.tricks_per_hand() for k in range(27)], dtype=torch.float32, device=dev)
        #: row k: the four suit flags (C, D, H, S) of the 4-bit suit mask k
        self._suit_rows = unpack_bits(torch.arange(16, device=dev), 4, torch.float32).contiguous()
        self._stock_positions = torch.arange(STOCK_SIZE, device=dev)
        b = num_envs
        self.stock = torch.zeros((b, STOCK_SIZE), dtype=torch.int64, device=dev)
        self.stock_left = torch.zeros(b, dtype=torch.int64, device=dev)
        self.stock_mask = torch.zeros(b, dtype=torch.int64, device=dev)
        self.known = torch.zeros((b, 2), dtype=torch.int64, device=dev)
        self.stock_tricks_won = torch.zeros((b, 2), dtype=torch.int64, device=dev)
        self.trump = torch.zeros(b, dtype=torch.int64, device=dev)

    def side_of(self, seats: torch.Tensor) -> torch.Tensor:
        """Each player is a side of its own (RULES.md §4.1)."""
        return seats

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
        self.stock[games] = stock
        self.stock_left[games] = STOCK_SIZE
        self.stock_mask[games] = card_bits(stock).sum(dim=1)
        self.known[games] = 0
        self.stock_tricks_won[games] = 0
        trump = torch.div(stock[:, 0], NUM_RANKS, rounding_mode="floor")
        self.trump[games] = trump
        self.context[games] = trump
        first = (self.dealer[games] + self._leads_first) % self.NUM_PLAYERS
        self.leader[games] = first
        self.current_player[games] = first
        self._mask = None

    def reset(self, options: Sequence[Mapping[str, Any] | None] | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Start a new episode in every game.

        Args:
            options: ``None`` (every deal random), or one entry per game: ``None`` for a random
                deal, or a fixed first deal in ``raw_env`` reset-options form (``{"hands": {agent:
                [card text, ...]}, "dealer": agent, "stock": [26 card texts, top first]}``, as
                :meth:`current_deal` returns; what it leaves open is drawn as the reference draws
                it). Later hands are dealt at random.
        Returns:
            ``(obs float32 [B, D], mask bool [B, 52], seat int64 [B])``.
        Raises:
            ValueError: on a broken deal (as ``raw_env.reset`` says it), naming the game; or
                ``options`` not of length B. Nothing is changed then.
        """
        fixed = self._read_deals(options) if options is not None else {}
        out = super().reset()
        if fixed:
            games = sorted(fixed)
            index = torch.tensor(games, dtype=torch.int64, device=self.device)
            hands, dealers, stocks = ([fixed[g][k] for g in games] for k in range(3))
            self.dealer[index] = torch.tensor(dealers, dtype=torch.int64, device=self.device)
            self._start_hands(index)
            self._set_deal(index, torch.tensor(hands, dtype=torch.int64, device=self.device), torch.tensor(stocks, dtype=torch.int64, device=self.device))
            out = self._outputs()
        return out

    def _dealt_by_rules(self) -> tuple[list[int], int, list[int]]:
        """(hands per seat, dealer, the stock top first) of the deal the reference just made (a
        stock missing from fixed hands is shuffled from the other cards as it shuffles it)."""
        return list(self.rules.hands), self.rules.dealer, list(self.rules.stock)

    def current_deal(self, game: int) -> dict[str, Any]:
        """Game ``game``'s current hand as dealt, in ``raw_env`` reset-options form:
        ``{"hands": {agent: [card text, ...]}, "dealer": agent, "stock": [26 card texts, top
        first]}``. ``raw_env.reset(options=...)`` replays it.

        It holds every player's hidden cards and the stock: for tests, duplicate evaluation and
        records.
        """
        dealt = self.dealt[game].tolist()
        return {
            "hands": {agent: mask_to_str(dealt[s]) for s, agent in enumerate(self.agents)},
            "dealer": self.agents[int(self.dealer[game])],
            "stock": [card_to_str(c) for c in self.stock[game].tolist()],
        }

    # ------------------------------------------------------------------ play (RULES.md §4.3, §4.4)
    def _after_card(self, cards: torch.Tensor, playing: torch.Tensor) -> None:
        # a face-up stock card its taker plays is no longer a known card in its hand
        self.known &= ~torch.where(playing, card_bits(cards), 0)[:, None]

    def _apply(self, actions: torch.Tensor) -> torch.Tensor:
        """Play the cards; after a phase-1 trick, the stock draws (§4.3): the winner takes the
        face-up card, the loser the next one, face down; the trick counts for cards only."""
        in_stock = self.stock_left > 0
        hand_over = self._play_cards(actions)
        drawn = in_stock & (self.trick_size == 0)  # a phase-1 trick was completed
        winner = (self.leader[:, None] == self._seats) & drawn[:, None]  # [B, 2]
        loser = ~winner & drawn[:, None]
        counted = winner.to(torch.int64)
        self.tricks_won -= counted
        self.stock_tricks_won += counted
        top = STOCK_SIZE - self.stock_left
        face_up = card_bits(self.stock.gather(1, top.clamp(max=STOCK_SIZE - 2)[:, None]))  # [B, 1]
        face_down = card_bits(self.stock.gather(1, (top + 1).clamp(max=STOCK_SIZE - 1)[:, None]))
        taken = torch.where(winner, face_up, 0)
        self.hands |= taken | torch.where(loser, face_down, 0)
        self.known |= taken
        self.stock_mask &= ~torch.where(drawn, face_up.squeeze(1) | face_down.squeeze(1), 0)
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
    def _stock_top(self) -> torch.Tensor:
        """Bitmask of the face-up stock card (0 once the stock is empty): ``int64 [B]``."""
        top = self.stock.gather(1, (STOCK_SIZE - self.stock_left).clamp(max=STOCK_SIZE - 1)[:, None]).squeeze(1)
        return torch.where(self.stock_left > 0, card_bits(top), 0)

    def observe(self) -> torch.Tensor:
        """Observation of the player to act in every game: ``float32 [B, D]``, equal to
        ``raw_env.observe(agent)["observation"]`` (layout :attr:`layout`): seats rotated so that
        the player to act is relative seat 0."""
        return self._observation(self.current_player)

    def _observation(self, seat: torch.Tensor) -> torch.Tensor:
        b, n = self.num_envs, self.NUM_PLAYERS
        lay = self.layout
        order = (seat[:, None] + self._seats) % n  # [B, 2]: the observer, then its opponent
        hand = self.hands.gather(1, seat[:, None])
        played = self.played.gather(1, order)
        trick = card_bits(self.trick_cards.gather(1, order))
        top = self._stock_top()[:, None]
        opponent_known = self.known.gather(1, order[:, 1:])
        seen = hand | played[:, :1] | played[:, 1:] | top | opponent_known
        unseen = _FULL_DECK & ~seen
        # every card block in 13-bit chunks through one table look-up
        unpacker = self._unpacker
        chunks = unpacker.chunks(torch.cat([hand, played, trick, top, opponent_known, unseen], dim=1), NUM_STANDARD_CARDS)
        cards = unpacker.unpack(chunks, unpacker.floats)  # [B, 8 * 52]

        features = torch.zeros((b, self._features), dtype=torch.float32, device=self.device)
        start = self._cards_end
        hot = torch.stack(
            [
                lay["leader"].start - start + (self.leader - seat) % n,
                lay["current_player"].start - start + (self.current_player - seat) % n,
                lay["dealer"].start - start + (self.dealer - seat) % n,
                lay["trump"].start - start + self.trump,
                lay["phase"].start - start + torch.where(self.stock_left > 0, self._phase_stock, self._phase_play),
                lay["led_suit"].start - start + torch.where(self.led >= 0, self.led, 4),
            ],
            dim=1,
        )
        features.scatter_(1, hot, 1.0)
        # sides are seats: tricks_by_side repeats tricks_won; ratios rounded as the reference's Python floats
        tricks = self._thirteenths[self.tricks_won.gather(1, order)]
        scores = (self.scores.gather(1, order).to(torch.float64) / self._score_scale).clamp(-SCORE_CLIP, SCORE_CLIP)
        numbers = torch.cat(
            [
                tricks,
                tricks,
                scores.to(torch.float32),
                self.games_won.gather(1, order).to(torch.float32),
                (self.hand_in_game.to(torch.float64) / 16.0).to(torch.float32)[:, None],
                self._per_trick[self.trick_number][:, None],
                self._suit_rows[self.shown_out.gather(1, order)].view(b, 4 * n),
            ],
            dim=1,
        )
        features[:, self._one_hots : self._one_hots + self._numbers] = numbers
        extras = torch.cat([self._per_stock[self.stock_left][:, None], self._thirteenths[self.stock_tricks_won.gather(1, order)]], dim=1)
        return torch.cat([cards[:, :start], features, cards[:, start:], extras], dim=1)

    def state(self) -> torch.Tensor:
        """The privileged global state of every game, for centralised critics only: ``float32
        [B, Ds]``, equal to ``raw_env.state()`` (layout :attr:`state_layout`): the observation
        of the player to act, both hands by relative seat (``hands``, 2×52), the stock with its
        face-up top (``stock``) and the card under the top (``stock_next``)."""
        order = (self.current_player[:, None] + self._seats) % self.NUM_PLAYERS
        top = STOCK_SIZE - self.stock_left
        under = self.stock.gather(1, (top + 1).clamp(max=STOCK_SIZE - 1)[:, None]).squeeze(1)
        stock_next = torch.where(self.stock_left > 1, card_bits(under), 0)
        masks = torch.cat([self.hands.gather(1, order), self.stock_mask[:, None], stock_next[:, None]], dim=1)
        cards = unpack_bits(masks, NUM_STANDARD_CARDS, torch.float32).reshape(self.num_envs, -1)
        return torch.cat([self.observe(), cards], dim=1)
