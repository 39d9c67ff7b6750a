"""The membership audit's decision (:meth:`risk.MembershipAuditResult.verdict`): the pooled bound
and the per-person test (:mod:`risk._audit_person`) in one rule, which the tuner applies too."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from risk._arguments import argument, takes
from risk._audit_bound import upper_bound
from risk._audit_person import exposure_p, holm, holm_adjusted
from risk._result import Result
from risk._validation import RiskInputError

TPR_LIMIT = 0.05  # the default limit on the pooled TPR's upper bound at 1 % FPR
ALPHA = 0.05  # the default family-wise level of the per-person test


@dataclasses.dataclass(frozen=True)
class AuditVerdict(Result):
    """The decision of :meth:`MembershipAuditResult.verdict`.

    ``refused`` and ``reason`` (what decided it, in words, naming no target); ``worst_target``,
    the label in ``train``'s index of the most exposed target (the smallest ``target_p_values``,
    ties broken by the signal's: confidential, like every label here) and ``worst_p_value``;
    per target, in the audit's order: ``target_p_values``, the intersection-union p-value of
    "exposed beyond ``tpr_limit``" (:mod:`risk._audit_person`), Holm's ``adjusted_p_values`` of
    them (the smallest family-wise level at which each would be flagged), ``signal_p_values``
    (the randomisation test's, of "nothing of this person reaches the output") and
    ``target_tpr`` (its member test runs' share called members at 1 % FPR, NaN for none);
    ``flagged``, the labels of the targets flagged at ``alpha``; ``n_tested``, ``n_flagged``
    and ``n_signalled`` (the people whose signal alone Holm rejects at ``alpha``: something of
    them reaches the output, not shown beyond the limit unless flagged); the pooled part:
    ``pooled_upper`` (the pooled TPR's one-sided upper bound at 1 % FPR, at ``confidence``,
    over the test fits: :mod:`risk._audit_bound`) against ``tpr_limit``, and
    ``pooled_refused``.
    """

    refused: bool
    reason: str
    worst_target: Any
    worst_p_value: float
    target_p_values: tuple[float, ...]
    adjusted_p_values: tuple[float, ...]
    signal_p_values: tuple[float, ...]
    target_tpr: tuple[float, ...]
    flagged: tuple[Any, ...]
    n_tested: int
    n_flagged: int
    n_signalled: int
    alpha: float
    tpr_limit: float
    pooled_upper: float
    pooled_refused: bool
    confidence: float = 0.95


def bound_said(confidence: float) -> str:
    """How the pooled bound is named in words, at ``confidence``."""
    return (f"the pooled TPR's upper confidence bound at 1 % FPR ({100 * confidence:.1f} %, "
            f"one-sided, over the test fits)")


def _person_counts(hits: Sequence[int], runs: Sequence[int], k: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    h, n = (np.asarray(v, dtype=float) for v in (hits, runs))
    if h.shape != (k,) or n.shape != (k,):
        raise RiskInputError(f"`target_member_hits` and `target_member_runs` must be counts "
                             f"for each of the {k} target(s), got {h.size} and {n.size}.")
    whole = np.isfinite(h) & np.isfinite(n) & (h == np.round(h)) & (n == np.round(n))
    if not whole.all() or (h < 0).any() or (h > n).any():
        bad = int(np.flatnonzero(~whole | (h < 0) | (h > n))[0])
        raise RiskInputError(f"`target_member_hits` and `target_member_runs` must be whole "
                             f"counts with 0 <= hits <= runs, but target {bad} has hits = "
                             f"{h[bad]!r}, runs = {n[bad]!r}.")
    return h, n


@takes("tpr_limit", "alpha", "confidence")
def decide(signal_p_values: Sequence[float], target_labels: Sequence[Any], pooled_upper: float,
           *, target_member_hits: Sequence[int], target_member_runs: Sequence[int],
           tpr_limit: float = TPR_LIMIT, alpha: float = ALPHA,
           confidence: float = 0.95) -> AuditVerdict:
    """:meth:`MembershipAuditResult.verdict` from its figures alone (an audit's signal
    p-values, the targets' labels in the same order, the pooled TPR's upper bound at 1 % FPR,
    held at ``confidence``, which names it in ``reason``, and each target's member test runs
    and their hits at 1 % FPR): what the tuner calls on an audit it kept, so that one rule
    decides everywhere."""
    limit = float(argument(tpr_limit, "tpr_limit"))
    level = float(argument(alpha, "alpha"))
    signal = np.asarray(signal_p_values, dtype=float)
    labels = list(target_labels)
    if signal.size == 0 or signal.size != len(labels) or not np.all((signal > 0) & (signal <= 1)):
        raise RiskInputError(f"`signal_p_values` must be one p-value in (0, 1] per target "
                             f"label, got {signal.size} value(s) for {len(labels)} label(s).")
    hits, runs = _person_counts(target_member_hits, target_member_runs, signal.size)
    p = exposure_p(signal, hits, runs, limit)
    flagged = holm(p, level)
    signalled = int(holm(signal, level).sum())
    # ties: the smaller signal, then the more vulnerable (the targets are in that order)
    worst = int(np.lexsort((np.arange(p.size), signal, p))[0])
    upper = float(pooled_upper)
    pooled = not upper <= limit  # NaN refuses
    reasons = []
    if pooled:
        reasons.append(f"{bound_said(confidence)}, {upper:.4f}, exceeds tpr_limit = {limit:g}")
    if flagged.any():
        reasons.append(f"{int(flagged.sum())} of the {p.size} people tested "
                       f"{'is' if flagged.sum() == 1 else 'are'} significantly exposed beyond "
                       f"tpr_limit (Holm, family-wise level {level:g}; the most exposed, "
                       f"worst_target, at p = {p[worst]:.2g})")
    if reasons:
        reason = "refused: " + "; and ".join(reasons)
    else:
        reason = (f"passed: {bound_said(confidence)}, {upper:.4f}, is within tpr_limit = "
                  f"{limit:g}, and none of the {p.size} people tested is significantly "
                  f"exposed beyond it (Holm, family-wise level {level:g}; smallest p = "
                  f"{p[worst]:.2g}; {signalled} with a signal not shown beyond it)")
    tpr = np.divide(hits, runs, out=np.full(runs.shape, np.nan), where=runs > 0)
    return AuditVerdict(
        refused=bool(reasons), reason=reason, worst_target=labels[worst],
        worst_p_value=float(p[worst]), target_p_values=tuple(float(x) for x in p),
        adjusted_p_values=tuple(float(x) for x in holm_adjusted(p)),
        signal_p_values=tuple(float(x) for x in signal), target_tpr=tuple(float(x) for x in tpr),
        flagged=tuple(lab for lab, f in zip(labels, flagged, strict=True) if f),
        n_tested=int(p.size), n_flagged=int(flagged.sum()), n_signalled=signalled,
        alpha=level, tpr_limit=limit, pooled_upper=upper, pooled_refused=bool(pooled),
        confidence=float(confidence))


@takes("confidence")
def pooled_upper_bound(member_hits_by_fit: Sequence[float], member_runs_by_fit: Sequence[float],
                       *, confidence: float = 0.95) -> float:
    """The pooled TPR's one-sided upper bound at ``confidence`` from its member runs' hits and
    counts by test fit (:class:`MembershipAuditResult`'s ``member_hits_by_fit``,
    ``member_runs_by_fit``): the bound over fits of :func:`risk._audit_bound.upper_bound`
    (``tpr_at_1pct_interval.high`` is the same bound at ``(1 + 0.95) / 2``); 1 with no member
    run at test."""
    level = float(argument(confidence, "confidence"))
    hits, runs = (np.asarray(v, dtype=float) for v in (member_hits_by_fit, member_runs_by_fit))
    if hits.shape != runs.shape or hits.ndim != 1 or (hits > runs).any() or (hits < 0).any():
        raise RiskInputError("`member_hits_by_fit` and `member_runs_by_fit` must be counts of "
                             f"the same fits, hits <= runs; got {hits.size} and {runs.size}.")
    # no member run at test (a tiny game whose test fits' coins left a target out of all of
    # them): nothing bounds the TPR below 1, and the release is refused at any limit below 1
    return upper_bound(hits, runs, level)
