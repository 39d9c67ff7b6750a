"""The confidence interval of membership disclosure M (design §3.2), for ``membership``.

The partition estimate of El Emam, Mosquera & Fang (JAMIA Open 2022) averages F1 over attack
sets of ``a`` records, ``k = round(a t)`` of them members. With the distance of every real
record to the synthetic data computed once, an attack set's TP and FP are hypergeometric draws
from two fixed pools: the training records, a share ``r`` of which are matched within h, and
the holdout, a share ``f`` of which are. For large attack sets TP / k -> r and FP / (a - k) -> f,
so the attack's F1 tends to (design §3.2, eq. 1)

    F1(r, f) = 2 t r / (t r + t + (1 - t) f),

precision ``t r / (t r + (1 - t) f)`` and recall ``r``. This is the F1 the population's own
attack has (members: the training records; non-members: the population's other people, whose
match share is f_pop). ``r`` is known exactly (every member is a training record, and every one
is measured); ``f`` is estimated by the holdout, a simple random sample of the non-members. F1
decreases in f (for r > 0) and M increases in F1, so an interval [f_lo, f_hi] that covers f_pop
with probability >= 1 - alpha maps to an interval [M(f_hi), M(f_lo)] that covers the true M
with the same probability (inverting a monotone function: Casella & Berger 2002, §9.2.3).

The interval of f is Clopper & Pearson's (1934) exact binomial interval at the *effective*
holdout size ``n_eff = 1 / (1 / n_holdout + 1 / n_rest)``: the holdout share and the share among
the ``n_rest = N - n_train - n_holdout`` non-members the estimate never saw are two disjoint
samples of one finite population, so their difference has variance f (1 - f) (1 / n_holdout +
1 / n_rest) (Cochran 1977, §2.7, for the covariance of a sample mean and the mean of the rest).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from risk._partition import DEFAULT_ATTACK_CAP
from risk._result import safe_ratio

ATTACK_DRAWS = 2000
"""Simulated population attack sets behind the attack-set term of the interval (eq. 5)."""
CI_METHOD = ("Clopper-Pearson interval of the holdout's match share f at the effective holdout "
             "size, through F1(r, f) = 2tr / (tr + t + (1 - t)f), centred on the simulated "
             "population attack and widened by its attack-set error, each at level 1 - alpha/2 "
             "(Bonferroni; design §3.2)")


def f1_from_rates(member_rate: np.ndarray | float, nonmember_rate: np.ndarray | float,
                  t: float) -> np.ndarray:
    """F1 of the attack on a large attack set (design §3.2, eq. 1): ``2 t r / (t r + t + (1 - t)
    f)`` for members matched at share ``r`` and non-members at share ``f``; 0 when r = 0."""
    r = np.asarray(member_rate, dtype=float)
    f = np.asarray(nonmember_rate, dtype=float)
    return safe_ratio(2.0 * t * r, t * r + t + (1.0 - t) * f)


def effective_holdout(n_holdout: int, n_rest: float) -> float:
    """``1 / (1 / n_holdout + 1 / n_rest)``: the size of a binomial sample whose share varies as
    much as the holdout's share minus that of the ``n_rest`` unseen non-members (design §3.2,
    eq. 3); ``n_holdout`` when there are none (``n_rest <= 0``)."""
    if n_rest <= 0:
        return float(n_holdout)
    return 1.0 / (1.0 / n_holdout + 1.0 / n_rest)


def clopper_pearson(successes: np.ndarray | float, trials: np.ndarray | float,
                    level: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper & Pearson's (1934) two-sided interval of a binomial share, vectorised: the
    ``alpha / 2`` quantile of Beta(x, n - x + 1) and the ``1 - alpha / 2`` quantile of
    Beta(x + 1, n - x) (0 at x = 0, 1 at x = n). Real-valued x and n are allowed (the
    effective sample of design §3.2, eq. 4), with 0 <= x <= n and n > 0."""
    x = np.asarray(successes, dtype=float)
    n = np.broadcast_to(np.asarray(trials, dtype=float), x.shape)
    alpha = 1.0 - level
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(x > 0, special.betaincinv(np.maximum(x, 1e-300), n - x + 1.0,
                                                 alpha / 2.0), 0.0)
        high = np.where(x < n, special.betaincinv(x + 1.0, np.maximum(n - x, 1e-300),
                                                  1.0 - alpha / 2.0), 1.0)
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


HYPERGEOMETRIC_LIMIT = 10**9  # numpy.random.Generator.hypergeometric: ngood, nbad below it


def attack_set_moments(rng: np.random.Generator, member_rate: float, holdout_rate: float, *,
                       n_train: int, population_size: int, attack_size: int,
                       draws: int = ATTACK_DRAWS) -> tuple[float, float]:
    """Mean and s.d. of one population attack set's F1 (design §3.2, eq. 5), by ``draws``
    simulated attack sets of ``attack_size`` people from a population of ``population_size``:
    K ~ Hypergeometric(n_train, N - n_train, a) members, TP ~ Hypergeometric(r n_train
    matched, the rest, K), FP ~ Binomial(a - K, f) (a parametric bootstrap, Efron & Tibshirani
    1993, §6.5, of the attack the truth runs). The mean differs from F1(r, f) by the curvature
    of F1 in K, TP and FP (few members per set: Jensen's inequality); the s.d. is the spread a
    single population attack set has."""
    matched = int(round(member_rate * n_train))
    others = max(population_size - n_train, 1)
    if others < HYPERGEOMETRIC_LIMIT:
        k = rng.hypergeometric(n_train, others, attack_size, size=draws)
    else:  # NumPy draws hypergeometrics below 10**9 only; there the binomial is its limit
        # (the draws differ by O(a / N) <= 1e-5 in probability: Feller 1968, II.6)
        k = rng.binomial(attack_size, n_train / population_size, size=draws)
    tp = rng.hypergeometric(matched, n_train - matched, k) if matched else np.zeros(draws)
    fp = rng.binomial(attack_size - k, holdout_rate)
    f1 = safe_ratio(2.0 * tp, tp + fp + k)
    return float(f1.mean()), float(f1.std(ddof=1))


def f1_interval(member_rate: np.ndarray | float, holdout_rate: np.ndarray | float, t: float, *,
                n_holdout: int, n_rest: float, level: float,
                attack_mean: np.ndarray | float | None = None, attack_sd: np.ndarray | float = 0.0
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centre and two-sided ``level`` interval of the population attack's F1 (design §3.2).

    The centre is ``attack_mean`` (the simulated population attack's mean F1, eq. 5) or, without
    it, ``F1(r, f_hat)``. Below and above it lie the distances ``F1(r, f_hat) - F1(r, f_hi)``
    and ``F1(r, f_lo) - F1(r, f_hat)`` ([f_lo, f_hi] the Clopper-Pearson interval of f at the
    effective holdout size and level ``1 - alpha / 2``, eqs. 2-4), each plus ``z * attack_sd``
    with ``z`` the normal ``1 - alpha / 4`` quantile, the error of the population attack's mean
    over its attack sets at level ``1 - alpha / 2`` (eq. 6): each error outside its own band
    with probability at most alpha / 2, so both inside with probability at least 1 - alpha
    whatever their dependence (Bonferroni's inequality). Vectorised over matching arrays (one
    entry per Hamming threshold)."""
    alpha = 1.0 - level
    n_eff = effective_holdout(n_holdout, n_rest)
    f_lo, f_hi = clopper_pearson(np.asarray(holdout_rate, dtype=float) * n_eff, n_eff,
                                 1.0 - alpha / 2.0)
    plug_in = f1_from_rates(member_rate, holdout_rate, t)
    centre = plug_in if attack_mean is None else np.asarray(attack_mean, dtype=float)
    mc = float(stats.norm.ppf(1.0 - alpha / 4.0)) * np.asarray(attack_sd, dtype=float)
    below = plug_in - f1_from_rates(member_rate, f_hi, t) + mc
    above = f1_from_rates(member_rate, f_lo, t) - plug_in + mc
    return centre, np.clip(centre - below, 0.0, 1.0), np.clip(centre + above, 0.0, 1.0)


def interval_from_rates(member_rate: float, holdout_rate: float, *, n_train: int,
                        n_holdout: int, population_size: int | None, sampling_fraction: float,
                        repeats: int, level: float, seed: int) -> tuple[float, float]:
    """The ``level`` confidence interval of the population attack's F1 at one threshold (design
    §3.2), from the matched shares alone: what :func:`risk.membership_disclosure` reports as
    ``f1_ci``. ``population_size`` None: N = n_train / t. The attack-set simulation (eq. 5) uses
    its own child stream of ``seed`` (``SeedSequence(seed).spawn(1)[0]``), so the interval is
    the same whatever else the seed draws, and can be recomputed from these numbers alone."""
    t = sampling_fraction
    n_people = population_size if population_size is not None else int(round(n_train / t))
    n_rest = (population_size if population_size is not None else n_train / t) - n_train \
        - n_holdout  # the non-members the holdout stands for, other than itself
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    attack_mean, attack_sd = attack_set_moments(
        rng, member_rate, holdout_rate, n_train=n_train, population_size=n_people,
        attack_size=min(DEFAULT_ATTACK_CAP, n_people))
    _, low, high = f1_interval(member_rate, holdout_rate, t, n_holdout=n_holdout, n_rest=n_rest,
                               level=level, attack_mean=attack_mean,
                               attack_sd=attack_sd / np.sqrt(repeats))
    return float(low), float(high)
