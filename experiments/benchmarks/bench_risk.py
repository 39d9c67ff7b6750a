"""Benchmark of the `risk` library, side by side in one run (issue 2).

* CAP: ours vs SDMetrics' CategoricalCAP (its row-by-row reference) on the same 2k/10k/30k
  tables drawn from Adult (keys workclass, education, marital_status, race, sex; target
  occupation; real and "synthetic" are disjoint samples): same value, and the time ratio.
* Membership disclosure on all of Adult (48,842 people; train/holdout/synthetic thirds, every
  column a quasi-identifier), 100 repeats at h = 0 and h = 2.
* Identification risk on Hu's ACS files (m = 1 and m = 3).

Run: ``python -m experiments.benchmarks.bench_risk [--sizes 2000 10000 30000] [--output FILE]``
from the repository root with ../shared/data present. Prints a Markdown report and writes it
to its block of ``experiments/benchmarks/RESULTS.md`` by default (other blocks are kept).
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import risk
from experiments.datasets import read_acs_partial as load_acs
from experiments.datasets import read_adult as load_adult
from experiments.reporting import write_section

KEYS = ["workclass", "education", "marital_status", "race", "sex"]
TARGET = "occupation"


def timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[Any, float]:
    """Result of ``fn`` and its best wall time over ``repeat`` calls."""
    best = float("inf")
    out = None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def bench_cap(adult: pd.DataFrame, sizes: list[int]) -> list[str]:
    from sdmetrics.single_table import CategoricalCAP

    clean = adult.dropna(subset=[*KEYS, TARGET]).reset_index(drop=True)
    rows = ["| n (real = synthetic) | ours v2 | SDMetrics CategoricalCAP (1 - score) | ours s | "
            "SDMetrics s | speed-up |", "|---|---|---|---|---|---|"]
    for n in sizes:
        idx = np.random.default_rng(n).permutation(len(clean))
        real, syn = clean.iloc[idx[:n]], clean.iloc[idx[n:2 * n]]
        ours, t_ours = timed(
            lambda r=real, s=syn: risk.cap(r, s, keys=KEYS, target=TARGET), repeat=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref, t_ref = timed(lambda r=real, s=syn: CategoricalCAP.compute(
                r, s, key_fields=KEYS, sensitive_fields=[TARGET]))
        assert abs(ours.cap_v2 - (1 - ref)) < 1e-9, (ours.cap_v2, 1 - ref)
        rows.append(f"| {n:,} | {ours.cap_v2:.6f} | {1 - ref:.6f} | {t_ours:.3f} | {t_ref:.1f} | "
                    f"{t_ref / t_ours:,.0f}x |")
        print(rows[-1], flush=True)
    return rows


def bench_membership(adult: pd.DataFrame) -> list[str]:
    idx = np.random.default_rng(0).permutation(len(adult))
    third = len(adult) // 3
    train, holdout = adult.iloc[idx[:third]], adult.iloc[idx[third:2 * third]]
    cases = {"copy of train (leak)": train, "real non-members": adult.iloc[idx[2 * third:]]}
    rows = ["| synthetic | h | M | 95% confidence interval | spread over repeats (95%) | F1 | "
            "F_naive | attack a | seconds |",
            "|---|---|---|---|---|---|---|---|---|"]
    for name, syn in cases.items():
        for h in (0, 2):
            res, sec = timed(lambda s=syn, h=h: risk.membership_disclosure(
                train, holdout, s, population_size=len(adult), hamming_threshold=h,
                repeats=100, random_state=0))
            rows.append(f"| {name} | {h} | {res.m:.3f} | [{res.m_ci.low:.3f}, "
                        f"{res.m_ci.high:.3f}] | [{res.m_spread.low:.3f}, "
                        f"{res.m_spread.high:.3f}] | {res.f1:.3f} | {res.f_naive:.3f} | "
                        f"{res.attack_size:,} | {sec:.2f} |")
            print(rows[-1], flush=True)
    return rows


def bench_identification() -> list[str]:
    org, syn = load_acs()
    kwargs = dict(keys=["SEX", "RACE", "MAR"], synthesized=["LANX", "WAOB", "DIS", "HICOV"])
    rows = ["| m | expected match risk | true match rate | false match rate | s | seconds |",
            "|---|---|---|---|---|---|"]
    for sets in (syn[:1], syn):
        res, sec = timed(lambda s=sets: risk.identification_risk(org, s, **kwargs), repeat=3)
        rows.append(f"| {len(sets)} | {res.expected_match_risk:.2f} | {res.true_match_rate:.4f} "
                    f"| {res.false_match_rate:.2f} | {res.unique_matches:.0f} | {sec:.3f} |")
        print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 30000])
    parser.add_argument("--output", type=Path,
                        default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    adult = load_adult()
    report = [
        "# Benchmark of `risk`", "",
        f"Machine: {platform.processor() or platform.machine()}, Python "
        f"{platform.python_version()}; command: `python -m experiments.benchmarks.bench_risk`.",
        "Times are wall seconds, best of 3 for ours, one run for SDMetrics (it is slow).", "",
        "## CAP vs SDMetrics CategoricalCAP (Adult samples)", "",
        *bench_cap(adult, args.sizes), "",
        "## Membership disclosure on all of Adult (N = 48,842, R = 100)", "",
        *bench_membership(adult), "",
        "## Identification risk on Hu's ACS files (published: 41.37 / 0.0005 / 0.97 for m = 1; "
        "41.47 / 0.0006 / 0.96 for m = 3)", "",
        *bench_identification(), "",
    ]
    write_section(args.output, "bench_risk", "\n".join(report))
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
