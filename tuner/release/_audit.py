"""The release audit (design §13): the candidate's gate on the sealed audit set, then a
per-record membership audit that knows the generator, before anything is written.

1. :func:`tuner.release._audit_set.audit_set_check`: the gate's holdout-based constraints on
   records no trial saw; a failure refuses the candidate.
2. :func:`risk.membership_audit` with the released family and its tuned parameters as the
   generator (:class:`ReleasedFamily`: fitted and sampled as a trial does, the gate's removal
   of replicated uniques applied, so the intruder attacks what would be released): the
   ``[audit] targets`` most vulnerable training records, ``shadows`` shadow tables each drawn
   from the holdout (the intruder's auxiliary data; never the audit set). A candidate whose
   upper 95 % bound of the pooled TPR at 1 % FPR exceeds ``tpr_limit`` is refused, and the next
   best feasible trial is audited (:mod:`tuner.release._export`).

Cost is shown before it is paid, and before the trial is made again (:func:`preflight`): one
pilot fit is timed and the audit's time estimated for the per-target game (``targets x
shadows`` fits) and the shared one (``shadows`` fits); with ``design = "auto"`` the per-target
game runs when it fits in ``max_minutes``, else the shared one (saying so: ``design_why`` in
the manifest, the summary and the report), else none: then the trial is passed over for the
next best (``required = true``; when none is left, the run ends with exit 3 saying what to
change) or goes out marked "not audited" (``required = false``). Fits run over ``jobs``
processes (every core by default). A finished audit is kept in the study (attribute
``audit:N``), so exporting the same trial again does not pay for it twice.

Partial synthesis releases each training record's own row: membership is disclosed by design,
so no membership audit runs there (identification risk is the measure; the report says so).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from typing import Any, TypedDict

import numpy as np
import optuna

import risk
from tuner._common import attrs
from tuner._common.progress import shown
from tuner._common.seeding import SeedPath
from tuner.release import _audit_backend as audit_backend
from tuner.release._audit_plan import (
    Plan,
    _family,
    _limit,
    _minutes,
    _sample_ratio,
    _size,
    _targets,
    plan,
)
from tuner.release._audit_set import audit_set_check, refusal, winners_curse
from tuner.release._audit_verdict import (
    person_verdict,
    persons,
    pooled_decision,
    refused_why,
)
from tuner.release._manifest import Audit
from tuner.release._recreate import AuditOverBudget, NoFeasibleTrial, ReleaseRejected
from tuner.release._report_audit import verdict_summary
from tuner.scoring import Evaluation
from tuner.search import Context, trial_params

AUDIT_PREFIX = attrs.AUDIT_PREFIX
DP_FAMILIES = ("mst", "aim")
# the audit's statistics (issue 32: thresholds fixed on calibration runs, intervals clustered
# by fit; issue 44: a p-value per person, then the member runs' hits by fit that the bound
# spent over the candidates is made of, then each person's own hits and the release scored):
# an audit kept in a study from before them is not reused
AUDIT_STATISTICS = 5


def _key(ctx: Context, best: optuna.trial.FrozenTrial, design: str) -> str:
    """What an audit's result depends on: the trial's data, the settings, the split."""
    a = ctx.cfg.audit
    ratio = _sample_ratio(ctx)  # named only when not 1: earlier audits' keys stay as they were
    text = json.dumps([best.user_attrs.get(attrs.DATA_SHA256), a.targets, a.shadows, a.shadow_size,
                       design, ctx.fingerprint, ctx.split_record(), ctx.cfg.study.seed,
                       AUDIT_STATISTICS, *([ratio] if ratio != 1.0 else [])], default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _kept(ctx: Context, study: optuna.Study, best: optuna.trial.FrozenTrial
          ) -> dict[str, Any] | None:
    """A finished audit of this trial with the same data, settings and split, or None."""
    a = ctx.cfg.audit
    kept = study.user_attrs.get(f"{AUDIT_PREFIX}{best.number}")
    designs = ("per_target", "shared") if a.design == "auto" else (a.design,)
    if isinstance(kept, dict) and kept.get("key") in {_key(ctx, best, d) for d in designs}:
        return kept
    return None


def preflight(ctx: Context, study: optuna.Study, best: optuna.trial.FrozenTrial
              ) -> Plan | None:
    """The membership audit's plan for ``best``, timed before the trial is made again: a trial
    whose audit cannot run within ``audit.max_minutes`` is passed over (or, as the study's
    release, left as it is) without paying for its refit on the training records (an MST or
    AIM fit, many minutes on a big table). None where no membership audit will be planned:
    disabled, partial synthesis, or an audit of this trial is kept."""
    a = ctx.cfg.audit
    if not a.enabled or ctx.cfg.study.synthesize or _kept(ctx, study, best) is not None:
        return None
    name, params = trial_params(best)
    chosen = plan(ctx, _family(ctx, name, params), _size(ctx), ctx.derive(SeedPath.AUDIT,
                                                                          best.number))
    if chosen.design is None:
        _over_budget(ctx, study, best, name, chosen)  # raises where the audit is required
    return chosen


def _over_budget(ctx: Context, study: optuna.Study, best: optuna.trial.FrozenTrial,
                 name: str, chosen: Plan) -> dict[str, Any]:
    """A trial whose audit does not fit: passed over, left as the study's release, or (audit
    not required) the figures of an audit that did not run."""
    a = ctx.cfg.audit
    why = (f"the membership audit of trial {best.number} ({name}) would take "
           f"about {_minutes(chosen.estimates['per_target'])} (per target) or "
           f"{_minutes(chosen.estimates['shared'])} (shared) on {chosen.jobs} process(es), "
           f"one fit {chosen.pilot_seconds:.2f} s: more than {_limit(ctx)}")
    if a.required and study.user_attrs.get(attrs.RELEASED) == best.number:
        raise NoFeasibleTrial(  # the study's release: left as it is, never withdrawn
            f"{why}; trial {best.number} is the study's release and is left as it is "
            "(raise audit.max_minutes to audit it again)")
    if a.required:  # never released unaudited, never a stop: the next trial is audited
        raise AuditOverBudget(
            f"passed over: {why}, so it cannot be audited (raise audit.max_minutes to "
            "audit it, use fewer audit.shadows, a smaller audit.shadow_size or more cores, "
            "audit.jobs)", max_minutes=a.max_minutes)
    return {"ran": False, "why": why}


def _membership(ctx: Context, study: optuna.Study, best: optuna.trial.FrozenTrial,
                ev: Evaluation, planned: Plan | None) -> dict[str, Any]:
    """The membership audit's figures (run, or kept from an earlier export of this trial);
    ``planned``: :func:`preflight`'s plan (None: timed here)."""
    a = ctx.cfg.audit
    family = _family(ctx, ev.synthesizer, ev.params)
    seed = ctx.derive(SeedPath.AUDIT, best.number)
    size = _size(ctx)
    # a finished audit of this trial is kept before any timing: a slower machine must not
    # turn an audited release into one that "cannot be audited"
    kept = _kept(ctx, study, best)
    if kept is not None:
        print(f"audit: trial {best.number}'s membership audit from {kept['when']} is kept "
              "(same data, settings and split)", flush=True)
        return dict(kept["membership"])
    spent = audited_candidates(study) - {best.number}
    if len(spent) >= a.attempts:
        raise NoFeasibleTrial(
            f"the release has audited {len(spent)} candidate(s) (trials "
            f"{', '.join(map(str, sorted(spent)))}), audit.attempts = {a.attempts}: each was "
            f"judged at {a.confidence:.1%} so that a leaky generator passes one of "
            f"{a.attempts} audits no more often than one audit at 95 %; trial {best.number} is "
            "next. Raise audit.attempts to audit more (each audit is then held to a higher "
            "confidence), or search safer settings")
    chosen = planned if planned is not None else plan(ctx, family, size, seed)
    if chosen.design is None:
        return _over_budget(ctx, study, best, ev.synthesizer, chosen)
    print(f"audit: trial {best.number} ({ev.synthesizer}): {_targets(ctx)} most vulnerable "
          f"training records x {a.shadows} shadow tables of {size:,} holdout records, "
          f"{chosen.design.replace('_', ' ')} design: {chosen.fits:,} fits over "
          f"{min(chosen.jobs, chosen.fits)} process(es); about {_minutes(chosen.seconds)} "
          f"(one fit took {chosen.pilot_seconds:.2f} s); design chosen by {chosen.why}",
          flush=True)
    # a bar on a terminal, a line every tenth in a log file; off with --no-progress
    with shown(chosen.fits, what="audit fits", unit="fit", enabled=ctx.progress) as progress, \
            audit_backend.running(a, min(chosen.jobs, chosen.fits)) as jobs:
        res = risk.membership_audit(
            ctx.split.train, ctx.split.holdout, family, targets=_targets(ctx),
            shadows=a.shadows, shadow_size=size, design=chosen.design,
            n_jobs=jobs, progress=progress, random_state=seed, release=ev.synthetic)
    out = _figures(res) | {"ran": True, "estimated_seconds": chosen.seconds,
                           "pilot_fit_seconds": chosen.pilot_seconds,
                           "jobs": min(chosen.jobs, chosen.fits), "design_why": chosen.why,
                           "sample_ratio": family.sample_ratio}
    study.set_user_attr(f"{AUDIT_PREFIX}{best.number}", {
        "key": _key(ctx, best, chosen.design), "membership": out,
        "when": time.strftime("%Y-%m-%d %H:%M:%S")})
    return out


def audited_candidates(study: optuna.Study) -> set[int]:
    """The trials whose membership audit has run in this study (kept in its attributes):
    what ``audit.attempts`` counts."""
    return {int(k[len(AUDIT_PREFIX):]) for k, v in study.user_attrs.items()
            if k.startswith(AUDIT_PREFIX) and isinstance(v, dict)
            and v.get("membership", {}).get("ran")}


def _figures(res: risk.MembershipAuditResult) -> dict[str, Any]:
    """Counts and scores only: no target's values or position."""
    ci = res.tpr_at_1pct_interval
    return {
        "design": res.design, "targets": res.n_targets, "shadows": res.n_shadows,
        "shadow_size": res.shadow_size, "fits": res.n_fits, "attacks": list(res.attacks),
        "target_auc": [float(x) for x in res.target_auc],
        "best_attack_auc": [float(x) for x in res.best_attack_auc],
        "attack_auc": {k: [float(x) for x in v] for k, v in res.attack_auc.items()},
        "selected_attack": list(res.selected_attack), "vulnerability": list(res.vulnerability),
        "max_auc": res.max_auc, "median_auc": _over_known(np.median, res.target_auc),
        "best_attack_auc_max": _over_known(np.max, res.best_attack_auc),
        "best_attack_auc_median": _over_known(np.median, res.best_attack_auc),
        "tpr_at_1pct": res.tpr_at_1pct, "tpr_at_1pct_interval": [ci.low, ci.high],
        "fpr_at_1pct": res.fpr_at_1pct,
        "fpr_at_1pct_interval": [res.fpr_at_1pct_interval.low, res.fpr_at_1pct_interval.high],
        "interval_method": ci.method, "calibration_nulls": res.n_calibration_nulls,
        "tpr_at_10pct": res.tpr_at_10pct,
        "tpr_at_10pct_interval": [res.tpr_at_10pct_interval.low,
                                  res.tpr_at_10pct_interval.high],
        "fpr_at_10pct": res.fpr_at_10pct, "epsilon_lower_bound": res.epsilon_lower_bound,
        "epsilon_ceiling": res.epsilon_ceiling, "epsilon_delta": 0.0,
        "member_runs": res.n_member_runs, "nonmember_runs": res.n_nonmember_runs,
        "classifier_skipped": res.classifier_skipped, "seconds": res.seconds,
        "seed": res.random_state, "auxiliary_records": res.n_reference,
        "bandwidth": res.bandwidth,
        "signal_p_values": list(res.signal_p_values), "target_labels": list(res.target_labels),
        "target_member_hits": list(res.target_member_hits),
        "target_member_runs": list(res.target_member_runs),
        "permutations": res.n_permutations,
        # the pooled bound at the config's confidence is made of these (not published)
        "member_hits_by_fit": list(res.member_hits_by_fit),
        "member_runs_by_fit": list(res.member_runs_by_fit),
        # the release itself scored per person (risk._audit_release): public, the counts only
        "release_z": list(res.release_z), "release_called": list(res.release_called),
        "release_p_values": list(res.release_p_values),
        "release_log_lr": list(res.release_log_lr),
        "release_members_called": res.n_release_called,
        "release_members_expected": res.release_expected_called,
    }


CUSTODIAN_ONLY = ("seed", "vulnerability", "signal_p_values", "target_member_hits",
                  "target_member_runs", "target_labels", "target_auc", "best_attack_auc",
                  "attack_auc", "selected_attack", "release_z", "release_called",
                  "release_p_values", "release_log_lr")
"""What the audit's figures hold that only the custodian may read (design §9.2): the audit's
seed, from the study's secret, the targets' vulnerability scores (with the table, a score
singles its record out, and every target is a training record), each target's p-values
of being exposed, its own hits, its AUCs and its scores on the release itself (by
vulnerability rank: how exposed the k-th most vulnerable person is), and the targets' labels
(their rows in the input table: who was tested). The public files keep the largest and the
median AUC, how many people the release itself scored as members, and the figure shows the AUCs
sorted, not by person."""


UNPUBLISHED = ("member_hits_by_fit", "member_runs_by_fit")  # kept with the study's audit only


def public(audited: Audit) -> Audit:
    """The manifest's ``audit`` entry: ``audited`` without :data:`CUSTODIAN_ONLY` nor the
    counts by fit (:data:`UNPUBLISHED`, hundreds of numbers that :func:`pooled_decision`
    summarises)."""
    mem = {k: v for k, v in audited.get("membership", {}).items()
           if k not in CUSTODIAN_ONLY and k not in UNPUBLISHED}
    return audited | {"membership": mem}


def release_audit(ctx: Context, study: optuna.Study, best: optuna.trial.FrozenTrial,
                  ev: Evaluation, *, planned: Plan | None = None) -> Audit:
    """The audit of the candidate ``best`` (module docstring); the manifest's ``audit`` entry.
    Raises :class:`ReleaseRejected` when it fails (the next best trial is then audited).
    ``planned``: the membership audit's plan made by :func:`preflight` before the trial was made
    again (None: planned here)."""
    a = ctx.cfg.audit
    check = audit_set_check(ctx, ev, threads=int(best.user_attrs.get(attrs.THREADS, 1)))
    if (why := refusal(check)) is not None:
        raise ReleaseRejected(why)
    if not a.enabled:
        mem: dict[str, Any] = {"ran": False, "why": "disabled by audit.enabled = false"}
    elif ctx.cfg.study.synthesize:
        mem = {"ran": False, "partial": True,
               "why": "partial synthesis: each released row is its own training record, so "
                      "membership is disclosed by design; the audit is identification risk on "
                      "the sealed audit set"}
    else:
        mem = _membership(ctx, study, best, ev, planned)
    if mem.get("ran"):
        bound = pooled_decision(mem, a)
        decided = person_verdict(mem, a, bound["upper"])
        mem = mem | {"persons": persons(decided, mem), "pooled_decision": bound}
        if decided.refused:
            raise ReleaseRejected(refused_why(mem, decided, a.tpr_limit))
    # in partial synthesis the audit is the sealed set's check (identification risk included)
    audited = mem.get("ran") or (mem.get("partial") and check.get("available"))
    verdict = "passed" if audited else "not audited"
    out: Audit = {
        "verdict": verdict, "summary": verdict_summary(verdict, check, mem, a.tpr_limit),
        "tpr_limit": a.tpr_limit, "audit_set": check, "membership": mem,
        "winners_curse": winners_curse(check),
        "intruder": {"knows": "the synthesiser family and its tuned parameters, the holdout "
                              "records as auxiliary data, each target's whole record",
                     "family": ev.synthesizer, "params": dict(ev.params),
                     "auxiliary_records": len(ctx.split.holdout)},
    }
    if (claim := dp_claim(ev.synthesizer, ev.params)) is not None:
        out.update(claim)
    return out


class DPClaim(TypedDict):  # a differentially private family's claim, in the audit entry
    claimed_epsilon: float
    claimed_neighbours: str
    claimed_epsilon_in_game: float


def dp_claim(family: str, params: dict[str, Any]) -> DPClaim | None:
    """What a differentially private family claims, beside the audit's lower bound: its
    ``epsilon``, for add/remove-one neighbours (:mod:`tuner.synthesis._dp`); the game replaces
    one record, where group privacy makes the claim ``(2 epsilon, (1 + e^epsilon) delta)``.
    ``None`` for another family."""
    if family not in DP_FAMILIES or "epsilon" not in params:
        return None
    epsilon = float(params["epsilon"])
    return {"claimed_epsilon": epsilon, "claimed_neighbours": "add/remove one record",
            "claimed_epsilon_in_game": 2.0 * epsilon}


def metrics(audit: dict[str, Any]) -> dict[str, float]:
    """Flat numbers of the audit for the released trial's MLflow run."""
    mem = audit["membership"]
    out: dict[str, float] = {}
    if mem.get("ran"):
        out |= {"audit.tpr_at_1pct": mem["tpr_at_1pct"],
                "audit.tpr_at_1pct_upper": mem["tpr_at_1pct_interval"][1],
                "audit.tpr_at_10pct": mem["tpr_at_10pct"], "audit.max_auc": mem["max_auc"],
                "audit.epsilon_lower_bound": mem["epsilon_lower_bound"],
                "audit.fits": float(mem["fits"]), "audit.seconds": mem["seconds"]}
        if mem.get("release_members_called") is not None:
            out["audit.release_members_called"] = float(mem["release_members_called"])
    for row in audit["audit_set"].get("rows", []):
        if math.isfinite(row["audit_margin"]):
            out[f"audit_set.{row['constraint']}"] = row["audit_margin"]
    return out


def _over_known(statistic: Any, values: Any) -> float:
    """``statistic`` of the finite ``values`` (an AUC is NaN for a target without test runs
    on one side, in a small audit); NaN, without NumPy's warning, when none is finite."""
    known = np.asarray(values, dtype=float)
    known = known[np.isfinite(known)]
    return float(statistic(known)) if known.size else math.nan
