"""The membership audit's bound over fits (risk._audit_bound): against a slow loop written from
Waudby-Smith & Ramdas (2024), against scipy where each fit is one run, against values worked by
hand, and its coverage, by simulation, of the leak that moves a whole fit (issue 44, item 3).
The authors' own code agrees to its grid step: experiments/release_audit/betting_peer.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from risk._audit_bound import fit_interval, lower_bound, upper_bound, within_limit
from tests.examples import examples


def _slow_capital(shares: list[float], m: float, alpha: float, sign: float) -> float:
    """max over t of ln K_t(m), fit by fit: the bet from the fits before (shrunk running mean
    and variance, one pseudo-observation at 1/2 and 1/4), truncated at 1."""
    n, total, mean_sq, best, log_k = len(shares), 0.0, 0.0, -math.inf, 0.0
    var_before = 0.25
    for t, x in enumerate(shares, start=1):
        lam = min(1.0, math.sqrt(2 * math.log(1 / alpha) / (n * var_before)))
        factor = 1 + sign * lam * (x - m)
        log_k += math.log(factor) if factor > 0 else -math.inf
        best = max(best, log_k)
        total += x
        mean = (0.5 + total) / (t + 1)
        mean_sq += (x - mean) ** 2
        var_before = (0.25 + mean_sq) / (t + 1)
    return best


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(1, 12)), min_size=2, max_size=40),
       st.sampled_from([0.9, 0.95, 1 - 0.05 / 3]))
def test_the_bounds_are_where_a_slow_loop_starts_and_stops_rejecting(fits, confidence):
    runs = np.array([float(max(r, 2)) for _, r in fits])  # at least 2 runs: the betting path
    hits = np.array([float(min(h, r)) for (h, _), r in zip(fits, runs, strict=True)])
    shares = list(hits / runs)
    alpha = 1 - confidence
    need = math.log(1 / alpha)
    up, low = upper_bound(hits, runs, confidence), lower_bound(hits, runs, confidence)
    assert 0.0 <= low <= float(np.mean(shares)) <= up <= 1.0
    # the upper bound: a larger mean is rejected, a smaller one (by a hair) is not
    if up < 1.0 - 1e-6:
        assert _slow_capital(shares, up + 1e-6, alpha, -1.0) >= need
    if up > 1e-6:
        assert _slow_capital(shares, up - 1e-6, alpha, -1.0) < need
    if low > 1e-6:
        assert _slow_capital(shares, low - 1e-6, alpha, 1.0) >= need
    if low < 1.0 - 1e-6:
        assert _slow_capital(shares, low + 1e-6, alpha, 1.0) < need
    # the decision the no-leak model reads is the same test
    for limit in (x for x in (0.05, up + 1e-6, up + 0.05) if x < 1.0):
        assert within_limit(np.array([shares]), limit, confidence)[0] == (up <= limit)


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 80).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_one_run_per_fit_is_clopper_pearson(case):
    k, n = case
    hits, runs = np.r_[np.ones(k), np.zeros(n - k)], np.ones(n)
    got = fit_interval(hits, runs, 0.95)
    want = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert got.low == pytest.approx(want.low, abs=1e-10)
    assert got.high == pytest.approx(want.high, abs=1e-10)
    assert got.method.startswith("Clopper-Pearson")
    # fits without runs say nothing and are left out
    with_empty = fit_interval(np.r_[hits, 0.0], np.r_[runs, 0.0], 0.95)
    assert (with_empty.low, with_empty.high) == (got.low, got.high)


def test_values_worked_by_hand():
    # ten fits of share 0 at 95 %: every bet is 1 (the running variance never exceeds 1/4, and
    # sqrt(2 ln 20 / (10 v)) >= 1 for v <= 0.599), so K_10(m) = (1 + m)^10 and the bound is
    # where it reaches 20
    zeros = np.zeros(10)
    assert upper_bound(zeros, np.full(10, 5.0), 0.95) == pytest.approx(20 ** 0.1 - 1, abs=1e-9)
    # no valid bound can fall below 1 - alpha^(1/n) here: ten zeros come with probability
    # (1 - q)^10 from fits that leak everything with probability q
    assert upper_bound(zeros, np.full(10, 5.0), 0.95) >= 1 - 0.05 ** 0.1
    # three fits cannot reject any mean at 95 %: (1 + m)^3 <= 8 < 20
    assert upper_bound(np.zeros(3), np.full(3, 4.0), 0.95) == pytest.approx(1.0)
    assert fit_interval(np.array([]), np.array([])).high == 1.0


@pytest.mark.parametrize(("fits", "q", "confidence", "widest"), [
    (20, 0.2, 0.95, 0.5), (150, 0.05, 1 - 0.05 / 3, 0.15), (50, 0.05, 0.95, 0.18)])
def test_the_bound_covers_a_leak_that_moves_whole_fits(fits, q, confidence, widest):
    # all or nothing by fit: with probability q a fit's every member run is caught, else each
    # at 1 %; 20 targets per fit on coins. The one-sided bound covers the true mean share at
    # its confidence (Korn-Graubard's did not: tests/experiments/test_korn_graubard.py)
    rng = np.random.default_rng(7)
    truth = q + (1 - q) * 0.01
    uppers = []
    for _ in range(400):
        runs = np.maximum(rng.binomial(20, 0.5, fits), 1).astype(float)
        leak = rng.random(fits) < q
        hits = np.where(leak, runs, rng.binomial(runs.astype(int), 0.01)).astype(float)
        uppers.append(upper_bound(hits, runs, confidence))
    covered = np.array(uppers) >= truth
    # 400 audits: 3 standard errors below the confidence at most
    assert covered.mean() >= confidence - 3 * math.sqrt(confidence * (1 - confidence) / 400)
    # and not by being vacuous: the mean bound stays near the truth (measured 0.44, 0.13, 0.16)
    assert float(np.mean(uppers)) < widest
