"""Benchmark of :func:`risk.disclosure.disclosure` (synthpop's measures) on all of Adult.

The original is all of UCI Adult (48,842 people); the "synthetic" sets are 30,000-row resamples
of its rows (seeded), so that many keys are replicated. Keys: age (numeric, compared by value as
synthpop does by default), workclass, education, marital_status, race, sex; target occupation
(missing values are a level of their own, as in synthpop). Cases: one set; one set with age cut
into 10 groups and ``exclude_ov_denom_lim``; m = 5 sets.

Run: ``python -m experiments.benchmarks.bench_disclosure [--output FILE]`` from the repository
root with ../shared/data present. Prints a Markdown report and writes it to its block of
``experiments/benchmarks/RESULTS.md`` by default (other blocks are kept).
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from experiments.datasets import read_adult
from experiments.reporting import write_section
from risk.disclosure import disclosure

KEYS = ["age", "workclass", "education", "marital_status", "race", "sex"]
TARGET = "occupation"
N_SYNTHETIC = 30_000


def timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[Any, float]:
    """Result of ``fn`` and its best wall time over ``repeat`` calls."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    adult = read_adult()
    rng = np.random.default_rng(0)
    sets = [adult.iloc[rng.integers(0, len(adult), N_SYNTHETIC)].reset_index(drop=True)
            for _ in range(5)]
    cases = {
        "m = 1": dict(synthetic=sets[0]),
        "m = 1, age in 10 groups, exclude_ov_denom_lim": dict(
            synthetic=sets[0], ngroups_keys={"age": 10}, exclude_ov_denom_lim=True),
        "m = 5": dict(synthetic=sets),
    }
    rows = ["| case | UiO | repU | DiSCO | DCAP | TCAP | seconds (best of 3) |",
            "|---|---|---|---|---|---|---|"]
    for name, kwargs in cases.items():
        res, sec = timed(lambda kw=kwargs: disclosure(adult, keys=KEYS, target=TARGET, **kw))
        rows.append(f"| {name} | {res.UiO:.2f} | {res.repU:.2f} | {res.DiSCO:.2f} | "
                    f"{res.DCAP:.2f} | {res.TCAP:.2f} | {sec:.3f} |")
        print(rows[-1], flush=True)
    report = [
        "# Benchmark of `risk.disclosure` (synthpop's `disclosure()`)", "",
        f"Machine: {platform.processor() or platform.machine()}, Python "
        f"{platform.python_version()}; command: "
        "`python -m experiments.benchmarks.bench_disclosure`.",
        f"Original: all of Adult ({len(adult):,} rows); synthetic: resamples of "
        f"{N_SYNTHETIC:,} rows (seed 0); keys {', '.join(KEYS)}; target {TARGET}. "
        "Measures in percent, as synthpop reports them.", "",
        *rows, "",
    ]
    write_section(args.output, "bench_disclosure", "\n".join(report))
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
