"""Korn & Graubard's clustered interval: what the membership audit bounded the pooled TPR with
before issue 44 (item 3), kept as the calibration study's comparator.

Korn & Graubard, "Confidence intervals for proportions with small expected number of positive
counts estimated from survey data", Survey Methodology 24, 1998 (recommended for clustered
proportions near 0 by Dean & Pagano, J. Survey Statistics and Methodology 3, 2015): runs of one
fit are one cluster. The ratio ``p = sum y_i / sum m_i`` over clusters (``y_i`` hits of ``m_i``
runs) has the linearised variance ``v = c / (c - 1) sum (y_i - p m_i)^2 / (sum m_i)^2`` over
the ``c`` clusters that have runs; the design effect ``d = max(1, v / (p (1 - p) / n))`` (1
when ``p`` is 0 or 1) gives the effective size ``n / d``, shrunk by ``(z_{a/2} / t_{a/2, c -
1})^2`` for the ``c - 1`` degrees of freedom of ``v``, and the Clopper-Pearson interval is
taken at the effective size and ``p`` times it (non-integer counts through the beta quantiles).
It estimates the runs' correlation from the clusters, so it under-covers when few fits carry
the signal (``results/calibration.md``); :mod:`risk._audit_bound` replaced it.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from risk import Interval


def _effective(hits: np.ndarray, trials: np.ndarray, level: float) -> tuple[float, float]:
    """(effective successes, effective size) (module docstring)."""
    n, x = float(trials.sum()), float(hits.sum())
    used = trials > 0
    c = int(used.sum())
    if n == 0:
        return 0.0, 0.0
    p = x / n
    deff = 1.0
    if 0.0 < p < 1.0 and c > 1:
        resid = hits[used] - p * trials[used]
        v = c / (c - 1) * float(np.sum(resid**2)) / n**2
        deff = max(1.0, v / (p * (1 - p) / n))
    n_eff = n / deff
    if c > 1:
        alpha = 1.0 - level
        n_eff *= (stats.norm.ppf(1 - alpha / 2) / stats.t.ppf(1 - alpha / 2, c - 1)) ** 2
    return p * n_eff, n_eff


def clustered_interval(hits: np.ndarray, trials: np.ndarray, level: float = 0.95) -> Interval:
    """Korn & Graubard's interval of ``sum(hits) / sum(trials)`` with one entry per cluster
    (a shadow fit): ``hits[i]`` of its ``trials[i]`` runs were called members (module
    docstring)."""
    hits, trials = np.asarray(hits, dtype=float), np.asarray(trials, dtype=float)
    x, n = _effective(hits, trials, level)
    alpha = 1.0 - level
    if n <= 0:
        return Interval(0.0, 1.0, level, "Korn-Graubard (clustered by fit)")
    low = 0.0 if x <= 0 else float(stats.beta.ppf(alpha / 2, x, n - x + 1))
    high = 1.0 if x >= n else float(stats.beta.ppf(1 - alpha / 2, x + 1, n - x))
    return Interval(low, high, level, "Korn-Graubard (clustered by fit)")
