"""The confidence interval of M (design §3.2; issue 34): the vectorised interval equals a slow
one, it covers at its level, narrows with more records, and bad levels are refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

import risk
from risk._membership_interval import (
    HYPERGEOMETRIC_LIMIT,
    attack_set_moments,
    clopper_pearson,
    effective_holdout,
    f1_from_rates,
    f1_interval,
)
from tests.examples import examples


def _bisect(fn, target: float, increasing: bool) -> float:
    """The p in [0, 1] where the monotone ``fn(p)`` crosses ``target``, by bisection."""
    lo, hi = 0.0, 1.0
    for _ in range(64):  # 2**-64: below the tolerance
        mid = (lo + hi) / 2.0
        if (fn(mid) < target) == increasing:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def _slow_clopper_pearson(x: int, n: int, level: float) -> tuple[float, float]:
    """Clopper & Pearson (1934) by their definition: the p at which the binomial tails equal
    alpha / 2, found by bisection, one share at a time (``bdtrc(x - 1, n, p)`` = P(X >= x),
    ``bdtr(x, n, p)`` = P(X <= x): the binomial tails of the Cephes library)."""
    alpha = 1.0 - level
    low = 0.0 if x == 0 else _bisect(lambda p: special.bdtrc(x - 1, n, p), alpha / 2, True)
    high = 1.0 if x == n else _bisect(lambda p: special.bdtr(x, n, p), alpha / 2, False)
    return low, high


def _slow_f1_interval(r: float, f: float, t: float, n_holdout: int, n_rest: float,
                      level: float, mean: float, sd: float) -> tuple[float, float]:
    """Design §3.2 eqs. 1-6 written out for one threshold, with plain floats: each of the two
    errors at level 1 - alpha / 2, their half-widths added (Bonferroni)."""
    n_eff = n_holdout if n_rest <= 0 else 1.0 / (1.0 / n_holdout + 1.0 / n_rest)
    x, alpha = f * n_eff, 1.0 - level
    f_lo = 0.0 if x == 0 else stats.beta.ppf(alpha / 4, x, n_eff - x + 1)
    f_hi = 1.0 if x == n_eff else stats.beta.ppf(1 - alpha / 4, x + 1, n_eff - x)

    def f1(share: float) -> float:
        return 0.0 if r == 0 else 2 * t * r / (t * r + t + (1 - t) * share)

    z = stats.norm.ppf(1 - alpha / 4)
    below = (f1(f) - f1(f_hi)) + z * sd
    above = (f1(f_lo) - f1(f)) + z * sd
    return max(mean - below, 0.0), min(mean + above, 1.0)


@settings(max_examples=examples(60), deadline=None)
@given(n=st.integers(1, 400), data=st.data(),
       level=st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]))
def test_clopper_pearson_vectorised_equals_its_definition(n, data, level):
    xs = data.draw(st.lists(st.integers(0, n), min_size=1, max_size=5))
    low, high = clopper_pearson(np.array(xs, dtype=float), n, level)
    for i, x in enumerate(xs):
        slow = _slow_clopper_pearson(x, n, level)
        assert low[i] == pytest.approx(slow[0], abs=1e-9)
        assert high[i] == pytest.approx(slow[1], abs=1e-9)


@settings(max_examples=examples(60), deadline=None)
@given(
    rates=st.lists(st.tuples(st.floats(0.0, 1.0), st.integers(0, 1000)), min_size=1,
                   max_size=6),
    n_holdout=st.integers(1, 1000), n_rest=st.integers(-50, 100_000),
    t=st.floats(0.001, 0.9), level=st.floats(0.5, 0.995),
    sd=st.floats(0.0, 0.05), shift=st.floats(-0.02, 0.02),
)
def test_f1_interval_vectorised_over_thresholds_equals_a_loop(rates, n_holdout, n_rest, t,
                                                               level, sd, shift):
    r = np.array([a for a, _ in rates])
    f = np.array([b for _, b in rates]) / 1000.0
    mean = np.clip(f1_from_rates(r, f, t) + shift, 0.0, 1.0)
    sds = np.full(r.shape, sd)
    _, low, high = f1_interval(r, f, t, n_holdout=n_holdout, n_rest=n_rest, level=level,
                               attack_mean=mean, attack_sd=sds)
    for i in range(r.size):
        slow = _slow_f1_interval(float(r[i]), float(f[i]), t, n_holdout, n_rest, level,
                                 float(mean[i]), sd)
        assert low[i] == pytest.approx(slow[0], abs=1e-9)
        assert high[i] == pytest.approx(slow[1], abs=1e-9)
        assert low[i] <= mean[i] <= high[i]


def test_effective_holdout_is_the_harmonic_combination():
    assert effective_holdout(100, 100.0) == pytest.approx(50.0)
    assert effective_holdout(100, 0.0) == 100.0 and effective_holdout(100, -5.0) == 100.0
    assert effective_holdout(100, 1e12) == pytest.approx(100.0)


def test_the_interval_covers_the_population_share_at_its_level():
    # non-members: a finite population with a known share f matched; members fixed at r.
    # Every draw of a holdout gives an interval; the truth is the F1 of the rest (eq. 1).
    rng = np.random.default_rng(34)
    t, r, level = 0.01, 0.6, 0.9
    hits = []
    for f_true, n_h in [(0.0005, 300), (0.004, 300), (0.05, 2000), (0.3, 500)]:
        pool = np.zeros(50_000, dtype=bool)
        pool[: int(f_true * pool.size)] = True
        for _ in range(100):
            rng.shuffle(pool)
            held, rest = pool[:n_h], pool[n_h:]
            _, low, high = f1_interval(r, held.mean(), t, n_holdout=n_h, n_rest=rest.size,
                                       level=level)
            truth = f1_from_rates(r, rest.mean(), t)
            hits.append(low <= truth <= high)
    assert np.mean(hits) >= level - 0.02


def test_attack_set_moments_match_a_direct_simulation():
    rng = np.random.default_rng(0)
    mean, sd = attack_set_moments(rng, 0.5, 0.02, n_train=400, population_size=20_000,
                                  attack_size=5_000, draws=20_000)
    # eq. 1 at the same shares; the simulated mean lies a little below (concave in K)
    assert mean == pytest.approx(float(f1_from_rates(0.5, 0.02, 0.02)), rel=0.03)
    assert 0 < sd < 0.1
    assert attack_set_moments(rng, 0.0, 0.3, n_train=400, population_size=20_000,
                              attack_size=5_000) == (0.0, 0.0)


def _people(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({c: rng.integers(0, 6, n) for c in "abcde"})


def _frames(n_train: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Train, holdout and synthetic data: a third of the training records verbatim, the rest
    fresh people."""
    rng = np.random.default_rng(seed)
    train, holdout = _people(n_train, rng), _people(n_train, rng)
    synthetic = pd.concat([train[: n_train // 3], _people(n_train - n_train // 3, rng)],
                          ignore_index=True)
    return train, holdout, synthetic


def _leaky(n_train: int, seed: int) -> risk.MembershipResult:
    return risk.membership_disclosure(*_frames(n_train, seed), population_size=100_000,
                                      random_state=seed, curve=False)


def test_the_interval_narrows_as_the_training_set_grows():
    widths = [np.median([(res := _leaky(n, seed)).m_ci.high - res.m_ci.low
                         for seed in range(3)]) for n in (250, 1000, 4000)]
    assert widths[0] > widths[1] > widths[2] > 0
    assert widths[2] < widths[0] / 2.5  # about 1 / sqrt(n): 4 times fewer at 16 times n


def test_result_carries_the_interval_with_its_level_and_meaning():
    res = _leaky(600, 1)
    assert res.m_ci.level == 0.95 and res.f1_ci.level == 0.95
    assert "Clopper-Pearson" in res.m_ci.method
    assert res.m_ci.low < res.m_ci.high and res.f1_ci.low < res.f1_ci.high
    assert 0 < res.member_match_rate <= 1 and 0 <= res.holdout_match_rate <= 1
    assert res.effective_holdout == pytest.approx(1 / (1 / 600 + 1 / (100_000 - 1200)))
    flat = res.to_dict()
    for key in ("m_ci_low", "m_ci_high", "m_ci_level", "f1_ci_low", "m_spread_low"):
        assert key in flat
    # on the F1 scale the same interval
    assert res.m_ci.low == pytest.approx(float(risk.relative_f1(res.f1_ci.low,
                                                                 res.sampling_fraction)))
    wider = risk.membership_disclosure(*_frames(600, 1), population_size=100_000,
                                       random_state=1, curve=False, ci_level=0.99)
    assert wider.m_ci.level == 0.99
    assert wider.m_ci.low < res.m_ci.low and wider.m_ci.high > res.m_ci.high
    assert wider.m == res.m  # the estimate and its draws are unchanged


def test_no_holdout_match_still_leaves_room_above():
    # near copies at small n: the holdout matches nobody, yet the population's non-members
    # might; the upper end of f is then Clopper-Pearson's, not 0, and M's interval is wide
    rng = np.random.default_rng(5)
    train, holdout = _people(100, rng), _people(100, rng) + 10  # holdout matches nothing
    res = risk.membership_disclosure(train, holdout, train, population_size=40_000,
                                     random_state=0, curve=False)
    assert res.holdout_match_rate == 0.0 and res.member_match_rate == 1.0
    assert res.m_ci.low < res.m_ci.high - 0.1


@pytest.mark.parametrize("bad,error", [(0.0, risk.RiskInputError), (1.0, risk.RiskInputError),
                                       (95, risk.RiskInputError), ("high", TypeError)])
def test_bad_ci_level_is_refused_naming_it(bad, error):
    with pytest.raises(error, match="ci_level"):
        risk.membership_disclosure(*_frames(60, 0), population_size=1000, ci_level=bad)


@pytest.mark.parametrize("population", [100_000, None])
def test_interval_is_recomputed_from_the_shares_and_the_seed_alone(population):
    # what an experiment stores (the shares, sizes, seed) gives the same interval again
    from risk._membership_interval import interval_from_rates

    kw = {"population_size": population} if population else {"sampling_fraction": 0.006}
    res = risk.membership_disclosure(*_frames(600, 3), random_state=11, curve=False, **kw)
    again = interval_from_rates(
        res.member_match_rate, res.holdout_match_rate, n_train=res.n_train,
        n_holdout=res.n_holdout, population_size=res.population_size,
        sampling_fraction=res.sampling_fraction, repeats=res.repeats, level=res.f1_ci.level,
        seed=res.random_state)
    assert again == (res.f1_ci.low, res.f1_ci.high)


def test_a_population_beyond_numpys_hypergeometric_limit_draws_its_binomial_limit():
    # NumPy draws hypergeometrics of fewer than 10**9 people only: a national population
    # (India's 1.4e9) raised ValueError there, 1e30 OverflowError (found by hypothesis); above
    # the limit the members per attack set are drawn from the binomial limit
    below, above = (attack_set_moments(np.random.default_rng(0), 0.6, 0.1,
                                       n_train=50_000_000, population_size=n,
                                       attack_size=10_000)
                    for n in (HYPERGEOMETRIC_LIMIT - 1, HYPERGEOMETRIC_LIMIT + 5_000))
    assert below == pytest.approx(above, rel=0.05)  # t = 0.05: 500 members per attack set
    for n in (1_400_000_000, 10 ** 30):
        mean, sd = attack_set_moments(np.random.default_rng(0), 0.6, 0.1, n_train=5_000,
                                      population_size=n, attack_size=10_000)
        assert np.isfinite(mean) and np.isfinite(sd)
