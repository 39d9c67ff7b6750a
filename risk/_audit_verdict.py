"""The membership audit's decision (:meth:`risk.MembershipAuditResult.verdict`): the pooled bound
and the per-person test (:mod:`risk._audit_person`) in one rule, which the tuner applies too."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from risk._audit_bound import upper_bound
from risk._audit_person import holm, holm_adjusted
from risk._result import Result
from risk._validation import RiskInputError, check_number

TPR_LIMIT = 0.05  # the default limit on the pooled TPR's upper bound at 1 % FPR
ALPHA = 0.05  # the default family-wise level of the per-person test


@dataclasses.dataclass(frozen=True)
class AuditVerdict(Result):
    """The decision of :meth:`MembershipAuditResult.verdict`.

    ``refused`` and ``reason`` (what decided it, in words, naming no target); ``worst_target``,
    the label in ``train``'s index of the target with the smallest p-value (the most exposed
    person: confidential, like every label here) and ``worst_p_value``; per target, in the
    audit's order, ``target_p_values`` and Holm's ``adjusted_p_values`` (the smallest
    family-wise level at which each would be flagged); ``flagged``, the labels of the targets
    flagged at ``alpha``; ``n_tested`` and ``n_flagged``; the pooled part: ``pooled_upper``
    (the pooled TPR's one-sided upper bound at 1 % FPR, at ``confidence``, over the test fits:
    :mod:`risk._audit_bound`) against ``tpr_limit``, and ``pooled_refused``.
    """

    refused: bool
    reason: str
    worst_target: Any
    worst_p_value: float
    target_p_values: tuple[float, ...]
    adjusted_p_values: tuple[float, ...]
    flagged: tuple[Any, ...]
    n_tested: int
    n_flagged: int
    alpha: float
    tpr_limit: float
    pooled_upper: float
    pooled_refused: bool
    confidence: float = 0.95



def bound_said(confidence: float) -> str:
    """How the pooled bound is named in words, at ``confidence``."""
    return (f"the pooled TPR's upper confidence bound at 1 % FPR ({100 * confidence:.1f} %, "
            f"one-sided, over the test fits)")


def decide(target_p_values: Sequence[float], target_labels: Sequence[Any], pooled_upper: float,
           *, tpr_limit: float = TPR_LIMIT, alpha: float = ALPHA,
           confidence: float = 0.95) -> AuditVerdict:
    """:meth:`MembershipAuditResult.verdict` from its figures alone (an audit's p-values, the
    targets' labels in the same order, the pooled TPR's upper bound at 1 % FPR, held at
    ``confidence``, which names it in ``reason``): what the tuner calls on an audit it kept, so
    that one rule decides everywhere."""
    limit = check_number(tpr_limit, "tpr_limit")
    if not 0.0 < limit <= 1.0:
        raise RiskInputError(f"`tpr_limit` must be in (0, 1], but got tpr_limit={tpr_limit!r}.")
    level = check_number(alpha, "alpha")
    if not 0.0 < level < 1.0:
        raise RiskInputError(f"`alpha` must be in (0, 1), but got alpha={alpha!r}.")
    p = np.asarray(target_p_values, dtype=float)
    labels = list(target_labels)
    if p.size == 0 or p.size != len(labels) or not np.all((p > 0) & (p <= 1)):
        raise RiskInputError(f"`target_p_values` must be one p-value in (0, 1] per target "
                             f"label, but got {p.size} value(s) for {len(labels)} label(s).")
    flagged = holm(p, level)
    worst = int(np.argmin(p))  # ties: the more vulnerable (the targets are in that order)
    upper = float(pooled_upper)
    pooled = not upper <= limit  # NaN refuses
    reasons = []
    if pooled:
        reasons.append(f"{bound_said(confidence)}, {upper:.4f}, exceeds tpr_limit = {limit:g}")
    if flagged.any():
        reasons.append(f"{int(flagged.sum())} of the {p.size} people tested "
                       f"{'is' if flagged.sum() == 1 else 'are'} significantly exposed (Holm, "
                       f"family-wise level {level:g}; the most exposed, worst_target, at p = "
                       f"{p[worst]:.2g})")
    if reasons:
        reason = "refused: " + "; and ".join(reasons)
    else:
        reason = (f"passed: {bound_said(confidence)}, {upper:.4f}, is within tpr_limit = "
                  f"{limit:g}, and none of the {p.size} "
                  f"people tested is significantly exposed (Holm, family-wise level {level:g}; "
                  f"smallest p = {p[worst]:.2g})")
    return AuditVerdict(
        refused=bool(reasons), reason=reason, worst_target=labels[worst],
        worst_p_value=float(p[worst]), target_p_values=tuple(float(x) for x in p),
        adjusted_p_values=tuple(float(x) for x in holm_adjusted(p)),
        flagged=tuple(lab for lab, f in zip(labels, flagged, strict=True) if f),
        n_tested=int(p.size), n_flagged=int(flagged.sum()), alpha=level, tpr_limit=limit,
        pooled_upper=upper, pooled_refused=bool(pooled), confidence=float(confidence))


def pooled_upper_bound(member_hits_by_fit: Sequence[float], member_runs_by_fit: Sequence[float],
                       *, confidence: float = 0.95) -> float:
    """The pooled TPR's one-sided upper bound at ``confidence`` from its member runs' hits and
    counts by test fit (:class:`MembershipAuditResult`'s ``member_hits_by_fit``,
    ``member_runs_by_fit``): the bound over fits of :func:`risk._audit_bound.upper_bound`
    (``tpr_at_1pct_interval.high`` is the same bound at ``(1 + 0.95) / 2``); 1 with no member
    run at test."""
    level = check_number(confidence, "confidence")
    if not 0.0 < level < 1.0:
        raise RiskInputError(f"`0 < confidence < 1` must hold, but got confidence={confidence!r}.")
    hits, runs = (np.asarray(v, dtype=float) for v in (member_hits_by_fit, member_runs_by_fit))
    if hits.shape != runs.shape or hits.ndim != 1 or (hits > runs).any() or (hits < 0).any():
        raise RiskInputError("`member_hits_by_fit` and `member_runs_by_fit` must be counts of "
                             f"the same fits, hits <= runs; got {hits.size} and {runs.size}.")
    # no member run at test (a tiny game whose test fits' coins left a target out of all of
    # them): nothing bounds the TPR below 1, and the release is refused at any limit below 1
    return upper_bound(hits, runs, level)
