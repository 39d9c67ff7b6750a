"""Which trial each method releases, and that release judged on the unseen measures.

A search method releases its best feasible trial finished within the budget (lowest
risk-utility loss; with every constraint met M <= m_threshold, so this is the highest U). The
additive and utility methods have no constraint: what they would release is their own pick,
the trial of lowest additive loss (of highest U), feasible or not; their best feasible trial is
reported beside it (what filtering their trials by our constraints afterwards would give).
The defaults release the best feasible of their fits, and each fit is judged alone too.

A chosen trial's data are made again from its synthesiser, parameters and seed with the
tuner's ``evaluate`` (outside the clock) and its U compared with the U the trial logged:
``reproduced`` is the difference (0 when the fit is deterministic, as the tuner promises).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from experiments.tuner_benchmark.holdout import Target, tstr_auc, unseen
from experiments.tuner_benchmark.methods import THREADS
from tuner.scoring import evaluate
from tuner.search import Context


def in_budget(rows: pd.DataFrame, budget: float) -> pd.DataFrame:
    """The trials that finished within the budget (the defaults have none: every fit counts)."""
    if rows.empty or (rows["method"] == "defaults").all():
        return rows
    return rows[rows["elapsed"] <= budget]


def best_feasible(rows: pd.DataFrame) -> pd.Series | None:
    """The feasible trial of lowest loss (the earliest of equals), or None."""
    feasible = rows[rows["feasible"].astype(bool)]
    if feasible.empty:
        return None
    return feasible.sort_values(["loss", "elapsed"], kind="stable").iloc[0]


def own_pick(rows: pd.DataFrame) -> pd.Series | None:
    """The completed trial of lowest objective (what the additive method releases)."""
    done = rows[(rows["state"] == "COMPLETE") & rows["objective"].notna()]
    if done.empty:
        return None
    return done.sort_values(["objective", "elapsed"], kind="stable").iloc[0]


def most_useful_feasible(rows: pd.DataFrame) -> pd.Series | None:
    """Pareto mode's release (``pareto_pick = "utility"``): the feasible trial of highest U,
    then lowest M, then the earliest; it is always on the feasible front."""
    feasible = rows[rows["feasible"].astype(bool)]
    if feasible.empty:
        return None
    return feasible.assign(_u=-feasible["utility"]).sort_values(
        ["_u", "m", "elapsed"], kind="stable").iloc[0].drop("_u")


def choices(rows: pd.DataFrame, method: str) -> dict[str, pd.Series | None]:
    """The releases of one method's run, by label ("best feasible": what it releases; for
    ``pareto`` the product's Pareto pick)."""
    out: dict[str, pd.Series | None] = {
        "best feasible": most_useful_feasible(rows) if method == "pareto"
        else best_feasible(rows)}
    if method in ("additive", "utility"):  # no constraint: they release their own pick
        out["own pick"] = own_pick(rows)
    if method == "defaults":
        for _, row in rows.iterrows():
            out[f"default {row['synthesizer']}"] = row if row["state"] == "COMPLETE" else None
    return out


def remake(ctx: Context, row: pd.Series) -> tuple[pd.DataFrame, float]:
    """The trial's synthetic data again, and |U again - U logged|."""
    params: dict[str, Any] = json.loads(row["params"])
    ev = evaluate(ctx.cfg, ctx.split, str(row["synthesizer"]), params,
                  seed=int(row["trial_seed"]), threads=THREADS)
    return ev.synthetic, abs(ev.utility - float(row["utility"]))


def judge(ctx: Context, target: Target, rows: pd.DataFrame, method: str,
          data: dict[int, pd.DataFrame] | None = None) -> list[dict[str, Any]]:
    """One row per release of the run: which trial, its U and feasibility, the unseen
    measures (``data``: synthetic sets already at hand, by trial number)."""
    split = ctx.split
    trtr, _ = tstr_auc(split.train, split.train, split.holdout, target)
    out = []
    for label, row in choices(rows, method).items():
        record: dict[str, Any] = {"method": method, "choice": label, "trtr_auc": trtr}
        if row is None:
            out.append(record | {"trial": math.nan, "note": "no such trial"})
            continue
        number = int(row["trial"])
        if data is not None and number in data:
            synthetic, reproduced = data[number], 0.0
        else:
            synthetic, reproduced = remake(ctx, row)
        scores = unseen(synthetic, split.train, split.holdout, target)
        out.append(record | {
            "trial": number, "synthesizer": row["synthesizer"], "params": row["params"],
            "elapsed": row["elapsed"], "utility": row["utility"], "m": row["m"],
            "feasible": bool(row["feasible"]), "tstr_auc": scores.tstr_auc,
            "correlation_error": scores.correlation_error, "reproduced": reproduced,
            "note": scores.note})
    return out
