"""Minnesota Whist (RULES.md §3) for the batched engine.

Four players in two partnerships (``player_0`` + ``player_2`` against ``player_1`` +
``player_3``), no trump. Each hand opens with the bid-card phase (§3.3): from the dealer's left,
each player chooses a card of its hand as a face-down bid card; they are revealed from the
dealer's left until the first black card, which makes the hand High and its revealer's side
Grand; four red cards make it Low. Then 13 tricks (§3.4) and the High or Low scoring (§3.5).
Every option of RULES.md §3.7 and §1.9: ``target_score``, ``doubling_variation``,
``grand_leader``, ``num_hands``, ``best_of``, ``allow_revoke`` (§2.9, the revoking side's score
becomes ``min(score, 0)``), ``first_dealer``, ``reward``, ``episode``, ``max_hands``.

The ranking table, the options and their validation, the observation layout and the reading of
fixed deals come from the reference (:class:`whist_env.rules.minnesota.MinnesotaWhist` and
:class:`whist_env.envs.encoding.ObservationEncoder`); this module re-expresses the state machine
over tensors.
"""

from __future__ import annotations

from typing import Any

import torch

from whist_env.engine.cards import NUM_RANKS, RED_SUITS
from whist_env.engine.tricks import natural_context
from whist_env.rules.base import PLAY
from whist_env.rules.minnesota import BID_CARD, MinnesotaWhist
from whist_env.vector.base import TrickTables, VectorWhistEnv, card_bits, strict_leader

#: ``contract`` values: the index of the one-hot ``contract`` feature (undecided / High / Low)
UNDECIDED, HIGH, LOW = 0, 1, 2


class VectorMinnesotaWhist(VectorWhistEnv):
    """B games of Minnesota Whist stepped at once (RULES.md §3).

    Actions are the 52 card ids: in the ``"bid_card"`` phase a card of one's own hand chosen as
    the face-down bid card (it stays in the hand), in the ``"play"`` phase the card played.
    Observations and masks have the layout and the values of
    ``minnesota_whist_v0.raw_env(**options).observe(agent)`` (:attr:`layout`); rewards are the
    AEC env's, paid on the step that ends (or, in the revoke mode, annuls) a hand.

    State besides the base class's (``int64``, B = ``num_envs``): :attr:`phase` ``[B]``,
    :attr:`bid_cards` ``[B, 4]``, :attr:`revealed` ``[B, 4]``, :attr:`contract` ``[B]``,
    :attr:`grand_player` ``[B]``.

    Args:
        num_envs: B, the number of games.
        device: torch device (``"cpu"``, ``"cuda"``).
        seed: seed of the batch's random generator (deals, random first dealers).
        **options: Minnesota Whist rule options (RULES.md §3.7, §1.9), validated as the raw env does.
    Raises:
        ValueError: on an unknown or invalid option, naming it and the allowed values.
    """

    NAME = "minnesota_whist"

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0, **options: Any) -> None:
        self.rules = MinnesotaWhist(**options)  # validates the options, reads fixed deals
        self.options = self.rules.options
        super().__init__(num_envs, device, seed)
        dev = self.device
        self.tables = TrickTables([natural_context(None)], dev)  # never a trump (§3.1)
        self._init_observation()
        phases = self.rules.PHASES
        #: phase index of each game in the rules' ``PHASES`` (bid card, play)
        self.phase = torch.zeros(num_envs, dtype=torch.int64, device=dev)
        self._bid_phase, self._play_phase = phases.index(BID_CARD), phases.index(PLAY)
        #: each seat's face-down bid card, -1 before it chooses (RULES.md §3.3)
        self.bid_cards = torch.full((num_envs, 4), -1, dtype=torch.int64, device=dev)
        #: each seat's revealed bid card, -1 if not revealed
        self.revealed = torch.full((num_envs, 4), -1, dtype=torch.int64, device=dev)
        #: :data:`UNDECIDED` until the reveal, then :data:`HIGH` or :data:`LOW`
        self.contract = torch.zeros(num_envs, dtype=torch.int64, device=dev)
        #: the seat whose black bid card made the hand High, -1 otherwise
        self.grand_player = torch.full((num_envs,), -1, dtype=torch.int64, device=dev)
        # the first lead of a High hand, relative to the Grand player (§3.4)
        self._grand_lead_offset = 1 if self.options.grand_leader == "left" else self.NUM_PLAYERS - 1
        self._black_suits = sum(1 << suit for suit in range(4) if suit not in RED_SUITS)  # vote High (§3.3)
        self._no_trump = torch.full((num_envs,), -1, dtype=torch.int64, device=dev)
        lay = self.layout
        extra = self.rules.EXTRA_FEATURES
        if [name for name, _ in extra] != ["contract", "grand_side"] or lay["grand_side"].stop != self.vector_size:
            raise AssertionError("the Minnesota extra features are no longer contract, grand_side at the end")
        self._grand_bit = lay["grand_side"].start - lay["contract"].start

    # ------------------------------------------------------------------ deals (RULES.md §3.2)
    def _deal(self, games: torch.Tensor) -> None:
        """Shuffle and deal a hand in ``games`` (``int64 [k]``): ``d[i]`` to seat
        ``(dealer + 1 + i) mod 4``, no card turned (RULES.md §3.2)."""
        hands, _ = self._deal_round_robin(games)
        self._set_deal(games, hands)

    def _set_deal(self, games: torch.Tensor, hands: torch.Tensor) -> None:
        """Install dealt ``hands`` (``int64 [k, 4]``) in ``games``: the bid-card phase opens,
        ``left(dealer)`` chooses first (§3.3)."""
        self.hands[games] = hands
        self.dealt[games] = hands
        self.phase[games] = self._bid_phase
        self.bid_cards[games] = -1
        self.revealed[games] = -1
        self.contract[games] = UNDECIDED
        self.grand_player[games] = -1
        self._open_hand(games)

    # ------------------------------------------------------------------ decisions
    # the legal actions are the base class's: before the first lead (the bid-card phase) the
    # whole hand, any card of which may be the bid card (§3.3)

    def _hidden_choice(self) -> torch.Tensor:
        """A bid card is chosen face down (RULES.md §3.3)."""
        return self.phase == self._bid_phase

    def _apply(self, actions: torch.Tensor) -> torch.Tensor:
        """Play the cards of the games in the play phase; record the bid cards of the others and,
        after the dealer's, reveal them (§3.3). Returns the games whose hand ended (or, in the
        revoke mode, was annulled)."""
        bidding = self.phase == self._bid_phase
        hand_over = self._play_cards(actions, active=~bidding)
        if bool(bidding.any()):
            games, seat = self._games, self.current_player
            self.bid_cards[games, seat] = torch.where(bidding, actions, self.bid_cards[games, seat])
            last = bidding & (seat == self.dealer)
            self.current_player = torch.where(bidding & ~last, (seat + 1) % self.NUM_PLAYERS, seat)
            if bool(last.any()):
                self._reveal(last)
        return hand_over

    def _reveal(self, games: torch.Tensor) -> None:
        """Reveal the bid cards of ``games`` (``bool [B]``, every seat has chosen) from
        ``left(dealer)`` clockwise until the first black card: High, its revealer Grand, the
        first lead by the Grand player's left (or right, ``grand_leader``); all red: Low, the
        dealer's left leads (§3.3, §3.4)."""
        n = self.NUM_PLAYERS
        order = (self.dealer[:, None] + 1 + self._seats) % n  # [B, 4]: seats in revealing order
        cards = self.bid_cards.gather(1, order)
        suits = torch.div(cards.clamp(min=0), NUM_RANKS, rounding_mode="floor")
        black = (torch.bitwise_right_shift(torch.full_like(suits, self._black_suits), suits) & 1).bool()
        high = black.any(dim=1)
        first = black.to(torch.int64).argmax(dim=1)  # the first black card (0 if none)
        shown = self._seats[None, :] <= torch.where(high, first, n - 1)[:, None]
        revealed = torch.full_like(cards, -1).scatter(1, order, torch.where(shown, cards, -1))
        grand = order.gather(1, first[:, None]).squeeze(1)
        self.revealed = torch.where(games[:, None], revealed, self.revealed)
        self.contract = torch.where(games, torch.where(high, HIGH, LOW), self.contract)
        self.grand_player = torch.where(games & high, grand, self.grand_player)
        leader = torch.where(high, (grand + self._grand_lead_offset) % n, (self.dealer + 1) % n)
        self.leader = torch.where(games, leader, self.leader)
        self.current_player = torch.where(games, leader, self.current_player)
        self.phase = torch.where(games, self._play_phase, self.phase)

    # ------------------------------------------------------------------ scoring (RULES.md §3.5, §3.6)
    def _games_to_win(self) -> int:
        return self.rules.games_to_win()

    def _revoke_penalty(self, scores: torch.Tensor) -> torch.Tensor:
        return scores.clamp(max=0)  # §3.8 N7: a penalty never improves a negative score

    def _score_hands(self, hand_over: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """High: the side with t ≥ 7 tricks scores t − 6 (doubled for the side that is not Grand
        with ``doubling_variation``); Low: it loses t − 6 (§3.5); then the end of the game
        (§3.6, target or ``num_hands``), of the match and of the episode (§2.7, §1.9). Writes
        ``rewards`` ``float32 [B, 4]``; returns ``done`` ``bool [B]``."""
        if not bool(hand_over.any()):
            return torch.zeros_like(hand_over)
        opts = self.options
        annulled = self.revoked & hand_over if self.allow_revoke else None
        scored = hand_over if annulled is None else hand_over & ~annulled
        tricks = torch.stack([self.tricks_won[:, 0] + self.tricks_won[:, 2], self.tricks_won[:, 1] + self.tricks_won[:, 3]], dim=1)
        over = tricks - 6
        high = (self.contract == HIGH)[:, None]
        if opts.doubling_variation:
            not_grand = self._seats[None, :2] != self.grand_player[:, None] % 2
            over_high = torch.where(not_grand, 2 * over, over)
        else:
            over_high = over
        points = torch.where(scored[:, None] & (tricks >= 7), torch.where(high, over_high, -over), 0)
        self.scores = self.scores + points
        if opts.num_hands is not None:  # §2.6: after H hands the higher total wins; a tie plays on
            ended = (self.hand_in_game + 1) >= opts.num_hands
        else:
            ended = self.scores.max(dim=1).values >= opts.target_score
        winner = torch.where(scored & ended, strict_leader(self.scores), -1)
        if annulled is not None:
            annulled, penalty = self._annul_revoked_hands()
            points = points + penalty
        return self._finish_hands(hand_over, points, winner, rewards, annulled=annulled)

    # ------------------------------------------------------------------ observation (envs/encoding.py)
    def _observe(self, out: torch.Tensor | None) -> torch.Tensor:
        """Observation of the player to act in every game: ``float32 [B, D]``, equal to
        ``raw_env.observe(agent)["observation"]`` (layout :attr:`layout`): seats rotated so that
        the player to act is relative seat 0; the card sets ``bid_card_self`` (its own bid card),
        ``revealed_bid_card_left`` / ``_partner`` / ``_right``; the extra features ``contract``
        (undecided / High / Low) and ``grand_side`` (own side / other side, zeros if no Grand)."""
        seat = self.current_player
        n = self.NUM_PLAYERS
        order = (seat[:, None] + self._seats) % n
        own = card_bits(self.bid_cards.gather(1, seat[:, None]))
        revealed = card_bits(self.revealed.gather(1, order[:, 1:]))
        grand = self.grand_player
        grand_bit = torch.where(grand >= 0, torch.bitwise_left_shift(torch.ones_like(grand), self._grand_bit + (grand - seat) % 2), 0)
        extra = torch.bitwise_left_shift(torch.ones_like(seat), self.contract) | grand_bit
        return self._encode(seat, torch.cat([own, revealed], dim=1), self._no_trump, self.phase, extra, out=out)

    def _hidden_card_sets(self) -> torch.Tensor:
        """``bid_cards``: every bid card placed face down, revealed or not (``int64 [B, 1]``)."""
        bits = card_bits(self.bid_cards)
        return (bits[:, 0] | bits[:, 1] | bits[:, 2] | bits[:, 3])[:, None]
