"""Readable decoding of observation and global-state vectors, block by block, for the golden playthroughs.

Each block of ``observation_layout()`` (and of ``state_layout()``) gets one :class:`BlockCodec`,
chosen from the block's name and size (C = card actions of the game, N = players):

* ``cards``: a C block of 0/1 card flags -> the card texts in card-id order, ``"2C 9C QH AS"``
  (``""`` when empty);
* ``cards_by_seat``: an N×C block -> one such string per relative seat (0 = the observer);
* ``choice``: a one-hot block with a label per entry -> that label, ``null`` when no entry is set
  (``trump`` ``"H"``, ``phase`` ``"play"``, ``contract_mode`` ``"notrump"``);
* ``choice_by_seat``: N one-hot blocks -> one label per relative seat (Romanian ``bids``, Bid Whist
  ``calls``);
* ``seat``: a one-hot relative seat (``leader``, ``dealer`` ...) -> the relative seat number, ``null``
  when none;
* ``flags_by_seat``: N multi-hot blocks -> the labels of the set entries per relative seat, joined by
  spaces (``voids``: ``["", "C", "", "D H"]``);
* ``numbers``: anything else (counts, fractions, per-seat or per-side values) -> the number for a
  1-entry block, else the list of numbers.

Numbers are written as the shortest decimal that reads back as the same float32 (``0.07692308``
for 1/13), integers without a fraction, so a decoded block holds exactly the information of the
vector. A block whose content does not fit its rule (a card flag of 0.5, two entries of a one-hot
block set) is written as ``{"raw": [numbers]}`` instead, so nothing is ever lost or guessed.
:func:`encode_blocks` turns decoded blocks back into the vector; the recorder checks that round
trip at every step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from whist_env.engine.cards import SUITS, card_from_str, card_to_str

#: Names of one-hot blocks over relative seats.
SEAT_BLOCKS = frozenset({"leader", "current_player", "dealer", "declarer"})

#: Label of the "no suit" entry that closes the suit blocks (``trump``: no trump; ``led_suit``:
#: no suited card led yet).
SUIT_LABELS = (*SUITS, "none")


def number(x: float) -> int | float:
    """``x`` (a float32 value) as the shortest Python number that converts back to the same float32."""
    text = np.format_float_positional(np.float32(x), unique=True, trim="-")
    return int(text) if text.lstrip("-").isdigit() else float(text)


def is_binary(values: np.ndarray) -> bool:
    return bool(np.all((values == 0) | (values == 1)))


class BlockCodec:
    """Decodes one block (a float32 slice) to a JSON value and encodes it back.

    Args:
        kind: one of the module docstring's rules.
        size: entries of the block.
        labels: for ``choice``/``choice_by_seat``/``flags_by_seat``: the label of each entry of one
            (per-seat) one-hot part.
        seats: for the ``*_by_seat`` kinds: the number of per-seat parts.
    """

    def __init__(self, kind: str, size: int, labels: tuple[Any, ...] = (), seats: int = 1) -> None:
        self.kind, self.size, self.labels, self.seats = kind, size, tuple(labels), seats
        self.part = size // seats

    def decode(self, values: np.ndarray) -> Any:
        """The readable value of ``values`` (shape ``(size,)``), ``{"raw": [...]}`` when it fits no rule."""
        decoded = self._decode(values)
        return {"raw": [number(v) for v in values]} if decoded is _NO_FIT else decoded

    def _decode(self, values: np.ndarray) -> Any:
        kind = self.kind
        if kind == "numbers":
            return number(values[0]) if self.size == 1 else [number(v) for v in values]
        if not is_binary(values):
            return _NO_FIT
        if kind == "cards":
            return " ".join(card_to_str(int(i)) for i in np.flatnonzero(values))
        parts = values.reshape(self.seats, self.part)
        if kind == "cards_by_seat":
            return [" ".join(card_to_str(int(i)) for i in np.flatnonzero(p)) for p in parts]
        if kind == "flags_by_seat":
            return [" ".join(str(self.labels[i]) for i in np.flatnonzero(p)) for p in parts]
        out = []
        for p in parts:
            on = np.flatnonzero(p)
            if len(on) > 1:
                return _NO_FIT
            out.append(None if len(on) == 0 else (int(on[0]) if kind == "seat" else self.labels[on[0]]))
        return out if kind == "choice_by_seat" else out[0]

    def encode(self, value: Any) -> np.ndarray:
        """The float32 block that :meth:`decode` turns into ``value``."""
        out = np.zeros(self.size, dtype=np.float32)
        if isinstance(value, dict):
            out[:] = value["raw"]
            return out
        kind = self.kind
        if kind == "numbers":
            out[:] = value if self.size > 1 else [value]
            return out
        parts = out.reshape(self.seats, self.part)
        if kind in ("cards", "cards_by_seat"):
            for p, text in zip(parts, [value] if kind == "cards" else value):
                p[[card_from_str(t) for t in text.split()]] = 1.0
        elif kind == "flags_by_seat":
            for p, text in zip(parts, value):
                p[[self.labels.index(t) for t in text.split()]] = 1.0
        else:
            for p, v in zip(parts, value if kind == "choice_by_seat" else [value]):
                if v is not None:
                    p[v if kind == "seat" else self.labels.index(v)] = 1.0
        return out


_NO_FIT = object()


def block_labels(env: Any) -> dict[str, tuple[Any, ...]]:
    """Block name -> the label of each entry of one (per-seat) one-hot part, for the blocks of
    ``env``'s game that have labels."""
    game = env.unwrapped.game
    labels: dict[str, tuple[Any, ...]] = {
        "trump": SUIT_LABELS,
        "led_suit": SUIT_LABELS,
        "phase": tuple(game.PHASES),
        "voids": tuple(SUITS),
    }
    extras = dict(game.EXTRA_FEATURES)
    n = game.num_players
    if "contract" in extras:  # Minnesota: undecided, High, Low
        labels["contract"] = ("undecided", "high", "low")
    if "grand_side" in extras:  # Minnesota: the Grand player's side, the observer's own or the other
        labels["grand_side"] = ("own", "other")
    if "bids" in extras:  # Romanian: per relative seat, bid 0..k or no bid yet
        per_seat = extras["bids"] // n
        labels["bids"] = (*range(per_seat - 1), "no bid")
    if "calls" in extras:  # Bid Whist: per relative seat, the call's action label or no call yet
        per_seat = extras["calls"] // n
        first = env.unwrapped.action_id("pass")
        labels["calls"] = (*(env.unwrapped.action_label(first + i) for i in range(per_seat - 1)), "no call")
    if "contract_level" in extras:
        labels["contract_level"] = tuple(range(1, extras["contract_level"] + 1))
    if "contract_mode" in extras:  # Bid Whist: the contract's mode, in the rules' order
        from whist_env.rules.bid_whist import MODES

        labels["contract_mode"] = tuple(MODES)
    if "direction" in extras:
        labels["direction"] = ("uptown", "downtown")
    return labels


def block_codecs(env: Any, layout: dict[str, slice]) -> dict[str, BlockCodec]:
    """Block name -> its codec, for every block of ``layout`` (an observation or state layout of
    ``env``), by the rules of the module docstring."""
    game = env.unwrapped.game
    c, n = game.NUM_CARD_ACTIONS, game.num_players
    labels = block_labels(env)
    codecs = {}
    for name, sl in layout.items():
        size = sl.stop - sl.start
        if name in SEAT_BLOCKS and size == n:
            codec = BlockCodec("seat", size)
        elif name in labels and size == len(labels[name]):
            codec = BlockCodec("choice", size, labels[name])
        elif name in labels and size == n * len(labels[name]):
            kind = "flags_by_seat" if name == "voids" else "choice_by_seat"
            codec = BlockCodec(kind, size, labels[name], seats=n)
        elif size == c:
            codec = BlockCodec("cards", size)
        elif size == n * c:
            codec = BlockCodec("cards_by_seat", size, seats=n)
        else:
            codec = BlockCodec("numbers", size)
        codecs[name] = codec
    return codecs


def decode_blocks(codecs: dict[str, BlockCodec], layout: dict[str, slice], vector: np.ndarray) -> dict[str, Any]:
    """Block name -> decoded value of ``vector``, in layout order."""
    return {name: codecs[name].decode(vector[sl]) for name, sl in layout.items()}


def encode_blocks(codecs: dict[str, BlockCodec], layout: dict[str, slice], blocks: dict[str, Any], size: int) -> np.ndarray:
    """The float32 vector of shape ``(size,)`` whose :func:`decode_blocks` is ``blocks``."""
    out = np.zeros(size, dtype=np.float32)
    for name, sl in layout.items():
        out[sl] = codecs[name].encode(blocks[name])
    return out
