"""Membership disclosure by the partition method.

Reference: K. El Emam, L. Mosquera, X. Fang, "Validating a membership disclosure metric for
synthetic health data", JAMIA Open 5(4), 2022, ooac083 (the partition method, its relative F1
"M" and the acceptability threshold M <= 0.2). The contract is DESIGN section 3.

Attacker: holds the full quasi-identifier record of a target and the released synthetic data,
and claims "member" when some synthetic record is within Hamming distance ``h`` of the target
on the (encoded) quasi-identifiers. Real members are the records the generator was trained on
(``train``); real non-members come from ``holdout``.

Sampling fraction: ``t = n_train / N``, the share of the population in the data the evaluated
generator was trained on. This library evaluates exactly the generator that is released, so
``n_train`` is used, not the size of a larger data set that a later retraining would use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from risk._encode import DEFAULT_NUMERIC_BINS, encode
from risk._neighbors import min_hamming
from risk._result import Interval, Result, percentile_interval, safe_ratio
from risk._validation import (
    RiskInputError,
    check_column_list,
    check_columns,
    check_fraction,
    check_frame,
    check_positive_int,
    column_kinds,
    resolve_seed,
    same_columns,
)

DEFAULT_ATTACK_CAP = 10_000


@dataclasses.dataclass(frozen=True)
class MembershipResult(Result):
    """Outcome of :func:`membership_disclosure` (DESIGN 3, El Emam et al. 2022).

    ``m`` is the relative F1, ``(F1 - F_naive) / (1 - F_naive)``; ``m <= 0.2`` is acceptable
    and ``m < 0`` means the adversary does worse than calling everyone a member. ``f1``,
    ``precision`` and ``recall`` are means over the ``repeats`` attack sets at the chosen
    ``hamming_threshold``; ``f1_by_threshold[h]`` and ``m_by_threshold[h]`` give the same for
    every h from 0 to the number of quasi-identifiers.
    """

    m: float
    m_interval: Interval
    f1: float
    f1_std: float
    precision: float
    recall: float
    f_naive: float
    sampling_fraction: float
    population_size: int | None
    hamming_threshold: int
    attack_size: int
    attack_members: int
    repeats: int
    n_train: int
    n_holdout: int
    n_synthetic: int
    quasi_identifiers: tuple[str, ...]
    binned_columns: tuple[str, ...]
    missing_values: int
    f1_by_threshold: tuple[float, ...]
    m_by_threshold: tuple[float, ...]
    random_state: int

    @property
    def acceptable(self) -> bool:
        """Whether ``m <= 0.2``, the threshold of El Emam et al. (2022)."""
        return self.m <= 0.2


def naive_f1(sampling_fraction: float) -> float:
    """F1 of the adversary who calls everyone a member: precision t, recall 1 (DESIGN 3.6)."""
    t = sampling_fraction
    return 2.0 * t / (1.0 + t)


def relative_f1(f1: np.ndarray | float, sampling_fraction: float) -> np.ndarray:
    """``M = (F1 - F_naive) / (1 - F_naive)`` (El Emam et al. 2022; DESIGN 3.6)."""
    f_naive = naive_f1(sampling_fraction)
    return (np.asarray(f1, dtype=float) - f_naive) / (1.0 - f_naive)


def scores_from_counts(
    member_counts: np.ndarray, nonmember_counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 for every threshold h from per-distance counts.

    ``member_counts[..., d]`` is the number of attacked members whose nearest synthetic record
    is at distance d (likewise for non-members). Predicting "member" iff distance <= h gives
    TP(h) = cumsum(member_counts)[h] and FP(h) = cumsum(nonmember_counts)[h]. Each ratio is 0
    when its denominator is 0 (DESIGN 3.5). Shapes: (..., p + 1) in and out.
    """
    tp = np.cumsum(member_counts, axis=-1, dtype=float)
    fp = np.cumsum(nonmember_counts, axis=-1, dtype=float)
    members = member_counts.sum(axis=-1, keepdims=True).astype(float)
    precision = safe_ratio(tp, tp + fp)
    recall = safe_ratio(tp, np.broadcast_to(members, tp.shape))
    f1 = safe_ratio(2.0 * precision * recall, precision + recall)
    return precision, recall, f1


def _sampling_fraction(
    n_train: int, n_holdout: int, population_size: int | None, sampling_fraction: float | None
) -> tuple[float, int | None]:
    if (population_size is None) == (sampling_fraction is None):
        raise RiskInputError(
            "Exactly one of `population_size` and `sampling_fraction` must be given, but got "
            f"(population_size={population_size!r}, sampling_fraction={sampling_fraction!r}). "
            "There is no default: the customary t = 0.5 misstates the risk (El Emam et al. "
            "2022); give the size N of the population the data were drawn from."
        )
    if sampling_fraction is not None:
        return check_fraction(sampling_fraction, "sampling_fraction"), None
    n_pop = check_positive_int(population_size, "population_size")
    if n_pop < n_train + n_holdout:
        raise RiskInputError(
            "`population_size >= len(train) + len(holdout)` must hold (both are people of the "
            f"population), but got (population_size={n_pop}, len(train)={n_train}, "
            f"len(holdout)={n_holdout})."
        )
    t = n_train / n_pop
    if not 0.0 < t < 1.0:
        raise RiskInputError(
            f"The sampling fraction t = len(train) / population_size = {n_train}/{n_pop} = {t} "
            "must satisfy 0 < t < 1; at t = 1 the naive F1 is 1 and M is undefined."
        )
    return t, n_pop


def _members_in_attack(attack_size: int, t: float) -> int:
    # round half up, as round() in R and in the authors' code (Python's round is banker's).
    return int(np.floor(attack_size * t + 0.5))


def _attack_size(requested: int | None, t: float, n_train: int, n_holdout: int) -> int:
    def fits(a: int) -> bool:
        k = _members_in_attack(a, t)
        return 1 <= k <= n_train and 1 <= a - k <= n_holdout

    if requested is not None:
        a = check_positive_int(requested, "attack_size", minimum=2)
        if not fits(a):
            k = _members_in_attack(a, t)
            raise RiskInputError(
                f"`attack_size`={a} at t={t:.6g} needs {k} members (1 <= k <= len(train)="
                f"{n_train}) and {a - k} non-members (1 <= a - k <= len(holdout)={n_holdout})."
            )
        return a
    a = int(min(DEFAULT_ATTACK_CAP, np.floor(n_holdout / (1.0 - t)), np.floor(n_train / t) + 1))
    while a >= 2 and not fits(a):
        a -= 1
    if a < 2:
        raise RiskInputError(
            f"No attack set can hold at least one member and one non-member at t={t:.6g} with "
            f"len(train)={n_train} and len(holdout)={n_holdout}; use a larger holdout."
        )
    return a


def _resolve_qis(
    frames: dict[str, pd.DataFrame], quasi_identifiers: Sequence[str] | None
) -> list[str]:
    if quasi_identifiers is None:
        return same_columns(frames)
    qis = check_column_list(quasi_identifiers, "quasi_identifiers")
    for name, frame in frames.items():
        check_columns(frame, name, qis, "quasi-identifier")
    return qis


def membership_distances(
    records: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[str] | None = None,
    numeric_bins: int | None = DEFAULT_NUMERIC_BINS,
) -> pd.Series:
    """Hamming distance from each record to its nearest synthetic record (DESIGN 3, steps 3-4).

    Encoded on the quasi-identifiers with the rules of DESIGN 3.3 (bin edges from ``records``
    and ``synthetic`` together). Returned as an int Series aligned with ``records``.
    """
    frames = {
        "records": check_frame(records, "records"),
        "synthetic": check_frame(synthetic, "synthetic"),
    }
    qis = _resolve_qis(frames, quasi_identifiers)
    kinds = column_kinds(frames, qis)
    enc = encode([records, synthetic], qis, kinds, numeric_bins=numeric_bins)
    dist = min_hamming(enc.codes[0], enc.codes[1], enc.cardinalities)
    return pd.Series(dist, index=records.index, name="hamming_distance")


def membership_disclosure(
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    population_size: int | None = None,
    sampling_fraction: float | None = None,
    quasi_identifiers: Sequence[str] | None = None,
    hamming_threshold: int = 0,
    attack_size: int | None = None,
    repeats: int = 100,
    numeric_bins: int | None = DEFAULT_NUMERIC_BINS,
    confidence: float = 0.95,
    random_state: int | None = None,
) -> MembershipResult:
    """Membership disclosure risk M by the partition method (El Emam et al. 2022, DESIGN 3).

    Parameters
    ----------
    train, holdout, synthetic:
        The generator's training records (members), real non-members, and the synthetic data.
    population_size, sampling_fraction:
        Exactly one is required: N, giving ``t = len(train) / N``, or t itself; ``0 < t < 1``.
    quasi_identifiers:
        Columns the adversary knows; default every column (then all frames must share them).
    hamming_threshold:
        Claim "member" when the nearest synthetic record differs in at most this many
        quasi-identifiers (default 0: exact match on the encoded values).
    attack_size:
        Records per attack set, ``round(a t)`` of them members; default the largest size both
        pools allow, capped at 10,000.
    repeats:
        Attack sets drawn (default 100); F1, precision and recall are their means.
    numeric_bins:
        Numeric quasi-identifiers with more distinct values are cut into this many equal-width
        bins (DESIGN 3.3); ``None`` compares them exactly.
    confidence:
        Level of the percentile interval of M over the repeats.
    random_state:
        Seed of the attack-set draws; the seed used is recorded in the result.

    Missing values are a category of their own (missing matches missing), never dropped; their
    count is reported as ``missing_values``. The distance of each real record to the synthetic
    data is computed once; each repeat then only draws how many sampled members and non-members
    fall at each distance (a multivariate hypergeometric draw, exactly sampling without
    replacement), so R repeats cost R small draws.
    """
    frames = {
        "train": check_frame(train, "train"),
        "holdout": check_frame(holdout, "holdout"),
        "synthetic": check_frame(synthetic, "synthetic"),
    }
    qis = _resolve_qis(frames, quasi_identifiers)
    kinds = column_kinds(frames, qis)
    p = len(qis)
    if isinstance(hamming_threshold, bool) or not isinstance(hamming_threshold, (int, np.integer)):
        raise TypeError(f"`hamming_threshold` must be an integer, but got {hamming_threshold!r}.")
    if not 0 <= hamming_threshold <= p:
        raise RiskInputError(
            f"`0 <= hamming_threshold <= {p}` (the number of quasi-identifiers) must hold, but "
            f"got hamming_threshold={hamming_threshold}."
        )
    repeats = check_positive_int(repeats, "repeats")
    confidence = check_fraction(confidence, "confidence")
    n_train, n_holdout = len(train), len(holdout)
    t, n_pop = _sampling_fraction(n_train, n_holdout, population_size, sampling_fraction)
    a = _attack_size(attack_size, t, n_train, n_holdout)
    k = _members_in_attack(a, t)
    seed = resolve_seed(random_state)

    enc = encode([train, holdout, synthetic], qis, kinds, numeric_bins=numeric_bins)
    real = np.concatenate([enc.codes[0], enc.codes[1]])
    dist = min_hamming(real, enc.codes[2], enc.cardinalities)
    colors_members = np.bincount(dist[:n_train], minlength=p + 1)
    colors_non = np.bincount(dist[n_train:], minlength=p + 1)

    rng = np.random.default_rng(seed)
    member_counts = rng.multivariate_hypergeometric(colors_members, k, size=repeats)
    non_counts = rng.multivariate_hypergeometric(colors_non, a - k, size=repeats)
    precision, recall, f1 = scores_from_counts(member_counts, non_counts)

    h = hamming_threshold
    f1_h = f1[:, h]
    m_reps = relative_f1(f1_h, t)
    f1_curve = f1.mean(axis=0)
    missing = int(sum(int(f[qis].isna().to_numpy().sum()) for f in frames.values()))
    return MembershipResult(
        m=float(m_reps.mean()),
        m_interval=percentile_interval(m_reps, confidence),
        f1=float(f1_h.mean()),
        f1_std=float(f1_h.std(ddof=1)) if repeats > 1 else 0.0,
        precision=float(precision[:, h].mean()),
        recall=float(recall[:, h].mean()),
        f_naive=naive_f1(t),
        sampling_fraction=t,
        population_size=n_pop,
        hamming_threshold=h,
        attack_size=a,
        attack_members=k,
        repeats=repeats,
        n_train=n_train,
        n_holdout=n_holdout,
        n_synthetic=len(synthetic),
        quasi_identifiers=tuple(qis),
        binned_columns=enc.binned,
        missing_values=missing,
        f1_by_threshold=tuple(float(v) for v in f1_curve),
        m_by_threshold=tuple(float(v) for v in relative_f1(f1_curve, t)),
        random_state=seed,
    )
