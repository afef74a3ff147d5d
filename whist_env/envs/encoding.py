"""Observation encoding: the seat-relative feature vector of any trick-taking game.

The layout is built from the rules object's sizes, so one encoder serves every variant
(DESIGN.md "Observations"). Seats are rotated so that the observer is relative seat 0 and the
next player clockwise is relative seat 1; sides are rotated so that the observer's side is
first. Card blocks hold one 0/1 entry per card id.

Layout (``ObservationEncoder.layout``, name -> slice of the float32 vector):

* ``hand`` (C): the observer's cards.
* ``played`` (N×C): cards each relative seat has played this hand, the current trick included
  (with ``voids`` and ``led_suit`` below, the public history a player uses to place cards).
* ``trick`` (N×C): the card each relative seat has played to the current trick.
* one C block per public card set of the variant (``PUBLIC_CARD_SETS``, e.g. ``turn_up``).
* ``leader`` (N), ``current_player`` (N), ``dealer`` (N): one-hot relative seats.
* ``trump`` (5): one-hot suit C, D, H, S, or the last entry for no trump.
* ``phase`` (P): one-hot of the rules' ``PHASES``.
* ``tricks_won`` (N): tricks each relative seat won this hand, divided by the hand size; [0, 1].
* ``tricks_by_side`` (S): the same per relative side; [0, 1].
* ``scores`` (S): cumulative game score per relative side, divided by the game's
  ``score_scale()`` (the target score; Romanian Whist: the points of exact bids on every deal of
  the schedule) and clipped to [-2, 2] (only a score beyond twice the scale is clipped).
* ``games_won`` (S): games won in the match per relative side; [0, games needed to win the match].
* ``hand_in_game`` (1): hands completed in this game, divided by 16; [0, ``max_hands`` / 16].
* ``trick_number`` (1): tricks completed this hand, divided by the tricks of a hand
  (``tricks_per_hand()``: the hand size; 26 in German Whist); [0, 1].
* ``voids`` (N×4): relative seat × suit C, D, H, S: 1 once that seat has shown out of that suit
  this hand (it did not follow the led effective suit; where a void player must trump, playing
  neither the led suit nor trump shows a void in trump too). Jokers and wild deuces count under
  their effective suit in the current contract (RULES.md §6.3). Reset each hand.
* ``led_suit`` (5): the effective suit led to the current trick, C, D, H, S, or the last entry
  when no suited card has been led yet.
* ``unseen`` (C): the cards of the game's deck the observer has not seen: not in its hand, not
  played this hand, not in any card set visible to it (turn-up, stock top, known cards, revealed
  bid cards, its kitty and discards). They may lie in another hand or a hidden pile.
* the variant's ``EXTRA_FEATURES`` (name, size), in order (e.g. Minnesota's High/Low contract),
  bounded by the rules' ``extra_feature_bounds()`` (all in [0, 1] but Romanian Whist's
  ``tricks_needed``, in [-1, 1]).
* with the rule option ``observation="history"`` only (default ``"vector"``: absent):
  ``history`` (L×4) and ``history_mask`` (L), the hand's actions in order as the observer saw
  them (``public_history``), L = the rules' ``max_hand_actions()``. Row k of ``history`` is
  the hand's k-th action: the actor's relative seat (0..N-1), the action id (0..A-1; A for
  another player's face-down choice: a Bid Whist discard, a Minnesota bid card), the trick it
  was played to (0-based; -1 for an action that is not a card played to a trick: bids,
  discards, declarations) and its position in that trick (0 = the lead; -1 likewise). Rows
  past the actions so far are 0, as is their ``history_mask`` entry (1 for an action).

Every entry is finite and lies in :meth:`ObservationEncoder.bounds`, the observation space's box.
C = card actions of the game (52 or 54), N = players, S = sides, P = phases.
"""

from __future__ import annotations

import numpy as np

from whist_env.engine.tricks import led_suit
from whist_env.rules.base import TrickTakingGame


def bits_to_array(masks: list[int], width: int) -> np.ndarray:
    """Unpack bitmasks into a ``(len(masks), width)`` uint8 0/1 array (``width`` ≤ 64)."""
    words = np.array(masks, dtype="<u8")
    return np.unpackbits(words.view(np.uint8), bitorder="little").reshape(len(masks), 64)[:, :width]


def mask_to_int8(mask: int, n: int) -> np.ndarray:
    """Action bitmask → int8 0/1 array of length ``n``."""
    raw = np.frombuffer(mask.to_bytes((n + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, count=n, bitorder="little").view(np.int8)


#: Entry k: the four suit flags (C, D, H, S) of the 4-bit suit mask k.
_SUIT_ROWS = [[float(k >> suit & 1) for suit in range(4)] for k in range(16)]

#: The score features are clipped to [-SCORE_CLIP, SCORE_CLIP] (in units of the score scale).
SCORE_CLIP = 2.0


class ObservationEncoder:
    """Encodes a rules object's state as seen by one seat.

    Args:
        game: the rules object; only its public attributes are read, and of the hidden cards
            only the observer's own hand. Its ``score_scale()`` divides the score features.
    """

    def __init__(self, game: TrickTakingGame) -> None:
        self.game = game
        self.score_scale = game.score_scale()
        n, s, c = game.num_players, game.num_sides, game.NUM_CARD_ACTIONS
        self.num_card_blocks = 1 + 2 * n + len(game.PUBLIC_CARD_SETS)
        sizes = [("hand", c), ("played", n * c), ("trick", n * c)]
        sizes += [(name, c) for name in game.PUBLIC_CARD_SETS]
        sizes += [("leader", n), ("current_player", n), ("dealer", n), ("trump", 5), ("phase", len(game.PHASES))]
        sizes += [("tricks_won", n), ("tricks_by_side", s), ("scores", s), ("games_won", s)]
        sizes += [("hand_in_game", 1), ("trick_number", 1)]
        sizes += [("voids", 4 * n), ("led_suit", 5), ("unseen", c)]
        sizes += list(game.EXTRA_FEATURES)
        self.extra_start = sum(size for _, size in sizes) - sum(size for _, size in game.EXTRA_FEATURES)
        self.extra_end = sum(size for _, size in sizes)
        #: L, the rows of the ``history`` block (0 without ``observation="history"``)
        self.history_length = game.max_hand_actions() if game.options.observation == "history" else 0
        if self.history_length:
            sizes += [("history", 4 * self.history_length), ("history_mask", self.history_length)]
        self.layout: dict[str, slice] = {}
        start = 0
        for name, size in sizes:
            self.layout[name] = slice(start, start + size)
            start += size
        self.size = start
        #: the global state's layout: the observation's, then every hand and hidden pile
        self.state_layout: dict[str, slice] = dict(self.layout)
        for name, size in [("hands", n * c)] + [(name, c) for name in game.HIDDEN_CARD_SETS]:
            if name in self.state_layout:
                raise ValueError(f"{type(game).__name__}: hidden card set {name!r} has the name of an observation entry")
            self.state_layout[name] = slice(start, start + size)
            start += size
        self.state_size = start
        self._phase_index = {p: i for i, p in enumerate(game.PHASES)}
        # per-seat orders and offsets, computed once: encode() runs at every decision
        self._n, self._c, self._num_sides = n, c, s
        self._hand_size = float(game.HAND_SIZE)
        self._orders = [[(seat + r) % n for r in range(n)] for seat in range(n)]
        self._side_of = [game.side_of(p) for p in range(n)]
        self._side_orders = [[(game.side_of(seat) + r) % s for r in range(s)] for seat in range(n)]
        self._unseen = self.layout["unseen"]
        first = self.num_card_blocks * c  # the non-card features up to the unseen block
        self._rest_size = self._unseen.start - first
        self._rest_index = {name: sl.start - first for name, sl in self.layout.items() if first <= sl.start < self._unseen.start}

    def for_game(self, game: TrickTakingGame) -> ObservationEncoder:
        """This encoder (same layout) reading another rules object of the same variant and
        options, e.g. a clone."""
        new = object.__new__(type(self))
        new.__dict__ = {**self.__dict__, "game": game}
        return new

    def encode(self, seat: int) -> np.ndarray:
        """Observation vector of ``seat``: float32 array of shape ``(size,)``."""
        g = self.game
        n, c, sides = self._n, self._c, self._num_sides
        order = self._orders[seat]
        trick = g.trick
        trick_masks = [0] * n
        for p, card in trick:
            trick_masks[(p - seat) % n] = 1 << card
        hand, played = g.hands[seat], g.played
        public = g.public_card_sets(seat)
        seen = hand
        for m in played:
            seen |= m
        for m in public:
            seen |= m
        masks = [hand, *[played[p] for p in order], *trick_masks, *public, g.deck_mask() & ~seen]
        bits = np.unpackbits(np.array(masks, dtype="<u8").view(np.uint8), bitorder="little").reshape(len(masks), 64)
        out = np.empty(self.size, dtype=np.float32)
        nb = self.num_card_blocks * c
        out[:nb] = bits[:-1, :c].ravel()
        out[self._unseen] = bits[-1, :c]
        # the features between the card blocks and the unseen block, built as one Python list
        i = self._rest_index
        rest = [0.0] * self._rest_size
        rest[i["leader"] + (g.leader - seat) % n] = 1.0
        rest[i["dealer"] + (g.dealer - seat) % n] = 1.0
        rest[i["trump"] + (4 if g.trump is None else g.trump)] = 1.0
        rest[i["phase"] + self._phase_index[g.phase]] = 1.0
        if g.current_player is not None:
            rest[i["current_player"] + (g.current_player - seat) % n] = 1.0
        led = led_suit([card for _, card in trick], g.ctx) if trick else None
        rest[i["led_suit"] + (4 if led is None else led)] = 1.0
        hs = self._hand_size
        tricks = g.tricks_won
        t0 = i["tricks_won"]
        by_side = [0] * sides
        side_of = self._side_of
        for r, p in enumerate(order):
            rest[t0 + r] = tricks[p] / hs
            by_side[side_of[p]] += tricks[p]
        scale, scores, games = self.score_scale, g.scores, g.games_won
        s0, c0, w0 = i["tricks_by_side"], i["scores"], i["games_won"]
        for r, side in enumerate(self._side_orders[seat]):
            rest[s0 + r] = by_side[side] / hs
            rest[c0 + r] = min(max(scores[side] / scale, -SCORE_CLIP), SCORE_CLIP)
            rest[w0 + r] = games[side]
        rest[i["hand_in_game"]] = g.hand_in_game / 16.0
        rest[i["trick_number"]] = g.trick_number / g.tricks_per_hand()
        shown = g.shown_out
        v0 = i["voids"]
        for r, p in enumerate(order):
            if shown[p]:
                rest[v0 + 4 * r : v0 + 4 * r + 4] = _SUIT_ROWS[shown[p]]
        out[nb : self._unseen.start] = rest
        if g.EXTRA_FEATURES:
            out[self.extra_start : self.extra_end] = g.extra_features(seat)
        if self.history_length:
            self._encode_history(seat, out[self.extra_end :])
        return out

    def _encode_history(self, seat: int, out: np.ndarray) -> None:
        """Write the ``history`` and ``history_mask`` blocks of ``seat`` into ``out`` (float32
        ``(5 L,)``, zeros): :meth:`~whist_env.rules.base.TrickTakingGame.public_history`'s
        actions in order. A hand's card plays are its last actions and fill its tricks in turn,
        so the k-th card played is card ``k mod N`` of trick ``k div N``."""
        g = self.game
        n, length = self._n, self.history_length
        history = g.public_history(seat)
        first_play = len(history) - sum(m.bit_count() for m in g.played)
        out[:] = 0.0
        rows = out[: 4 * length].reshape(length, 4)
        hidden = g.num_actions
        for k, (actor, action) in enumerate(history):
            play = k - first_play
            rows[k] = ((actor - seat) % n, hidden if action is None else action,
                       play // n if play >= 0 else -1, play % n if play >= 0 else -1)
        out[4 * length : 4 * length + len(history)] = 1.0

    def encode_state(self, seat: int) -> np.ndarray:
        """The global state from ``seat``'s point of view: float32 array of shape
        ``(state_size,)``, :meth:`encode` of ``seat`` followed by every hand (relative seats, as
        the observation orders them) and the variant's hidden piles. All 0/1 after the
        observation part."""
        g = self.game
        n, c = g.num_players, g.NUM_CARD_ACTIONS
        masks = [g.hands[(seat + r) % n] for r in range(n)] + g.hidden_card_sets()
        return np.concatenate([self.encode(seat), bits_to_array(masks, c).ravel().astype(np.float32)])

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` of the global state: the observation's bounds, then [0, 1]."""
        low, high = self.bounds()
        extra = self.state_size - self.size
        return np.concatenate([low, np.zeros(extra, np.float32)]), np.concatenate([high, np.ones(extra, np.float32)])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` finite float32 arrays of shape ``(size,)`` for a
        ``gymnasium.spaces.Box``: the bound of every feature (module docstring)."""
        g, lay = self.game, self.layout
        low = np.zeros(self.size, dtype=np.float32)
        high = np.ones(self.size, dtype=np.float32)
        low[lay["scores"]], high[lay["scores"]] = -SCORE_CLIP, SCORE_CLIP
        high[lay["games_won"]] = g.games_to_win()
        high[lay["hand_in_game"]] = g.options.max_hands / 16.0
        extra_low, extra_high = g.extra_feature_bounds()
        low[self.extra_start : self.extra_end], high[self.extra_start : self.extra_end] = extra_low, extra_high
        if self.history_length:
            rows_low, rows_high = low[lay["history"]].reshape(-1, 4), high[lay["history"]].reshape(-1, 4)
            rows_low[:] = (0, 0, -1, -1)
            rows_high[:] = (g.num_players - 1, g.num_actions, g.tricks_per_hand() - 1, g.num_players - 1)
        return low, high
