"""Partnership Spades (RULES.md §8) for the batched engine.

Four players in two partnerships (``player_0`` + ``player_2`` against ``player_1`` +
``player_3``): one bid per player from the dealer's left, nil or 1 … 13, with the combined bid
limit and blind nil where the options ask for them (§8.3); card play with spades always trump
and the lead of spades restricted by ``spade_lead`` (§8.4); the side's contract, bags carried
over and the bag penalty, nil and blind nil (§8.5); the game to ``target_score`` and the mercy
rule (§8.6); every option of §8.8, every reward mode and both episode kinds of RULES.md §1.9.

The ranking (spades trump), the points of a side's hand (:func:`whist_env.rules.spades.side_points`,
tabulated once per scoring options), the options and their validation, the observation layout,
the action labels and the reading of fixed deals all come from the reference
(:class:`whist_env.rules.spades.Spades` and :class:`whist_env.envs.encoding.ObservationEncoder`);
this module re-expresses the state machine over tensors.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from whist_env.engine.cards import SPADES as SPADE_SUIT
from whist_env.engine.tricks import natural_context
from whist_env.rules.base import PLAY
from whist_env.rules.spades import BID, BID_BASE, BID_SLOTS, BLIND_NIL, MAX_BID, SPADE_MASK, Spades, SpadesOptions, side_points
from whist_env.vector.base import TrickTables, VectorWhistEnv, strict_leader

#: Phase codes of :attr:`VectorSpades.phase`: their places in the reference's ``PHASES``.
PHASE_BID, PHASE_PLAY = 0, 1
#: Bid code of a blind nil in the scoring table (codes 0..13 are the bids, nil = 0).
BLIND_CODE = MAX_BID + 1
#: Bid codes (nil, 1..13, blind nil) and trick counts (0..13) per seat: the scoring table's sides.
_CODES, _TRICKS = MAX_BID + 2, MAX_BID + 1


@functools.lru_cache(maxsize=16)
def _side_points_table(options: SpadesOptions) -> tuple[np.ndarray, np.ndarray]:
    """The reference's :func:`~whist_env.rules.spades.side_points` of every hand of one side with no
    bags carried in (RULES.md §8.5): ``(points, bags)``, two ``int64`` arrays of shape ``[15, 15, 14,
    14]`` indexed by the bid codes of the side's two seats (0 nil, 1..13, 14 blind nil) and their
    tricks; entries where the two seats took more than 13 tricks are 0 (no hand reaches them).

    Carried bags ``c`` (``0 ≤ c < bag_threshold``) change only the bag penalty: ``side_points`` adds
    the hand's bags to ``c`` and charges ``bag_penalty`` per ``bag_threshold`` of the total, so with
    ``(p, r)`` from this table the hand scores ``p − bag_penalty`` when ``c + r ≥ bag_threshold``,
    else ``p``, and carries ``(c + r) mod bag_threshold`` bags on.
    """
    points = np.zeros((_CODES, _CODES, _TRICKS, _TRICKS), dtype=np.int64)
    bags = np.zeros_like(points)
    codes = range(_CODES if options.blind_nil else BLIND_CODE)
    for a in codes:
        for b in codes:
            bids = [0 if a == BLIND_CODE else a, 0 if b == BLIND_CODE else b]
            blind = [a == BLIND_CODE, b == BLIND_CODE]
            for t0 in range(_TRICKS):
                for t1 in range(_TRICKS - t0):
                    points[a, b, t0, t1], bags[a, b, t0, t1] = side_points(bids, blind, [t0, t1], 0, options)
    return points, bags


class VectorSpades(VectorWhistEnv):
    """B games of Partnership Spades stepped at once (RULES.md §8).

    Actions (``Discrete(66)``, ``Discrete(67)`` with ``blind_nil``, the reference's): card ids
    0..51, ``"bid:nil"`` = 52, ``"bid:1"`` … ``"bid:13"`` = 53..65, ``"bid:blind_nil"`` = 66.
    Each game is in its bidding or its card play (:attr:`phase`); every hand is 4 bids and 52
    cards, so the games of a batch change phase together. Observations and masks have the layout
    and the values of ``spades_v0.raw_env(**options).observe(agent)`` (:attr:`layout`, the raw
    env's ``observation_layout()``); rewards are the AEC env's, paid on the step that ends a hand.

    Per-game state besides the base's (on ``device``): :attr:`phase` ``int64 [B]`` (0 bidding,
    1 play), :attr:`bids` ``int64 [B, 4]`` (0 nil or blind nil, 1..13, -1 before the seat bids),
    :attr:`blind` ``bool [B, 4]`` (the seat's nil is blind), :attr:`bags` ``int64 [B, 2]`` (bags
    carried per side, ``0 … bag_threshold − 1``), :attr:`spades_broken` ``bool [B]``.

    Args:
        num_envs: B, the number of games.
        device: torch device (``"cpu"``, ``"cuda"``).
        seed: seed of the batch's random generator (deals, random first dealers).
        **options: Spades rule options (RULES.md §8.8, §1.9), validated as the raw env does.
    Raises:
        ValueError: on an unknown or invalid option, naming it and the allowed values.
    """

    NAME = "spades"

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0, **options: Any) -> None:
        self.rules = Spades(**options)  # validates the options, reads fixed deals
        self.options = opts = self.rules.options
        self.NUM_ACTIONS = self.rules.num_actions
        super().__init__(num_envs, device, seed)
        dev = self.device
        b = num_envs

        def tensor(values, dtype=torch.int64):
            return torch.tensor(values, dtype=dtype, device=dev)

        self.tables = TrickTables([natural_context(SPADE_SUIT)], dev)  # spades trump in every hand (§8.2)
        if (self.rules.PHASES.index(BID), self.rules.PHASES.index(PLAY)) != (PHASE_BID, PHASE_PLAY):
            raise AssertionError("the phase codes must be the phases' places in the reference's PHASES")
        points, bags = _side_points_table(self._scoring_options(opts))
        self._points = tensor(points).reshape(-1)
        self._hand_bags = tensor(bags).reshape(-1)
        # the bids each situation allows, as the action-mask columns from BID_BASE on (§8.3): row 0
        # none (card play), row 1 + 2 top + blind: nil and 1..top, and blind nil where allowed
        bid_actions = self.NUM_ACTIONS - BID_BASE
        rows = [[False] * bid_actions]
        for top in range(MAX_BID + 1):
            for blind in (False, True):
                rows.append([k <= top if k <= MAX_BID else blind for k in range(bid_actions)])
        self._bid_rows = tensor(rows, torch.bool)
        self._restricts_lead = opts.spade_lead != "any"
        self._breaks = opts.spade_lead == "broken"
        self._side_suits = ((1 << 52) - 1) & ~SPADE_MASK
        self._trump = torch.full((b,), SPADE_SUIT, dtype=torch.int64, device=dev)
        self._no_card_sets = torch.zeros((b, 0), dtype=torch.int64, device=dev)

        self._init_observation()
        lay = self.layout
        names = [name for name, _ in self.rules.EXTRA_FEATURES]
        if names != ["bids", "side_bids", "bags", "spades_broken"] or lay["spades_broken"].stop != self.vector_size:
            raise AssertionError("the Spades extra features are no longer bids, side_bids, bags, spades_broken at the end")
        #: entry of each relative seat's bid one-hot (plus the slot: bid, 14 blind nil, 15 not yet)
        self._bid_offsets = lay["bids"].start + BID_SLOTS * self._seats
        self._bid_ones = torch.ones((b, self.NUM_PLAYERS), dtype=torch.float32, device=dev)
        self._extra_numbers = slice(lay["side_bids"].start, lay["spades_broken"].stop)

        self.phase = torch.zeros(b, dtype=torch.int64, device=dev)
        self.bids = torch.full((b, self.NUM_PLAYERS), -1, dtype=torch.int64, device=dev)
        self.blind = torch.zeros((b, self.NUM_PLAYERS), dtype=torch.bool, device=dev)
        self.bags = torch.zeros((b, self.NUM_SIDES), dtype=torch.int64, device=dev)
        self.spades_broken = torch.zeros(b, dtype=torch.bool, device=dev)

    @staticmethod
    def _scoring_options(opts: SpadesOptions) -> SpadesOptions:
        """The options with every field that :func:`side_points` does not read at its default, so
        that batches of other rewards, targets or episodes share one scoring table."""
        return SpadesOptions(nil_points=opts.nil_points, nil_tricks=opts.nil_tricks, blind_nil=opts.blind_nil,
                             blind_nil_points=opts.blind_nil_points, bag_threshold=opts.bag_threshold, bag_penalty=opts.bag_penalty)

    # ------------------------------------------------------------------ reset and deals (RULES.md §8.3)
    def _start_episodes(self, games: torch.Tensor) -> None:
        """No bags carried at the start of an episode (§8.5, §8.6); then the base's reset."""
        self.bags[games] = 0
        super()._start_episodes(games)

    def _deal(self, games: torch.Tensor) -> None:
        """Shuffle and deal a hand in ``games`` (``int64 [k]``): ``d[i]`` to seat
        ``(dealer + 1 + i) mod 4``, 13 cards each (RULES.md §8.3)."""
        hands, _ = self._deal_round_robin(games)
        self._set_deal(games, hands)

    def _set_deal(self, games: torch.Tensor, hands: torch.Tensor) -> None:
        """Install dealt ``hands`` (``int64 [k, 4]``) in ``games``: no bids yet, spades not broken
        (broken from the start with ``spade_lead="any"``), ``left(dealer)`` bids first (§8.3, §8.4)."""
        self.hands[games] = hands
        self.dealt[games] = hands
        self.phase[games] = PHASE_BID
        self.bids[games] = -1
        self.blind[games] = False
        self.spades_broken[games] = not self._restricts_lead
        self._open_hand(games)

    # ------------------------------------------------------------------ legality and actions
    def _legal_plays(self) -> torch.Tensor:
        """Cards the player to act may play (``int64 [B]`` bitmasks): follow suit if able (§1.4);
        on the lead, no spade before spades are broken unless the hand holds nothing else (§8.4)."""
        legal = self._legal_cards()
        if not self._restricts_lead:
            return legal
        side_suits = legal & self._side_suits
        restricted = (self.trick_size == 0) & ~self.spades_broken & (side_suits != 0)
        return torch.where(restricted, side_suits, legal)

    def _legal_mask(self) -> torch.Tensor:
        """``bool [B, 66]`` (67 with ``blind_nil``): the legal cards in card play; in the bidding nil
        and 1 … 13, at most 13 less the partner's bid with ``combined_bid_limit``, and blind nil
        where the bidder's side trails by ``blind_nil_deficit`` (§8.3)."""
        bidding = self.phase == PHASE_BID
        if not bool(bidding.any()):  # 52 of a hand's 56 decisions: card_mask leaves the bids False
            return self.card_mask(self._legal_plays())
        mask = self.card_mask(torch.where(bidding, 0, self._legal_plays()))
        seat = self.current_player
        partner = self.bids.gather(1, ((seat + 2) % self.NUM_PLAYERS)[:, None]).squeeze(1)
        limited = self.options.combined_bid_limit & (partner >= 0)
        top = torch.where(limited, MAX_BID - partner, MAX_BID)
        row = 1 + 2 * top
        if self.options.blind_nil:
            side = seat % 2
            own = self.scores.gather(1, side[:, None]).squeeze(1)
            other = self.scores.gather(1, (1 - side)[:, None]).squeeze(1)
            row = row + (other - own >= self.options.blind_nil_deficit).to(torch.int64)
        mask[:, BID_BASE:] = self._bid_rows[torch.where(bidding, row, 0)]
        return mask

    def _apply(self, actions: torch.Tensor) -> torch.Tensor:
        """Bids in the games that bid (the dealer's bid starts the play, led by ``left(dealer)``,
        §8.3, §8.4), cards in the others; returns the games whose hand ended (``bool [B]``). A phase
        no game is in is skipped."""
        bidding = self.phase == PHASE_BID
        any_bid, any_play = torch.stack([bidding.any(), (~bidding).any()]).tolist()
        seat = self.current_player
        hand_over = self._play_cards(actions, active=~bidding) if any_play else torch.zeros_like(bidding)
        if any_bid:
            games, n = self._games, self.NUM_PLAYERS
            blind = bidding & (actions == BLIND_NIL)
            bid = torch.where(blind, 0, actions - BID_BASE)
            self.bids[games, seat] = torch.where(bidding, bid, self.bids[games, seat])
            self.blind[games, seat] = torch.where(bidding, blind, self.blind[games, seat])
            last = bidding & (seat == self.dealer)
            self.phase = torch.where(last, PHASE_PLAY, self.phase)
            first = (self.dealer + 1) % n
            self.current_player = torch.where(last, first, torch.where(bidding, (seat + 1) % n, self.current_player))
        return hand_over

    def _after_card(self, cards: torch.Tensor, playing: torch.Tensor) -> None:
        # a spade played to a trick led in another suit breaks spades (§8.4); ``led`` already holds
        # the trick's led suit, the card's own for a lead, so a spade led never breaks them
        if self._breaks:
            spade = torch.div(cards, 13, rounding_mode="floor") == SPADE_SUIT
            self.spades_broken |= playing & spade & (self.led != SPADE_SUIT)

    # ------------------------------------------------------------------ scoring (RULES.md §8.5, §8.6)
    def _score_hands(self, hand_over: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """Each side's contract, bags carried and the bag penalty, nil and blind nil (§8.5), from the
        reference's scoring table; the target and the mercy rule (§8.6); episode progression
        (§1.9). Writes ``rewards`` ``float32 [B, 4]``; returns ``done`` ``bool [B]``."""
        if not bool(hand_over.any()):
            return torch.zeros_like(hand_over)
        opts = self.options
        ended = hand_over[:, None]
        code = torch.where(self.blind, BLIND_CODE, self.bids.clamp(min=0))
        took = self.tricks_won
        # one row per side: seats s and s + 2 (side s), their bid codes and their tricks
        index = ((code[:, :2] * _CODES + code[:, 2:]) * _TRICKS + took[:, :2]) * _TRICKS + took[:, 2:]
        carried = self.bags + self._hand_bags.take(index)
        crossed = carried >= opts.bag_threshold
        points = torch.where(ended, self._points.take(index) - opts.bag_penalty * crossed.to(torch.int64), 0)
        self.bags = torch.where(ended, carried - opts.bag_threshold * crossed.to(torch.int64), self.bags)
        self.scores = scores = self.scores + points
        winner = torch.where(scores.max(dim=1).values >= opts.target_score, strict_leader(scores), -1)
        if opts.mercy_rule:
            low = (scores <= opts.mercy_threshold) & (scores < scores.flip(1))
            mercy = torch.where(low[:, 0], 1, torch.where(low[:, 1], 0, -1))
            winner = torch.where(winner < 0, mercy, winner)
        return self._finish_hands(hand_over, points, winner, rewards)

    # ------------------------------------------------------------------ observation (envs/encoding.py)
    def _observe(self, out: torch.Tensor | None) -> torch.Tensor:
        """Observation of the player to act in every game: ``float32 [B, D]``, equal to
        ``raw_env.observe(agent)["observation"]`` (layout :attr:`layout`): seats rotated so that the
        player to act is relative seat 0, sides so that its side is first; the extra features of
        §8.7: ``bids`` (one-hot per relative seat: nil, 1..13, blind nil, not yet), ``side_bids``
        (each relative side's bids so far / 26), ``bags`` (each relative side's carried bags /
        ``bag_threshold``) and ``spades_broken``."""
        seat = self.current_player
        out = self._encode(seat, self._no_card_sets, self._trump, self.phase, out=out)
        order = (seat[:, None] + self._seats) % self.NUM_PLAYERS
        bids = self.bids.gather(1, order)
        slot = torch.where(bids < 0, BID_SLOTS - 1, torch.where(self.blind.gather(1, order), BLIND_CODE, bids))
        out.scatter_(1, self._bid_offsets + slot, self._bid_ones)
        # ratios in float64, rounded once, as the reference's Python floats are; a side's two bids
        # are divided before they are added, as the reference adds them
        made = bids.clamp(min=0).to(torch.float64) / (2 * MAX_BID)
        side = seat % 2
        carried = self.bags.gather(1, torch.stack([side, 1 - side], dim=1)).to(torch.float64) / self.options.bag_threshold
        numbers = [made[:, :2] + made[:, 2:], carried, self.spades_broken.to(torch.float64)[:, None]]
        out[:, self._extra_numbers] = torch.cat(numbers, dim=1).to(torch.float32)
        return out


__all__ = ["VectorSpades"]
