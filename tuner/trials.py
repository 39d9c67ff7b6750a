"""Reading a study's trials: feasibility, the best feasible trial, and the trials table."""

from __future__ import annotations

import math

import optuna
import pandas as pd
from optuna.trial import FrozenTrial, TrialState

from tuner.budget import FINISHED, SURPLUS_PREFIX


def is_feasible(trial: FrozenTrial) -> bool:
    """Every constraint <= 0 (a trial without constraints never counts as feasible here)."""
    return bool(trial.constraints) and all(v <= 0 for v in trial.constraints.values())


def best_feasible(study: optuna.Study) -> FrozenTrial | None:
    """The completed feasible trial with the lowest loss, or ``None``."""
    feasible = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
                if is_feasible(t)]
    if not feasible:
        return None
    return min(feasible, key=lambda t: math.inf if t.value is None else t.value)


def trials_frame(study: optuna.Study) -> pd.DataFrame:
    """One row per finished trial: synthesiser, U, M, constraints, loss, state (surplus trials,
    which ran nothing, left out)."""
    rows = []
    surplus = {k for k in study.user_attrs if k.startswith(SURPLUS_PREFIX)}
    for t in study.get_trials(deepcopy=False, states=FINISHED):
        if f"{SURPLUS_PREFIX}{t.number}" in surplus:
            continue
        m = t.user_attrs.get("metrics", {})
        rows.append({
            "number": t.number, "state": t.state.name,
            "synthesizer": t.params.get("synthesizer"),
            "utility": m.get("utility", math.nan), "m": m.get("m", math.nan),
            "loss": t.value if t.value is not None else math.nan,
            "feasible": is_feasible(t),
            **{f"c.{k}": v for k, v in t.constraints.items()},
            "seconds": (t.datetime_complete - t.datetime_start).total_seconds()
            if t.datetime_complete and t.datetime_start else math.nan,
            "fail_reason": t.user_attrs.get("fail_reason", ""),
        })
    return pd.DataFrame(rows)
