"""Anytime curves, the summary table with intervals over seeds, paired differences, plots.

Reads what ``run`` appended to the results folder (``trials_DATASET.csv.gz``, ``releases.csv``,
``runs.csv``) and writes ``summary.csv``/``.md``, ``paired.csv``/``.md``,
``constraints.csv``/``.md``, ``anytime_DATASET.png`` and ``anytime.csv``. Intervals are 95 %
Student-t intervals over seeds (with 3 seeds the t quantile is 4.30: wide on purpose).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from experiments.reporting import markdown_table
from experiments.tuner_benchmark.plan import Plan

LABELS = {"defaults": "(a) defaults", "random": "(b) random search",
          "tpe": "(c') TPE + constraints, no tracking", "ours": "(c) ours: tuner.tune",
          "additive": "(d) additive loss", "pareto": "(e) ours, Pareto mode",
          "utility": "(f) utility only (pysdg)"}
COLOURS = {"defaults": "tab:grey", "random": "tab:blue", "tpe": "tab:orange", "ours": "tab:red",
           "additive": "tab:green", "pareto": "tab:purple", "utility": "tab:brown"}
# (first, second): first minus second, seed by seed
PAIRS = ((("ours", "best feasible"), ("defaults", "best feasible")),
         (("ours", "best feasible"), ("random", "best feasible")),
         (("ours", "best feasible"), ("additive", "best feasible")),
         (("ours", "best feasible"), ("additive", "own pick")),
         (("ours", "best feasible"), ("utility", "own pick")),
         (("ours", "best feasible"), ("utility", "best feasible")),
         (("ours", "best feasible"), ("tpe", "best feasible")),
         (("pareto", "best feasible"), ("ours", "best feasible")),
         (("pareto", "best feasible"), ("defaults", "best feasible")),
         (("tpe", "best feasible"), ("random", "best feasible")),
         (("tpe", "best feasible"), ("defaults", "best feasible")))


def interval(values: pd.Series) -> tuple[float, float, float]:
    """Mean and 95 % t-interval of the finite values (NaN bounds with fewer than two)."""
    x = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if len(x) < 2:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return mean, mean - half, mean + half


def shown(mean: float, low: float, high: float, fmt: str = ".3f") -> str:
    if math.isnan(mean):
        return ""
    if math.isnan(low):
        return f"{mean:{fmt}}"
    return f"{mean:{fmt}} [{low:{fmt}}, {high:{fmt}}]"


def anytime(rows: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    """Best feasible U among the trials finished by each time of ``grid`` (NaN before the
    first feasible one): non-decreasing by construction."""
    feasible = rows[rows["feasible"].astype(bool)].sort_values("elapsed")
    out = np.full(len(grid), np.nan)
    if feasible.empty:
        return out
    best = np.maximum.accumulate(feasible["utility"].to_numpy(dtype=float))
    idx = np.searchsorted(feasible["elapsed"].to_numpy(dtype=float), grid, side="right") - 1
    out[idx >= 0] = best[idx[idx >= 0]]
    return out


def curves(trials: pd.DataFrame, budgets: dict[str, float], points: int = 121) -> pd.DataFrame:
    """The anytime curve of every (dataset, seed, method) on a common grid of seconds (the
    defaults' grid runs to their last fit)."""
    rows = []
    for (dataset, seed, method), g in trials.groupby(["dataset", "seed", "method"]):
        budget = budgets[dataset]
        end = max(budget, float(g["elapsed"].max())) if method == "defaults" else budget
        grid = np.linspace(0.0, end, points)
        for t, u in zip(grid, anytime(g, grid), strict=True):
            rows.append({"dataset": dataset, "seed": seed, "method": method, "seconds": t,
                         "best_feasible_u": u})
    return pd.DataFrame(rows)


def trial_stats(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, method): trials per run, feasible and failed shares (pooled over seeds,
    among the trials finished within the budget), seconds to the first feasible trial, and
    each trial's seconds outside the work (fit, sample, U, risk): storage, tracking, sampler."""
    rows = []
    within = trials[trials["within_budget"].astype(bool)]
    for (dataset, method), g in within.groupby(["dataset", "method"]):
        first = [sub.loc[sub["feasible"].astype(bool), "elapsed"].min()
                 for _, sub in g.groupby("seed")]
        complete = g[g["state"] == "COMPLETE"]
        rows.append({
            "dataset": dataset, "method": method, "seeds": g["seed"].nunique(),
            "trials per run": len(g) / g["seed"].nunique(),
            "feasible share": float(g["feasible"].astype(bool).mean()),
            "failed share": float((g["state"] == "FAIL").mean()),
            "s to first feasible": float(np.nanmedian(first)) if not all(
                map(math.isnan, first)) else math.nan,
            "overhead s / trial": float((complete["trial_seconds"]
                                         - complete["work_seconds"]).mean()),
        })
    return pd.DataFrame(rows)


def release_table(rel: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, method, choice): the releases' U, feasibility and unseen measures."""
    rows = []
    for (dataset, method, choice), g in rel.groupby(["dataset", "method", "choice"],
                                                    sort=False):
        present = g[g["trial"].notna()]
        row = {"dataset": dataset, "method": method, "choice": choice, "runs": len(g),
               "feasible releases": int(present["feasible"].astype(bool).sum())}
        for col, name in (("utility", "U"), ("tstr_auc", "TSTR AUC"),
                          ("correlation_error", "correlation error")):
            mean, low, high = interval(present[col]) if len(present) else (math.nan,) * 3
            row |= {name: mean, f"{name} low": low, f"{name} high": high}
        row["TRTR AUC"] = float(g["trtr_auc"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def paired(rel: pd.DataFrame) -> pd.DataFrame:
    """The releases of two methods compared seed by seed (where both have one; ``PAIRS``):
    differences of U, TSTR AUC and correlation error, with intervals over the seeds."""
    pick = rel[rel["trial"].notna()]
    rows = []
    for dataset in pick["dataset"].unique():
        here = pick[pick["dataset"] == dataset]
        for (m1, c1), (m2, c2) in PAIRS:
            first = here[(here["method"] == m1) & (here["choice"] == c1)]
            second = here[(here["method"] == m2) & (here["choice"] == c2)]
            both = first.merge(second, on="seed", suffixes=("", "_other"))
            if both.empty:
                continue
            diff = both["utility"] - both["utility_other"]
            row = {"dataset": dataset, "comparison": f"{m1} - {m2}" + (
                f" ({c2})" if c2 != "best feasible" else ""), "pairs": len(both),
                "U wins-ties-losses": f"{(diff > 1e-9).sum()}-{(diff.abs() <= 1e-9).sum()}-"
                                      f"{(diff < -1e-9).sum()}"}
            for col, name in (("utility", "U"), ("tstr_auc", "TSTR AUC"),
                              ("correlation_error", "correlation error")):
                mean, low, high = interval(both[col] - both[f"{col}_other"])
                row |= {name: mean, f"{name} low": low, f"{name} high": high}
            rows.append(row)
    return pd.DataFrame(rows)


def constraint_failures(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, method): the share of completed trials within budget failing each
    constraint (a trial may fail several)."""
    done = trials[(trials["state"] == "COMPLETE") & trials["within_budget"].astype(bool)]
    rows = []
    for (dataset, method), g in done.groupby(["dataset", "method"]):
        cols = [c for c in g.columns if c.startswith("c.") and g[c].notna().any()]
        rows.append({"dataset": dataset, "method": method, "completed": len(g),
                     **{c[2:]: float((g[c] > 0).mean()) for c in cols}})
    return pd.DataFrame(rows)


def by_trial(rows: pd.DataFrame) -> np.ndarray:
    """Best feasible U after each finished trial (within the budget), in finishing order."""
    rows = rows[rows["within_budget"].astype(bool)].sort_values("elapsed")
    u = np.where(rows["feasible"].astype(bool), rows["utility"].to_numpy(dtype=float), np.nan)
    return np.fmax.accumulate(u) if len(u) else u


def plot(curve: pd.DataFrame, trials: pd.DataFrame, dataset: str, budget: float,
         path: Path) -> Path:
    """Anytime curves against seconds (left) and against trials finished (right)."""
    import matplotlib.pyplot as plt

    from tuner._common.figures import save_figure

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True,
                                  gridspec_kw={"width_ratios": [3, 2]})
    here = curve[curve["dataset"] == dataset]
    for method in [m for m in LABELS if m in set(here["method"])]:
        g = here[here["method"] == method]
        for _, one in g.groupby("seed"):
            ax.plot(one["seconds"], one["best_feasible_u"], color=COLOURS[method], alpha=0.25,
                    lw=0.8, drawstyle="steps-post")
        table = g.pivot(index="seconds", columns="seed", values="best_feasible_u")
        mean = table.mean(axis=1).where(table.notna().all(axis=1))  # where every seed has one
        ax.plot(mean.index, mean.to_numpy(), color=COLOURS[method], lw=2,
                drawstyle="steps-post", label=f"{LABELS[method]} (mean of {table.shape[1]})")
        mine = trials[(trials["dataset"] == dataset) & (trials["method"] == method)]
        for _, one in mine.groupby("seed"):
            u = by_trial(one)
            ax2.plot(np.arange(1, len(u) + 1), u, color=COLOURS[method], alpha=0.6, lw=1,
                     drawstyle="steps-post", marker="." if method == "defaults" else None)
    ax.axvline(budget, color="black", lw=0.8, ls=":")
    ax.set_xlabel("elapsed seconds (wall clock, 2 shared cores)")
    ax.set_ylabel("best feasible U so far")
    ax.set_title(f"{dataset}: against time (thin: each seed; budget dotted)")
    ax.legend(loc="lower right", fontsize=8)
    ax2.set_xscale("log")
    ax2.set_xlabel("trials finished within the budget (log scale)")
    ax2.set_title("against trials (each seed)")
    for a in (ax, ax2):
        a.grid(alpha=0.3)
    return save_figure(fig, path)


def _format(frame: pd.DataFrame, names: tuple[str, ...], fmt: str = ".3f") -> pd.DataFrame:
    out = frame.copy()
    for name in names:
        out[name] = [shown(m, lo, hi, fmt) for m, lo, hi in
                     zip(out[name], out[f"{name} low"], out[f"{name} high"], strict=True)]
        out = out.drop(columns=[f"{name} low", f"{name} high"])
    return out


def write(results: Path, plan: Plan) -> list[Path]:
    """Every table and plot from the results folder; the paths written."""
    parts = [pd.read_csv(p) for d in plan.datasets
             if (p := results / f"trials_{d.name}.csv.gz").exists()]
    if not parts or not (results / "releases.csv").exists():
        return []
    trials = pd.concat(parts, ignore_index=True)
    rel = pd.read_csv(results / "releases.csv")
    rel = rel[rel["dataset"].isin([d.name for d in plan.datasets])]
    written = []
    budgets = plan.budgets()
    curve = curves(trials, budgets)
    curve.to_csv(results / "anytime.csv", index=False)
    written.append(results / "anytime.csv")
    for dataset in curve["dataset"].unique():
        written.append(plot(curve, trials, dataset, budgets[dataset],
                            results / f"anytime_{dataset}.png"))
    table = release_table(rel).merge(trial_stats(trials), how="left",
                                     on=["dataset", "method"])
    pairs = paired(rel)
    fails = constraint_failures(trials)
    metrics = ("U", "TSTR AUC", "correlation error")
    for name, frame in (("summary", table), ("paired", pairs), ("constraints", fails)):
        frame.to_csv(results / f"{name}.csv", index=False)
        text = _format(frame, metrics) if name != "constraints" and len(frame) else frame
        (results / f"{name}.md").write_text(markdown_table(text) + "\n")
        written += [results / f"{name}.csv", results / f"{name}.md"]
    return written
