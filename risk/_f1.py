"""F1 of the partition attack and its relative form M (El Emam, Mosquera & Fang 2022; design
§3): the naive F1 of calling everyone a member, M from F1, and the scores from counts."""

from __future__ import annotations

import numpy as np

from risk._arguments import argument, takes
from risk._result import safe_ratio
from risk._validation import RiskInputError


@takes("sampling_fraction")
def naive_f1(sampling_fraction: float) -> float:
    """F1 of the adversary who calls everyone a member: precision t, recall 1 (design §3, step 6).

    ``0 < sampling_fraction < 1`` (a Python or numpy number).
    """
    t = float(argument(sampling_fraction, "sampling_fraction"))
    return 2.0 * t / (1.0 + t)


@takes("sampling_fraction")
def relative_f1(f1: np.ndarray | float, sampling_fraction: float) -> np.ndarray:
    """``M = (F1 - F_naive) / (1 - F_naive)`` (El Emam et al. 2022; design §3, step 6).

    ``f1``: one F1 or an array of them, each in [0, 1]; ``0 < sampling_fraction < 1``.
    """
    return _relative(_check_f1(f1), float(argument(sampling_fraction, "sampling_fraction")))


def _relative(f1: np.ndarray, t: float) -> np.ndarray:
    f_naive = 2.0 * t / (1.0 + t)
    return (f1 - f_naive) / (1.0 - f_naive)


def _check_f1(f1: object) -> np.ndarray:
    if isinstance(f1, (bool, np.bool_, str, bytes)) or f1 is None:
        raise TypeError(f"`f1` must be a number or an array of numbers, got {f1!r}.")
    try:
        values = np.asarray(f1, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(
            f"`f1` must be a number or an array of numbers, got {f1!r}."
        ) from None
    bad = ~((values >= 0.0) & (values <= 1.0))  # NaN is bad too
    if bad.any():
        raise RiskInputError(
            f"`0 <= f1 <= 1` must hold for every F1, got {values[bad][:5].tolist()!r}"
            f"{' ...' if bad.sum() > 5 else ''}."
        )
    return values


def scores_from_counts(
    member_counts: np.ndarray, nonmember_counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 for every threshold h from per-distance counts.

    ``member_counts[..., d]`` is the number of attacked members whose nearest synthetic record
    is at distance d (likewise for non-members). Predicting "member" iff distance <= h gives
    TP(h) = cumsum(member_counts)[h] and FP(h) = cumsum(nonmember_counts)[h]. Each ratio is 0
    when its denominator is 0 (design §3, step 5). Shapes: (..., p + 1) in and out.
    """
    tp = np.cumsum(member_counts, axis=-1, dtype=float)
    fp = np.cumsum(nonmember_counts, axis=-1, dtype=float)
    members = member_counts.sum(axis=-1, keepdims=True).astype(float)
    precision = safe_ratio(tp, tp + fp)
    recall = safe_ratio(tp, np.broadcast_to(members, tp.shape))
    f1 = safe_ratio(2.0 * precision * recall, precision + recall)
    return precision, recall, f1
