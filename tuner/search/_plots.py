"""The study's plots: the risk-utility map and the optimisation history (logged to MLflow by
the study, and drawn again in the release folder by :mod:`tuner.release`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tuner._common.figures import figure


def risk_utility(trials: pd.DataFrame, *, threshold: float,
                 title: str = "Risk-utility map (filled: all constraints met)",
                 front: tuple[int, ...] = (), released: int | None = None) -> Figure:
    """U against M for every completed trial, the M = threshold line, feasible trials filled.

    Pareto mode (:mod:`tuner.search._pareto`): ``front`` (trial numbers of the feasible front) is
    drawn
    as a staircase through its points and ``released`` (a trial number) is ringed.
    """
    fig, ax = figure(figsize=(6.5, 4.5))
    for name, group in trials.groupby("synthesizer"):
        feas = group["feasible"].astype(bool)
        pts = ax.scatter(group.loc[feas, "m"], group.loc[feas, "utility"], label=f"{name}", s=36)
        ax.scatter(group.loc[~feas, "m"], group.loc[~feas, "utility"], s=36,
                   facecolors="none", edgecolors=pts.get_facecolor())
    numbers = trials["number"] if "number" in trials else pd.Series(-1, index=trials.index)
    on_front = trials[numbers.isin(front)].sort_values("m")
    if len(on_front):
        ax.step(on_front["m"], on_front["utility"], where="post", color="black", lw=1,
                label=f"feasible front ({len(on_front)} trials)")
    chosen = trials[numbers == released]
    if len(chosen):
        ax.scatter(chosen["m"], chosen["utility"], s=220, facecolors="none", edgecolors="black",
                   linewidths=1.5, label=f"released: trial {released}")
    ax.axvline(threshold, color="crimson", ls="--", lw=1, label=f"M = {threshold}")
    ax.set_xlabel("membership disclosure M (relative F1)")
    ax.set_ylabel("utility U")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return fig


def history(trials: pd.DataFrame) -> Figure:
    """Loss per trial, and the best feasible loss so far (trials refused at release left out:
    gray like the infeasible ones)."""
    fig, ax = figure(figsize=(6.5, 4))
    t = trials.sort_values("number")
    ok = t["feasible"].astype(bool) & ~t.get("refused", pd.Series(False, index=t.index))
    ax.scatter(t["number"], t["loss"], c=np.where(ok, "tab:blue", "lightgray"), s=24,
               label="trial loss (gray: infeasible or refused at release)")
    best = t["loss"].where(ok).cummin()
    ax.step(t["number"], best, where="post", color="tab:green", label="best feasible")
    ax.set_xlabel("trial")
    ax.set_ylabel("risk-utility loss (lower is better)")
    ax.legend(fontsize=8)
    return fig
