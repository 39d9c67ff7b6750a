"""Would a subsample make the Quality Report cheap enough, and how wrong would it be?

Issue 13 asks for a cheaper utility than SDMetrics' Quality Report (about 1 s of a trial on
20,000 Adult rows), or the report on a fixed subsample with its error measured. Here eight
synthetic sets of very different quality (Gaussian copula, CART at several leaf sizes, short
TVAE and CTGAN fits) are made from 20,000 Adult training rows; each is scored by the full
report and by the report on ``n`` seeded rows of the training data and of the synthetic set,
side by side in one run. Printed: the error of each subsample score, their rank correlation
with the full scores, and the time ratio.

    python -m experiments.benchmarks.bench_utility [--sizes 2000 5000]

Writes its table to its block of ``experiments/benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
from scipy import stats

from experiments.datasets import read_adult
from experiments.reporting import markdown_table, write_section
from tuner.scoring import quality_report
from tuner.synthesis import synthesize

SETS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("gaussian_copula", {"default_distribution": "norm"}),
    ("gaussian_copula", {"default_distribution": "beta"}),
    ("cart", {"min_samples_leaf": 5}),
    ("cart", {"min_samples_leaf": 200}),
    ("cart", {"min_samples_leaf": 50, "smoothing": True}),
    ("tvae", {"epochs": 2, "batch_size": 500}),
    ("tvae", {"epochs": 10, "batch_size": 500}),
    ("ctgan", {"epochs": 2, "batch_size": 500}),
)


def _timed(fn: Any) -> tuple[float, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000])
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    train = read_adult().sample(args.rows, random_state=0).reset_index(drop=True)
    rows = []
    for k, (name, params) in enumerate(SETS):
        syn = synthesize(name, params, train, seed=k).synthetic
        full, t_full = _timed(lambda s=syn: quality_report(train, s))
        for n in args.sizes:
            sub, t_sub = _timed(lambda s=syn, n=n, k=k: quality_report(
                train.sample(n, random_state=7), s.sample(n, random_state=100 + k)))
            rows.append({"set": f"{name} {params}", "rows": n, "U full": full,
                         "U subsample": sub, "error": sub - full, "s full": t_full,
                         "s subsample": t_sub})
        print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    summary = pd.DataFrame([{
        "subsample rows": n, "mean |error|": g["error"].abs().mean(),
        "max |error|": g["error"].abs().max(), "mean error": g["error"].mean(),
        "Spearman rho with full": stats.spearmanr(g["U full"], g["U subsample"]).statistic,
        "time subsample / full (median)": (g["s subsample"] / g["s full"]).median()}
        for n, g in frame.groupby("rows")])
    print(summary.to_string(index=False))
    write_section(args.output, "bench_utility", "\n".join([
        f"## The Quality Report on a subsample ({args.rows:,} Adult training rows)", "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, 2 shared cores; "
        "command: `python -m experiments.benchmarks.bench_utility`. Each synthetic set scored "
        "by the full report and by the report on n seeded rows of the training data and of "
        "the set, side by side.", "",
        markdown_table(summary, floatfmt=".4f"), "",
        markdown_table(frame, floatfmt=".4f")]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
