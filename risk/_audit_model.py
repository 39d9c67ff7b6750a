"""The no-leak refusal model of the membership audit (:func:`risk.audit.null_refusal_rate`,
:func:`risk.audit.minimum_targets`, :func:`risk.audit.minimum_shadows`): how often an audit of a
generator that leaks nothing is refused, for the config's check of the smallest allowed game
(docs/audit.md)."""

from __future__ import annotations

import math
from typing import Any

from risk._arguments import MAX_SHADOWS, argument, takes
from risk._audit_stats import null_refusal_rate as _null_refusal_rate
from risk._validation import (
    RiskInputError,
)

# The no-leak refusal rate the model may predict for an accepted setting: half of the 5 % the
# audit must keep, because the audit's own rate is above the model's (the threshold is
# chosen with the attack on the same calibration runs; the targets' null scores are not
# exactly exchangeable): measured in experiments/release_audit/results/calibration.md
NULL_REFUSAL_ALLOWANCE = 0.025


def _limit(tpr_limit: Any) -> float:
    return float(argument(tpr_limit, "tpr_limit"))


def _confidence(confidence: Any) -> float:
    return float(argument(confidence, "confidence"))


@takes("targets", "shadows", "design", "tpr_limit", "confidence")
def null_refusal_rate(targets: int, shadows: int, *, design: str,
                      tpr_limit: float = 0.05, confidence: float = 0.95) -> float:
    """How often :func:`membership_audit` with these settings would refuse a generator that
    leaks nothing, refusing when the pooled TPR's one-sided upper bound at ``confidence`` (95 %
    by default; :meth:`MembershipAuditResult.verdict`) at 1 % FPR exceeds ``tpr_limit``: the
    model of :func:`risk._audit_stats.null_refusal_rate` (the threshold's false-positive rate
    beta-distributed as split conformal prediction makes it, the hits binomial given it, the
    bound over test fits). NaN when the calibration runs hold too few non-members (``targets x
    (shadows / 2 - shadows / 4)`` below 99) to fix a threshold at 1 % FPR: such an audit calls
    no run a member."""
    targets = int(argument(targets, "targets"))
    shadows = int(argument(shadows, "shadows"))
    argument(design, "design")
    return _null_refusal_rate(targets, shadows, design, _limit(tpr_limit),
                              level=_confidence(confidence))


@takes("shadows", "design", "tpr_limit", "confidence")
def minimum_targets(shadows: int, *, design: str, tpr_limit: float = 0.05,
                    allowance: float = NULL_REFUSAL_ALLOWANCE, confidence: float = 0.95) -> int:
    """The fewest targets with which ``shadows`` shadow runs fix a threshold at 1 % FPR and
    keep the modelled no-leak refusal rate (:func:`null_refusal_rate`) within ``allowance``,
    for that number and the next 10 (the rate is not monotone: a count of hits crosses the
    limit in steps). Found by doubling, then bisection over numbers whose next 10 pass too.
    ``confidence``: the bound's, as :func:`null_refusal_rate`."""
    shadows = int(argument(shadows, "shadows"))
    argument(design, "design")
    limit, level = _limit(tpr_limit), _confidence(confidence)
    nulls = shadows // 2 - shadows // 4  # calibration non-members per target
    ok: dict[int, bool] = {}

    def window(k: int) -> bool:
        for j in range(k, k + 11):
            if j not in ok:
                ok[j] = _null_refusal_rate(j, shadows, design, limit, level=level) <= allowance
            if not ok[j]:
                return False
        return True

    low = high = max(1, math.ceil(99 / nulls))
    while not window(high):
        low, high = high + 1, 2 * high
        if high > 10**7:
            raise RiskInputError(f"no number of targets keeps the no-leak refusal rate within "
                                 f"{allowance} with shadows={shadows}, tpr_limit={tpr_limit}.")
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if window(mid) else (mid + 1, high)
    return high


@takes("targets", "design", "tpr_limit", "confidence")
def minimum_shadows(targets: int, *, design: str, tpr_limit: float = 0.05,
                    allowance: float = NULL_REFUSAL_ALLOWANCE, confidence: float = 0.95) -> int:
    """The fewest (even) shadows with which ``targets`` targets keep the modelled no-leak
    refusal rate (:func:`null_refusal_rate`) within ``allowance``, for that number and the
    next two even ones (the shared design's rate is a Monte Carlo estimate, so it is not
    exactly monotone). Found by doubling from the fewest that could ever pass, then
    bisection. In the shared design the test fits are what count (a bound over ``n`` fits can
    fall no lower than ``1 - (1 - confidence)^(1 / n)``: :mod:`risk._audit_bound`), so more
    targets help little there and this is the number to raise."""
    targets = int(argument(targets, "targets"))
    argument(design, "design")
    limit, level = _limit(tpr_limit), _confidence(confidence)
    ok: dict[int, bool] = {}

    def window(r: int) -> bool:
        for j in range(r, r + 6, 2):
            if j not in ok:
                ok[j] = _null_refusal_rate(targets, j, design, limit, level=level) <= allowance
            if not ok[j]:
                return False
        return True

    # in the shared design no fewer test fits can reject the limit even when no run is caught:
    # the capital of n zero shares at bets of 1 is (1 + limit)^n (risk._audit_bound)
    fits = math.ceil(math.log(1.0 / (1.0 - level)) / math.log1p(limit))
    low = high = max(8, 2 * fits if design == "shared" else 8)
    while not window(high):
        low, high = high + 2, 2 * high
        if high > MAX_SHADOWS:
            raise RiskInputError(f"no number of shadows keeps the no-leak refusal rate within "
                                 f"{allowance} with targets={targets}, tpr_limit={tpr_limit}.")
    while low < high:
        mid = (low + high) // 4 * 2
        low, high = (low, mid) if window(mid) else (mid + 2, high)
    return high
