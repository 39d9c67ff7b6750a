"""Bounds of the pooled TPR and FPR that hold whatever the runs of one fit do together (issue 44,
item 3): the fit is the independent unit of the membership audit's game.

In the shared design every target is scored on each test fit, so one fit's runs move together
(a generator that leaks everything or nothing depending on its fit is the extreme case), and an
interval that treats runs as independent, or estimates their correlation from a few clusters
(Korn & Graubard's design effect, used before), under-covers when few fits carry the signal.
What *is* independent is the fits: given the calibration fits (which fix the attack, the
standardisation and the thresholds), the test fits are drawn independently and alike, so each
fit's hit share ``x_i = h_i / r_i`` (``h_i`` of its ``r_i`` member runs called members) is an
independent draw of a variable bounded in ``[0, 1]`` whose mean is the TPR the audit bounds
(each fit weighted alike: the expected share of a fresh fit's members that are caught; the
pooled ``sum h / sum r`` the audit prints estimates the same figure when a fit's number of
members says nothing about its hit rate, which the design makes so).

**The bound** (Waudby-Smith & Ramdas, "Estimating means of bounded random variables by
betting", JRSS-B 86(1), 2024: the capital processes of their section 4, the predictable
plug-in bets of eq. (26) in their fixed-sample-size form, section 4.3): to test ``mean >= m``,
bet against it, fit after fit, with the capital ``K_t(m) = prod_{i <= t} (1 - lambda_i (x_i -
m))``; under ``mean = m`` (or above) it is a non-negative supermartingale from 1, so by Ville's
inequality it ever reaches ``1 / alpha`` with probability at most ``alpha``. The one-sided
upper bound at ``1 - alpha`` is the smallest ``m`` never rejected; the lower bound bets the
other way, ``prod (1 + lambda_i (x_i - m))``. The bets ``lambda_i = min(1, sqrt(2 ln(1 /
alpha) / (n s_{i-1}^2)))`` read only the fits before (``s^2`` the running variance shrunk to
1/4, the running mean to 1/2, one pseudo-observation each), truncated at 1 (so the capital
stays positive for every ``m`` in ``(0, 1)``); the running intersection over ``t`` is Ville's
too. A two-sided interval at ``level`` is the two one-sided bounds at ``(1 - level) / 2``. The
figures agree with the authors' own ``confseq.betting.betting_ci`` (same bets, same
truncation, running intersection; compared in ``experiments/release_audit/betting_peer.py``).

No bound valid for any within-fit dependence can be small with few fits: ``n`` fits whose
shares are all 0 are seen with probability ``(1 - q)^n`` from a generator that leaks every run
of a share ``q`` of its fits, so the upper bound is at least ``1 - alpha^(1 / n)`` (0.09 with
50 test fits at 98.3 %). The audit therefore needs more test fits than the clustered interval
did (docs/audit.md, "The limit and the smallest game" and "What 300 shadows cost").

**One run per fit** (the per-target design, or a shared fit holding one target): the runs are
independent Bernoulli draws and the exact Clopper-Pearson bounds are used.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from risk._result import Interval

BISECTIONS = 40  # halvings of [0, 1] for a bound: far below any figure the audit prints
METHOD = "betting over fits (Waudby-Smith & Ramdas 2024)"


def bets(shares: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in bets for ``shares`` (fits along the last axis) at one-sided
    level ``alpha``: each reads only the fits before it (module docstring)."""
    x = np.asarray(shares, dtype=float)
    n = x.shape[-1]
    t = np.arange(1, n + 1)
    mean = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    var = (0.25 + np.cumsum((x - mean) ** 2, axis=-1)) / (t + 1)
    before = np.concatenate((np.full(x.shape[:-1] + (1,), 0.25), var[..., :-1]), axis=-1)
    return np.minimum(1.0, np.sqrt(2.0 * math.log(1.0 / alpha) / (n * before)))


def max_log_capital(x: np.ndarray, lam: np.ndarray, m: float, sign: float) -> np.ndarray:
    """``max_t ln K_t(m)`` along the last axis of ``x`` (the fits; rows of a 2-D ``x`` are
    separate audits), betting ``sign`` = -1 against a mean of ``m`` or more (the upper bound),
    +1 against one of ``m`` or less."""
    factors = 1.0 + sign * lam * (x - m)
    with np.errstate(divide="ignore"):
        return np.cumsum(np.log(np.maximum(factors, 0.0)), axis=-1).max(axis=-1)


def _bisect(x: np.ndarray, alpha: float, sign: float) -> float:
    """The bound of one side: bisection on ``m``, where rejection is monotone in ``m``."""
    lam = bets(x, alpha)
    need = math.log(1.0 / alpha)
    low, high = 0.0, 1.0
    for _ in range(BISECTIONS):
        mid = 0.5 * (low + high)
        rejected = bool(max_log_capital(x, lam, mid, sign) >= need)
        if sign < 0:  # upper bound: means at and above a rejected m are rejected
            low, high = (low, mid) if rejected else (mid, high)
        else:  # lower bound: means at and below a rejected m are rejected
            low, high = (mid, high) if rejected else (low, mid)
    return high if sign < 0 else low


def clopper_pearson_upper(k: Any, n: Any, confidence: float) -> Any:
    """Clopper & Pearson's exact one-sided upper bound of ``k / n`` at ``confidence``
    (``Beta(confidence; k + 1, n - k)``, 1 where ``k = n``; vectorised over ``k`` and ``n``)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(k >= n, 1.0, stats.beta.ppf(confidence, k + 1, n - k))


def clopper_pearson_lower(k: Any, n: Any, confidence: float) -> Any:
    """The lower bound of :func:`clopper_pearson_upper` (``Beta(1 - confidence; k, n - k +
    1)``, 0 where ``k = 0``)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(k <= 0, 0.0, stats.beta.ppf(1.0 - confidence, k, n - k + 1))


def _shares(hits: np.ndarray, trials: np.ndarray) -> tuple[np.ndarray, bool]:
    """The hit shares of the fits that have runs, and whether every such fit has exactly one."""
    hits, trials = np.asarray(hits, dtype=float), np.asarray(trials, dtype=float)
    used = trials > 0
    return hits[used] / trials[used], bool(np.all(trials[used] == 1))


def _bound(x: np.ndarray, single: bool, confidence: float, sign: float) -> float:
    """One side (``sign`` as :func:`max_log_capital`) at ``confidence`` from the fits' shares:
    Clopper-Pearson where every fit is one run, betting otherwise; 1 (upper) or 0 (lower)
    without a fit."""
    if x.size == 0:
        return 1.0 if sign < 0 else 0.0
    if single:
        side = clopper_pearson_upper if sign < 0 else clopper_pearson_lower
        return float(side(x.sum(), x.size, confidence))
    return _bisect(x, 1.0 - confidence, sign)


def upper_bound(hits: np.ndarray, trials: np.ndarray, confidence: float) -> float:
    """The one-sided upper bound at ``confidence`` of the mean hit share over fits, ``hits[i]``
    of ``trials[i]`` runs of fit ``i`` called members (module docstring). 1 with no runs."""
    return _bound(*_shares(hits, trials), confidence, -1.0)


def lower_bound(hits: np.ndarray, trials: np.ndarray, confidence: float) -> float:
    """The one-sided lower bound at ``confidence``, as :func:`upper_bound`. 0 with no runs."""
    return _bound(*_shares(hits, trials), confidence, 1.0)


def fit_interval(hits: np.ndarray, trials: np.ndarray, level: float = 0.95) -> Interval:
    """The two-sided interval at ``level``: each end a one-sided bound at ``(1 + level) / 2``
    (module docstring)."""
    one_side = 0.5 * (1.0 + level)
    x, single = _shares(hits, trials)
    method = "Clopper-Pearson (one run per fit)" if single else METHOD
    return Interval(_bound(x, single, one_side, 1.0), _bound(x, single, one_side, -1.0),
                    level, method)


def within_limit(shares: np.ndarray, limit: float, confidence: float) -> np.ndarray:
    """Per row of ``shares`` (simulated audits x fits, every fit with runs): whether the
    one-sided upper bound at ``confidence`` is at most ``limit``, i.e. ``limit`` is rejected
    as the mean (for the no-leak model, :func:`risk._audit_stats.null_refusal_rate`)."""
    alpha = 1.0 - confidence
    capital = max_log_capital(shares, bets(shares, alpha), limit, -1.0)
    return capital >= math.log(1.0 / alpha)
