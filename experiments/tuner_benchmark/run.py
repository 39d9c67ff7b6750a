"""Does the risk-aware tuning pay? Ways to get a release, compared at equal wall-clock budgets.

For every dataset and seed of ``benchmark.toml``: (a) each synthesiser at its defaults,
(b) random search, (c) the product (``tuner.tune``: TPE with constraints) and (c') its sampler
alone, (d) a CLOVER-style additive loss without constraints, (e) the product in Pareto mode
(``methods``). Every trial is
scored by the tuner's own ``evaluate`` (U, M, the gate, CAP, inference; feasibility by the
product's constraints); each method's release is then judged on measures no search saw
(``holdout``).

Run from the repository root (``../shared/data`` beside it)::

    python -m experiments.tuner_benchmark.run                  # the grid of benchmark.toml
    python -m experiments.tuner_benchmark.run --datasets ce --seeds 0 --budget 30
    python -m experiments.tuner_benchmark.run --summary-only    # tables and plots again

Results are appended cell by cell (dataset, seed, method) to ``--results``; a rerun skips the
cells already there (``--fresh`` starts over), then writes the summary, tables and plots
(``summary``). Studies and scratch files go under ``--work`` (default ``/tmp``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.reporting import append_rows
from experiments.tuner_benchmark import methods, releases, summary
from experiments.tuner_benchmark import plan as plan_module
from experiments.tuner_benchmark.plan import Dataset, Plan

DEFAULT_RESULTS = plan_module.HERE / "results"
DEFAULT_WORK = Path("/tmp/tuner_benchmark")


def done_cells(results: Path) -> set[tuple[str, int, str]]:
    path = results / "runs.csv"
    if not path.exists():
        return set()
    runs = pd.read_csv(path)
    return {(str(d), int(s), str(m)) for d, s, m in
            zip(runs["dataset"], runs["seed"], runs["method"], strict=True)}


def method_order(plan: Plan, seed: int) -> list[str]:
    """The defaults first, then the searches in an order rotated from seed to seed, so that
    a drift in the machine's load does not always fall on the same method."""
    searches = [m for m in plan.methods if m != "defaults"]
    k = plan.seeds.index(seed) % max(1, len(searches))
    return [m for m in plan.methods if m == "defaults"] + searches[k:] + searches[:k]


def run_cell(plan: Plan, dataset: Dataset, data_path: Path, seed: int, method: str,
             work: Path) -> tuple[pd.DataFrame, list[dict[str, Any]], dict[str, Any]]:
    """One method on one (dataset, seed): its trial rows, its releases judged, run facts."""
    folder = work / f"{dataset.name}-{seed}"
    out = folder / method
    if out.exists():
        shutil.rmtree(out)  # a cell cut short before: start it again
    raw = plan.tuner_config(dataset, data_path, seed, out)
    budget = plan.budget_of(dataset)
    ctx = methods.context(raw, folder / "harness")
    load = os.getloadavg()[0]
    start = time.perf_counter()
    data, note = None, ""
    if method == "defaults":
        rows, data = methods.run_defaults(ctx.cfg, ctx)
    elif method in ("ours", "pareto"):
        rows, note = methods.run_ours(raw, method=method)
    else:
        rows = methods.run_search(ctx.cfg, ctx, method, budget, {
            "m_weight": plan.additive_m_weight, "copy_weight": plan.additive_copy_weight})
    searched = time.perf_counter() - start
    frame = pd.DataFrame(rows)
    frame.insert(0, "seed", seed)
    frame.insert(0, "dataset", dataset.name)
    frame["within_budget"] = frame["method"].eq("defaults") | (frame["elapsed"] <= budget)
    judged = releases.judge(ctx, dataset.target, releases.in_budget(frame, budget),
                            method, data)
    for record in judged:
        record.update(dataset=dataset.name, seed=seed)
    info = {"dataset": dataset.name, "seed": seed, "method": method,
            "started_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "budget_seconds": budget, "run_seconds": searched,
            "total_seconds": time.perf_counter() - start, "trials": len(frame),
            "train_rows": len(ctx.split.train), "holdout_rows": len(ctx.split.holdout),
            "load_before": load, "load_after": os.getloadavg()[0], "note": note}
    return frame, judged, info


def run(plan: Plan, results: Path, work: Path, *, log: Any = print) -> None:
    """Every cell of the plan not in ``results`` yet, appended as it finishes."""
    results.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    done = done_cells(results)
    paths = {}
    for dataset in plan.datasets:
        paths[dataset.name] = work / f"{dataset.name}.csv"
        dataset.read().to_csv(paths[dataset.name], index=False)
    # seeds outermost: a run stopped early leaves every dataset with the same seeds done
    for seed in plan.seeds:
        for dataset in plan.datasets:
            for method in method_order(plan, seed):
                if (dataset.name, seed, method) in done:
                    continue
                log(f"[{dataset.name} seed {seed}] {method} ...")
                frame, judged, info = run_cell(plan, dataset, paths[dataset.name], seed,
                                               method, work)
                _append(results / f"trials_{dataset.name}.csv.gz", frame)
                _append(results / "releases.csv", pd.DataFrame(judged))
                _append(results / "runs.csv", pd.DataFrame([info]))
                log(f"[{dataset.name} seed {seed}] {method}: {info['trials']} trials, "
                    f"{int(frame['feasible'].sum())} feasible, {info['total_seconds']:.0f} s "
                    f"(load {info['load_before']:.1f})")


def _append(path: Path, frame: pd.DataFrame) -> None:
    """Append ``frame`` to the CSV at ``path``; a column new to the file (a constraint that
    an earlier cell, all of whose trials failed, never set) widens the whole file."""
    if path.exists():
        columns = list(pd.read_csv(path, nrows=0).columns)
        if set(frame.columns) - set(columns):
            pd.concat([pd.read_csv(path), frame], ignore_index=True).to_csv(path, index=False)
            return
        frame = frame.reindex(columns=columns)
    append_rows(path, frame.to_dict("records"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=plan_module.CONFIG)
    parser.add_argument("--datasets", nargs="+")
    parser.add_argument("--seeds", nargs="+", type=int)
    parser.add_argument("--budget", type=float, help="seconds per search method")
    parser.add_argument("--methods", nargs="+", choices=plan_module.METHODS)
    parser.add_argument("--rows", type=int, help="at most this many rows per dataset")
    parser.add_argument("--synthesizers", nargs="+", help="replace the study's synthesisers")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--fresh", action="store_true", help="delete --results' tables first")
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args(argv)

    from experiments.datasets import DatasetMissing
    from tuner._common.quiet import quiet_libraries

    quiet_libraries()
    plan = plan_module.load(args.config, datasets=args.datasets, seeds=args.seeds,
                            budget=args.budget, methods=args.methods, rows=args.rows,
                            synthesizers=args.synthesizers)
    if args.fresh:
        for name in ("runs.csv", "releases.csv",
                     *(f"trials_{d.name}.csv.gz" for d in plan.datasets)):
            (args.results / name).unlink(missing_ok=True)
    start = time.perf_counter()
    if not args.summary_only:
        try:
            run(plan, args.results, args.work, log=lambda s: print(s, flush=True))
        except DatasetMissing as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    written = summary.write(args.results, plan)
    print(f"done in {time.perf_counter() - start:.0f} s; results:")
    for path in written:
        print(f"  {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
