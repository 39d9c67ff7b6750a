"""Which synthesiser gives the most utility at M <= 0.2? The tuner on Adult and Hu's ACS.

For each dataset (a config beside this file) and each synthesiser family, one tuner study with
the same budget, data split, seed, risk settings and utility metric: ``risk-tuner``'s own
``prepare``/``run_study``, so every trial is tracked in MLflow exactly as a user's would be. The
comparison is then read back from MLflow with ``mlflow.search_runs`` over the studies'
experiments (the "experiment comparison" a user does in the UI), and written as:

* ``DATASET_trials.csv``: one row per trial (synthesiser, state, U, M, CAP, inference, seconds);
* ``DATASET_risk_utility.png``: U against M, one colour per synthesiser, the M = 0.2 line;
* ``best_feasible.md``/``.csv``: per dataset and synthesiser, the best trial meeting every
  constraint (U, M, CAP difference, inference risk, fit time);
* ``timing.md``/``.csv``: wall seconds per trial per synthesiser and the share of each trial
  spent on fitting, utility and risk evaluation.

Run from the repository root (``../shared/data`` beside it)::

    python -m experiments.risk_utility.compare [--datasets adult acs] [--trials 8]

The studies live in ``--runs`` (default ``experiments/risk_utility/runs/``, not committed):
rerunning resumes them; ``mlflow ui`` on them is printed at the end.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from experiments.reporting import markdown_table
from tuner import config as tuner_config
from tuner.synthesis import SYNTHESIZERS

HERE = Path(__file__).resolve().parent
DATASETS = {"adult": HERE / "adult.toml", "acs": HERE / "acs.toml"}
FAMILIES = ("cart", "gaussian_copula", "ctgan", "tvae", "copulagan")
DEFAULT_RUNS = HERE / "runs"
DEFAULT_RESULTS = HERE / "results"
# smoke size: every family, one epoch, a few hundred rows: checks the pipeline, not the science
SMOKE_SPACE = {"epochs": [1, 1], "batch_size": [100]}


@dataclasses.dataclass(frozen=True)
class Plan:
    """What to run; ``rows`` subsamples the data (smoke tests only)."""

    datasets: tuple[str, ...] = tuple(DATASETS)
    families: tuple[str, ...] = FAMILIES
    trials: int | None = None  # per family; None: the config's study.n_trials
    rows: int | None = None
    smoke: bool = False

    def __post_init__(self) -> None:
        bad = sorted(set(self.datasets) - set(DATASETS))
        if bad:
            raise ValueError(f"unknown dataset(s) {bad}; known: {sorted(DATASETS)}")
        bad = sorted(set(self.families) - set(FAMILIES))
        if bad:
            raise ValueError(f"unknown synthesiser famil(ies) {bad}; known: {list(FAMILIES)}")
        if self.trials is not None and self.trials < 1:
            raise ValueError(f"`trials >= 1` must hold, got trials={self.trials}")
        if self.rows is not None and self.rows < 20:
            raise ValueError(f"`rows >= 20` must hold, got rows={self.rows}")


def experiment_name(dataset: str, family: str) -> str:
    """The study and MLflow experiment of one (dataset, family)."""
    return f"{dataset}-{family}"


def family_config(base: tuner_config.Config, dataset: str, family: str, plan: Plan,
                  runs: Path) -> tuner_config.Config:
    """The dataset's config restricted to one family, with the plan's budget and output."""
    spaces = dict(base.spaces)
    if plan.smoke and SYNTHESIZERS[family].has_epochs:
        spaces[family] = {**spaces.get(family, {}), **SMOKE_SPACE}
    study = dataclasses.replace(
        base.study, name=experiment_name(dataset, family), synthesizers=(family,),
        n_trials=plan.trials or base.study.trial_budget, output=runs / dataset,
    )
    cfg = dataclasses.replace(base, study=study, spaces=spaces)
    tuner_config.check(cfg)
    return cfg


def run_studies(plan: Plan, runs: Path, *, progress: bool = True) -> dict[str, str]:
    """Run (or resume) every study of the plan; return the MLflow URI of each dataset."""
    from tuner.data import read_table
    from tuner.search import prepare, run_study

    uris = {}
    for dataset in plan.datasets:
        base = tuner_config.load(DATASETS[dataset])
        d = base.data
        frame = read_table(d.path, list(d.columns) if d.columns else None,
                           header_names=list(d.header_names) if d.header_names else None,
                           missing_values=list(d.missing_values))
        if plan.rows is not None and plan.rows < len(frame):
            # a smaller sample of a proportionally smaller population: t stays as configured
            population = round(d.population_size * plan.rows / len(frame))
            frame = frame.sample(n=plan.rows, random_state=base.study.seed).reset_index(drop=True)
            base = dataclasses.replace(base, data=dataclasses.replace(
                d, population_size=population))
        for family in plan.families:
            cfg = family_config(base, dataset, family, plan, runs)
            ctx = prepare(cfg, frame)
            print(f"[{dataset} / {family}] {len(ctx.split.train)} training rows, N = "
                  f"{cfg.data.population_size:,}, {cfg.study.trial_budget} trials", flush=True)
            run_study(ctx, progress=progress)
            uris[dataset] = ctx.mlflow_uri
    return uris


def collect(uri: str, dataset: str, families: Sequence[str]) -> pd.DataFrame:
    """Every trial run of the dataset's studies, read back with ``mlflow.search_runs``."""
    import mlflow

    mlflow.set_tracking_uri(uri)
    runs = mlflow.search_runs(
        experiment_names=[experiment_name(dataset, f) for f in families],
        output_format="pandas",
    )
    if runs.empty:
        return runs
    runs = runs[runs["tags.synthesizer"].notna()].copy()
    out = pd.DataFrame({
        "dataset": dataset,
        "synthesizer": runs["tags.synthesizer"],
        "trial": pd.to_numeric(runs["tags.optuna_trial"], errors="coerce"),
        "state": runs["tags.state"].fillna(runs["status"]),
        "feasible": runs["tags.feasible"].astype(str).str.lower() == "true",
        "wall_seconds": (runs["end_time"] - runs["start_time"]).dt.total_seconds(),
        "fail_reason": runs.get("tags.fail_reason", pd.Series("", index=runs.index)).fillna(""),
    })
    for col in runs.columns:
        if col.startswith("metrics."):
            out[col.removeprefix("metrics.")] = runs[col]
    params = [c for c in runs.columns if c.startswith("params.")]
    out["params"] = [json.dumps({c.removeprefix("params."): v for c, v in row.items()
                                 if isinstance(v, str) and v != ""}, sort_keys=True)
                     for row in runs[params].to_dict("records")]
    return out.sort_values(["synthesizer", "trial"]).reset_index(drop=True)


def _worst(row: pd.Series, prefix: str) -> tuple[float, str]:
    """The largest metric ``prefix.TARGET`` of this trial and its target (the binding one).

    Rows of several datasets share one frame, so targets of other datasets are NaN here.
    """
    values = {c.removeprefix(prefix + "."): float(row[c]) for c in row.index
              if c.startswith(prefix + ".") and pd.notna(row[c])}
    if not values:
        return math.nan, ""
    target = max(values, key=lambda k: values[k])
    return values[target], target


def best_feasible(trials: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and synthesiser, the feasible trial of lowest loss (= highest U)."""
    rows = []
    for (dataset, synth), g in trials.groupby(["dataset", "synthesizer"], sort=False):
        done = g[g["state"] == "COMPLETE"]
        feas = done[done["feasible"]]
        row = {"dataset": dataset, "synthesiser": synth, "trials": len(g),
               "complete": len(done), "feasible": len(feas)}
        if len(feas):
            best = feas.loc[feas["loss"].idxmin()]
            cap_diff, cap_target = _worst(best, "cap_difference")
            inf_diff, inf_target = _worst(best, "inference_difference")
            row |= {"U": best["utility"], "M": best["m"],
                    "CAP difference": cap_diff, "CAP target": cap_target,
                    "inference risk": best[f"inference_risk.{inf_target}"]
                    if inf_target else math.nan,
                    "inference difference": inf_diff, "inference target": inf_target,
                    "fit s": best["fit_seconds"], "trial": str(int(best["trial"])),
                    "params": best["params"]}
        rows.append(row)
    return pd.DataFrame(rows)


def timing(trials: pd.DataFrame) -> pd.DataFrame:
    """Mean wall seconds per completed trial and the share of it in each stage."""
    done = trials[trials["state"] == "COMPLETE"]
    rows = []
    for (dataset, synth), g in done.groupby(["dataset", "synthesizer"], sort=False):
        wall = g["wall_seconds"]
        rows.append({
            "dataset": dataset, "synthesiser": synth, "trials": len(g),
            "wall s / trial": wall.mean(), "fit s": g["fit_seconds"].mean(),
            "sample s": g["sample_seconds"].mean(), "utility s": g["utility_seconds"].mean(),
            "risk s": g["risk_seconds"].mean(),
            "fit share": (g["fit_seconds"] / wall).mean(),
            "utility share": (g["utility_seconds"] / wall).mean(),
            "risk share": (g["risk_seconds"] / wall).mean(),
            # building the model, tracking (MLflow params, metrics, JSON and plot artifacts)
            "other share": (1 - (g["fit_seconds"] + g["sample_seconds"] + g["utility_seconds"]
                                 + g["risk_seconds"]) / wall).mean(),
        })
    return pd.DataFrame(rows)


def write_results(trials: pd.DataFrame, results: Path, *, threshold: float = 0.2) -> list[Path]:
    """The per-dataset CSVs and maps, and the best-feasible and timing tables."""
    from tuner._common.figures import save_figure
    from tuner.search import risk_utility_plot as risk_utility

    results.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for dataset, g in trials.groupby("dataset", sort=False):
        path = results / f"{dataset}_trials.csv"
        g.to_csv(path, index=False)
        complete = g[g["state"] == "COMPLETE"]
        fig = risk_utility(
            complete, threshold=threshold,
            title=f"{dataset}: risk-utility map of every trial (filled: all constraints met)")
        written += [path, save_figure(fig, results / f"{dataset}_risk_utility.png")]
    best, times = best_feasible(trials), timing(trials)
    for name, frame, fmt in (("best_feasible", best, ".3f"), ("timing", times, ".2f")):
        frame.to_csv(results / f"{name}.csv", index=False)
        shown = frame.drop(columns=["params"], errors="ignore")
        (results / f"{name}.md").write_text(markdown_table(shown, floatfmt=fmt) + "\n")
        written += [results / f"{name}.csv", results / f"{name}.md"]
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=list(FAMILIES))
    parser.add_argument("--trials", type=int, help="trials per family (default: the config's)")
    parser.add_argument("--rows", type=int, help="subsample the data (smoke runs only)")
    parser.add_argument("--smoke", action="store_true",
                        help="one-epoch neural spaces: checks the pipeline, not the science")
    parser.add_argument("--runs", type=Path, default=DEFAULT_RUNS,
                        help="folder of the studies (Optuna + MLflow)")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    from experiments.datasets import DatasetMissing
    from tuner._common.quiet import quiet_libraries
    from tuner.search import ui_command

    quiet_libraries()
    plan = Plan(datasets=tuple(args.datasets), families=tuple(args.families),
                trials=args.trials, rows=args.rows, smoke=args.smoke)
    start = time.perf_counter()
    try:
        uris = run_studies(plan, args.runs, progress=not args.no_progress)
    except (DatasetMissing, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    trials = pd.concat([collect(uri, ds, plan.families) for ds, uri in uris.items()],
                       ignore_index=True)
    written = write_results(trials, args.results)
    print(f"\n{len(trials)} trial runs read back from MLflow in "
          f"{time.perf_counter() - start:.0f} s; results:")
    for path in written:
        print(f"  {path}")
    print(markdown_table(best_feasible(trials).drop(columns=["params"], errors="ignore")))
    for ds, uri in uris.items():
        print(f"MLflow UI for {ds}: {ui_command(uri, args.runs / ds)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
