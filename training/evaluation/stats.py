"""The statistics every evaluation reports, in one place (95% level throughout).

* :func:`wilson_interval`, :func:`wilson_counts`: Wilson's score interval of a share (Wilson,
  JASA 1927), used for win rates, exact-bid and contract shares, and for a win rate where there is
  no t-interval (too few deals, or every deal the same).
* :func:`mean_summary` (and its tuple form :func:`t_summary`): mean, Student t-interval and
  one-sample t-test p-value of per-deal values (duplicate-deal evaluation treats each deal as one
  observation), or no interval and no test where the t-interval cannot be trusted.

When there is no t-interval. The t-interval and the t-test assume a mean that is close to normally
distributed. Per-deal values of a card game are discrete and often skewed, so below
:data:`MIN_DEALS` deals (15: the usual textbook rule, e.g. Moore, McCabe & Craig, *Introduction
to the Practice of Statistics*: "n < 15: use t only if the data are close to normal") no interval
and no p-value are given. Nor are they when every deal gave the same value: the sample variance is
0 and the t-interval would have no width, claiming certainty that a few deals cannot give (three
deals of -1 point a hand said "[-1.000, -1.000], p < 1e-4"). No distribution-free interval
replaces them here, because the range of the points of a hand differs from game to game (a
bootstrap has no width either when every value is the same). Shares (win rates) have Wilson's
interval instead, which stays honest at any ``n >= 1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
ALPHA = 0.05  # two-sided significance level of the t-tests (1 - CONFIDENCE)
#: Fewest values (deals) for a t-interval and a t-test (see the module docstring).
MIN_DEALS = 15


def wilson_interval(share: float, n: int) -> tuple[float, float]:
    """95% Wilson score interval of a share observed over ``n`` trials (the share may be
    fractional, e.g. with ties counted half); ``(low, high)`` within [0, 1]."""
    z = float(stats.norm.ppf(0.5 + CONFIDENCE / 2))
    denom = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / denom
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson_counts(successes: int, trials: int) -> tuple[float, float]:
    """95% Wilson score interval of ``successes`` out of ``trials`` (``(nan, nan)`` for none)."""
    if trials <= 0:
        return math.nan, math.nan
    return wilson_interval(successes / trials, trials)


@dataclass(frozen=True)
class MeanSummary:
    """The mean of per-deal values with its 95% t-interval and t-test, when they can be trusted.

    Attributes:
        mean: the mean (``nan`` for no values), in the values' unit (e.g. points per hand).
        ci: ``(low, high)``, the 95% Student t-interval of the mean; ``(nan, nan)`` when
            ``note`` is not empty.
        p_value: two-sided p-value of the one-sample t-test of "mean = 0"; ``nan`` when ``note``
            is not empty.
        n: number of values.
        note: ``""`` when ``ci`` and ``p_value`` are given, else why not:
            ``"too few deals (3 < 15)"`` or ``"no spread (every deal -1)"``.
    """

    mean: float
    ci: tuple[float, float]
    p_value: float
    n: int
    note: str = ""

    @property
    def significant(self) -> bool:
        """``p_value < ALPHA`` (``False`` when there is no test)."""
        return bool(math.isfinite(self.p_value) and self.p_value < ALPHA)


def mean_summary(values: np.ndarray | list[float], min_n: int = MIN_DEALS) -> MeanSummary:
    """Mean, 95% t-interval and two-sided p-value of "mean = 0" for per-deal values.

    Args:
        values: float array of shape ``(n,)``, one value per deal.
        min_n: fewest values for an interval and a test (default :data:`MIN_DEALS`; at least 2).
    Returns:
        a :class:`MeanSummary`; with fewer than ``min_n`` values, or every value the same (no
        sample variance), the interval and p-value are ``nan`` and ``note`` says why (the
        module docstring: why no other interval replaces them).
    Raises:
        ValueError: ``values`` is not one-dimensional, holds a value that is not finite, or
            ``min_n < 2``.
    """
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError("values must be finite numbers")
    if min_n < 2:
        raise ValueError(f"min_n must be >= 2 (a t-interval needs a sample variance), got {min_n}")
    n = len(array)
    mean = float(array.mean()) if n else math.nan
    none = (math.nan, math.nan)
    if n < min_n:
        return MeanSummary(mean, none, math.nan, n, f"too few deals ({n} < {min_n})")
    sd = float(array.std(ddof=1))
    if sd == 0.0:  # every deal identical (e.g. a deterministic agent against itself)
        return MeanSummary(mean, none, math.nan, n, f"no spread (every deal {mean:g})")
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * sd / math.sqrt(n)
    p = float(stats.ttest_1samp(array, 0.0).pvalue)
    return MeanSummary(mean, (mean - half, mean + half), p, n)


def t_summary(values: np.ndarray) -> tuple[float, tuple[float, float], float]:
    """:func:`mean_summary` as a tuple ``(mean, (low, high), p)`` (``nan`` interval and ``p``
    below :data:`MIN_DEALS` values or with no spread)."""
    summary = mean_summary(values)
    return summary.mean, summary.ci, summary.p_value
