"""The per-person test of the membership audit (:mod:`risk.audit`): is *this* target exposed?

A review board asks whether anyone can be singled out, not whether the most exposed people are
safe on average; the pooled TPR dilutes one person's hits by the number of targets. So every
target gets a test of its own, from the shadow runs the game already played.

**The null hypothesis** for target ``t``: whether ``t`` is in a shadow table does not change the
distribution of what the generator releases (nothing of ``t`` reaches the output). The game
draws ``t``'s membership at random, balanced within the calibration runs and within the test
runs, independently of everything else; under the null the labels are therefore exchangeable
with the runs' outcomes within each half, and a *randomisation test* that permutes them within
the halves is exact for any statistic (Fisher 1935; for the Monte Carlo form, ``p = (1 + b) /
(1 + B)`` with ``b`` of ``B`` permuted statistics at least as extreme, Phipson & Smyth, "Permutation
p-values should never be zero", Stat. Appl. Genet. Mol. Biol. 9, 2010). This is the
"exact per-target counts against a calibrated null" of issue 44, calibrated by the game's own
randomisation rather than by a model: it needs no Gaussian assumption (LiRA's, Carlini et al.
2022) and holds with 25 runs a side.

**The statistic** aims at what singles a person out: in some of the tables that hold it, a
near copy or a rare value of it appears, so some member runs score above (nearly) every
non-member run. It is a scan over thresholds: for each distinct score with at most as many runs
at or above it as there are members, and at most a fifth of all runs (:data:`TOP_SHARE`), the
hypergeometric probability of at least the observed number of members among those runs; the
smallest of these nominal p-values is the statistic, and the permutations make it exact. (A
leak in a quarter of a person's tables puts a quarter of its member runs at the top; one in
every table, all of them.) A shift of every run by a little, which a rank-sum test would
flag, is not what "singled out" means: the pooled TPR, the per-target AUC and the epsilon bound
report it. Measured on the demo's table (a Gaussian copula, 20 targets x 100 shared shadow
tables): a rank sum beside the scan flagged two people at p = 0.0001 and 0.0016 whose test AUCs
were 0.64 and 0.72; the scan alone, one, at p = 0.002, a person held in its country by 5
training records and none of the holdout records the shadows are drawn from (value protection
at k = 5; at its default, 10, nobody)
(docs/audit.md, "Value protection").

**The attacks.** ``distance`` and ``domias`` learn nothing from the labels, so their scores on
*every* run (calibration and test) are used, the minimum over both attacks calibrated by the
same permutations. The ``classifier`` is trained on the calibration runs'
labels, so only its test runs' scores are tested, permuting the test labels (valid given the
calibration labels). The two p-values are combined by Bonferroni: ``min(1, 2 min(p_untrained,
p_classifier))``.

**How much, not only whether.** The randomisation test asks whether anything of the person
reaches the output at all; with enough shadow runs it finds the slight pull any fitted model
has towards each of its records (measured on a 1,500-record Gaussian-copula study at 40 x 300:
two or three of the 40 people flagged in every candidate, docs/audit.md). A review board's
question is whether the person can be *singled out*, the limit the pooled TPR is held to, for
each person: the audit flags target ``t`` only when both nulls fall, (a) nothing of ``t``
reaches the output (the randomisation test) and (b) ``t``'s own TPR at the pooled 1 % FPR
threshold is at most ``tpr_limit``. For (b): the threshold, the standardisation and the
classifier are fixed on the calibration runs alone, and the test fits are disjoint from them
and drawn independently (shared: each holds ``t`` on a coin of its own; per target: ``t`` in a
balanced half of its own fits), so given the calibration ``t``'s member test runs are
independent draws, each called a member with probability ``TPR_t``, and the exact binomial p-value
``P(Bin(n_t, tpr_limit) >= h_t)`` (``h_t`` of its ``n_t`` member test runs called) is valid
(Clopper & Pearson 1934). Rejecting the union of the two nulls needs both rejected: an
intersection-union test, whose p-value is the larger of the two (Berger, "Multiparameter
hypothesis testing and acceptance sampling", Technometrics 24, 1982), valid without any
correction. A person leaked into a quarter of its tables has ``TPR_t`` near 0.26: at the
default game (about 75 member test runs each) the binomial part rejects at Holm's smallest
level 0.05 / 40 with probability 0.99.

**Family-wise error** over the K targets: Holm's step-down procedure (Holm, "A simple
sequentially rejective multiple test procedure", Scand. J. Statist. 6, 1979), valid under any
dependence between the targets' tests (the shared design's targets share fits), on the
intersection-union p-values: a generator that exposes nobody beyond ``tpr_limit`` has any
person flagged with probability at most ``alpha``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

# permutations per target: the p-value's floor, 1 / (PERMUTATIONS_PER_TARGET K + 1), is 50 times
# below Holm's smallest level alpha / K at alpha = 0.05 (Phipson & Smyth's (1 + b) / (1 + B))
PERMUTATIONS_PER_TARGET = 1_000
MIN_PERMUTATIONS = 10_000
# the tail scan's thresholds call at most this share of the runs members: a person is singled
# out when some of its member runs score above (nearly) every non-member run
TOP_SHARE = 0.2
CHUNK = 2_000  # permutations scored at once (memory: CHUNK x runs booleans)


def permutations(n_targets: int) -> int:
    """How many label permutations each target's test draws: ``max(10,000, 1,000 K)``."""
    return max(MIN_PERMUTATIONS, PERMUTATIONS_PER_TARGET * n_targets)


class _Statistic:
    """The tail scan's smallest nominal p-value for one score vector, for many label vectors
    at once (module docstring)."""

    def __init__(self, scores: np.ndarray, n_members: int) -> None:
        s = np.nan_to_num(np.asarray(scores, dtype=float), nan=-np.inf, posinf=np.inf)
        n = s.size
        self.order = np.argsort(-s, kind="stable")
        ranked = s[self.order]
        # the number of runs scoring at least each distinct value, the tail's thresholds
        ends = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True]) + 1
        cap = min(n_members, max(1, int(TOP_SHARE * n)))
        # the top group of tied scores always counts, however large (an exact copy in every
        # member table ties them all at distance 0), unless every run ties
        self.k = ends[(ends <= cap) | ((ends == ends[0]) & (ends[0] < n))]
        x = np.arange(n_members + 1)
        # sf[c, x] = P(X >= x), X hypergeometric: x members among the k[c] top runs
        self.sf = (stats.hypergeom.sf(x[None, :] - 1, n, n_members, self.k[:, None])
                   if self.k.size else np.ones((0, n_members + 1)))

    def nominal(self, labels: np.ndarray) -> np.ndarray:
        """``labels`` (B, n) booleans: per row, the smallest nominal p-value (1 when no
        threshold qualifies)."""
        if not self.k.size:
            return np.ones(labels.shape[0])
        counts = np.cumsum(labels[:, self.order], axis=1, dtype=np.int32)[:, self.k - 1]
        return self.sf[np.arange(self.k.size)[None, :], counts].min(axis=1)


def _permuted(labels: np.ndarray, groups: np.ndarray, b: int, rng: np.random.Generator
              ) -> np.ndarray:
    """``b`` copies of ``labels``, each permuted within every group."""
    out = np.empty((b, labels.size), dtype=bool)
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        out[:, idx] = rng.permuted(np.broadcast_to(labels[idx], (b, idx.size)), axis=1)
    return out


def randomisation_p(score_sets: list[np.ndarray], labels: np.ndarray, groups: np.ndarray,
                    b: int, rng: np.random.Generator) -> float:
    """The exact Monte Carlo p-value of the smallest nominal p-value of the tail scan over
    ``score_sets`` (each a score per run, larger more member-like), permuting ``labels``
    within ``groups``: ``(1 + #{permuted minimum <= observed}) / (1 + b)``. 1 when a side has
    no run."""
    labels = np.asarray(labels, dtype=bool)
    n_members = int(labels.sum())
    if not score_sets or n_members == 0 or n_members == labels.size:
        return 1.0
    statistics = [_Statistic(s, n_members) for s in score_sets]

    def minimum(rows: np.ndarray) -> np.ndarray:
        return np.min([st.nominal(rows) for st in statistics], axis=0)

    observed = float(minimum(labels[None, :])[0])
    as_extreme, left = 0, b
    while left:
        chunk = min(CHUNK, left)
        # a tolerance of a few ulps: the same label vector gives the same figure, a different
        # order of summation must not make it look more extreme
        as_extreme += int(np.sum(minimum(_permuted(labels, groups, chunk, rng))
                                 <= observed * (1 + 1e-12)))
        left -= chunk
    return (1 + as_extreme) / (1 + b)


def magnitude_p(hits: np.ndarray, runs: np.ndarray, limit: float) -> np.ndarray:
    """Per target, the exact binomial p-value of ``TPR_t <= limit`` from ``hits`` of its
    ``runs`` member test runs called members (module docstring): ``P(Bin(runs, limit) >=
    hits)``; 1 for a target with no member test run (``P(Bin(0, .) >= 0)``)."""
    return stats.binom.sf(np.asarray(hits, dtype=float) - 1, np.asarray(runs, dtype=float),
                          limit)


def exposure_p(signal: np.ndarray, hits: np.ndarray, runs: np.ndarray, limit: float
               ) -> np.ndarray:
    """Per target, the intersection-union p-value of "this person is exposed beyond
    ``limit``": the larger of the randomisation test's ``signal`` p-value and
    :func:`magnitude_p` (module docstring)."""
    return np.maximum(np.asarray(signal, dtype=float), magnitude_p(hits, runs, limit))


def holm(p_values: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's step-down rejections at family-wise level ``alpha`` (module docstring): the
    i-th smallest p-value is compared with ``alpha / (K - i)`` (i from 0) until one is above;
    read off :func:`holm_adjusted`, so that the two never disagree at a boundary."""
    return holm_adjusted(p_values) <= alpha


def holm_adjusted(p_values: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values: the smallest family-wise level at which each is rejected,
    ``max_{j <= i} min(1, (K - j) p_(j))`` in sorted order."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (p.size - np.arange(p.size)) * p[order])
    out = np.empty(p.size)
    out[order] = np.maximum.accumulate(scaled)
    return out
