"""Why nothing can be released, and the trials passed over at release (design §9, §13).

:func:`explain_infeasible` says which constraint failed how often, which trials were refused and
why, and what to try; a trial passed over because its audit could not run within
``audit.max_minutes`` is a candidate again once the limit is raised
(:func:`revive_over_budget`); a refused trial's MLflow run says why (:func:`tag_refused`).
"""

from __future__ import annotations

from typing import Any

import optuna

from tuner._common import attrs
from tuner.search import Context, Tracker, claim_lock, rejected, trials_frame

OVER_BUDGET_PREFIX = attrs.OVER_BUDGET_PREFIX


def explain_infeasible(study: optuna.Study, passed: dict[int, str] | None = None) -> str:
    """Which constraint failed how often, and what to try; ``passed``: the feasible trials
    passed over as no safer than one the membership audit refused
    (:func:`tuner.release._candidates.passed_over`)."""
    frame = trials_frame(study)
    complete = frame[frame["state"] == "COMPLETE"] if len(frame) else frame
    lines = [f"No feasible trial among {len(frame)} finished ({len(complete)} completed)."]
    refused = rejected(study)
    if passed:
        lines[0] = (f"No releasable trial among {len(frame)} finished ({len(complete)} "
                    f"completed): {len(refused)} feasible one(s) refused at release, and "
                    f"{len(passed)} passed over as no safer than one the membership audit "
                    "refused (audit.safer_by; lower it to audit them, 1: any setting).")
        lines += [f"  trial {n}: {why}" for n, why in sorted(refused.items())]
        shown = sorted(passed.items())[:5]
        lines += [f"  trial {n} passed over: {why}" for n, why in shown]
        if len(passed) > len(shown):
            lines.append(f"  ... and {len(passed) - len(shown)} more passed over")
        lines.append(_refusal_advice(refused.values()))
        return "\n".join(lines)
    if refused:
        lines[0] = (f"No releasable trial among {len(frame)} finished ({len(complete)} "
                    f"completed): {len(refused)} feasible one(s) refused at release (failed "
                    "when scored in full, on records no trial saw or in the membership "
                    "audit, or passed over because their audit could not run in time).")
        lines += [f"  trial {n}: {why}" for n, why in sorted(refused.items())]
        if len(complete) and complete["feasible"].sum() == len(refused):
            lines.append(_refusal_advice(refused.values()))
            return "\n".join(lines)
    for col in [c for c in complete.columns if c.startswith("c.")]:
        failed = int((complete[col] > 0).sum())
        lines.append(f"  constraint {col[2:]!r} failed in {failed}/{len(complete)} trials "
                     f"(best margin {complete[col].min():+.4f}; must be <= 0)")
    failed_runs = frame[frame["state"] == "FAIL"] if len(frame) else frame
    if len(failed_runs):
        reasons = failed_runs["fail_reason"].replace("", "(no reason recorded)").value_counts()
        lines.append(f"  {len(failed_runs)} trial(s) raised:")
        lines += [f"    {n} x {reason}" for reason, n in reasons.items()]
    if not len(complete):
        lines.append("What to try: no trial completed, so no risk was measured; fix the error(s) "
                     "above (data, config or synthesiser) and run the same command again.")
        return "\n".join(lines)
    if any(c in complete.columns for c in ("c.emr", "c.tmr", "c.fmr")):
        lines.append("In partial synthesis: identification risk falls as the intruder's known "
                     "variables and the synthesised ones single out fewer records; synthesise "
                     "more of the columns the intruder matches on, or use larger CART leaves.")
    lines += [
        "What to try: more trials; the 'cart' synthesiser with larger min_samples_leaf "
        "(narrow [space.cart] min_samples_leaf = [20, 200]); fewer quasi-identifiers if the "
        "intruder cannot know them all; check data.population_size (a too small N inflates M); "
        "raise risk.cap_limit / risk.inference_limit only if your disclosure policy allows.",
    ]
    return "\n".join(lines)


def _refusal_advice(reasons: Any) -> str:
    """What to try when every feasible trial was refused at release, by why they were."""
    text = " ".join(reasons)
    advice = []
    if "cannot be audited" in text:
        advice.append(
            "a feasible trial whose audit would exceed audit.max_minutes is passed over, never "
            "released unaudited: raise audit.max_minutes (the trials passed over become "
            "candidates again), run on more cores (audit.jobs), or search cheaper families "
            "(cart, gaussian_copula) beside the slow ones")
    if "membership audit" in text:
        advice.append(
            "the most exposed training records were told apart by an intruder who knows the "
            "generator: search safer settings (cart: larger min_samples_leaf, e.g. [space.cart] "
            "min_samples_leaf = [20, 200]; neural families: fewer epochs; mst/aim: a lower "
            "epsilon), or coarsen or drop the columns that make single people stand out; "
            "[audit] required = false releases nothing safer, it only skips the audit")
    if "no trial saw" in text:
        advice.append(
            "a constraint that passed on the holdout failed on the sealed audit set: the "
            "holdout, which chose the trial among many, flattered it; a new study with a "
            "tighter limit on that measure keeps a margin")
    if "scored in full" in text or "every synthetic record" in text:
        advice.append("a new study with a tighter limit on the measures refused above (trials "
                      "estimate them on a sample), so that its search keeps a margin")
    return ("What to try: more trials (the search goes on from what it learned); "
            + "; ".join(advice or ["a new study with tighter limits"]) + ".")


def audit_budget(ctx: Context) -> dict[str, Any]:
    """What decides whether an audit fits in time: the audit's settings and where it runs."""
    a = ctx.cfg.audit
    return {k: getattr(a, k) for k in ("max_minutes", "jobs", "targets", "shadows",
                                        "shadow_size", "design", "backend", "scheduler",
                                        "required", "enabled")}


def revive_over_budget(ctx: Context, study: optuna.Study) -> None:
    """Trials passed over because their audit did not fit are candidates again once anything
    that decided it changed (a larger ``max_minutes``, more jobs, fewer shadows, a cluster,
    ``required = false``): their data were never refused, only not audited."""
    now = audit_budget(ctx)
    with claim_lock(ctx, "release-claim"):
        for key, then in dict(study.user_attrs).items():
            if not key.startswith(OVER_BUDGET_PREFIX) or not then or then == now:
                continue
            number = key[len(OVER_BUDGET_PREFIX):]
            study.set_user_attr(f"{attrs.REJECTED_PREFIX}{number}", "")
            study.set_user_attr(key, None)
            trial = next((t for t in study.get_trials(deepcopy=False)
                          if str(t.number) == number), None)
            if trial is not None:
                tag_refused(ctx, trial, "")  # no longer refused: its run says so too
            changed = ", ".join(f"{k} = {now.get(k)!r}" for k in now
                                if not isinstance(then, dict) or then.get(k) != now.get(k))
            print(f"release: trial {number}, passed over when its audit did not fit, is a "
                  f"candidate again (audit.{changed})", flush=True)


def tag_refused(ctx: Context, trial: optuna.trial.FrozenTrial, why: str) -> None:
    """The refused trial's MLflow run says why it was not released ("": a candidate again;
    best effort: the refusal is already in the study)."""
    run_id = trial.user_attrs.get(attrs.MLFLOW_RUN_ID)
    if not run_id:
        return
    try:
        Tracker(ctx.mlflow_uri, ctx.cfg.study.name, ctx.output).log(
            run_id, tags={"release_refused": why[:4000]})
    except Exception as exc:  # noqa: BLE001 - the study holds the reason; say this one
        print(f"warning: could not tag trial {trial.number}'s MLflow run as refused ({exc})")
