"""The release's gate scored again on the sealed audit set (design §13, step 1).

Every trial's constraints are measured against the holdout, and the release is the best of many
trials on those numbers: its holdout values are biased in its favour (the winner's curse). The
audit set, records no trial ever read, gives unbiased values. At release the synthetic data as
sampled are scored again with the audit set in the holdout's place, by the very measures and
limits of the trials (exact and near copies, DCR, CAP and inference differences, M with the
audit records as non-members; measures that do not read the holdout give the same numbers);
a constraint that fails there refuses the candidate ("fails on records no trial saw"), through
the release's refusal path (:class:`tuner.release._recreate.ReleaseRejected`).

A study made before audit sets existed has none: the release says so and goes on as before.
"""

from __future__ import annotations

import math
from typing import Any

import risk
from tuner import measures
from tuner.data import Split
from tuner.measures import identification_options
from tuner.scoring import Evaluation, Scored, data_sha256, score, score_partial
from tuner.search import Context
from tuner.synthesis import synthesize_partial

NO_AUDIT_SET = ("data.audit_fraction = 0: no sealed audit set; every record not in training "
                "is the holdout, which also chose the release, so its constraints were not "
                "checked on records no trial saw")


def _interval(i: Any) -> list[float] | None:
    return None if i is None else [float(i.low), float(i.high)]


def audit_set_check(ctx: Context, ev: Evaluation, *, threads: int = 1) -> dict[str, Any]:
    """The candidate's constraints on the holdout and on the audit set, side by side:
    ``{"available", "n_audit", "rows": [...], "failed": [...], "note"}`` (no data values).
    ``failed`` names the constraints that pass on the holdout and fail on the audit set.
    In partial synthesis also ``"identification"``: members against non-members (below)."""
    if not ctx.split.has_audit:
        return {"available": False, "note": NO_AUDIT_SET, "rows": [], "failed": []}
    split = ctx.split
    sealed = Split(train=split.train, holdout=split.audit,
                   train_positions=split.train_positions,
                   holdout_positions=split.audit_positions, domain=split.domain)
    extra: dict[str, Any] = {}
    if ctx.cfg.study.synthesize:
        again, extra = _partial_again(ctx, sealed, ev, threads)
        if again is None:
            return {"available": False, "rows": [], "failed": [], **extra}
    elif ev.sampled is None:
        return {"available": False, "rows": [], "failed": [],
                "note": "the candidate's data as sampled were not kept"}
    else:
        again = score(ctx.cfg, sealed, ev.sampled, seed=ev.seed, release=True,
                      family=ev.synthesizer)
    return _side_by_side(ctx, ev, again) | extra


def _partial_again(ctx: Context, sealed: Split, ev: Evaluation, threads: int
                   ) -> tuple[Scored | None, dict[str, Any]]:
    """Partial synthesis: the released model fitted again (same seed: the same released sets)
    draws the audit records' synthesised columns given their kept ones, as it drew the
    holdout's counterparts; the gate of partial mode is scored with those, and identification
    risk (Reiter et al.'s EMR and TMR, risk.identification_risk) of the audit records in their
    counterfactual release, the non-members, beside the training records'."""
    cfg = ctx.cfg
    part = synthesize_partial(ev.synthesizer, dict(ev.params), sealed.train,
                              synthesize=cfg.study.synthesize or (), seed=ev.seed,
                              sets=cfg.study.synthetic_sets, holdout=sealed.holdout,
                              device=cfg.study.device, threads=threads,
                              noise_key=ev.noise_key)
    if data_sha256(part.sets) != ev.data_sha256():
        return None, {"note": "partial synthesis: the model fitted again drew other sets than "
                              "the release's, so its audit-set counterparts would not be "
                              "comparable; not checked on the audit set"}
    again = score_partial(cfg, sealed, part, seed=ev.seed, release=True)
    kwargs = identification_options(cfg.risk, sealed.train, cfg.data.keys)
    members = ev.results("identification")[""].release  # type: ignore[attr-defined]
    others = risk.identification_risk(sealed.holdout, [part.holdout], **kwargs)

    def shown(r: risk.IdentificationResult) -> dict[str, float]:
        return {"emr_share": r.expected_match_risk / r.n_targets, "tmr": r.true_match_rate,
                "records": float(r.n_targets)}

    return again, {
        "identification": {"members": shown(members), "non_members": shown(others)},
        "note": "partial synthesis: each released row is its own training record, so "
                "membership is disclosed by design; the audit is the gate of partial mode with "
                "the audit records' counterparts in the holdout's place, and identification "
                "risk of the training records beside that of the audit records put through "
                "the same model (non-members: what the kept columns alone give away)"}


def _side_by_side(ctx: Context, ev: Evaluation, again: Scored) -> dict[str, Any]:
    split = ctx.split
    rows, failed = [], []
    for name, held in ev.constraints.items():
        sealed_value = again.constraints.get(name, math.nan)
        before = measures.constraint_result(name, ev.outcomes)
        raw = measures.constraint_result(name, again.outcomes)
        after = measures.constraint_result(name, again.outcomes, on_scale_of=ev.outcomes)
        if before is None or raw is None or after is None:
            continue
        found = measures.bound_of(name, among=ev.outcomes)
        if found is not None and not found[0].reads_holdout:
            continue  # the same number on any holdout (DiSCO, unique copies)
        bound = before[0]
        if bound.rescale is not None:  # the margin of the value on the holdout's scale
            sealed_value = bound.value(after[1], ctx.cfg.risk)
        passed = bool(sealed_value <= 0)
        rows.append({"constraint": name, "metric": bound.metric,
                     "holdout": before[1], "holdout_interval": _interval(before[2]),
                     "audit": after[1], "audit_interval": _interval(after[2]),
                     "holdout_margin": held, "audit_margin": sealed_value, "passed": passed,
                     "interval_method": None if after[2] is None else after[2].method,
                     **({"audit_unscaled": raw[1]} if bound.rescale is not None else {})})
        if not passed:
            failed.append(name)
    return {"available": True, "n_audit": len(split.audit), "n_holdout": len(split.holdout),
            "rows": rows, "failed": failed,
            "note": "the gate's holdout-based measures recomputed with the sealed audit set "
                    "(records no trial read) in the holdout's place; DCR's excess on the "
                    "holdout's scale (audit_unscaled: as computed; design section 13)"}


def refusal(check: dict[str, Any]) -> str | None:
    """Why the candidate is refused by its audit-set values, or ``None``."""
    if not check.get("failed"):
        return None
    parts = [f"{r['constraint']!r} {r['metric']} {r['audit']:+.4f} on the audit set (margin "
             f"{r['audit_margin']:+.4f}; {r['holdout']:+.4f} on the holdout)"
             for r in check["rows"] if r["constraint"] in check["failed"]]
    return "fails on records no trial saw: " + "; ".join(parts)


def winners_curse(check: dict[str, Any]) -> dict[str, float]:
    """Per constraint, audit value minus holdout value (positive: the holdout flattered it)."""
    return {r["constraint"]: r["audit"] - r["holdout"] for r in check.get("rows", [])
            if math.isfinite(r["audit"]) and math.isfinite(r["holdout"])}


