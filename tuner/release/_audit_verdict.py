"""The release audit's decision on a candidate (:mod:`tuner.release._audit`): the library's one
rule (:func:`risk.audit.decide`) at the config's ``tpr_limit`` and ``alpha``, and what the
public files and a refusal say of it: how many people were tested and flagged, never who."""

from __future__ import annotations

from typing import Any

import risk
from tuner.release._report_audit import design_said, held_said


def pooled_decision(mem: dict[str, Any], a: Any) -> dict[str, Any]:
    """The pooled bound the candidate is judged by: its pooled TPR's one-sided upper bound over
    the test fits at the config's ``confidence`` (``1 - 0.05 / attempts``: one audit's 95 %
    spent over the candidates the release may audit, :meth:`risk.MembershipAuditResult.verdict`)."""
    upper = risk.audit.pooled_upper_bound(mem["member_hits_by_fit"], mem["member_runs_by_fit"],
                                          confidence=a.confidence)
    return {"confidence": a.confidence, "upper": upper, "attempts": a.attempts}


def person_verdict(mem: dict[str, Any], a: Any, pooled_upper: float) -> risk.AuditVerdict:
    """The audit's decision (:func:`risk.audit.decide`, the rule of
    :meth:`risk.MembershipAuditResult.verdict`) on the figures of an audit that ran, at the
    config's ``tpr_limit`` and ``alpha``, with the bound of :func:`pooled_decision`."""
    return risk.audit.decide(mem["signal_p_values"], mem["target_labels"], pooled_upper,
                             target_member_hits=mem["target_member_hits"],
                             target_member_runs=mem["target_member_runs"],
                             tpr_limit=a.tpr_limit, alpha=a.alpha, confidence=a.confidence)


def persons(verdict: risk.AuditVerdict, mem: dict[str, Any]) -> dict[str, Any]:
    """What the public files say of the per-person test: how many were tested and flagged,
    at which level, by which test; never who, nor any one person's p-value."""
    return {"tested": verdict.n_tested, "flagged": verdict.n_flagged,
            "signalled": verdict.n_signalled, "alpha": verdict.alpha,
            "permutations": mem.get("permutations"),
            "test": "per person, an exact randomisation test (its runs' membership permuted "
                    "within the calibration and test halves) and an exact binomial test of "
                    "its own TPR at 1% FPR against audit.tpr_limit, flagged when both reject "
                    "(intersection-union); Holm's step-down over the people tested"}


MEMBERSHIP_REFUSAL = "membership audit: "
"""How a refusal by the membership audit begins (:func:`refused_why`): what tells it from a
refusal at release by a measure scored in full (:func:`tuner.release._candidates.audit_refused`)."""


def refused_why(mem: dict[str, Any], decided: risk.AuditVerdict, limit: float) -> str:
    """A refused candidate's reason, in public words: how many people were flagged, never
    who."""
    parts = []
    if decided.pooled_refused:
        lo, hi = mem["tpr_at_1pct_interval"]
        parts.append(f"an intruder who knows the generator reaches a pooled TPR of "
                     f"{mem['tpr_at_1pct']:.3f} at 1% FPR on the {mem['targets']} most "
                     f"vulnerable training records (95% interval {lo:.3f}-{hi:.3f}"
                     f"{held_said(mem)}, above audit.tpr_limit = {limit})")
    if decided.n_flagged:
        parts.append(f"{decided.n_flagged} of the {decided.n_tested} people tested "
                     f"{'is' if decided.n_flagged == 1 else 'are'} significantly exposed beyond "
                     f"audit.tpr_limit, each by a test of its own (Holm, family-wise level "
                     f"audit.alpha = {decided.alpha:g})")
    return (f"{MEMBERSHIP_REFUSAL}{'; and '.join(parts)}; largest per-target AUC "
            f"{mem['max_auc']:.2f}, {design_said(mem)}")
