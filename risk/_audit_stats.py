"""Statistics of the membership audit (:mod:`risk.audit`): AUC, TPR at a fixed FPR, exact
binomial intervals, the empirical epsilon lower bound and LiRA's per-target calibration.

* **TPR at FPR** (Carlini et al., "Membership inference attacks from first principles", IEEE
  S&P 2022): of the thresholds at which at most ``floor(fpr * n_negative)`` negatives score
  above it, the one with the most true positives (then the fewest false positives); a run is
  called a member when its score is strictly above.
* **Clopper-Pearson** (1934): the exact two-sided interval of a binomial proportion,
  ``Beta(a/2; x, n - x + 1)`` and ``Beta(1 - a/2; x + 1, n - x)``.
* **Epsilon lower bound** (Jagielski, Ullman & Oprea, "Auditing differentially private machine
  learning", NeurIPS 2020, section 3): a mechanism that is epsilon-DP (delta = 0) admits no
  test with ``TPR > exp(epsilon) FPR``; with the interval bounds, ``epsilon >= ln(TPR_lower /
  FPR_upper)``, reported as 0 when that is not positive.
* **Per-target calibration** (Carlini et al. 2022, offline LiRA, section IV.C): a target's raw
  attack scores are standardised by a Gaussian fitted to its *non-member* calibration runs, so
  that a score is read as how far it lies in that target's null distribution: one threshold then
  means about one false-positive rate for every target, and scores of different targets can be
  pooled into one ROC. (A likelihood ratio of two fitted Gaussians, online LiRA, ranks targets
  with a perfectly separated attack by the spread of their scores and lets one target's
  non-members outrank another's members; the null alone does not.)
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats
from sklearn.metrics import roc_auc_score

from risk._result import Interval


def clopper_pearson(successes: int, n: int, level: float = 0.95) -> Interval:
    """Exact two-sided interval of ``successes / n`` at confidence ``level``."""
    alpha = 1.0 - level
    low = 0.0 if successes == 0 else float(stats.beta.ppf(alpha / 2, successes,
                                                          n - successes + 1))
    high = 1.0 if successes == n else float(stats.beta.ppf(1 - alpha / 2, successes + 1,
                                                           n - successes))
    return Interval(low, high, level, "Clopper-Pearson (exact binomial)")


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve (ties count half); NaN without both labels."""
    if labels.min() == labels.max():
        return math.nan
    return float(roc_auc_score(labels, scores))


def tpr_at_fpr(scores: np.ndarray, labels: np.ndarray, fpr: float) -> tuple[int, int, int, int]:
    """(true positives, positives, false positives, negatives) at the best threshold that lets
    at most ``floor(fpr * negatives)`` negatives score strictly above it: the most true
    positives, and of thresholds with as many, the fewest false positives."""
    positive = labels.astype(bool)
    pos, neg = np.sort(scores[positive]), np.sort(scores[~positive])
    allowed = int(math.floor(fpr * neg.size + 1e-9))
    thresholds = np.concatenate([[-np.inf], np.unique(scores)])
    tp = pos.size - np.searchsorted(pos, thresholds, side="right")
    fp = neg.size - np.searchsorted(neg, thresholds, side="right")
    ok = fp <= allowed
    best = np.lexsort((fp[ok], -tp[ok]))[0]
    return int(tp[ok][best]), int(pos.size), int(fp[ok][best]), int(neg.size)


def epsilon_lower_bound(tpr_low: float, fpr_high: float) -> float:
    """``max(0, ln(tpr_low / fpr_high))`` (Jagielski et al. 2020)."""
    if tpr_low <= 0.0 or fpr_high <= 0.0:
        return 0.0 if tpr_low <= 0.0 else math.inf
    return max(0.0, math.log(tpr_low / fpr_high))


def null_z(calibration: np.ndarray, labels: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``(score - mean) / sd`` of the non-members' calibration scores (sd with ddof = 1; its
    floor, 1e-3 of all calibration scores' spread and at least 1e-9, keeps a target whose
    non-members all score alike finite). Larger is more member-like; the one-sided p-value
    ``1 - Phi(z)`` is offline LiRA's test statistic."""
    null = calibration[~labels.astype(bool)]
    sd = float(null.std(ddof=1)) if null.size > 1 else 0.0
    spread = float(calibration.max() - calibration.min()) if calibration.size else 0.0
    return (scores - float(null.mean())) / max(sd, 1e-3 * spread, 1e-9)
