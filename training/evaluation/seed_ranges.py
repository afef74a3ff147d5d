"""The three disjoint seed ranges, so that no figure is measured on the deals it was trained or tuned on.

===============  ==========================  =================================================================
range            seeds (half-open)           what draws from it
===============  ==========================  =================================================================
``REPORT``       ``[0, 10,000)``             figures README and the docs publish: ``whist eval`` and
                                             ``whist league`` (default ``--seed`` 0), ``whist zoo-export``
                                             (default 2027), the final table of ``whist train``
                                             (``eval.final_seed``, default 0), the published ablations
                                             (``benchmarks/ablation.py``, default 2027)
``DEVELOPMENT``  ``[10,000, 1,000,000)``     tuning: the in-training evaluations of ``whist train``
                                             (``eval.seed``, default 12345), search defaults
``TRAINING``     ``[2**32, 2**33)``          every deal that training plays: the env resets of self-play
                                             (``training.learn.ppo``), the teacher data of the warm start
                                             (``training.learn.warm_start``), the batched engine's generator
                                             seeds (``training.learn.vector``)
===============  ==========================  =================================================================

Two kinds of seed live here. ``REPORT`` and ``DEVELOPMENT`` hold *match seeds*: deal ``i`` of a
match is dealt from a seed derived from ``(match seed, i)`` (:mod:`training.evaluation.match`),
and a derived seed is a 32-bit integer, below ``2**32``. ``TRAINING`` holds the *deal seeds*
themselves (the ``seed`` of ``env.reset``), all at or above ``2**32``: so no evaluation deal,
whatever its match seed, is a deal that self-play or the warm start played (numpy reads a seed
``2**32 + k`` as the two words ``[k, 1]`` and a 32-bit seed ``h`` as ``[h]``, the same as
``[h, 0]``, so the two never seed the same generator). The batched engine deals from its own
torch generator, seeded from ``TRAINING``, a stream no evaluation uses. A config's top-level
``seed`` seeds the training generators, from which the deal seeds are drawn.

Two different match seeds give independent deals, as two seeds always do; ``DEVELOPMENT`` and
``REPORT`` keep the tuning and the published figures on different match seeds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SeedRange:
    """A named half-open range of integer seeds ``[start, stop)``.

    Attributes:
        name: ``"TRAINING"``, ``"DEVELOPMENT"`` or ``"REPORT"``.
        start: the first seed of the range (int).
        stop: one past the last seed (int).
        purpose: what the range is for, one line.
    """

    name: str
    start: int
    stop: int
    purpose: str

    def __contains__(self, seed: object) -> bool:
        return isinstance(seed, int) and not isinstance(seed, bool) and self.start <= seed < self.stop

    def __len__(self) -> int:
        return self.stop - self.start

    def holds_span(self, first: int, count: int = 1) -> bool:
        """Whether the ``count`` seeds ``first, first + 1, ..., first + count - 1`` all lie in the range."""
        return count >= 1 and first in self and first + count - 1 in self

    def draw(self, rng: Any) -> int:
        """One seed drawn uniformly from the range by ``rng`` (a ``numpy.random.Generator``); a Python int."""
        return int(rng.integers(self.start, self.stop))

    def __str__(self) -> str:
        return f"{self.name} [{_number(self.start)}, {_number(self.stop)})"


REPORT = SeedRange("REPORT", 0, 10_000, "the figures README and the docs publish")
"""Match seeds of the published figures: ``whist eval``/``whist league`` (default 0), ``whist zoo-export``
(default 2027), the final table of ``whist train`` (``eval.final_seed``)."""

DEVELOPMENT = SeedRange("DEVELOPMENT", 10_000, 1_000_000, "tuning: in-training evaluations, search defaults")
"""Match seeds of tuning: the in-training evaluations of ``whist train`` (``eval.seed``, default 12345),
search defaults."""

TRAINING = SeedRange("TRAINING", 2**32, 2**33, "the deals training plays: self-play and teacher data")
"""Deal seeds (``env.reset(seed=...)``) of training: self-play, the warm start's teacher data and the
batched engine's generator; all at or above ``2**32``, where no match seed's derived deal seed lies."""

#: every range, lowest first
RANGES: tuple[SeedRange, ...] = (REPORT, DEVELOPMENT, TRAINING)


def range_of(seed: int, count: int = 1) -> SeedRange:
    """The range that holds the seed ``seed`` (``count == 1``) or the span of ``count`` seeds
    ``seed .. seed + count - 1``.

    Args:
        seed: an integer seed (not a bool).
        count: how many consecutive seeds, at least 1.
    Returns:
        The :class:`SeedRange` holding them all.
    Raises:
        ValueError: ``seed`` is not an int, ``count < 1``, or the seeds lie in no range or
            straddle two; one line that names the ranges.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"a seed must be an integer, got {seed!r}")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"a seed span holds at least 1 seed, got count={count!r}")
    for r in RANGES:
        if r.holds_span(seed, count):
            return r
    raise ValueError(f"{_where(seed, count)}; the seed ranges are {describe()}")


def check_range(seed: int, expected: SeedRange, what: str = "seed", count: int = 1) -> int:
    """``seed`` unchanged when it (or its span of ``count`` seeds) lies in ``expected``.

    Args:
        seed: the seed to check.
        expected: the range it must lie in.
        what: how the message names it, e.g. ``"eval.seed"`` or ``"--seed"``.
        count: how many consecutive seeds from ``seed``.
    Raises:
        ValueError: ``seed`` is not an int, ``count < 1``, or it lies elsewhere: one line naming ``what``, where it lies and the range
            expected, e.g. ``eval.seed 2,027 lies in REPORT [0, 10,000) (the figures README and
            the docs publish); expected a seed in DEVELOPMENT [10,000, 1,000,000) (tuning: ...)``.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"{what} must be an integer seed, got {seed!r}")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"a seed span holds at least 1 seed, got count={count!r}")
    found = next((r for r in RANGES if r.holds_span(seed, count)), None)
    if found is not expected:
        where = f"lies in {found} ({found.purpose})" if found is not None else _where(seed, count, subject=False)
        raise ValueError(f"{what} {seed:,}{'' if count == 1 else f' (and the {count - 1:,} seeds after it)'} {where}; "
                         f"expected a seed in {expected} ({expected.purpose})")
    return seed


def describe() -> str:
    """The ranges as one line: ``REPORT [0, 10,000), DEVELOPMENT [10,000, 1,000,000), TRAINING [2**32, 2**33)``."""
    return ", ".join(str(r) for r in RANGES)


def _number(n: int) -> str:
    """``n`` as text: ``2**32`` for a large power of two, else with thousands separators."""
    return f"2**{n.bit_length() - 1}" if n >= 2**20 and n & (n - 1) == 0 else f"{n:,}"


def _where(seed: Any, count: int, subject: bool = True) -> str:
    """``""`` when the seeds lie in one range, else what is wrong with them (with ``subject``:
    a sentence that starts with the seeds)."""
    if any(r.holds_span(seed, count) for r in RANGES):
        return ""
    names = [r.name for r in RANGES for s in (seed, seed + count - 1) if s in r]
    if count == 1:
        text = "lies in no seed range"
    elif len(set(names)) == 2:
        text = f"straddle {names[0]} and {names[-1]}"
    else:
        text = "do not lie in one seed range"
    if not subject:
        return text
    return f"seed {seed:,} {text}" if count == 1 else f"seeds {seed:,} .. {seed + count - 1:,} {text}"
