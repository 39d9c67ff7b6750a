"""Benchmark of the release audit's default membership audit on Adult (design §13).

The product's target: the default audit (20 targets x 100 shadow runs, per-target game, shadow
tables of 1,000 holdout records) of a CART or Gaussian-copula release on Adult finishes within
10 minutes on 2 cores. Adult's 48,842 people split as the tuner splits them (train 0.5 / holdout
0.3 / audit 0.2: 24,421 training records whose vulnerability is searched, 14,653 holdout records
the shadow tables are drawn from). For each generator: the tuner's own estimate before it
starts (one pilot fit timed, :func:`tuner.release._audit_plan.plan`) against the measured wall
time, with the fits over 2 processes, as ``risk-tuner`` runs them.

Run: ``python -m experiments.benchmarks.bench_audit [--output FILE]`` from the repository root
with ../shared/data present (about 15 minutes). Prints a Markdown report and writes it to its
block of ``experiments/benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
import warnings
from pathlib import Path

import risk
from experiments.datasets import read_adult
from experiments.reporting import write_section
from tuner.api import load_config
from tuner.release import ReleasedFamily, plan
from tuner.search import prepare

GENERATORS = (("cart", {"min_samples_leaf": 5}), ("gaussian_copula",
                                                  {"default_distribution": "norm"}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path,
                        default=Path(__file__).with_name("RESULTS.md"))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "adult.csv"
        read_adult().to_csv(data, index=False)
        cfg = load_config({"data": {"path": str(data), "population_size": 48842},
                           "study": {"output": str(Path(tmp) / "out")},
                           "audit": {"jobs": args.jobs}})
        ctx = prepare(cfg)
        rows = [f"## bench_audit: the default membership audit on Adult ({platform.node()}, "
                f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')})", "",
                f"{len(ctx.split.train):,} training records, {len(ctx.split.holdout):,} holdout "
                f"records; 20 targets x 100 shadow runs per target, shadow tables of 1,000 "
                f"records, {args.jobs} processes.", "",
                "| release | estimate before it starts | measured | fits | one pilot fit |",
                "|---|---|---|---|---|"]
        for name, params in GENERATORS:
            family = ReleasedFamily(name, params, "cpu", "remove")
            chosen = plan(ctx, family, 1000, seed=1)
            start = time.perf_counter()
            res = risk.membership_audit(ctx.split.train, ctx.split.holdout, family,
                                        design="per_target", n_jobs=args.jobs, random_state=1)
            wall = time.perf_counter() - start
            rows.append(f"| {name} {params} | {chosen.estimates['per_target'] / 60:.1f} min | "
                        f"**{wall / 60:.1f} min** | {res.n_fits:,} | "
                        f"{chosen.pilot_seconds:.2f} s |")
            print(rows[-1], flush=True)
    text = "\n".join(rows)
    print(text)
    write_section(args.output, "bench_audit", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
