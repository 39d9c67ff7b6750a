"""The pieces of the tuner-setting validation: the true attack on the population, the
constructed copiers, M as a trial computes it, and two counts of how much M can see.

See ``tuner_setting.py`` for the design; these are its building blocks, tested on their own.

**The truth** for the released data is the attack of ``validate.ground_truth`` (the same
matching rule, the same attack size a = 10,000, the same per-distance counting), with members
the training records and non-members people of the population *outside the sample*, so the
truth shares no record with the estimate's holdout. Each repeat draws the number of members
K ~ Hypergeometric(n_train, N - n_train, a), exactly the number of trained-on people among a
people drawn from the whole population, then K members and a - K non-members; the holdout people
being a random subset of the non-members, this is the real-world attack with them replaced by
exchangeable people. The true M is the relative F1 at the trial's t = n_train / N.

**Copiers** put a known share of the training records into the synthetic data: ``copy`` (the
training data verbatim), ``nearcopy`` (verbatim but for ``fnlwgt``, the census weight, moved by
up to 1 %: no exact copy is left, yet the person's every attribute is), and ``copy10`` /
``nearcopy10`` (the Gaussian copula's synthetic data with 10 % of its rows replaced by such
copies of distinct training records).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

import risk

# M's own encoding and matching, as risk.membership uses them (the truth with the trial's bins
# must be the very same attack)
from risk.membership import column_kinds, encode, min_hamming, scores_from_counts
from tuner import measures

JITTER_COLUMN = "fnlwgt"  # a census weight: moving it hides a copy from exact matching only
JITTER = 0.01
KEYS = ("age", "workclass", "education", "marital_status", "race", "sex")
TARGET = "occupation"  # synthpop's disclosure() needs one; repU does not depend on it


@dataclasses.dataclass(frozen=True)
class Setting:
    """One synthesiser setting: a registry family with fixed hyperparameters, or a copier.

    A copier puts ``copy_rate`` of ``n_train`` distinct training records into the synthetic
    data (``jitter``: with ``fnlwgt`` moved by up to 1 %); below rate 1 the rest of the rows are
    the synthetic data of setting ``base``.
    """

    family: str | None
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    copy_rate: float = 0.0
    jitter: bool = False
    base: str | None = None
    heavy: bool = False


class Truth(NamedTuple):
    """The true attack per h: mean F1 and s.d. of M over its attack sets, and the shares of
    members and of non-members matched within h (all of them, not the drawn ones)."""

    f1: np.ndarray
    m_sd: np.ndarray
    member_rate: np.ndarray
    nonmember_rate: np.ndarray


def true_attack(
    records: pd.DataFrame,
    n_members: int,
    synthetic: pd.DataFrame,
    *,
    population_size: int,
    quasi_identifiers: Sequence[str] | None,
    attack_size: int,
    repeats: int,
    seed: int,
    trial_bins: tuple[pd.DataFrame, int] | None = None,
) -> Truth:
    """Per h: the adversary's mean F1 and the s.d. of M over attack sets drawn from the
    population, as ``validate.ground_truth`` computes it, and the matched shares (:class:`Truth`).

    ``records`` holds the ``n_members`` training records first, then non-members (people of
    the population outside the custodian's sample). A repeat attacks ``attack_size`` people
    drawn from a population of ``population_size`` of whom ``n_members`` are members: K of them
    (hypergeometric) are members, drawn from the first block, the rest from the second. Only the
    counts of drawn records at each distance matter, so each block is one multivariate
    hypergeometric draw (sampling without replacement, exactly).

    ``trial_bins = (holdout, max_h)``: encode as the *trial* does instead, numeric bin edges from
    the training records, the trial's holdout and the synthetic data (not the population's
    range), so that the truth is the same attack as the trial's estimate; distances beyond
    ``max_h`` are lumped, so only F1 at h <= max_h is meaningful.
    """
    p = records.shape[1] if quasi_identifiers is None else len(quasi_identifiers)
    if trial_bins is None:
        dist = risk.membership_distances(records, synthetic,
                                         keys=quasi_identifiers).to_numpy()
    else:
        holdout, max_h = trial_bins
        qis = list(records.columns) if quasi_identifiers is None else list(quasi_identifiers)
        frames = {"records": records, "synthetic": synthetic, "holdout": holdout}
        enc = encode([records[:n_members], records[n_members:], synthetic, holdout], qis,
                     column_kinds(frames, qis), fit_frames=[0, 2, 3])
        real = np.concatenate(enc.codes[:2])
        dist = np.minimum(min_hamming(real, enc.codes[2], enc.cardinalities,
                                      max_distance=max_h), max_h + 1)
        p = max_h + 1
    members = np.bincount(dist[:n_members], minlength=p + 1)
    others = np.bincount(dist[n_members:], minlength=p + 1)
    rng = np.random.default_rng(seed)
    ks = rng.hypergeometric(n_members, population_size - n_members, attack_size, size=repeats)
    if (attack_size - ks).max() > others.sum():
        raise ValueError("too few non-members outside the sample for the attack size")
    m_counts = np.stack([rng.multivariate_hypergeometric(members, int(k)) for k in ks])
    o_counts = np.stack([rng.multivariate_hypergeometric(others, int(attack_size - k))
                         for k in ks])
    _, _, f1 = scores_from_counts(m_counts, o_counts)
    t = n_members / population_size
    m_sd = risk.relative_f1(f1, t).std(axis=0, ddof=1) if repeats > 1 else np.zeros(p + 1)
    return Truth(f1.mean(axis=0), m_sd, np.cumsum(members) / members.sum(),
                 np.cumsum(others) / others.sum())


def copier(train: pd.DataFrame, setting: Setting, base: pd.DataFrame | None,
           seed: int) -> pd.DataFrame:
    """Synthetic data holding (near) copies of ``copy_rate`` of the training records."""
    rng = np.random.default_rng(seed)
    n = len(train)
    k = n if setting.copy_rate >= 1.0 else int(round(setting.copy_rate * n))
    copies = train.iloc[rng.choice(n, size=k, replace=False)].reset_index(drop=True)
    if setting.jitter:
        values = copies[JITTER_COLUMN].to_numpy(dtype=float)
        step = np.maximum(1.0, np.round(np.abs(values) * rng.uniform(0.0, JITTER, k)))
        moved = values + rng.choice([-1.0, 1.0], size=k) * step
        copies[JITTER_COLUMN] = moved.astype(train[JITTER_COLUMN].dtype)
    if k == n:
        return copies
    assert base is not None
    out = base.iloc[rng.permutation(len(base))[: n - k]].reset_index(drop=True)
    return pd.concat([out[list(train.columns)], copies], ignore_index=True).iloc[
        rng.permutation(n)].reset_index(drop=True)


def distinct_keys(frame: pd.DataFrame, qis: Sequence[str] | None, bins: int = 20) -> int:
    """Distinct quasi-identifier combinations of ``frame``, numeric columns with more than
    ``bins`` values cut into ``bins`` equal-width bins (as the membership attack reads them)."""
    cols = list(frame.columns) if qis is None else list(qis)
    coded = {}
    for c in cols:
        s = frame[c]
        if risk.column_kind(s) == "numeric" and s.nunique() > bins:
            coded[c] = pd.cut(s, bins, labels=False)
        else:
            coded[c] = s
    return int(pd.DataFrame(coded).drop_duplicates().shape[0])


def binned_copies_difference(train: pd.DataFrame, holdout: pd.DataFrame,
                             synthetic: pd.DataFrame, qis: Sequence[str] | None) -> float:
    """Share of synthetic records equal to a train record on the quasi-identifiers *as the
    membership attack encodes them* (numeric columns binned), minus the same share against the
    holdout: the exact-copies difference of the gate, read at M's resolution, so that a copy
    with one numeric value nudged within its bin still counts."""
    to_train = risk.membership_distances(synthetic, train, keys=qis).to_numpy()
    to_hold = risk.membership_distances(synthetic, holdout, keys=qis).to_numpy()
    return float((to_train == 0).mean() - (to_hold == 0).mean())


def risk_options(hamming_threshold: int) -> dict[str, Any]:
    """The tuner's ``[risk]`` defaults, with synthpop's keys for repU and threshold h."""
    opts = {key: opt.default for key, opt in measures.options().items()}
    return opts | {"hamming_threshold": hamming_threshold, "attribute_keys": KEYS,
                   "cap_targets": (TARGET,)}


def trial_membership(inputs: measures.Inputs, synthetic: pd.DataFrame,
                     qis: tuple[str, ...] | None, h: int) -> risk.MembershipResult:
    """M exactly as a trial computes it (``tuner.measures._membership``)."""
    spec = measures.MEASURES["membership"]
    inp = dataclasses.replace(inputs, synthetic=synthetic, keys=qis,
                              options=risk_options(h))
    result = spec.compute(inp).results[""]
    assert isinstance(result, risk.MembershipResult)
    return result
