"""Partial synthesis of Hu's ACS with identification risk as a constraint, family by family.

Hu's setting (her Data Confidentiality course, "Methods for Risk Evaluation 1 and 2"; Hu 2019,
Section 4.2.6): LANX, WAOB, DIS and HICOV are synthesised, SEX, RACE, MAR, MIG and SCH are
released as collected, and the intruder knows SEX, RACE and MAR of every target (and the true
values of the synthesised variables: Reiter & Mitra's worst case). For each synthesiser family,
one tuner study (``acs_partial.toml`` restricted to that family, m = 3 sets per trial) with the
expected match risk and the true match rate as constraints; its best feasible trial is exported
as the tuner exports any release. Then, read back from MLflow (``mlflow.search_runs``):

* ``trials.csv``: every trial (state, U, EMR, EMR / N, TMR, FMR, M, copies, CAP, timings);
* ``identification.md`` / ``.csv``: Hu's published numbers, her released files scored on our
  training records (the same 5,000 targets), those records released unsynthesised, and each
  family's released trial (U, EMR, TMR, FMR for m = 3 and for its first set alone);
* ``identification_utility.png``: U against EMR / N for every trial, the limit, Hu's synthesis;
* ``conditioning.md`` / ``.csv``: what conditioning cost per family (seconds to draw the m
  sets and the holdout's counterpart, draws made by rejection, trials it failed).

Run from the repository root (``../shared/data`` beside it)::

    python -m experiments.partial_synthesis.run [--families cart ctgan] [--trials 6]

The studies live in ``--runs`` (default ``experiments/partial_synthesis/runs/FAMILY/``, not
committed); rerunning resumes them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.reporting import markdown_table
from tuner import config as tuner_config
from tuner.synthesis import SYNTHESIZERS

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "acs_partial.toml"
FAMILIES = ("cart", "gaussian_copula", "ctgan", "tvae", "copulagan", "mst", "aim")
# trials per family (--trials N sets them all), run by two workers of one torch thread each
TRIALS = {"cart": 8, "gaussian_copula": 4, "ctgan": 4, "tvae": 2, "copulagan": 4, "mst": 2,
          "aim": 2}
DEFAULT_RUNS = HERE / "runs"
DEFAULT_RESULTS = HERE / "results"
SMOKE_SPACE = {"epochs": [1, 1], "batch_size": [100]}
# smoke runs check the pipeline, release included, not the science: limits lifted
SMOKE_LIMITS = {"emr_limit": 1.0, "tmr_limit": 1.0, "copy_limit": 1.0, "near_copy_limit": 1.0,
                "cap_limit": 1.0, "inference_limit": 1.0, "m_threshold": 0.99}
# J. Hu, "Methods for Risk Evaluation #1" (m = 1) and "#2" (m = 3), as printed: her released
# files, all 10,000 records as targets (tests/risk/test_identification.py reproduces them)
HU_PUBLISHED = (("Hu, published (m = 1)", 41.37, 0.0005, 0.97),
                ("Hu, published (m = 3)", 41.47, 0.0006, 0.96))


@dataclasses.dataclass(frozen=True)
class Plan:
    """What to run; ``rows`` subsamples the data (smoke runs only)."""

    families: tuple[str, ...] = FAMILIES
    trials: int | None = None
    rows: int | None = None
    smoke: bool = False

    def __post_init__(self) -> None:
        bad = sorted(set(self.families) - set(FAMILIES))
        if bad:
            raise ValueError(f"unknown synthesiser famil(ies) {bad}; known: {list(FAMILIES)}")
        if self.trials is not None and self.trials < 1:
            raise ValueError(f"`trials >= 1` must hold, got trials={self.trials}")
        if self.rows is not None and self.rows < 100:
            raise ValueError(f"`rows >= 100` must hold, got rows={self.rows}")


def family_config(base: tuner_config.Config, family: str, plan: Plan,
                  runs: Path) -> tuner_config.Config:
    """The experiment's config restricted to one family, with the plan's budget and output."""
    spaces = dict(base.spaces)
    if plan.smoke and SYNTHESIZERS[family].has_epochs:
        spaces[family] = {**spaces.get(family, {}), **SMOKE_SPACE}
    study = dataclasses.replace(base.study, name=f"acs-partial-{family}",
                                synthesizers=(family,), output=runs / family,
                                n_trials=plan.trials or TRIALS[family])
    cfg = dataclasses.replace(base, study=study, spaces=spaces)
    if plan.smoke:
        cfg = dataclasses.replace(cfg, risk=tuner_config.RiskConfig(
            dict(cfg.risk) | SMOKE_LIMITS, synthesized=cfg.risk.synthesized))
    tuner_config.check(cfg)
    return cfg


def load_frame(base: tuner_config.Config, plan: Plan) -> tuple[tuner_config.Config,
                                                                  pd.DataFrame, np.ndarray]:
    """The data (subsampled for a smoke run, N scaled alike so t stays), and each row's position
    in ``ACSdata_org.csv`` (where Hu's released files have the same person)."""
    from tuner.data import read_table

    frame = read_table(base.data.path)
    positions = np.arange(len(frame))
    if plan.rows is not None and plan.rows < len(frame):
        population = round(base.data.population_size * plan.rows / len(frame))
        frame = frame.sample(n=plan.rows, random_state=base.study.seed)
        positions = frame.index.to_numpy()
        frame = frame.reset_index(drop=True)
        base = dataclasses.replace(base, data=dataclasses.replace(
            base.data, population_size=population))
    return base, frame, positions


def run_studies(plan: Plan, runs: Path, *, progress: bool = True) -> dict[str, Any]:
    """Run (or resume) each family's study and export its release; what the rest needs."""
    from tuner.release import NoFeasibleTrial, read_manifest
    from tuner.release import export_release as export
    from tuner.search import prepare, run_study

    base, frame, positions = load_frame(tuner_config.load(CONFIG), plan)
    out: dict[str, Any] = {"uris": {}, "released": {}, "cfg": base, "frame": frame}
    for family in plan.families:
        cfg = family_config(base, family, plan, runs)
        ctx = prepare(cfg, frame)
        print(f"[{family}] {len(ctx.split.train)} training rows, {cfg.study.trial_budget} trials, "
              f"m = {cfg.study.synthetic_sets}", flush=True)
        study = run_study(ctx, progress=progress)
        try:
            folder = export(ctx, study)
            out["released"][family] = read_manifest(folder / "manifest.json")
        except NoFeasibleTrial as exc:
            print(f"[{family}] no release: {str(exc).splitlines()[0]}", flush=True)
        out["uris"][family] = ctx.mlflow_uri
        out["train_positions"] = positions[ctx.split.train_positions]
        out["train"] = ctx.split.train
    return out


def collect(uris: dict[str, str]) -> pd.DataFrame:
    """Every trial run of the families' studies, read back with ``mlflow.search_runs``."""
    import mlflow

    frames = []
    for family, uri in uris.items():
        mlflow.set_tracking_uri(uri)
        runs = mlflow.search_runs(experiment_names=[f"acs-partial-{family}"])
        runs = runs[runs["tags.synthesizer"].notna()]
        frame = pd.DataFrame({
            "synthesizer": runs["tags.synthesizer"],
            "trial": pd.to_numeric(runs["tags.optuna_trial"]),
            "state": runs["tags.state"].fillna(runs["status"]),
            "feasible": runs["tags.feasible"].astype(str).str.lower() == "true",
            "wall_seconds": (runs["end_time"] - runs["start_time"]).dt.total_seconds(),
            "fail_reason": runs.get("tags.fail_reason", pd.Series("", index=runs.index)),
        })
        for col in [c for c in runs.columns if c.startswith("metrics.")]:
            frame[col.removeprefix("metrics.")] = runs[col]
        frames.append(frame)
    trials = pd.concat(frames, ignore_index=True)
    trials["fail_reason"] = trials["fail_reason"].fillna("")
    return trials.sort_values(["synthesizer", "trial"]).reset_index(drop=True)


def _scores(train: pd.DataFrame, sets: list[pd.DataFrame], known: list[str],
            synthesized: list[str]) -> dict[str, float]:
    import risk
    from tuner.scoring import quality_report

    ident = risk.identification_risk(train, sets, keys=known, synthesized=synthesized)
    return {"U": float(np.mean([quality_report(train, s) for s in sets])),
            "EMR": ident.expected_match_risk,
            "EMR / N": ident.expected_match_risk / ident.n_targets,
            "TMR": ident.true_match_rate, "FMR": ident.false_match_rate,
            "EMR set 1": ident.per_set[0].expected_match_risk,
            "TMR set 1": ident.per_set[0].true_match_rate,
            "FMR set 1": ident.per_set[0].false_match_rate}


def reference_rows(train: pd.DataFrame, positions: np.ndarray,
                   cfg: tuner_config.Config) -> list[dict[str, Any]]:
    """Hu's numbers as printed, her released files on our training records, and those records
    released unsynthesised (the same intruder and matching as the trials)."""
    from experiments.datasets import read_acs_partial

    known, synth = list(cfg.risk.identification_keys), list(cfg.study.synthesize or ())
    rows: list[dict[str, Any]] = [
        {"synthesis": name, "targets": 10_000, "m": m, "EMR": emr, "EMR / N": emr / 10_000,
         "TMR": tmr, "FMR": fmr}
        for (name, emr, tmr, fmr), m in zip(HU_PUBLISHED, (1, 3), strict=True)]
    _, hu = read_acs_partial()
    ours = [s.iloc[positions].reset_index(drop=True)[list(train.columns)] for s in hu]
    for m, sets in ((1, ours[:1]), (3, ours)):
        rows.append({"synthesis": f"Hu's files on our {len(train)} training records (m = {m})",
                     "targets": len(train), "m": m, **_scores(train, sets, known, synth)})
    rows.append({"synthesis": "our training records released unsynthesised",
                 "targets": len(train), "m": 1, **_scores(train, [train], known, synth)})
    return rows


def family_rows(trials: pd.DataFrame, released: dict[str, Any]) -> list[dict[str, Any]]:
    """Each family's released trial (best feasible) and how its study went."""
    rows = []
    for family, g in trials.groupby("synthesizer", sort=False):
        done = g[g["state"] == "COMPLETE"]
        row: dict[str, Any] = {"synthesis": f"tuner: {family}", "trials": len(g),
                               "complete": len(done), "feasible": int(done["feasible"].sum())}
        m = released.get(family)
        if m is not None:
            ident = m["partial"]["identification"]
            sets = m["partial"]["sets"]
            row |= {"targets": int(ident["release_n_targets"]), "m": sets,
                    "U": m["metrics"]["utility"], "EMR": ident["release_expected_match_risk"],
                    "EMR / N": m["metrics"]["emr_share"],
                    "TMR": ident["release_true_match_rate"],
                    "FMR": ident["release_false_match_rate"],
                    "EMR set 1": ident["release_per_set_0_expected_match_risk"],
                    "TMR set 1": ident["release_per_set_0_true_match_rate"],
                    "FMR set 1": ident["release_per_set_0_false_match_rate"],
                    "M": m["metrics"]["m"], "trial": m["trial"],
                    "params": json.dumps(m["params"], sort_keys=True)}
        rows.append(row)
    return rows


def conditioning(trials: pd.DataFrame) -> pd.DataFrame:
    """Per family: how its m sets were drawn given the kept columns, and what it cost."""
    rows = []
    costs = {"fit s": "fit_seconds", "draw m sets s": "sample_seconds",
             "draw holdout s": "holdout_sample_seconds", "draws by rejection": "rejection_draws"}
    for family, g in trials.groupby("synthesizer", sort=False):
        done = g[g["state"] == "COMPLETE"]
        failed = g[g["state"] != "COMPLETE"]
        rows.append({
            "synthesiser": family, "conditioning": SYNTHESIZERS[family].conditioning,
            "trials": len(g), "complete": len(done),
            "failed to condition": int(failed["fail_reason"].str.contains(
                "could not draw|returned no values").sum()),
            # a family none of whose trials completed logged no costs (NaN: not measured)
            **{name: done[column].mean() if column in done else float("nan")
               for name, column in costs.items()},
        })
    return pd.DataFrame(rows)


def plot(trials: pd.DataFrame, reference: list[dict[str, Any]], limit: float) -> Any:
    """U against EMR / N for every completed trial; Hu's synthesis and the unsynthesised data."""
    from tuner._common.figures import figure

    fig, ax = figure(figsize=(7, 4.8))
    done = trials[trials["state"] == "COMPLETE"]
    for name, g in done.groupby("synthesizer"):
        feas = g["feasible"].astype(bool)
        pts = ax.scatter(g.loc[feas, "emr_share"], g.loc[feas, "utility"], s=36, label=name)
        ax.scatter(g.loc[~feas, "emr_share"], g.loc[~feas, "utility"], s=36,
                   facecolors="none", edgecolors=pts.get_facecolor())
    for row, marker in zip([r for r in reference if "U" in r], ("*", "P", "X"), strict=False):
        ax.scatter(row["EMR / N"], row["U"], marker=marker, s=140, color="black",
                   label=row["synthesis"])
    ax.axvline(limit, color="crimson", ls="--", lw=1, label=f"emr_limit = {limit}")
    none = sorted(set(trials["synthesizer"]) - set(done["synthesizer"]))
    if none:
        ax.text(0.3, 0.97, f"no trial could condition: {', '.join(none)}\n(conditioning.md)",
                transform=ax.transAxes, fontsize=7, va="top")
    ax.set_xscale("log")
    ax.set_xlabel("expected match risk per target, EMR / N (log scale)")
    ax.set_ylabel("utility U (Quality Report, mean over the m sets)")
    ax.set_title("ACS, LANX WAOB DIS HICOV synthesised: identification risk vs utility\n"
                 "(filled: every constraint met)", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    return fig


def write_results(trials: pd.DataFrame, table: pd.DataFrame, costs: pd.DataFrame,
                  fig: Any, results: Path) -> list[Path]:
    from tuner._common.figures import save_figure

    results.mkdir(parents=True, exist_ok=True)
    written = [results / "trials.csv", results / "identification.csv",
               results / "identification.md", results / "conditioning.csv",
               results / "conditioning.md",
               save_figure(fig, results / "identification_utility.png")]
    trials.to_csv(written[0], index=False)
    table.to_csv(written[1], index=False)
    written[2].write_text(markdown_table(table.drop(columns=["params"], errors="ignore"),
                                         floatfmt=".4f") + "\n")
    costs.to_csv(written[3], index=False)
    written[4].write_text(markdown_table(costs, floatfmt=".1f") + "\n")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=list(FAMILIES))
    parser.add_argument("--trials", type=int, help="trials per family (default: the config's)")
    parser.add_argument("--rows", type=int, help="subsample the data (smoke runs only)")
    parser.add_argument("--smoke", action="store_true", help="one-epoch neural spaces")
    parser.add_argument("--runs", type=Path, default=DEFAULT_RUNS)
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    from experiments.datasets import DatasetMissing
    from tuner._common.quiet import quiet_libraries

    quiet_libraries()
    plan = Plan(families=tuple(args.families), trials=args.trials, rows=args.rows,
                smoke=args.smoke)
    start = time.perf_counter()
    try:
        done = run_studies(plan, args.runs, progress=not args.no_progress)
        reference = reference_rows(done["train"], done["train_positions"], done["cfg"])
    except (DatasetMissing, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    trials = collect(done["uris"])
    table = pd.DataFrame(reference + family_rows(trials, done["released"]))
    counts = ["targets", "m", "trials", "complete", "feasible", "trial"]
    table = table.astype({c: "Int64" for c in counts if c in table.columns})
    costs = conditioning(trials)
    fig = plot(trials, reference, done["cfg"].risk.emr_limit)
    written = write_results(trials, table, costs, fig, args.results)
    print(f"\n{len(trials)} trials in {time.perf_counter() - start:.0f} s; results:")
    for path in written:
        print(f"  {path}")
    print(markdown_table(table.drop(columns=["params"], errors="ignore"), floatfmt=".4f"))
    print(markdown_table(costs, floatfmt=".1f"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
