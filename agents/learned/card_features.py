"""Per-card features derived from the observation, for card-centric actors.

A card-centric actor scores each card action from what is known about that card (DouZero, Zha et
al. 2021, encodes the action as an input), rather than reading one logit per action off a flat
MLP. The features below are pure functions of the seat-relative observation vector (DESIGN.md
"Observations"): they add no information, only the relations between cards that a flat MLP would
otherwise have to learn from the card blocks, such as "this card is the highest unseen card of its
suit" or "this card would win the trick now".

Ranks are taken in natural order (two low, ace high) with trump above the led suit above the
rest, the order of every game but Bid Whist's downtown contracts; there the ``direction``
observation entry tells the network that "higher" means "weaker" (the features stay exact counts
either way). Jokers (card ids 52 and 53, Bid Whist and Cutthroat) get their own flags and are
treated as the two highest trumps when a trump suit is named.

Features of card ``c`` (``CardFeatures.names``, in order): in hand, unseen, one entry per
relative seat that played it this hand, in the current trick, suit one-hot (4), joker, rank / 12,
is trump, is of the led suit, would win the trick now, own cards of its suit above it / 12, own
cards below it / 12, unseen cards above it / 12, unseen cards below it / 12, master (no unseen
card above it), own length in its suit / 13, unseen length in its suit / 13, one void flag per
other relative seat in its suit, and the current winner of the trick by relative seat (N, all 0
when no card has been played yet; the same for every card, so the card head sees who is winning).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

_SUITS, _RANKS = 4, 13


class CardFeatures:
    """Computes float32 ``(B, C, K)`` per-card features from float32 ``(B, D)`` observations.

    Args:
        layout: the environment's ``observation_layout()`` (name -> slice); needs ``hand``,
            ``played``, ``trick``, ``trump``, ``led_suit``, ``voids`` and ``unseen``.
        num_players: N, players at the table.
    Raises:
        ValueError: the layout lacks one of those entries, or its card blocks are neither 52
            nor 54 wide.
    """

    def __init__(self, layout: Mapping[str, slice], num_players: int) -> None:
        needed = ("hand", "played", "trick", "trump", "led_suit", "voids", "unseen")
        missing = [name for name in needed if name not in layout]
        if missing:
            raise ValueError(f"the observation layout lacks {missing}")
        self.layout = {name: layout[name] for name in needed}
        self.num_players = int(num_players)
        self.num_cards = layout["hand"].stop - layout["hand"].start
        if self.num_cards not in (52, 54):
            raise ValueError(f"card blocks must be 52 or 54 wide, got {self.num_cards}")
        n = self.num_players
        self.names = (["hand", "unseen"] + [f"played_by_{r}" for r in range(n)] + ["in_trick"]
                      + [f"suit_{s}" for s in "CDHS"] + ["joker", "rank", "is_trump", "is_led", "wins_now",
                                                        "own_above", "own_below", "unseen_above", "unseen_below", "master",
                                                        "own_length", "unseen_length"]
                      + [f"void_{r}" for r in range(1, n)] + [f"winning_{r}" for r in range(n)])
        self.size = len(self.names)

    def _block(self, obs: torch.Tensor, name: str) -> torch.Tensor:
        sl = self.layout[name]
        return obs[:, sl.start : sl.stop]

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        """Per-card features float32 ``(B, C, K)`` of observations float32 ``(B, D)``; every entry
        lies in [0, 1]."""
        b, n, c = obs.shape[0], self.num_players, self.num_cards
        dtype = obs.dtype
        hand = self._block(obs, "hand")
        unseen = self._block(obs, "unseen")
        played = self._block(obs, "played").reshape(b, n, c)
        trick = self._block(obs, "trick").reshape(b, n, c)
        trump = self._block(obs, "trump")[:, :4]  # (B, 4); all 0 for no trump
        led = self._block(obs, "led_suit")[:, :4]
        voids = self._block(obs, "voids").reshape(b, n, 4)

        def suited(x: torch.Tensor) -> torch.Tensor:  # (B, C) -> (B, 4, 13)
            return x[:, :52].reshape(b, _SUITS, _RANKS)

        def above(x: torch.Tensor) -> torch.Tensor:  # per card: count of x strictly above it in its suit
            return x.flip(-1).cumsum(-1).flip(-1) - x

        def below(x: torch.Tensor) -> torch.Tensor:
            return x.cumsum(-1) - x

        h4, u4 = suited(hand), suited(unseen)
        rank = torch.arange(_RANKS, dtype=dtype, device=obs.device).expand(b, _SUITS, _RANKS)
        # power: rank, +13 in the led suit, +26 in trump; jokers top trumps when there is a trump suit
        has_trump = trump.sum(-1, keepdim=True)
        power = rank + 13.0 * led[:, :, None] + 26.0 * trump[:, :, None] + 1.0
        power = power.reshape(b, 52)
        if c == 54:
            joker_power = (39.0 + torch.tensor([1.0, 2.0], dtype=dtype, device=obs.device)) * has_trump
            power = torch.cat([power, joker_power], 1)
        in_trick = trick.sum(1)  # (B, C)
        # a card of a suit that is neither led nor trump cannot win: power counts only led/trump cards
        counts = power >= 14.0 if c == 52 else torch.cat([power[:, :52] >= 14.0, power[:, 52:] > 0], 1)
        eff = torch.where(counts, power, torch.zeros_like(power))
        trick_eff = (trick * eff[:, None, :]).amax(-1)  # (B, N)
        best = trick_eff.amax(-1, keepdim=True)  # (B, 1)
        started = (trick.sum((1, 2)) > 0).to(dtype)[:, None]
        # no card led yet: any card "wins now"; else it must beat the best led-suit or trump card
        wins = torch.where(started > 0, (eff > best).to(dtype), torch.ones_like(eff))
        winner_seat = torch.nn.functional.one_hot(trick_eff.argmax(-1), n).to(dtype) * started  # (B, N)

        own_above, own_below = above(h4) / 12.0, below(h4) / 12.0
        un_above, un_below = above(u4) / 12.0, below(u4) / 12.0
        master = (above(u4) == 0).to(dtype)
        own_len = h4.sum(-1, keepdim=True).expand(b, _SUITS, _RANKS) / 13.0
        un_len = u4.sum(-1, keepdim=True).expand(b, _SUITS, _RANKS) / 13.0
        suit_onehot = torch.eye(_SUITS, dtype=dtype, device=obs.device)[None, :, None, :].expand(b, _SUITS, _RANKS, _SUITS)
        void_other = voids[:, 1:, :].permute(0, 2, 1)[:, :, None, :].expand(b, _SUITS, _RANKS, n - 1)
        trump_card = trump[:, :, None].expand(b, _SUITS, _RANKS)
        led_card = led[:, :, None].expand(b, _SUITS, _RANKS)

        def flat(x: torch.Tensor) -> torch.Tensor:  # (B, 4, 13[, k]) -> (B, 52, k)
            return x.reshape(b, 52, -1)

        suited_part = torch.cat([
            flat(suit_onehot), torch.zeros(b, 52, 1, dtype=dtype, device=obs.device), flat(rank / 12.0),
            flat(trump_card), flat(led_card), wins[:, :52, None],
            flat(own_above), flat(own_below), flat(un_above), flat(un_below), flat(master), flat(own_len), flat(un_len),
            flat(void_other),
        ], -1)
        if c == 54:
            jokers = torch.zeros(b, 2, suited_part.shape[-1], dtype=dtype, device=obs.device)
            jokers[:, :, 4] = 1.0  # the joker flag
            jokers[:, :, 6] = has_trump  # jokers are trumps when there is a trump suit
            jokers[:, :, 8] = wins[:, 52:]
            jokers[:, :, 13] = 1.0  # nothing of a suit above a joker
            suited_part = torch.cat([suited_part, jokers], 1)
        return torch.cat([hand[:, :, None], unseen[:, :, None], played.permute(0, 2, 1), in_trick[:, :, None], suited_part,
                          winner_seat[:, None, :].expand(b, c, n)], -1)


__all__ = ["CardFeatures"]
