"""What the membership audit's attacks read off one synthetic set about each target.

For target ``t`` and synthetic set ``S`` (both coded by :mod:`risk._gower_coder`; ``D`` is the
summed Gower distance, ``p`` times DCR's mean, so ``D / p`` is DCR's distance):

* ``distance``: ``min over s in S of D(t, s) / p``, the distance to the closest synthetic
  record (the attack scores its negative: closer means member);
* ``domias``: DOMIAS (van Breugel, Sun, Qian & van der Schaar, "Membership inference attacks
  against synthetic data through overfitting detection", AISTATS 2023, eq. 2) scores
  ``p_S(t) / p_R(t)``, the synthetic data's density at the target over the reference (real,
  non-member) data's. Both densities are kernel estimates with one kernel, ``K(t, x) =
  exp(-D(t, x) / h)``: on numeric columns a Laplace kernel of bandwidth ``h`` on the range-scaled
  value, on the others an Aitchison-Aitken kernel (weight ``exp(-1 / h)`` for a different
  category), their product over columns. The log of the ratio is ``log mean_S K(t, s) - log
  mean_R K(t, r)``; the kernels' normalising constants cancel because both use the same ``h``;
* ``within_r``: the share of ``S`` within distance ``r`` of the target (``D / p <= r``), for
  each radius (``0``: exact copies on every column);
* ``match_c``: the share of ``S`` equal to the target on the columns of subset ``c`` (numeric
  columns compared on their bins): TAPAS' counting queries (Houssiau, Jordon, Cohen, Daniel,
  Elliott, Geddes, Mole, Rangel-Smith & Szpruch, "TAPAS: a toolbox for adversarial privacy
  auditing of synthetic data", NeurIPS 2022 SyntheticData4ML workshop).

The classifier attack learns from all of these at once.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import logsumexp

from risk._gower_coder import Coded, summed_distances

RADII = (0.0, 0.02, 0.05, 0.1, 0.2)


def column_subsets(p: int, rng: np.random.Generator, n_random: int = 24) -> list[np.ndarray]:
    """Every single column, then ``n_random`` distinct random subsets of 2 to 4 columns (all
    of them when there are fewer)."""
    singles = [np.array([c]) for c in range(p)]
    pool = [np.array(s) for size in range(2, min(4, p) + 1)
            for s in itertools.combinations(range(p), size)]
    if len(pool) > n_random:
        chosen = rng.choice(len(pool), n_random, replace=False)
        pool = [pool[i] for i in np.sort(chosen)]
    return singles + pool


def feature_names(p: int, subsets: list[np.ndarray], columns: tuple[str, ...]) -> list[str]:
    """One name per feature column of :func:`features`."""
    return (["distance", "domias", *(f"within_{r:g}" for r in RADII)]
            + [f"match_{'+'.join(columns[c] for c in s)}" for s in subsets])


def log_density(targets: Coded, data: Coded, bandwidth: float) -> np.ndarray:
    """``log mean_x exp(-D(t, x) / h)`` per target (see the module docstring)."""
    d = summed_distances(targets, data)
    return logsumexp(-d / bandwidth, axis=1) - np.log(len(data))


def features(targets: Coded, synthetic: Coded, subsets: list[np.ndarray],
             log_reference: np.ndarray, bandwidth: float) -> np.ndarray:
    """(targets, features) array: distance, DOMIAS log ratio, shares within radii, shares
    matching on each column subset (columns as :func:`feature_names`)."""
    p = max(1, targets.n_columns)
    d = summed_distances(targets, synthetic)
    n = max(1, len(synthetic))
    closest = d.min(axis=1) / p
    domias = (logsumexp(-d / bandwidth, axis=1) - np.log(n)) - log_reference
    within = [(d <= r * p + 1e-9).sum(axis=1) / n for r in RADII]
    equal = targets.binned[:, None, :] == synthetic.binned[None, :, :]
    matches = [equal[:, :, s].all(axis=2).sum(axis=1) / n for s in subsets]
    return np.column_stack([closest, domias, *within, *matches])


def default_bandwidth(reference: Coded, rng: np.random.Generator, sample: int = 1000) -> float:
    """DOMIAS' kernel bandwidth ``h`` (summed Gower units): the median distance from a
    reference record to its nearest other reference record, over a seeded sample of at most
    ``sample`` records, and at least 0.1 (a tenth of one column's full difference)."""
    n = len(reference)
    rows = np.sort(rng.choice(n, min(n, sample), replace=False))
    d = summed_distances(reference.rows(rows), reference)
    d[np.arange(rows.size), rows] = np.inf
    return float(max(0.1, np.median(d.min(axis=1))))
