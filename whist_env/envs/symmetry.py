"""Suit symmetry of the observation, the global state and the actions (DESIGN.md "Observations").

The rules of every game treat the suits alike, up to what the rules' ``INTERCHANGEABLE_SUITS``
say: all four suits in most games; Minnesota Whist's bid cards tell black from red (RULES.md
§3.2), so there only clubs and spades, and diamonds and hearts, may trade places. Relabelling
the suits of a position by such a permutation gives an equally valid position, with the same
values and the correspondingly relabelled best play. Learners use it twice:

* **canonical relabelling**: the suits are renamed so that trump is suit 0 (clubs) and the other
  suits keep their order, so that a network need not learn the same play once per trump suit;
* **augmentation**: a random permutation of interchangeable suits turns one training sample
  into another.

A permutation ``sigma`` is a tuple of 4 ints: suit ``s`` becomes suit ``sigma[s]``. Index arrays
are *gather* indices: ``new = old[index]``. What moves: every card block of the layout (the 52
natural cards; the jokers stay), the ``trump`` and ``led_suit`` one-hots (their no-trump / no-suit
entry stays), the ``voids`` flags and the actions that name a suit (card actions, Bid Whist's
``trump:<suit>`` declarations).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np

from whist_env.engine.cards import NUM_RANKS, NUM_STANDARD_CARDS, NUM_SUITS, SUITS

#: Layout entries holding 0/1 card blocks besides the variant's public and hidden card sets.
CARD_BLOCKS = ("hand", "played", "trick", "unseen", "hands")
#: Layout entries whose first four entries (of each group of four, or of five) are suits.
SUIT_BLOCKS = ("trump", "led_suit", "voids")


def card_index(sigma: tuple[int, ...], num_cards: int) -> np.ndarray:
    """Gather index int64 ``(num_cards,)`` of a card block relabelled by ``sigma``."""
    index = np.arange(num_cards)
    inverse = np.argsort(sigma)
    for new_suit in range(NUM_SUITS):
        old = inverse[new_suit]
        index[new_suit * NUM_RANKS : (new_suit + 1) * NUM_RANKS] = np.arange(old * NUM_RANKS, (old + 1) * NUM_RANKS)
    return index


class SuitSymmetry:
    """Index arrays relabelling the suits of one game's observations, states and actions.

    Args:
        env: a raw environment of the game (its layouts, rules and action labels are read;
            nothing is stepped).
    Attributes:
        permutations: the allowed permutations (tuples of 4 ints), identity first.
    """

    def __init__(self, env: Any) -> None:
        game = env.game
        self.num_cards = int(game.NUM_CARD_ACTIONS)
        self.num_actions = int(env.action_space(env.possible_agents[0]).n)
        self.obs_layout = env.observation_layout()
        self.state_layout = env.state_layout()
        self.card_blocks = set(CARD_BLOCKS) | set(game.PUBLIC_CARD_SETS) | set(game.HIDDEN_CARD_SETS)
        groups = [tuple(g) for g in game.INTERCHANGEABLE_SUITS]
        self.permutations = [p for p in itertools.permutations(range(NUM_SUITS))
                             if all(p[s] in g for g in groups for s in g)]
        self.all_suits = len(self.permutations) == 24
        # actions past the cards that name a suit: "<prefix>:<suit letter>"
        self._suit_actions: dict[tuple[str, int], int] = {}
        for a in range(self.num_cards, self.num_actions):
            m = re.fullmatch(r"(.*):([CDHS])", env.action_label(a))
            if m:
                self._suit_actions[(m.group(1), SUITS.index(m.group(2)))] = a
        self._action_suit = {a: key for key, a in self._suit_actions.items()}

    def _vector_index(self, layout: dict[str, slice], size: int, sigma: tuple[int, ...]) -> np.ndarray:
        index = np.arange(size)
        cards = card_index(sigma, self.num_cards)
        inverse = np.argsort(sigma)
        for name, sl in layout.items():
            if name in self.card_blocks:
                for start in range(sl.start, sl.stop, self.num_cards):
                    index[start : start + self.num_cards] = start + cards
            elif name in SUIT_BLOCKS:
                step = 4 if name == "voids" else 5
                for start in range(sl.start, sl.stop, step):
                    index[start : start + NUM_SUITS] = start + inverse
        return index

    def observation_index(self, sigma: tuple[int, ...]) -> np.ndarray:
        """Gather index int64 ``(D,)``: ``obs[index]`` is the observation with suits relabelled."""
        return self._vector_index(self.obs_layout, max(sl.stop for sl in self.obs_layout.values()), sigma)

    def state_index(self, sigma: tuple[int, ...]) -> np.ndarray:
        """Gather index int64 ``(Ds,)`` of the global state (``env.state()``)."""
        return self._vector_index(self.state_layout, max(sl.stop for sl in self.state_layout.values()), sigma)

    def action_index(self, sigma: tuple[int, ...]) -> np.ndarray:
        """Gather index int64 ``(A,)``: ``mask[index]`` is the relabelled action mask, and the
        relabelled action ``a`` is the original action ``index[a]``."""
        index = np.arange(self.num_actions)
        index[: self.num_cards] = card_index(sigma, self.num_cards)
        inverse = np.argsort(sigma)
        for a, (prefix, suit) in self._action_suit.items():
            index[a] = self._suit_actions[(prefix, int(inverse[suit]))]
        return index

    def canonical(self, trump: int | None) -> tuple[int, ...]:
        """The permutation that makes ``trump`` suit 0, the other suits keeping their order
        (the identity without trump, or where not all suits are interchangeable)."""
        if trump is None or not self.all_suits:
            return tuple(range(NUM_SUITS))
        others = [s for s in range(NUM_SUITS) if s != trump]
        sigma = [0] * NUM_SUITS
        sigma[trump] = 0
        for k, s in enumerate(others, start=1):
            sigma[s] = k
        return tuple(sigma)

    def tables(self, sigmas: list[tuple[int, ...]]) -> dict[str, np.ndarray]:
        """Gather tables int64, one row per permutation of ``sigmas``: ``observation`` ``(P, D)``,
        ``state`` ``(P, Ds)``, ``action`` ``(P, A)`` and ``action_inverse`` ``(P, A)`` (the
        relabelled action of each original action)."""
        actions = np.stack([self.action_index(s) for s in sigmas])
        return {"observation": np.stack([self.observation_index(s) for s in sigmas]),
                "state": np.stack([self.state_index(s) for s in sigmas]),
                "action": actions, "action_inverse": np.argsort(actions, axis=1)}

    def canonical_tables(self) -> dict[str, np.ndarray]:
        """:meth:`tables` of the canonical relabelling, one row per entry of the observation's
        ``trump`` one-hot (C, D, H, S, no trump), plus ``trump_at`` ``(1,)``: where that
        one-hot starts in the observation (and in the state, which begins with it)."""
        sigmas = [self.canonical(t) for t in range(NUM_SUITS)] + [self.canonical(None)]
        return {**self.tables(sigmas), "trump_at": np.array([self.obs_layout["trump"].start])}


def relabel_card(card: int, sigma: tuple[int, ...]) -> int:
    """The card id with its suit relabelled (jokers unchanged)."""
    if card >= NUM_STANDARD_CARDS:
        return card
    return sigma[card // NUM_RANKS] * NUM_RANKS + card % NUM_RANKS
