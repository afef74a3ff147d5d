"""The batched trick-taking core: B games stepped at once with torch tensor ops (RULES.md §1).

State is struct-of-arrays over the B games (``B = num_envs``), every tensor on one ``device``:

* hands and played cards as ``int64`` bitmasks per seat (bit ``c`` = card id ``c``, DESIGN.md
  "Cards"); the cards dealt this hand likewise;
* the current trick as one card id per seat (``-1``: not played yet), its led effective suit,
  the leader, the player to act, the trick number and the tricks won per seat;
* the ranking rules of each game's hand as an index into a stack of :class:`TrickTables` built
  from the rules' own :class:`~whist_env.engine.tricks.TrickContext` objects;
* the dealer, the hand and game counters, the scores and games won per side.

A variant (one module per game, as in ``whist_env/rules``) subclasses :class:`VectorWhistEnv`
and supplies the deal, the hand scoring and the observation; the trick play (§1.4: follow suit,
trick winner), the optional revoke mode (§2.9), the legality check, fixed deals read by the
reference rules, the observation encoding of 52-card games and the per-game auto-reset are here.
``step`` never loops over games in Python: every update is a masked tensor operation over the
whole batch.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from whist_env.engine.cards import mask_to_str
from whist_env.engine.tricks import NO_SUIT, TrickContext
from whist_env.envs.encoding import SCORE_CLIP, ObservationEncoder

#: Bits of a card mask that an ``int64`` can hold (cards 0..53 fit).
MASK_BITS = 64
#: Card ids of the standard 52-card deck (jokers, where a game has them, are 52 and 53).
NUM_CARD_BITS = 52


def strict_leader(scores: torch.Tensor) -> torch.Tensor:
    """Side strictly ahead of every other, else -1 (a tie for highest): ``int64 [B]`` from the
    scores per side ``int64 [B, S]`` (as ``whist_env.rules.scoring.strict_leader``)."""
    if scores.shape[1] == 2:
        return torch.where(scores[:, 0] > scores[:, 1], 0, torch.where(scores[:, 1] > scores[:, 0], 1, -1))
    at_best = scores == scores.max(dim=1, keepdim=True).values
    return torch.where(at_best.sum(dim=1) == 1, at_best.to(torch.int64).argmax(dim=1), -1)


def card_bits(cards: torch.Tensor) -> torch.Tensor:
    """Bitmask of each card id: ``int64`` tensor of ``cards``' shape; ``-1`` (no card) gives 0."""
    return torch.where(cards >= 0, torch.bitwise_left_shift(torch.ones_like(cards), cards.clamp(min=0)), 0)


_BYTE_TABLES: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}


def _byte_table(device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """``[256, 8]`` table of the bits of every byte value, lowest bit first, in ``dtype``."""
    key = (device, dtype)
    if key not in _BYTE_TABLES:
        values = torch.arange(256, device=device)[:, None]
        _BYTE_TABLES[key] = (torch.bitwise_right_shift(values, torch.arange(8, device=device)) & 1).to(dtype)
    return _BYTE_TABLES[key]


def unpack_bits(masks: torch.Tensor, width: int, dtype: torch.dtype = torch.int64) -> torch.Tensor:
    """The low ``width`` bits of ``int64`` bitmasks as 0/1 entries: tensor of shape
    ``masks.shape + (width,)`` in ``dtype`` (a view of a ``masks.shape + (64,)`` tensor).

    One table look-up per byte: much cheaper than a shift and a mask per bit on large batches.
    """
    if sys.byteorder != "little":  # the byte view below reads the low byte first
        shifts = torch.arange(width, device=masks.device)
        return (torch.bitwise_right_shift(masks.unsqueeze(-1), shifts) & 1).to(dtype)
    as_bytes = masks.contiguous().view(torch.uint8).reshape(-1).to(torch.int32)
    bits = _byte_table(masks.device, dtype).index_select(0, as_bytes)  # [8 * masks.numel(), 8]
    return bits.view(*masks.shape, 64)[..., :width]


class ChunkTable:
    """Unpacks ``int64`` card bitmasks ``width`` bits at a time through a look-up table.

    A 52-card block is four 13-bit chunks (one per suit); a table of the 2**13 chunk values
    turns the blocks into floats or bools with one ``index_select`` (no per-bit shifts).
    :class:`BlockUnpacker` uses its tables for observations; masks use :meth:`chunks` and
    :meth:`unpack`.

    Args:
        width: bits per chunk (13 for a 52-card deck).
        device: torch device of the tables.
    """

    def __init__(self, width: int, device: torch.device) -> None:
        self.width = width
        values = torch.arange(1 << width, device=device)[:, None]
        bits = torch.bitwise_right_shift(values, torch.arange(width, device=device)) & 1
        self.floats = bits.to(torch.float32).contiguous()  # [2**width, width]
        self.bools = bits.to(torch.bool).contiguous()
        self._low = (1 << width) - 1
        self._shifts: dict[int, torch.Tensor] = {}

    def chunks(self, masks: torch.Tensor, num_bits: int) -> torch.Tensor:
        """The chunk values of the low ``num_bits`` bits (a multiple of ``width``) of each mask:
        ``int64`` tensor of shape ``masks.shape[:-1] + (masks.shape[-1] * num_bits // width,)``."""
        shifts = self._shifts.get(num_bits)
        if shifts is None:
            shifts = self._shifts[num_bits] = torch.arange(0, num_bits, self.width, device=masks.device)
        values = torch.bitwise_right_shift(masks.unsqueeze(-1), shifts) & self._low
        return values.flatten(-2)

    def unpack(self, chunks: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        """Bits of ``chunks`` (``int64 [..., k]``) from ``table`` (:attr:`floats` or :attr:`bools`):
        shape ``[..., k * width]``."""
        return table.index_select(0, chunks.reshape(-1)).view(*chunks.shape[:-1], chunks.shape[-1] * self.width)


class BlockUnpacker:
    """Unpacks a row of bit blocks of any widths, laid end to end, into one contiguous
    ``float32 [B, L]`` tensor (``L`` = the sum of the widths) through a :class:`ChunkTable`.

    For observations whose card blocks do not fall on whole chunks (54-card decks): the B rows
    are read as one string of ``B * L`` bits cut into ``table.width``-bit chunks, a chunk taking
    its bits from at most two consecutive blocks (of its row or the next one), so one
    ``index_select`` writes the whole batch with no padding and no copy. A block of zeros stands
    for the entries written afterwards; a block may also carry 0/1 features as bits.

    Args:
        widths: bits of each block, in order; every width is at least ``table.width``.
        num_rows: B, the rows unpacked at once.
        table: the chunk look-up table (its device is used).
    """

    def __init__(self, widths: Sequence[int], num_rows: int, table: ChunkTable) -> None:
        w = table.width
        if min(widths) < w:
            raise ValueError(f"every block must be at least {w} bits wide, got {list(widths)}")
        dev = table.floats.device
        self.table = table
        self.num_rows, self.row_size, self.num_blocks = num_rows, sum(widths), len(widths)
        total = num_rows * self.row_size
        self.num_chunks = -(-total // w)
        offsets = torch.tensor([0, *widths], device=dev).cumsum(0)  # block starts in a row, then L
        start = torch.arange(self.num_chunks, device=dev) * w  # each chunk's first bit in the bit string
        row, pos = start // self.row_size, start % self.row_size
        block = torch.bucketize(pos, offsets[1:], right=True)
        end = row * self.row_size + offsets[block + 1]  # where the chunk's first block ends
        # the block after it: in the same row, else the next row's first; past the last row, zeros
        next_block = row * self.num_blocks + block + 1
        beyond = next_block >= num_rows * self.num_blocks
        spills = start + w > end
        self._first = row * self.num_blocks + block
        self._first_shift = pos - offsets[block]
        self._second = torch.where(spills & ~beyond, next_block, num_rows * self.num_blocks)
        self._second_shift = torch.where(spills, end - start, 0)
        self._low = (1 << w) - 1

    def unpack(self, blocks: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """``float32 [B, L]`` 0/1 bits of ``blocks`` (``int64 [B, number of blocks]``, no bit set at
        or above its block's width), block after block, lowest bit first; written into ``out``
        (contiguous ``float32 [B, L]``) when given, with no tensor of ``B * L`` floats allocated."""
        flat = torch.cat([blocks.reshape(-1), blocks.new_zeros(1)])
        first = torch.bitwise_right_shift(flat.index_select(0, self._first), self._first_shift)
        second = torch.bitwise_left_shift(flat.index_select(0, self._second), self._second_shift)
        chunks = (first | second) & self._low
        w, total = self.table.width, self.num_rows * self.row_size
        if out is None:
            padded = torch.empty(self.num_chunks * w, dtype=torch.float32, device=blocks.device)
            torch.index_select(self.table.floats, 0, chunks, out=padded.view(-1, w))
            return padded[:total].view(self.num_rows, self.row_size)
        flat_out = out.view(-1)
        whole = total // w  # the chunks that end inside the rows, straight into out; then the last one's head
        torch.index_select(self.table.floats, 0, chunks[:whole], out=flat_out[: whole * w].view(-1, w))
        if whole < self.num_chunks:
            flat_out[whole * w :] = self.table.floats[chunks[whole], : total - whole * w]
        return out


class TrickTables:
    """The ranking rules of a list of trick contexts as stacked tensors, indexed by context id.

    Built from the rules' :class:`~whist_env.engine.tricks.TrickContext` objects (never
    retyped), so that each game of a batch can play its hand under its own context.

    Attributes (K = number of contexts, on ``device``):
        eff_suit: ``int64 [K, 54]``, effective suit 0..3 of each card id, ``-1`` for suitless.
        power: ``int64 [K, 54]``, the card's strength within the cards eligible to win.
        suit_masks: ``int64 [K, 4]``, bitmask of the cards of each effective suit.
        trump: ``int64 [K]``, trump suit 0..3 or ``-1`` for no trump.
        must_trump: ``bool [K]``, a void player holding a trump must play one.
        super_mask: ``int64 [K]``, bitmask of the super cards (0 if none).
    """

    def __init__(self, contexts: Sequence[TrickContext], device: torch.device) -> None:
        def tensor(values, dtype=torch.int64):
            return torch.tensor(values, dtype=dtype, device=device)

        self.eff_suit = tensor([list(c.eff_suit) for c in contexts])
        self.power = tensor([list(c.power) for c in contexts])
        self.suit_masks = tensor([list(c.suit_masks) for c in contexts])
        self.trump = tensor([NO_SUIT if c.trump is None else c.trump for c in contexts])
        self.must_trump = tensor([c.must_trump for c in contexts], torch.bool)
        self.super_mask = tensor([c.super_mask for c in contexts])
        self.any_must_trump = bool(self.must_trump.any())
        k, cards = len(contexts), self.eff_suit.shape[1]
        if cards != 54:
            raise ValueError(f"trick tables need 54 card ids, got {cards}")
        # every card's claim on a trick, by context, led suit (4: none led) and card id (54: no
        # card), flattened: the highest-powered super card, else the highest trump, else the
        # highest card of the led suit wins (a power is below 1000 in every game)
        power, eff = self.power[:, None, :], self.eff_suit[:, None, :]
        led = torch.tensor([0, 1, 2, 3, NO_SUIT], device=device)[None, :, None]  # led index 4: none (a suitless card matches it, as before a suited card is led)
        trump = self.trump[:, None, None]
        key = torch.where(eff == led, 1000 + power, -1)
        key = torch.where((eff == trump) & (trump >= 0), 2000 + power, key)
        is_super = (torch.bitwise_right_shift(self.super_mask[:, None, None], torch.arange(cards, device=device)) & 1).bool()
        key = torch.where(is_super, 3000 + power, key).expand(k, 5, cards)
        #: ``int64 [K * 5 * 55]``: entry ``(context * 5 + led) * 55 + card`` ranks ``card`` in a trick
        #: of that context and led suit (4: none), card 54 standing for no card (-2)
        self.trick_key = torch.cat([key, torch.full((k, 5, 1), -2, dtype=torch.int64, device=device)], dim=2).reshape(-1).contiguous()


class VectorWhistEnv:
    """B games of one Whist variant stepped at once (base class; a variant subclasses it).

    Every game sits at its own point and starts its next hand, or its next episode, on its own:
    ``step`` returns the observation of the player to act in every game, games that ended an
    episode coming back already reset. Seats are ints ``0 … N-1`` (``player_i`` is seat ``i``).

    A variant sets :attr:`rules` (the reference rules object of its options: it validates them
    and reads fixed deals) and :attr:`options` before calling ``__init__``. Options with
    ``allow_revoke=True`` switch the revoke mode of RULES.md §2.9 on (:attr:`allow_revoke`).

    Args:
        num_envs: B, the number of games.
        device: torch device of every tensor (``"cpu"``, ``"cuda"``).
        seed: seed of the batch's own random generator (deals and random first dealers).
    """

    #: Name of the game (as ``whist_env.GAMES``).
    NAME = "trick_taking"
    NUM_PLAYERS = 4
    NUM_SIDES = 2
    HAND_SIZE = 13
    NUM_ACTIONS = 52
    #: Card ids are actions ``0 … NUM_CARD_ACTIONS-1`` (54 in games with jokers).
    NUM_CARD_ACTIONS = 52

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0) -> None:
        if not (isinstance(num_envs, int) and not isinstance(num_envs, bool) and num_envs >= 1):
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        if not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and 0 <= seed < 2**63):
            raise ValueError(f"seed must be an int in [0, 2**63), got {seed!r}")
        self.num_envs = num_envs
        self.device = torch.device(device)
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {device!r}: CUDA is not available here (torch {torch.__version__}); use device='cpu'")
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(int(seed))
        b, n, s = num_envs, self.NUM_PLAYERS, self.NUM_SIDES
        dev = self.device

        def zeros(*shape, dtype=torch.int64):
            return torch.zeros(shape, dtype=dtype, device=dev)

        self._games = torch.arange(b, device=dev)
        self._seats = torch.arange(n, device=dev)
        self.hands = zeros(b, n)
        self.dealt = zeros(b, n)
        self.played = zeros(b, n)
        self.trick_cards = torch.full((b, n), -1, dtype=torch.int64, device=dev)
        self.trick_size = zeros(b)
        self.led = torch.full((b,), NO_SUIT, dtype=torch.int64, device=dev)
        self.leader = zeros(b)
        self.current_player = zeros(b)
        self.trick_number = zeros(b)
        self.tricks_won = zeros(b, n)
        #: per seat, a 4-bit mask of the suits (C, D, H, S = bits 0..3) it showed out of this hand
        self.shown_out = zeros(b, n)
        #: index into ``self.tables`` of each game's ranking rules for the hand
        self.context = zeros(b)
        self.dealer = zeros(b)
        self.hand_number = zeros(b)
        self.hand_in_game = zeros(b)
        self.game_number = zeros(b)
        self.scores = zeros(b, s)
        self.games_won = zeros(b, s)
        #: the last scored hand's points per side (kept across the auto-reset)
        self.hand_points = zeros(b, s)
        #: scores per side when the last hand was scored, before any reset for a new game
        self.final_scores = zeros(b, s)
        #: seats that won the episode that ended on the last step (all False otherwise)
        self.winners = zeros(b, n, dtype=torch.bool)
        #: games whose episode the last step truncated (``max_hands``)
        self.truncated = zeros(b, dtype=torch.bool)
        #: per seat, a 4-bit mask of the led suits of its revokes not yet established (§2.9)
        self.pending_revokes = zeros(b, n)
        #: games whose hand the last step annulled: a revoke was established (§2.9); the revoking
        #: seat is the player to act, who did not play its card
        self.revoked = zeros(b, dtype=torch.bool)
        #: the revoke mode of RULES.md §2.9: every card in hand is legal in play; a revoke is
        #: recorded, and annuls the hand once its seat plays a card of the suit it did not follow
        self.allow_revoke = bool(getattr(getattr(self, "options", None), "allow_revoke", False))
        self.agents = [f"player_{s}" for s in range(n)]
        self._mask: torch.Tensor | None = None
        self._started = False
        self._unpacker = ChunkTable(13, dev)  # 13 bits: a suit of the 52-card deck
        #: L, the rows of the observation's ``history`` block (rule option ``observation="history"``;
        #: 0 without it, and then the engine holds no history tensors)
        self.history_length = self.rules.max_hand_actions() if getattr(self.options, "observation", "vector") == "history" else 0
        if self.history_length:
            #: per game, the hand's actions so far: who acted, what, and whether face down
            self.history_seat = zeros(b, self.history_length)
            self.history_action = zeros(b, self.history_length)
            self.history_hidden = zeros(b, self.history_length, dtype=torch.bool)
            self.history_count = zeros(b)

    # ------------------------------------------------------------------ hooks for variants
    tables: TrickTables
    #: the reference rules object of the options (``whist_env.rules``): validates the options and
    #: reads fixed deals (a variant sets it, and :attr:`options`, before calling ``__init__``)
    rules: Any
    options: Any

    def _start_episodes(self, games: torch.Tensor) -> None:
        """Reset the episode state of ``games`` (``int64 [k]`` indices): scores, games won and the
        hand counters at 0, the first dealer (option ``first_dealer``, else drawn at random,
        RULES.md §1.3), and deal their first hand."""
        for state in (self.scores, self.games_won, self.hand_number, self.hand_in_game, self.game_number):
            state[games] = 0
        first = getattr(self.options, "first_dealer", None)
        if first is None:
            self.dealer[games] = torch.randint(self.NUM_PLAYERS, (len(games),), generator=self.generator, device=self.device)
        else:
            self.dealer[games] = first
        self._start_hands(games)
        self._deal(games)

    def _dealt_by_rules(self) -> Any:
        """What the engine installs of the deal :attr:`rules` has just made from a fixed deal (the
        reference reads, checks and completes it; :meth:`_read_deals`): default ``(hands per
        seat, dealer)``."""
        return list(self.rules.hands), self.rules.dealer

    def _install_deals(self, games: torch.Tensor, deals: list[Any]) -> None:
        """Replace the first hand of ``games`` (``int64 [k]``, just reset) by ``deals`` (one
        :meth:`_dealt_by_rules` tuple ``(hands per seat, dealer, *extras)`` per game): the dealer,
        a new hand, then :meth:`_set_deal` with the hands and the extras as ``int64`` tensors."""
        columns = [torch.tensor([deal[i] for deal in deals], dtype=torch.int64, device=self.device) for i in range(len(deals[0]))]
        self.dealer[games] = columns[1]
        self._start_hands(games)
        self._set_deal(games, columns[0], *columns[2:])

    def _set_deal(self, games: torch.Tensor, hands: torch.Tensor, *extras: torch.Tensor) -> None:
        """Install dealt ``hands`` (``int64 [k, N]`` card bitmasks) in ``games`` (``int64 [k]``),
        with what else the variant's deal fixes (``extras``, one ``int64`` tensor of k rows each,
        as in :meth:`_dealt_by_rules`), and set the first player to act."""
        raise NotImplementedError

    def _open_hand(self, games: torch.Tensor, offset: int = 1) -> None:
        """The first player of the new hand in ``games`` (``int64 [k]``) leads and acts: the seat
        ``offset`` places left of the dealer (default ``left(dealer)``, RULES.md §1.3)."""
        first = (self.dealer[games] + offset) % self.NUM_PLAYERS
        self.leader[games] = first
        self.current_player[games] = first
        self._mask = None

    def _deal_extras(self, game: int) -> dict[str, Any]:
        """The deal extras of game ``game``'s current hand, in ``raw_env`` reset-options form
        (card texts), as ``raw_env.current_deal()`` gives them. Default: none."""
        return {}

    def _score_hands(self, hand_over: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """Score the games whose hand ended (``bool [B]``), write ``rewards`` (``float32 [B, N]``),
        start their next hand or episode; return ``done`` (``bool [B]``)."""
        raise NotImplementedError

    def observe(self, out: torch.Tensor | None = None) -> torch.Tensor:
        """Observation of the player to act in every game: ``float32 [B, D]``, written into
        ``out`` when given (a contiguous ``float32 [B, D]`` tensor on the engine's device; it is
        returned), else a new tensor.

        Raises:
            RuntimeError: called before :meth:`reset`.
            ValueError: ``out`` is not such a tensor."""
        self._require_reset("observe")
        self._check_out(out)
        return self._full_observation(out)

    def _full_observation(self, out: torch.Tensor | None) -> torch.Tensor:
        """The observation of the player to act (checked ``out`` or a new tensor): the variant's
        vector (:meth:`_observe`), then the history blocks where the options ask for them."""
        if not self.history_length:
            return self._observe(out)
        vector, history = self._observe(None), self._history_features(self.current_player)
        if out is None:
            return torch.cat([vector, history], dim=1)
        out[:, : self.vector_size] = vector
        out[:, self.vector_size :] = history
        return out

    @property
    def vector_size(self) -> int:
        """The observation's entries before the history blocks: all of them without
        ``observation="history"``; the size of what :meth:`_observe` writes."""
        return self.observation_size - 5 * self.history_length

    def _observe(self, out: torch.Tensor | None) -> torch.Tensor:
        """The variant's observation vector of the player to act (``float32 [B, vector_size]``),
        into ``out`` (checked) or a new tensor."""
        raise NotImplementedError

    def _hidden_choice(self) -> torch.Tensor | None:
        """``bool [B]``: the games whose player to act chooses face down (the rules'
        ``HIDDEN_ACTION_PHASES``: a Bid Whist discard, a Minnesota bid card); ``None``: none
        in this game (the default)."""
        return None

    def _record_actions(self, actions: torch.Tensor) -> None:
        """Append ``actions`` (legal, ``int64 [B]``) of the players to act to each game's history."""
        at = self.history_count[:, None]
        self.history_seat.scatter_(1, at, self.current_player[:, None])
        self.history_action.scatter_(1, at, actions[:, None])
        hidden = self._hidden_choice()
        self.history_hidden.scatter_(1, at, torch.zeros_like(at, dtype=torch.bool) if hidden is None else hidden[:, None])
        self.history_count += 1

    def _history_features(self, seat: torch.Tensor) -> torch.Tensor:
        """The ``history`` and ``history_mask`` blocks of ``seat`` (``int64 [B]``) in every game:
        ``float32 [B, 5 L]``, equal to the reference encoder's (whist_env/envs/encoding.py): a
        hand's card plays are its last actions and fill its tricks in turn."""
        n, length = self.NUM_PLAYERS, self.history_length
        k = torch.arange(length, device=self.device)[None, :]
        count = self.history_count[:, None]
        valid = k < count
        plays = unpack_bits(self.played, self.NUM_CARD_ACTIONS).sum((1, 2))
        play = k - (count - plays[:, None])
        is_play = play >= 0
        own = self.history_seat == seat[:, None]
        rows = torch.stack([
            (self.history_seat - seat[:, None]) % n,
            torch.where(self.history_hidden & ~own, self.rules.num_actions, self.history_action),
            torch.where(is_play, torch.div(play, n, rounding_mode="floor"), -1),
            torch.where(is_play, play % n, -1),
        ], dim=2) * valid[:, :, None]
        return torch.cat([rows.reshape(self.num_envs, 4 * length), valid], dim=1).to(torch.float32)

    def _check_out(self, out: torch.Tensor | None) -> None:
        """Refuse an ``out`` buffer that is not a contiguous ``float32 [B, D]`` tensor on the
        engine's device: ``ValueError``, nothing is changed."""
        if out is None:
            return
        shape = (self.num_envs, self.observation_size)
        if not isinstance(out, torch.Tensor) or out.dtype != torch.float32 or tuple(out.shape) != shape \
                or out.device != self.device or not out.is_contiguous():
            got = f"{out.dtype} {tuple(out.shape)} on {out.device}{'' if out.is_contiguous() else ', not contiguous'}" \
                if isinstance(out, torch.Tensor) else type(out).__name__
            raise ValueError(f"{self.NAME}: out must be a contiguous float32 tensor of shape {shape} on {self.device}, got {got}")

    # ------------------------------------------------------------------ fixed deals
    def _read_deals(self, options: Sequence[Mapping[str, Any] | None]) -> dict[int, Any]:
        """Fixed first deals in ``raw_env`` reset-options form (one entry per game, ``None`` for a
        random deal), each read and dealt by the reference rules (``self.rules``, agents named
        ``self.agents``): game index -> :meth:`_dealt_by_rules`. What a fixed deal leaves open is
        drawn as the reference draws it, from a generator seeded by :attr:`generator`.

        Raises:
            ValueError: ``options`` is not a sequence of B entries, or a deal is broken (as
                ``raw_env.reset`` says it, naming the game).
        """
        if isinstance(options, (Mapping, str)) or not isinstance(options, Sequence) or len(options) != self.num_envs:
            raise ValueError(f"reset options must be a sequence of {self.num_envs} deals (None for a random deal)")
        seat = {a: s for s, a in enumerate(self.agents)}
        fixed = {}
        generator_state = self.generator.get_state()
        for game, deal in enumerate(options):
            if deal is None:
                continue
            try:
                if not isinstance(deal, Mapping):
                    raise ValueError(f"a deal must be a mapping such as {{'hands': ..., 'dealer': ...}}, got {type(deal).__name__}")
                self.rules.check_deal_keys(deal)  # a misspelt key is refused, as raw_env.reset refuses it
                deal = dict(deal)
                if deal.get("hands") is not None:
                    if not isinstance(deal["hands"], Mapping):
                        raise ValueError(f"hands must map agent names to lists of card strings, got {type(deal['hands']).__name__}")
                    unknown = sorted(set(deal["hands"]) - set(seat))
                    if unknown:
                        raise ValueError(f"unknown agent(s) {unknown} in hands; agents: {self.agents}")
                    deal["hands"] = {seat[a]: list(cards) for a, cards in deal["hands"].items()}
                if deal.get("dealer") is not None:
                    if not isinstance(deal["dealer"], str) or deal["dealer"] not in seat:
                        raise ValueError(f"unknown dealer {deal['dealer']!r}; agents: {self.agents}")
                    deal["dealer"] = seat[deal["dealer"]]
                self.rules.reset(np.random.default_rng(int(torch.randint(1 << 62, (1,), generator=self.generator, device=self.device))), deal)
            except (ValueError, TypeError, KeyError) as error:  # raw_env says some of them as a TypeError
                self.generator.set_state(generator_state)  # a refused reset leaves the generator too as it was
                raise ValueError(f"game {game}: invalid deal: {error}") from None
            fixed[game] = self._dealt_by_rules()
        return fixed

    def _require_reset(self, method: str) -> None:
        """Refuse a public ``method`` that reads the games' state before the first :meth:`reset`
        (the state is all zeros then, no deal): ``RuntimeError``, nothing is changed."""
        if not self._started:
            raise RuntimeError(f"{self.NAME}: call reset() before {method}()")

    # ------------------------------------------------------------------ seats and sides
    def side_of(self, seats: torch.Tensor) -> torch.Tensor:
        """Side of each seat (partnerships: ``seat % 2``), same shape and dtype."""
        return seats % 2

    # ------------------------------------------------------------------ public API
    def reset(self, options: Sequence[Mapping[str, Any] | None] | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Start a new episode in every game.

        Args:
            options: ``None`` (every deal random), or one entry per game: ``None`` for a random
                deal, or a fixed first deal in ``raw_env`` reset-options form (``{"hands": {agent:
                [card text, ...]}, "dealer": agent, <extra>: ...}``, as :meth:`current_deal`
                returns it), read by the reference rules. Later hands are dealt at random.
        Returns:
            ``(obs float32 [B, D], mask bool [B, A], seat int64 [B])``: the observation and the
            legal actions of the player to act in each game, and that player's seat.
        Raises:
            ValueError: on a broken deal or a key the game does not read (as ``raw_env.reset``
                says it), naming the game; or ``options`` not of length B. Nothing is changed then.
        """
        fixed = self._read_deals(options) if options is not None else {}
        self._start_episodes(self._games)
        self._started = True
        self.hand_points.zero_()
        self.final_scores.zero_()
        self.winners.zero_()
        self.truncated.zero_()
        self.revoked.zero_()
        if fixed:
            games = sorted(fixed)
            self._install_deals(torch.tensor(games, dtype=torch.int64, device=self.device), [fixed[g] for g in games])
            self._mask = None
        return self._outputs()

    def state_dict(self) -> dict[str, Any]:
        """Everything that changes as the games are played, to continue them later bit for bit:
        every tensor attribute (cloned), the names of those that are unset (``None``), the random
        generator's state and whether :meth:`reset` has run. Plain types and tensors only, so it
        pickles under ``torch.load(weights_only=True)``; :meth:`load_state_dict` restores it."""
        attributes = vars(self)
        return {"name": self.NAME, "num_envs": self.num_envs, "started": self._started,
                "generator": self.generator.get_state(),
                "tensors": {k: v.detach().clone() for k, v in attributes.items() if isinstance(v, torch.Tensor)},
                "unset": sorted(k for k, v in attributes.items() if v is None)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue the games of :meth:`state_dict` (of an engine of the same game, rule options
        and ``num_envs``). Tensors are copied into this engine's own, so views between them
        stay views.

        Raises:
            ValueError: a state of another game or batch size, or whose tensors differ in name,
                shape or dtype from this engine's. Nothing is changed then.
        """
        if state.get("name") != self.NAME or state.get("num_envs") != self.num_envs:
            raise ValueError(f"a state of {state.get('name')!r} with {state.get('num_envs')} games cannot continue "
                             f"{self.NAME!r} with {self.num_envs}")
        tensors, unset = dict(state["tensors"]), set(state["unset"])
        mine = {k: v for k, v in vars(self).items() if isinstance(v, torch.Tensor) or v is None}
        if set(tensors) | unset != set(mine):
            raise ValueError(f"the stored state's fields {sorted(set(tensors) | unset)} differ from the engine's {sorted(mine)}")
        for k, v in tensors.items():
            own = mine[k]
            if own is not None and (own.shape != v.shape or own.dtype != v.dtype):
                raise ValueError(f"stored {k} is {v.dtype} {tuple(v.shape)}, the engine's {own.dtype} {tuple(own.shape)}")
        self.generator.set_state(state["generator"])
        for k, v in tensors.items():
            if mine[k] is None:
                setattr(self, k, v.to(self.device).clone())
            else:
                mine[k].copy_(v)
        for k in unset:
            setattr(self, k, None)
        self._started = bool(state["started"])

    def current_deal(self, game: int) -> dict[str, Any]:
        """Game ``game``'s current hand as dealt, in ``raw_env`` reset-options form:
        ``{"hands": {agent: [card text, ...]}, "dealer": agent, <extra>: ...}``;
        ``raw_env.reset(options=...)`` (an episode's first hand) or ``raw_env.redeal(...)`` (a
        later hand of a game) replays it.

        It holds every player's hidden cards: for tests, duplicate evaluation and records.

        Raises:
            RuntimeError: called before :meth:`reset`.
            ValueError: ``game`` is not an int in ``[0, num_envs)``.
        """
        self._require_reset("current_deal")
        if isinstance(game, bool) or not isinstance(game, (int, np.integer)) or not 0 <= int(game) < self.num_envs:
            raise ValueError(f"{self.NAME}: current_deal(game): game must be an int in [0, {self.num_envs}), got {game!r}")
        game = int(game)
        dealt = self.dealt[game].tolist()
        deal: dict[str, Any] = {
            "hands": {agent: mask_to_str(dealt[s]) for s, agent in enumerate(self.agents)},
            "dealer": self.agents[int(self.dealer[game])],
        }
        deal.update(self._deal_extras(game))
        return deal

    def step(self, actions: torch.Tensor, out: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Apply one action in every game, for the player to act there.

        Args:
            actions: ``int64 [B]`` action ids (card ids for card play).
            out: where to write the next observation: a contiguous ``float32 [B, D]`` tensor on
                the engine's device, e.g. the next step's slice of a rollout buffer, reused
                across steps (no observation tensor is allocated then). ``None`` (the default):
                a new tensor every step. The returned ``obs`` is ``out`` itself, so a caller
                that keeps observations must pass a different buffer for every step it keeps.
        Returns:
            ``(obs float32 [B, D], mask bool [B, A], seat int64 [B], rewards float32 [B, N],
            done bool [B])``. ``rewards`` pays every seat on the step that ends a hand
            (RULES.md §1.9), zero elsewhere; ``done`` marks games whose episode ended (or was
            truncated, :attr:`truncated`) on this step: they come back already reset, and
            :attr:`final_scores`, :attr:`winners` hold how the episode ended.
        Raises:
            ValueError: when the action of any game is not legal there, naming the first such
                game, its action and the legal actions, or ``out`` is not such a tensor;
                nothing is changed.
            RuntimeError: called before :meth:`reset`.
        """
        self._require_reset("step")
        self._check_out(out)
        try:
            actions = torch.as_tensor(actions, device=self.device)
        except (TypeError, ValueError, RuntimeError) as err:
            raise ValueError(f"actions must be an integer tensor of shape ({self.num_envs},), got {type(actions).__name__}: {err}") from None
        if actions.shape != (self.num_envs,) or actions.dtype.is_floating_point or actions.dtype == torch.bool:
            raise ValueError(f"actions must be an integer tensor of shape ({self.num_envs},), got {actions.dtype} {tuple(actions.shape)}")
        actions = actions.to(torch.int64)
        mask = self._legal_actions()
        in_range = (actions >= 0) & (actions < self.NUM_ACTIONS)
        ok = in_range & mask.gather(1, actions.clamp(0, self.NUM_ACTIONS - 1)[:, None]).squeeze(1)
        if not bool(ok.all()):
            self._raise_illegal(actions, mask, ok)
        rewards = torch.zeros((self.num_envs, self.NUM_PLAYERS), dtype=torch.float32, device=self.device)
        if self.history_length:
            self._record_actions(actions)
        hand_over = self._apply(actions)
        self._mask = None
        self.winners.zero_()
        self.truncated.zero_()
        done = self._score_hands(hand_over, rewards)
        obs, mask, seat = self._outputs(out)
        return obs, mask, seat, rewards, done

    def action_label(self, action: int) -> str:
        """The reference rules' label of an action id (``"QH"``, ``"JKR"``, ``"pass"``, ``"bid:3"`` …)."""
        return self.rules.action_label(action)

    def action_mask(self) -> torch.Tensor:
        """Legal actions of the player to act in every game: ``bool [B, A]``, a copy (changing it
        changes nothing in the engine, which checks actions against its own).

        Raises:
            RuntimeError: called before :meth:`reset`."""
        self._require_reset("action_mask")
        return self._legal_actions().clone()

    def _legal_actions(self) -> torch.Tensor:
        """The engine's own action mask (cached until the next step or reset; not to be changed)."""
        if self._mask is None:
            self._mask = self._legal_mask()
        return self._mask

    # ------------------------------------------------------------------ hooks with a default
    def _legal_mask(self) -> torch.Tensor:
        """``bool [B, A]`` legal actions; the default is card play in every game. A variant with
        other phases (auctions, discards) combines :meth:`card_mask` with its own per phase."""
        return self.card_mask(self._legal_cards())

    def _apply(self, actions: torch.Tensor) -> torch.Tensor:
        """Apply legal ``actions`` (``int64 [B]``); return the games whose hand ended (``bool [B]``).
        The default plays a card in every game; a variant with other phases routes each game's
        action by its phase and plays cards with ``_play_cards(cards, active)``."""
        return self._play_cards(actions)

    def card_mask(self, cards: torch.Tensor) -> torch.Tensor:
        """``int64 [B]`` card bitmasks as a ``bool [B, A]`` action mask (card ``c`` is action ``c``;
        actions from the card count on are False)."""
        unpacker = self._unpacker
        if self.NUM_ACTIONS >= NUM_CARD_BITS and self.NUM_CARD_ACTIONS < MASK_BITS:
            # whole chunks: 52 bits, or 65 for the jokers 52 and 53 (the last chunk's shift is 52)
            width = -(-self.NUM_CARD_ACTIONS // unpacker.width) * unpacker.width
            bits = unpacker.unpack(unpacker.chunks(cards[:, None], width), unpacker.bools)
        else:
            bits = unpack_bits(cards, min(self.NUM_ACTIONS, MASK_BITS), torch.bool)
        if bits.shape[1] == self.NUM_ACTIONS:
            return bits
        if bits.shape[1] > self.NUM_ACTIONS:
            return bits[:, : self.NUM_ACTIONS]
        rest = torch.zeros((self.num_envs, self.NUM_ACTIONS - bits.shape[1]), dtype=torch.bool, device=self.device)
        return torch.cat([bits, rest], dim=1)

    # ------------------------------------------------------------------ trick play (RULES.md §1.4)
    def _legal_cards(self) -> torch.Tensor:
        """Cards the player to act may play (follow suit if able, §1.4; every card of the hand in
        the revoke mode, §2.9): ``int64 [B]`` bitmasks."""
        t = self.tables
        hand = self.hands.gather(1, self.current_player[:, None]).squeeze(1)
        if self.allow_revoke:
            return hand
        led = self.led
        suit_masks = t.suit_masks[self.context]  # [B, 4]
        same = hand & suit_masks.gather(1, led.clamp(min=0)[:, None]).squeeze(1)
        legal = torch.where(same != 0, same, hand)
        if t.any_must_trump:
            trump = t.trump[self.context]
            trumps = hand & suit_masks.gather(1, trump.clamp(min=0)[:, None]).squeeze(1)
            forced = t.must_trump[self.context] & (trump >= 0) & (same == 0) & (trumps != 0)
            legal = torch.where(forced, trumps, legal)
        return torch.where(led >= 0, legal, hand)

    def _trick_winner(self) -> torch.Tensor:
        """Seat that wins each game's current trick, if complete (§1.4 ``trick_winner``): ``int64 [B]``.

        The highest-powered super card, else the highest trump, else the highest card of the
        led suit: one look-up of every played card's rank in :attr:`TrickTables.trick_key`
        (``-1`` for no card, which maps to the table's no-card column); rows whose trick is
        incomplete give a meaningless seat.
        """
        row = (self.context * 5 + self.led % 5) * 55  # NO_SUIT (-1) is led index 4
        return self.tables.trick_key.take(row[:, None] + self.trick_cards % 55).argmax(dim=1)

    def _play_cards(self, cards: torch.Tensor, active: torch.Tensor | None = None) -> torch.Tensor:
        """Play ``cards`` (``int64 [B]``, legal) for the players to act; complete tricks.

        Args:
            cards: the card id played in each game.
            active: ``bool [B]``, the games that play a card now (the others, in another phase,
                are left unchanged); ``None``: every game.
        Returns:
            ``bool [B]``: the games whose hand ended with this card; in the revoke mode (§2.9)
            also those whose hand it annulled (:attr:`revoked`: the card is not played).
        """
        t = self.tables
        games, seat = self._games, self.current_player
        playing = torch.ones_like(cards, dtype=torch.bool) if active is None else active
        if self.allow_revoke:
            playing = active = self._track_revokes(cards, playing)
        cards = torch.where(playing, cards, self.trick_cards[games, seat]) if active is not None else cards
        safe = cards.clamp(min=0)
        bit = torch.where(playing, card_bits(cards), 0)
        eff = t.eff_suit[self.context, safe]
        led = self.led
        not_followed = playing & (led >= 0) & (eff != led)
        shown = torch.where(not_followed, card_bits(led), 0)
        if t.any_must_trump:
            trump = t.trump[self.context]
            shows_trump = not_followed & t.must_trump[self.context] & (trump >= 0) & (eff != trump)
            shown = shown | torch.where(shows_trump, card_bits(trump), 0)
        self.shown_out[games, seat] |= shown
        self.hands[games, seat] &= ~bit
        self.played[games, seat] |= bit
        self.trick_cards[games, seat] = cards
        self.trick_size += playing.to(torch.int64)
        self.led = torch.where((led >= 0) | ~playing, led, eff)  # a suitless lead leaves the trick unled
        self._after_card(cards, playing)
        complete = playing & (self.trick_size == self.NUM_PLAYERS)
        winner = self._trick_winner()
        self.tricks_won[games, winner] += complete.to(torch.int64)
        self.trick_number += complete.to(torch.int64)
        self.trick_cards.masked_fill_(complete[:, None], -1)  # in place: no new tensors for the trick's end
        self.trick_size.masked_fill_(complete, 0)
        self.led.masked_fill_(complete, NO_SUIT)
        self.leader = torch.where(complete, winner, self.leader)
        self.current_player = torch.where(complete, winner, torch.where(playing, (seat + 1) % self.NUM_PLAYERS, seat))
        self._mask = None
        hand_over = complete & (self.hands.gather(1, self.leader[:, None]).squeeze(1) == 0)
        return hand_over | self.revoked if self.allow_revoke else hand_over

    def _track_revokes(self, cards: torch.Tensor, playing: torch.Tensor) -> torch.Tensor:
        """Establish and record revokes (RULES.md §2.9) for ``cards`` (``int64 [B]``) about to be
        played in the ``playing`` games (``bool [B]``), as the reference does before the card is
        played: a card of a suit its seat has a pending revoke in establishes that revoke (the
        hand is annulled, :attr:`revoked`); else a card that does not follow the led suit while
        the hand holds one records a pending revoke. Returns the games that play their card."""
        t = self.tables
        games, seat = self._games, self.current_player
        eff = t.eff_suit[self.context, torch.where(playing, cards, 0)]
        pending = self.pending_revokes[games, seat]
        established = playing & (eff >= 0) & (torch.bitwise_right_shift(pending, eff.clamp(min=0)) & 1).bool()
        led = self.led
        hand = self.hands[games, seat]
        holds_led = (hand & t.suit_masks[self.context].gather(1, led.clamp(min=0)[:, None]).squeeze(1)) != 0
        revoke = playing & ~established & (led >= 0) & (eff != led) & holds_led
        self.pending_revokes[games, seat] = pending | torch.where(revoke, card_bits(led), 0)
        self.revoked = established
        return playing & ~established

    def _revoke_penalty(self, scores: torch.Tensor) -> torch.Tensor:
        """Scores per side (``int64 [B, S]``) after that side's revoke is established (§2.9;
        Classic: 0, the default). Same shape and dtype."""
        return torch.zeros_like(scores)

    def _annul_revoked_hands(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Apply the penalty of the revokes established on this step (RULES.md §2.9): the
        revoking side's score becomes :meth:`_revoke_penalty` of it; no trick points are scored.

        Returns:
            ``(annulled bool [B], points int64 [B, S])``: the annulled hands and the score change
            per side (zero elsewhere); :attr:`scores` is updated.
        """
        annulled = self.revoked
        side = self.side_of(self.current_player)  # the revoker did not play: still to act
        hit = (side[:, None] == self._seats[: self.NUM_SIDES]) & annulled[:, None]
        scores = torch.where(hit, self._revoke_penalty(self.scores), self.scores)
        points = scores - self.scores
        self.scores = scores
        return annulled, points

    def _after_card(self, cards: torch.Tensor, playing: torch.Tensor) -> None:
        """Variant bookkeeping after ``cards`` were played in the ``playing`` games (``bool [B]``),
        e.g. the turn-up leaves the table."""

    def _start_hands(self, games: torch.Tensor) -> None:
        """Clear the per-hand state of ``games`` (``int64 [k]``) before their deal."""
        self.played[games] = 0
        self.trick_cards[games] = -1
        self.trick_size[games] = 0
        self.led[games] = NO_SUIT
        self.trick_number[games] = 0
        self.tricks_won[games] = 0
        self.shown_out[games] = 0
        self.pending_revokes[games] = 0
        if self.history_length:
            self.history_count[games] = 0
        self._mask = None

    # ------------------------------------------------------------------ end of a hand (RULES.md §1.9)
    def _deal(self, games: torch.Tensor) -> None:
        """Deal a new hand in ``games`` (``int64 [k]``), their per-hand state already cleared."""
        raise NotImplementedError

    def _deal_round_robin(self, games: torch.Tensor, num_cards: int = NUM_CARD_BITS) -> tuple[torch.Tensor, torch.Tensor]:
        """Shuffle the deck of card ids ``0 … num_cards-1`` for each of ``games`` (``int64 [k]``)
        with :attr:`generator` and deal it one card at a time clockwise (RULES.md §1.3): ``d[i]``
        to seat ``(dealer + 1 + i) mod N`` for the first ``N × HAND_SIZE`` cards.

        Returns:
            ``(hands int64 [k, N], order int64 [k, num_cards])``: the hands as bitmasks, and the
            shuffled list ``d`` (the undealt cards last).
        """
        k, n = len(games), self.NUM_PLAYERS
        order = torch.rand((k, num_cards), generator=self.generator, device=self.device, dtype=torch.float64).argsort(dim=1)
        dealt = n * self.HAND_SIZE
        positions = torch.arange(dealt, device=self.device)
        seat_of = (self.dealer[games, None] + 1 + positions) % n
        hands = torch.zeros((k, n), dtype=torch.int64, device=self.device)
        hands.scatter_add_(1, seat_of, card_bits(order[:, :dealt]))  # distinct bits: the sum is the union
        return hands, order

    def _games_to_win(self) -> int:
        """Games a side must win to win the episode (a match's ``best_of``; 1 otherwise)."""
        return 1

    def _finish_hands(
        self,
        hand_over: torch.Tensor,
        points: torch.Tensor,
        winner: torch.Tensor,
        rewards: torch.Tensor,
        joint: torch.Tensor | None = None,
        annulled: torch.Tensor | None = None,
        drawn: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Episode and match progression after the hands that ended, as the reference's
        ``_finish_hand`` does it (RULES.md §1.9): the episode's end and winners, games won,
        rewards, truncation at ``max_hands``, a new game of a match, the dealer's turn to the
        left and the next deal. :attr:`scores` must already hold the hand's points.

        Args:
            hand_over: ``bool [B]``, the games whose hand ended on this step.
            points: ``int64 [B, S]``, each side's points for the hand (annulled hands: the penalty).
            winner: ``int64 [B]``, the side that won the game with this hand, else -1.
            rewards: ``float32 [B, N]``, written for the games whose hand ended.
            joint: ``bool [B, S]``, sides that won the game jointly (it ends with all of them
                winning), or ``None``.
            annulled: ``bool [B]``, hands annulled by a revoke (no episode end in hand mode, the
                same dealer and hand of the game), or ``None``.
            drawn: ``bool [B]``, games that end now with no winner (every side tied for the best
                total: a draw, as the reference's empty list of joint winners), or ``None``.
        Returns:
            ``bool [B]``: the games whose episode ended or was truncated; they are reset.
        """
        opts = self.options
        b, n, s = self.num_envs, self.NUM_PLAYERS, self.NUM_SIDES
        ended = hand_over[:, None]
        annulled = torch.zeros_like(hand_over) if annulled is None else annulled & hand_over
        joint = torch.zeros((b, s), dtype=torch.bool, device=self.device) if joint is None else joint & ended
        winner = torch.where(hand_over, winner, -1)
        self.hand_points = torch.where(ended, points, self.hand_points)
        self.final_scores = torch.where(ended, self.scores, self.final_scores)
        side_ids = self._seats[:s]
        single = (winner[:, None] == side_ids) & (winner >= 0)[:, None]  # [B, S]
        if opts.episode == "hand":
            best = self.scores.max(dim=1, keepdim=True).values
            at_best = self.scores == best
            by_score = at_best & (at_best.sum(dim=1, keepdim=True) < s)
            hand_end = hand_over & ~annulled
            winning = torch.where(hand_end[:, None], by_score, False)
            game_over = hand_end
        else:
            has_joint = joint.any(dim=1)
            if drawn is not None:
                has_joint = has_joint | (drawn & hand_over)
            self.games_won = self.games_won + (joint | single).to(torch.int64)
            won = (self.games_won * single).sum(dim=1)
            game_over = has_joint | ((winner >= 0) & (won >= self._games_to_win()))
            winning = torch.where(has_joint[:, None], joint, single) & game_over[:, None]
        sides = self.side_of(self._seats)  # [N]
        winners = winning.gather(1, sides[None, :].expand(b, -1))  # [B, N]
        self.winners = winners

        own = points.gather(1, sides[None, :].expand(b, -1)).to(torch.float64)
        if opts.reward == "score":
            paid = own
        elif opts.reward == "score_diff":
            paid = own - (points.sum(dim=1, keepdim=True).to(torch.float64) - own) / (s - 1)
        else:  # win_loss: ±1 when the episode ends with winners
            paid = torch.where((game_over & winners.any(dim=1))[:, None], torch.where(winners, 1.0, -1.0), 0.0).to(torch.float64)
        rewards.copy_(torch.where(ended, paid, 0.0).to(torch.float32))

        continuing = hand_over & ~game_over
        truncated = continuing & (self.hand_number + 1 >= opts.max_hands)
        next_hand = continuing & ~truncated
        new_game = next_hand & (winner >= 0)  # scores back to 0, the dealer keeps rotating
        self.scores = torch.where(new_game[:, None], 0, self.scores)
        self.game_number = self.game_number + new_game.to(torch.int64)
        same_game = next_hand & ~new_game & ~annulled
        self.hand_in_game = torch.where(new_game, 0, self.hand_in_game + same_game.to(torch.int64))
        self.dealer = torch.where(next_hand & ~annulled, (self.dealer + 1) % n, self.dealer)
        self.hand_number = self.hand_number + next_hand.to(torch.int64)
        self.truncated = truncated
        done = game_over | truncated
        games = next_hand.nonzero().squeeze(1)
        if len(games):
            self._start_hands(games)
            self._deal(games)
        games = done.nonzero().squeeze(1)
        if len(games):
            self._start_episodes(games)
        return done

    # ------------------------------------------------------------------ observation (envs/encoding.py)
    def _init_observation(self) -> None:
        """The observation layout of :attr:`rules` (the raw env's ``observation_layout()``,
        :attr:`layout`) and the plan that :meth:`_encode` writes it by, for a game of the 52-card
        deck.

        One :class:`BlockUnpacker` writes the whole batch's 0/1 entries: the card blocks, zeros
        over the features after them (written afterwards), then the unseen block and the 0/1
        extra features from one tail mask that starts at the unseen block. Extra features that
        do not fit beside the unseen block in 63 bits (13 entries or more) are zero blocks after
        it instead, for the variant to write afterwards (:meth:`_encode` takes no ``extra_bits``
        then).

        Raises:
            NotImplementedError: the layout does not fit that plan (another deck size, or 12
                extra entries: neither beside the unseen block nor a zero block of 13 bits).
        """
        encoder = ObservationEncoder(self.rules)
        #: name -> slice of the observation vector, shared with ``raw_env.observation_layout()``
        self.layout: dict[str, slice] = dict(encoder.layout)
        self.observation_size = encoder.size
        lay, dev = self.layout, self.device
        cards_end, unseen = lay["leader"].start, lay["unseen"].start
        tail, extras = encoder.extra_end - unseen, encoder.extra_end - encoder.extra_start
        if self.rules.NUM_CARD_ACTIONS != NUM_CARD_BITS or cards_end % NUM_CARD_BITS or (tail > 63 and extras < 13):
            raise NotImplementedError(f"{type(self).__name__}: the observation layout does not fit the block plan")

        def zero_pieces(width: int) -> list[int]:  # zero blocks of 13..64 bits over ``width`` entries
            count = -(-width // 64)
            return [width // count + (k < width % count) for k in range(count)]

        #: whether the tail mask holds the extra features' bits (from bit ``_extra_shift`` on), else
        #: they are zero blocks after the unseen block
        self._extras_in_tail = tail <= 63
        self._extra_shift = encoder.extra_start - unseen
        after = [] if self._extras_in_tail else zero_pieces(extras)
        zeros = zero_pieces(unseen - cards_end)  # the features between the card blocks and the unseen block
        #: the zero blocks before the unseen block (the first ``_zeros_before`` columns), then those after it
        self._zeros_before = len(zeros)
        self._zero_blocks = torch.zeros((self.num_envs, len(zeros) + len(after)), dtype=torch.int64, device=dev)
        self._obs_unpacker = BlockUnpacker([NUM_CARD_BITS] * (cards_end // NUM_CARD_BITS) + zeros + [tail - sum(after)] + after,
                                           self.num_envs, self._unpacker)
        numeric = ("tricks_won", "tricks_by_side", "scores", "games_won", "hand_in_game", "trick_number")
        if any(lay[a].stop != lay[z].start for a, z in zip(numeric, numeric[1:])):
            raise NotImplementedError(f"{type(self).__name__}: the numeric features are not adjacent in the layout")
        self._numeric = slice(lay[numeric[0]].start, lay[numeric[-1]].stop)
        self._score_scale = self.rules.score_scale()
        self._tricks_per_hand = float(self.rules.tricks_per_hand())
        #: row k: the four suit flags (C, D, H, S) of the 4-bit suit mask k
        self._suit_rows = unpack_bits(torch.arange(16, device=dev), 4, torch.float32).contiguous()
        self._full_deck = (1 << NUM_CARD_BITS) - 1

    def _encode(
        self,
        seat: torch.Tensor,
        card_sets: torch.Tensor,
        trump: torch.Tensor,
        phase: torch.Tensor | int,
        extra_bits: torch.Tensor | None = None,
        out: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Observation of ``seat`` in every game, equal to ``raw_env.observe`` (layout
        :attr:`layout`, envs/encoding.py): seats rotated so that ``seat`` is relative seat 0,
        sides so that its side is first. Needs :meth:`_init_observation`.

        Args:
            seat: ``int64 [B]``, the observer in each game.
            card_sets: ``int64 [B, K]``, the variant's public card sets as ``seat`` sees them
                (bitmasks, in ``PUBLIC_CARD_SETS`` order; ``K`` may be 0).
            trump: ``int64 [B]``, the trump suit, -1 for none.
            phase: index of the phase in the rules' ``PHASES`` (an int, or ``int64 [B]``).
            extra_bits: ``int64 [B]``, bit ``i`` = entry ``i`` of the extra features, for
                variants whose extra features are all 0/1 and at most 11; ``None``: zeros (the
                variant writes them afterwards).
            out: where to write it, a checked ``float32 [B, D]`` contiguous tensor
                (:meth:`_check_out`); ``None``: a new tensor.
        Returns:
            ``float32 [B, D]``: ``out`` when given.
        """
        b, n = self.num_envs, self.NUM_PLAYERS
        lay = self.layout
        order = (seat[:, None] + self._seats) % n  # [B, N]: absolute seat of each relative seat
        hand = self.hands.gather(1, seat[:, None])
        played = self.played.gather(1, order)
        trick = card_bits(self.trick_cards.gather(1, order))
        seen = hand.squeeze(1)
        for p in range(n):
            seen = seen | played[:, p]
        for k in range(card_sets.shape[1]):
            seen = seen | card_sets[:, k]
        tail = self._full_deck & ~seen
        if extra_bits is not None:
            if not self._extras_in_tail:
                raise NotImplementedError(f"{type(self).__name__}: more than 11 extra features are written after _encode")
            tail = tail | torch.bitwise_left_shift(extra_bits, self._extra_shift)
        zeros, k = self._zero_blocks, self._zeros_before
        blocks = torch.cat([hand, played, trick, card_sets, zeros[:, :k], tail[:, None], zeros[:, k:]], dim=1)
        out = self._obs_unpacker.unpack(blocks, out)

        # one-hot features: one position each, set with a single scatter
        phase_at = lay["phase"].start + phase
        hot = torch.stack(
            [
                lay["leader"].start + (self.leader - seat) % n,
                lay["current_player"].start + (self.current_player - seat) % n,
                lay["dealer"].start + (self.dealer - seat) % n,
                lay["trump"].start + torch.where(trump >= 0, trump, 4),
                phase_at if isinstance(phase_at, torch.Tensor) else torch.full_like(seat, phase_at),
                lay["led_suit"].start + torch.where(self.led >= 0, self.led, 4),
            ],
            dim=1,
        )
        out.scatter_(1, hot, 1.0)

        # the numeric features, adjacent in the layout, written at once; ratios are computed in
        # float64 and rounded once, as the reference's Python floats are
        tricks = self.tricks_won.gather(1, order).to(torch.float64)
        s = self.NUM_SIDES
        side_order = (self.side_of(seat)[:, None] + self._seats[:s]) % s
        if s == 2 and n == 4:  # partners sit opposite: relative seats 0, 2 are the observer's side
            by_side = torch.stack([tricks[:, 0] + tricks[:, 2], tricks[:, 1] + tricks[:, 3]], dim=1)
        else:
            by_side = torch.zeros((b, s), dtype=torch.float64, device=self.device)
            by_side.scatter_add_(1, self.side_of(order).sub(self.side_of(seat)[:, None]).remainder(s), tricks)
        scores = (self.scores.gather(1, side_order).to(torch.float64) / self._score_scale).clamp(-SCORE_CLIP, SCORE_CLIP)
        numeric = torch.cat(
            [
                torch.cat([tricks, by_side], dim=1) / self.HAND_SIZE,
                scores,
                self.games_won.gather(1, side_order).to(torch.float64),
                self.hand_in_game.to(torch.float64)[:, None] / 16.0,
                self.trick_number.to(torch.float64)[:, None] / self._tricks_per_hand,
            ],
            dim=1,
        )
        out[:, self._numeric] = numeric.to(torch.float32)
        shown = self._suit_rows.index_select(0, self.shown_out.gather(1, order).reshape(-1))
        out[:, lay["voids"]] = shown.view(b, 4 * n)
        return out

    def _hidden_card_sets(self) -> torch.Tensor | None:
        """The variant's hidden card piles (``HIDDEN_CARD_SETS`` of the rules) as ``int64 [B, H]``
        bitmasks, for :meth:`state`; ``None``: none (the default)."""
        return None

    def state(self) -> torch.Tensor:
        """The privileged global state of every game, for centralised critics only: ``float32
        [B, Ds]``, equal to ``raw_env.state()``: the observation of the player to act, then every
        hand by relative seat (``hands``, N×52), then the hidden card piles.

        Raises:
            RuntimeError: called before :meth:`reset` (every variant's ``observe`` and ``state``)."""
        self._require_reset("state")
        order = (self.current_player[:, None] + self._seats) % self.NUM_PLAYERS
        masks = self.hands.gather(1, order)
        hidden = self._hidden_card_sets()
        if hidden is not None:
            masks = torch.cat([masks, hidden], dim=1)
        cards = unpack_bits(masks, NUM_CARD_BITS, torch.float32).reshape(self.num_envs, -1)
        return torch.cat([self.observe(), cards], dim=1)

    # ------------------------------------------------------------------ outputs and errors
    def _outputs(self, out: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self._full_observation(out), self.action_mask(), self.current_player.clone()

    def _raise_illegal(self, actions: torch.Tensor, mask: torch.Tensor, ok: torch.Tensor) -> None:
        game = int((~ok).nonzero()[0, 0])
        action = int(actions[game])
        labels = [self.action_label(a) for a in mask[game].nonzero().squeeze(1).tolist()]
        shown = self.action_label(action) if 0 <= action < self.NUM_ACTIONS else "not an action id"
        bad = int((~ok).sum())
        raise ValueError(
            f"illegal action {action} ({shown}) in game {game} for seat {int(self.current_player[game])}; "
            f"legal: {labels}" + (f" ({bad - 1} other game(s) also illegal)" if bad > 1 else "") + "; nothing was applied"
        )
