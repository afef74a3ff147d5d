"""The statistics every evaluation reports, in one place (95% level throughout).

* :func:`wilson_interval`, :func:`wilson_counts`: Wilson's score interval of a share (Wilson,
  JASA 1927), used for win rates, exact-bid and contract shares, and the Wilson fallback of a
  t-interval with no width.
* :func:`t_summary`: mean, Student t-interval and one-sample t-test p-value of per-deal values
  (duplicate-deal evaluation treats each deal as one observation).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
ALPHA = 0.05  # two-sided significance level of the t-tests (1 - CONFIDENCE)


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


def t_summary(values: np.ndarray) -> tuple[float, tuple[float, float], float]:
    """Mean, 95% t-interval and two-sided p-value of "mean = 0" for per-deal values.

    Args:
        values: float array of shape (n,).
    Returns:
        ``(mean, (low, high), p)``; the interval and p are ``nan`` for ``n < 2``; with no spread
        the interval has no width and p is 1 when the mean is 0, else 0.
    """
    n = len(values)
    mean = float(values.mean()) if n else math.nan
    if n < 2:
        return mean, (math.nan, math.nan), math.nan
    sd = float(values.std(ddof=1))
    if sd == 0.0:  # every deal identical (e.g. a deterministic agent against itself)
        return mean, (mean, mean), 1.0 if mean == 0.0 else 0.0
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * sd / math.sqrt(n)
    p = float(stats.ttest_1samp(values, 0.0).pvalue)
    return mean, (mean - half, mean + half), p
