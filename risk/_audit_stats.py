"""Statistics of the membership audit (:mod:`risk.audit`): AUC, TPR at a fixed FPR, exact
binomial intervals, the threshold fixed on calibration runs, the empirical epsilon lower bound,
LiRA's per-target calibration and the no-leak refusal model.

* **TPR at FPR** (Carlini et al., "Membership inference attacks from first principles", IEEE
  S&P 2022): a run is called a member when its score is strictly above the threshold; the
  threshold is fixed on calibration runs (next item), never on the runs it is scored on.
* **Clopper-Pearson** (1934): the exact two-sided interval of a binomial proportion,
  ``Beta(a/2; x, n - x + 1)`` and ``Beta(1 - a/2; x + 1, n - x)``.
* **Threshold fixed on calibration runs** (split conformal prediction: Vovk, Gammerman & Shafer,
  "Algorithmic learning in a random world", 2005; Lei et al., JASA 2018, eq. 6): with ``n``
  null scores exchangeable with a new one, the new one exceeds the ``k``-th largest with
  probability at most ``k / (n + 1)``, so ``k = floor(fpr (n + 1))`` gives a false-positive rate
  of at most ``fpr`` on fresh runs; its rate given the calibration runs is ``Beta(k, n + 1 -
  k)``-distributed (the order statistic's coverage, Wilks 1941), which :func:`null_refusal_rate`
  uses. The null scores are the calibration non-members' leave-one-out standardised scores
  (:func:`loo_null_z`), so that each is read as a test run's score is, against the others.
* **Bounds over fits**: the pooled TPR and FPR are bounded with the fit as the independent
  unit (:mod:`risk._audit_bound`: betting, Waudby-Smith & Ramdas 2024; Clopper-Pearson when
  every fit holds one run). Korn & Graubard's clustered interval, used before, estimated the
  runs' correlation from the fits and under-covered when few fits carry the signal
  (``experiments/release_audit/calibration.py`` keeps it as a comparator).
* **Epsilon lower bound** (Jagielski, Ullman & Oprea, "Auditing differentially private machine
  learning", NeurIPS 2020, section 3): a mechanism that is epsilon-DP (delta = 0) admits no
  test with ``TPR > exp(epsilon) FPR``; with the interval bounds, ``epsilon >= ln(TPR_lower /
  FPR_upper)``, and in the other direction ``ln(TNR_lower / FNR_upper)`` (a DP mechanism
  bounds both), the larger reported, 0 when neither is positive; the two read the same two
  one-sided 97.5 % bounds, so the bound holds at 95 % (Bonferroni). This is for ``delta = 0``; an
  ``(epsilon, delta)``-DP mechanism admits ``TPR <= exp(epsilon) FPR + delta`` (Kairouz, Oh &
  Viswanath, ICML 2015, Theorem 2.1), so ``epsilon >= ln((TPR_lower - delta) / FPR_upper)``. The
  game is replace-one (a member table and a non-member table differ in one record replaced);
  a mechanism that is ``(epsilon, delta)``-DP under add/remove-one is ``(2 epsilon, (1 +
  exp(epsilon)) delta)``-DP under replace-one (group privacy over two steps), so a claim made
  for add/remove is compared with the bound against ``2 epsilon``.
  :func:`epsilon_ceiling` is the largest bound the settings can give: every member run caught,
  no non-member run.
* **Per-target calibration** (Carlini et al. 2022, offline LiRA, section IV.C): a target's raw
  attack scores are standardised by a Gaussian fitted to its *non-member* calibration runs, so
  that a score is read as how far it lies in that target's null distribution: one threshold then
  means about one false-positive rate for every target, and scores of different targets can be
  pooled into one ROC. (A likelihood ratio of two fitted Gaussians, online LiRA, ranks targets
  with a perfectly separated attack by the spread of their scores and lets one target's
  non-members outrank another's members; the null alone does not.)
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats
from sklearn.metrics import roc_auc_score

from risk._audit_bound import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    fit_interval,
    within_limit,
)
from risk._result import Interval

# the no-leak model's simulated audits in the shared design, and their seed (a fixed stream:
# the config's check gives the same answer every time)
NULL_AUDITS = 4000
NULL_SEED = 20261202


def clopper_pearson(successes: int, n: int, level: float = 0.95) -> Interval:
    """Exact two-sided interval of ``successes / n`` at confidence ``level``: each end the
    one-sided bound at ``(1 + level) / 2`` (:func:`risk._audit_bound.clopper_pearson_upper`)."""
    one_side = 0.5 * (1.0 + level)
    return Interval(float(clopper_pearson_lower(successes, n, one_side)),
                    float(clopper_pearson_upper(successes, n, one_side)), level,
                    "Clopper-Pearson (exact binomial)")


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve (ties count half); NaN without both labels."""
    if labels.min() == labels.max():
        return math.nan
    return float(roc_auc_score(labels, scores))


def _one_direction(hit_low: float, false_high: float, delta: float) -> float:
    gain = hit_low - delta
    if gain <= 0.0 or false_high <= 0.0:
        return 0.0 if gain <= 0.0 else math.inf
    return max(0.0, math.log(gain / false_high))


def epsilon_lower_bound(tpr_low: float, fpr_high: float, delta: float = 0.0) -> float:
    """The larger of the two directions of the DP inequality at one threshold (Jagielski et
    al. 2020; Kairouz et al. 2015, module docstring): ``ln((TPR_lower - delta) / FPR_upper)``
    and ``ln((TNR_lower - delta) / FNR_upper)``, with ``TNR_lower = 1 - FPR_upper`` and
    ``FNR_upper = 1 - TPR_lower``; 0 when neither is positive. Both read the same two bounds,
    each one side of a 95 % interval (97.5 % one-sided), so by Bonferroni the bound holds with
    at least 95 % confidence."""
    return max(_one_direction(tpr_low, fpr_high, delta),
               _one_direction(1.0 - fpr_high, 1.0 - tpr_low, delta))


def null_z(calibration: np.ndarray, labels: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``(score - mean) / sd`` of the non-members' calibration scores (sd with ddof = 1; its
    floor, 1e-3 of all calibration scores' spread and at least 1e-9, keeps a target whose
    non-members all score alike finite). Larger is more member-like; the one-sided p-value
    ``1 - Phi(z)`` is offline LiRA's test statistic."""
    null = calibration[~labels.astype(bool)]
    sd = float(null.std(ddof=1)) if null.size > 1 else 0.0
    spread = float(calibration.max() - calibration.min()) if calibration.size else 0.0
    return (scores - float(null.mean())) / max(sd, 1e-3 * spread, 1e-9)


def loo_null_z(calibration: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The calibration non-members' scores, each standardised as :func:`null_z` standardises a
    test score but by the *other* non-members (leave one out): a non-member's own score would
    pull the mean towards it and widen the sd, making its z smaller than a fresh run's. Needs
    at least 2 non-members (with 2, each is standardised by the floor alone)."""
    null = calibration[~labels.astype(bool)].astype(float)
    n = null.size
    spread = float(calibration.max() - calibration.min()) if calibration.size else 0.0
    floor = max(1e-3 * spread, 1e-9)
    if n < 2:
        return np.zeros(0)
    mean = null.mean()
    dev = null - mean
    loo_mean = mean - dev / (n - 1)
    if n > 2:  # sum of squares without j: SS - dev_j^2 n / (n - 1)
        loo_ss = np.maximum(float(np.sum(dev**2)) - dev**2 * n / (n - 1), 0.0)
        loo_sd = np.sqrt(loo_ss / (n - 2))
    else:
        loo_sd = np.zeros(n)
    return (null - loo_mean) / np.maximum(loo_sd, floor)


def calibrated_threshold(null: np.ndarray, fpr: float) -> float:
    """The ``k``-th largest of the ``null`` scores, ``k = floor(fpr (n + 1))`` (module
    docstring): a fresh null score is strictly above it with probability at most ``fpr``.
    ``+inf`` (nothing is called a member) when ``k`` is 0."""
    k = int(math.floor(fpr * (null.size + 1) + 1e-9))
    if k < 1:
        return math.inf
    return float(np.partition(null, null.size - k)[null.size - k])


def epsilon_ceiling(member_trials: np.ndarray, nonmember_trials: np.ndarray,
                    level: float = 0.95, delta: float = 0.0) -> float:
    """The largest epsilon lower bound these runs can give: every member run caught and no
    non-member run, each fit's runs bounded as :func:`risk._audit_bound.fit_interval` bounds
    them."""
    member_trials = np.asarray(member_trials, dtype=float)
    nonmember_trials = np.asarray(nonmember_trials, dtype=float)
    tpr = fit_interval(member_trials, member_trials, level)
    fpr = fit_interval(np.zeros_like(nonmember_trials), nonmember_trials, level)
    return epsilon_lower_bound(tpr.low, fpr.high, delta)


def run_counts(targets: int, shadows: int) -> tuple[int, int]:
    """(member runs at test, non-member runs at calibration) of a game of ``targets`` x
    ``shadows`` (either design: a quarter of the runs each, the odd ones to calibration)."""
    return targets * (shadows // 4), targets * (shadows // 2 - shadows // 4)


@functools.lru_cache(maxsize=512)  # a pure function of its numbers: the config asks it often
def null_refusal_rate(targets: int, shadows: int, design: str, limit: float, *,
                      fpr: float = 0.01, level: float = 0.95) -> float:
    """How often an attack that learns nothing would be refused: the probability that the
    pooled TPR's one-sided upper bound at ``level`` exceeds ``limit``. The threshold's
    false-positive rate given the calibration runs is ``F ~ Beta(k, n0 + 1 - k)`` (``n0``
    calibration non-members, ``k = floor(fpr (n0 + 1))``; module docstring) and, learning
    nothing, each member run at test is caught as often as a non-member, with probability
    ``F``. In ``"per_target"`` the ``n`` member runs are independent, the hits beta-binomial,
    and the bound Clopper-Pearson's: the rate is exact. In ``"shared"`` each of the
    ``shadows / 2`` test fits holds each target with probability one half and the bound is
    the betting bound over fits (:mod:`risk._audit_bound`): the rate is a Monte Carlo
    estimate over ``NULL_AUDITS`` simulated audits from a fixed seed (its standard error
    below 0.25 % at the rates the config allows). NaN when the calibration non-members are too
    few to fix a threshold at ``fpr`` (``k = 0``: fewer than ``1 / fpr - 1``, 99 at 1 %). A
    model: the audit itself is measured against it in
    ``experiments/release_audit/calibration.py``."""
    n, n0 = run_counts(targets, shadows)
    k = int(math.floor(fpr * (n0 + 1) + 1e-9))
    if n < 1 or k < 1:  # no threshold at fpr: fewer than 1 / fpr - 1 calibration nulls
        return math.nan
    if design == "per_target":
        x = np.arange(n + 1)
        pmf = stats.betabinom.pmf(x, n, k, n0 + 1 - k)
        return float(np.sum(pmf[clopper_pearson_upper(x, n, level) > limit]))
    rng = np.random.default_rng(NULL_SEED)
    rate = rng.beta(k, n0 + 1 - k, NULL_AUDITS)[:, None]
    if targets == 1:  # a fit holds the one target or not: one run per fit, Clopper-Pearson's
        runs = rng.binomial(shadows // 2, 0.5, NULL_AUDITS)
        hits = rng.binomial(runs, rate[:, 0])
        return float(np.mean(clopper_pearson_upper(hits, runs, level) > limit))
    members = np.maximum(rng.binomial(targets, 0.5, (NULL_AUDITS, shadows // 2)), 1)
    hits = rng.binomial(members, np.broadcast_to(rate, members.shape))
    return float(1.0 - within_limit(hits / members, limit, level).mean())
