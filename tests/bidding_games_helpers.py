"""Shared helpers for the Romanian Whist and Bid Whist tests (RULES.md §5, §6).

They drive the rules classes directly with fixed deals, steer a hand to given trick counts,
and compute legal sets independently of the engine from the text of RULES.md §1.4, §5.6 and
§6.3.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence

from new_games_helpers import (  # noqa: F401  (re-exported to the Romanian and Bid Whist tests)
    DECK_52,
    DECK_54,
    c,
    last_trick_winner,
    lowest_legal,
    new_game,
    play_until_last_trick,
)

from whist_env.engine.cards import card_to_str, cards_of
from whist_env.rules.base import TrickTakingGame

RANKS = "23456789TJQKA"


def texts(mask: int) -> set[str]:
    """Card texts of a bitmask."""
    return {card_to_str(x) for x in cards_of(mask)}


def romanian_deck_texts(num_players: int) -> list[str]:
    """The 8 × N top cards of RULES.md §5.2 as texts, suit by suit."""
    ranks = RANKS[13 - 2 * num_players :]
    return [r + s for s in "CDHS" for r in ranks]


def fill_hands(
    required: Mapping[int, Iterable[str]],
    *,
    num_seats: int,
    size: int,
    deck: Sequence[str],
    voids: Mapping[int, str] | None = None,
    reserve: Iterable[str] = (),
) -> tuple[dict[int, list[str]], list[str]]:
    """Hands of ``size`` cards per seat holding the ``required`` cards and no card of the suits
    in ``voids[seat]`` (jokers have no suit here); the other cards are spread deterministically.
    Returns the hands and the cards left over (``reserve`` first, then deck order)."""
    voids = {s: set(v) for s, v in (voids or {}).items()}
    hands = {s: list(required.get(s, ())) for s in range(num_seats)}
    used = {t for h in hands.values() for t in h} | set(reserve)
    rest = list(reserve)
    for text in deck:
        if text in used:
            continue
        suit = None if text.startswith("JK") else text[-1]
        eligible = [s for s in range(num_seats) if len(hands[s]) < size and suit not in voids.get(s, ())]
        if not eligible:
            rest.append(text)
            continue
        hands[min(eligible, key=lambda s: len(hands[s]))].append(text)
    for s in range(num_seats):
        assert len(hands[s]) == size, (s, hands[s])
    return hands, rest


def act(game: TrickTakingGame, *labels: str):
    """Apply actions given as labels (``"QH"``, ``"bid:2"``, ``"pass"``); return the last outcome."""
    outcome = None
    for label in labels:
        outcome = game.apply(game.action_id(label))
    return outcome


def finish_with_tricks(game: TrickTakingGame, group: Iterable[int], took: int, before_last_card=None):
    """Play the hand out so that the seats of ``group`` end with ``took`` tricks together (the
    other seats with the rest); return the outcome of the last card.

    Plays the lowest legal cards up to the last trick, then sets the public ``tricks_won`` so that
    the real last trick completes the requested counts: the group's tricks go to one of its seats
    (the last trick's winner when it is in the group), the others' tricks likewise. When the last
    trick's winner would have to end with no trick, the one-card hands are permuted among the
    seats (any one-card hand is legal) until a feasible winner wins it. ``before_last_card``
    (optional) is called as ``before_last_card(game, winner)`` just before the hand's last card.
    """
    group = set(group)
    play_until_last_trick(game)
    n = game.num_players
    total = sum(game.tricks_won) + 1
    others = [s for s in range(n) if s not in group]
    last = list(game.hands)
    for perm in itertools.permutations(range(n)):
        game.hands = [last[p] for p in perm]
        winner = last_trick_winner(game)
        if (winner in group and took >= 1) or (winner not in group and total - took >= 1):
            break
    else:  # pragma: no cover - a test set-up error
        raise AssertionError(f"no arrangement of the last cards lets {group} end with {took} of {total} tricks")
    final = [0] * n
    final[winner if winner in group else min(group)] += took
    if others:
        final[winner if winner not in group else min(others)] += total - took
    final[winner] -= 1
    game.tricks_won = final
    for _ in range(n - 1):
        game.apply(lowest_legal(game))
    if before_last_card is not None:
        before_last_card(game, winner)
    outcome = game.apply(lowest_legal(game))
    assert outcome.hand_points is not None
    assert outcome.last_trick["winner"] == winner
    return outcome


# ------------------------------------------------------------------ independent legality
def romanian_expected_legal(hand: Iterable[str], trick: Sequence[str], trump: str | None) -> set[str]:
    """RULES.md §5.6: follow suit; void in trump deals → a trump if held; else anything."""
    hand = set(hand)
    if not trick:
        return hand
    led = trick[0][-1]
    same = {t for t in hand if t[-1] == led}
    if same:
        return same
    if trump is not None:
        trumps = {t for t in hand if t[-1] == trump}
        if trumps:
            return trumps
    return hand


def bid_whist_eff_suit(card: str, trump: str | None, specials: Iterable[str]) -> str | None:
    """RULES.md §6.3: jokers and wild deuces belong to trump in trump contracts, have no suit in
    no-trump; every other card keeps its natural suit."""
    if card in set(specials):
        return trump
    return card[-1]


def bid_whist_expected_legal(hand: Iterable[str], trick: Sequence[str], trump: str | None, specials: Iterable[str]) -> set[str]:
    """RULES.md §1.4 / §6.3: the led suit is the effective suit of the first card that has one;
    follow it if able, else any card (free discard)."""
    specials = list(specials)
    hand = set(hand)
    led = next((s for s in (bid_whist_eff_suit(t, trump, specials) for t in trick) if s is not None), None)
    if led is None:
        return hand
    same = {t for t in hand if bid_whist_eff_suit(t, trump, specials) == led}
    return same or hand
