"""The excess test of experiments/release_audit/excess_power.py against a slow, obviously correct
version, and its binomial column against scipy's exact one-sided binomial test."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from experiments.release_audit import excess_power as ep


def _slow_p(n: int, m: int, x: int, y: int) -> float:
    """The p-value of one outcome by loops: the statistic at ``(x, y)`` made monotone by its
    largest value over ``x' <= x, y' >= y``, its tail probability summed outcome by outcome,
    the largest over the nuisance grid."""
    def z(a: int, b: int) -> float:
        p1, p0 = (a + 0.5) / (n + 1), (b + 0.5) / (m + 1)
        return (p1 - max(p0, ep.FPR) - ep.MARGIN) / math.sqrt(p1 * (1 - p1) / n
                                                              + p0 * (1 - p0) / m)

    def mono(a: int, b: int) -> float:
        return max(z(i, j) for i in range(a + 1) for j in range(b, m + 1))

    seen = mono(x, y)
    best = 0.0
    for fpr in [0.0, *np.linspace(ep.FPR, 1 - ep.MARGIN, ep.GRID)]:
        tpr = max(fpr, ep.FPR) + ep.MARGIN
        total = sum(stats.binom.pmf(a, n, tpr) * stats.binom.pmf(b, m, fpr)
                    for a in range(n + 1) for b in range(m + 1) if mono(a, b) >= seen)
        best = max(best, total)
    return best


def test_the_vectorised_excess_p_values_equal_the_slow_ones() -> None:
    n, m = 6, 5
    fast = ep.excess_p_values(n, m)
    for x, y in [(0, 0), (6, 0), (4, 1), (3, 5), (6, 5), (2, 2)]:
        assert math.isclose(fast[x, y], _slow_p(n, m, x, y), rel_tol=1e-9, abs_tol=1e-12)


def test_the_excess_test_keeps_its_level_and_rises_with_the_member_hits() -> None:
    p = ep.excess_p_values(25, 25)
    assert (np.diff(p, axis=0) <= 1e-12).all()   # more member hits: smaller p
    assert (np.diff(p, axis=1) >= -1e-12).all()  # more non-member hits: larger p
    for fpr in (0.0, 0.01, 0.1, 0.3):
        assert ep._rejected(p, 25, 25, max(fpr, ep.FPR) + ep.MARGIN, fpr, 0.05) <= 0.05 + 1e-9


def test_the_binomial_column_is_the_exact_one_sided_binomial_test() -> None:
    expected = [stats.binomtest(x, 75, ep.LIMIT, alternative="greater").pvalue
                for x in range(76)]
    assert np.allclose(ep.binomial_p_values(75), expected, rtol=1e-9, atol=0)
