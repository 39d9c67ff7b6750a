"""Reading a study's trials: feasibility, the best feasible trial, and the trials table."""

from __future__ import annotations

import math

import optuna
import pandas as pd
from optuna.trial import FrozenTrial, TrialState

from tuner._common import attrs
from tuner.search._budget import FINISHED, SURPLUS_PREFIX
from tuner.search._pareto import Point, pick

PARETO_PICK_ATTR = attrs.PARETO_PICK
# study user attribute per trial whose re-created data failed a constraint at release, where every
# record is scored (a trial scores DCR on a sample): why, and the trial is never released
REJECTED_PREFIX = attrs.REJECTED_PREFIX
DATA_SHA256_ATTR = attrs.DATA_SHA256


def is_feasible(trial: FrozenTrial) -> bool:
    """Every constraint <= 0 (a trial without constraints never counts as feasible here)."""
    return bool(trial.constraints) and all(v <= 0 for v in trial.constraints.values())


def rejected(study: optuna.Study) -> dict[int, str]:
    """Trials refused at release (trial number -> why): feasible as scored, not in full, or
    passed over because their audit could not run (a refusal withdrawn is "")."""
    return {int(k[len(REJECTED_PREFIX):]): str(v) for k, v in study.user_attrs.items()
            if k.startswith(REJECTED_PREFIX) and v}


def has_candidate(trial: FrozenTrial) -> bool:
    """Whether ``trial`` holds a data set the release can re-create: every completed trial,
    and a pruned one whose best checkpoint met every limit (:mod:`tuner.search._checkpointed`:
    pruning stops the spending on a trial, not what its checkpoints measured)."""
    return trial.state == TrialState.COMPLETE or (
        trial.state == TrialState.PRUNED and DATA_SHA256_ATTR in trial.user_attrs)


def releasable(study: optuna.Study) -> list[FrozenTrial]:
    """The feasible trials not refused at release, completed or pruned with a feasible
    checkpoint (:func:`has_candidate`): the candidates a release may take (:func:`best_feasible`
    picks among them, the job's time budget reserves for them)."""
    refused = rejected(study)
    return [t for t in study.get_trials(deepcopy=False,
                                        states=(TrialState.COMPLETE, TrialState.PRUNED))
            if has_candidate(t) and is_feasible(t) and t.number not in refused]


def is_pareto(study: optuna.Study) -> bool:
    """Whether ``study`` runs in Pareto mode (two objectives: U up, M down)."""
    return len(study.directions) > 1


def loss_of(trial: FrozenTrial) -> float:
    """The trial's risk-utility loss: its objective value, or (Pareto mode) its logged metric;
    a pruned trial's is its candidate's (:func:`has_candidate`), else its best feasible
    checkpoint's, if it had one (Optuna gives a pruned trial its last reported value, the loss
    of an infeasible checkpoint where none was feasible)."""
    if trial.state == TrialState.PRUNED:
        if has_candidate(trial):
            return float(trial.user_attrs[attrs.METRICS]["loss"])
        feasible = [p["loss"] for p in trial.user_attrs.get(attrs.CURVE, []) if p.get("feasible")]
        return min(feasible) if feasible else math.nan
    if trial.values is not None and len(trial.values) == 1:
        return float(trial.values[0])
    value = trial.user_attrs.get(attrs.METRICS, {}).get("loss")
    return math.nan if value is None else float(value)


def pareto_choice(study: optuna.Study, among: list[FrozenTrial] | None = None
                  ) -> tuple[FrozenTrial, list[FrozenTrial], str] | None:
    """Pareto mode: the released trial, the feasible front and why
    (:func:`tuner.search._pareto.pick` with the study's rule), or ``None`` without a
    feasible trial; ``among``: the candidates (default :func:`releasable`)."""
    pool = releasable(study) if among is None else among
    trials = {t.number: t for t in pool if t.values is not None}
    if not trials:
        return None
    points = [Point(n, float(t.values[0]), float(t.values[1]), loss_of(t))
              for n, t in trials.items()]
    chosen, front, reason = pick(points, study.user_attrs.get(PARETO_PICK_ATTR, "utility"))
    return trials[chosen.number], [trials[p.number] for p in front], reason


def best_feasible(study: optuna.Study, among: list[FrozenTrial] | None = None
                  ) -> FrozenTrial | None:
    """The completed feasible trial with the lowest loss, or ``None``; in Pareto mode the front
    point the study's rule picks (:func:`pareto_choice`). Trials refused at release
    (:func:`rejected`) are left out of both; ``among``: the candidates, a subset of
    :func:`releasable` (the release's, :mod:`tuner.release._candidates`)."""
    if is_pareto(study):
        choice = pareto_choice(study, among)
        return None if choice is None else choice[0]
    feasible = releasable(study) if among is None else among
    if not feasible:
        return None
    return min(feasible, key=lambda t: math.inf if math.isnan(loss := loss_of(t)) else loss)


def trials_frame(study: optuna.Study) -> pd.DataFrame:
    """One row per finished trial: synthesiser, U, M and its confidence interval, constraints,
    loss, state, whether it was refused at release (surplus trials, which ran nothing, left
    out)."""
    rows = []
    refused = rejected(study)
    surplus = {k for k in study.user_attrs if k.startswith(SURPLUS_PREFIX)}
    for t in study.get_trials(deepcopy=False, states=FINISHED):
        if f"{SURPLUS_PREFIX}{t.number}" in surplus:
            continue
        metrics = t.user_attrs.get(attrs.METRICS, {})
        rows.append({
            "number": t.number, "state": t.state.name,
            "synthesizer": t.params.get("synthesizer"),
            "utility": metrics.get("utility", math.nan), "m": metrics.get("m", math.nan),
            # M's confidence interval (design §3.1; absent in studies made before it)
            "m_ci_low": metrics.get("m_ci_low", math.nan),
            "m_ci_high": metrics.get("m_ci_high", math.nan),
            "loss": loss_of(t),
            "feasible": is_feasible(t),
            "refused": t.number in refused,  # feasible as scored, not in full at release
            **{f"c.{k}": v for k, v in t.constraints.items()},
            "seconds": (t.datetime_complete - t.datetime_start).total_seconds()
            if t.datetime_complete and t.datetime_start else math.nan,
            "fail_reason": t.user_attrs.get(attrs.FAIL_REASON, ""),
        })
    return pd.DataFrame(rows)
