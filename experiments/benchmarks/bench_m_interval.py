"""What M's confidence interval (design §3.2, issue 34) costs per trial.

The interval needs no new distance: the shares r and f come from the distances M computes
anyway, and the attack-set term is three vectorised draws of 2,000 simulated attack sets. This
script measures the whole ``membership_disclosure`` call as a trial makes it (``curve=False``,
R = 100) and as the release makes it (``curve=True``), with the interval and with its two steps
(``attack_set_moments``, ``f1_interval``) replaced by stubs that return at once: everything else
is the same call. Median wall time of 7 runs each, alternating.

Data: UCI Adult (48,842 people, every column a quasi-identifier), a custodian's sample of
n/N = 0.05 and 0.5 split in halves (the tuner's ``train_fraction``), synthetic data = the training
records with 15 % of their cells resampled from their column (distances 0 to about 3).

Run from the repository root with ../shared/data present:

    python -m experiments.benchmarks.bench_m_interval [--output FILE]

Prints a Markdown table and writes it to its block of ``experiments/benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import functools
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd

import risk
import risk.membership
from experiments.datasets import read_adult
from experiments.reporting import write_section


def perturbed(frame: pd.DataFrame, share: float, seed: int) -> pd.DataFrame:
    """``frame`` with ``share`` of its cells replaced by a value drawn from the same column."""
    rng = np.random.default_rng(seed)
    out = frame.reset_index(drop=True).copy()
    for col in out.columns:
        hit = rng.random(len(out)) < share
        out.loc[hit, col] = out[col].to_numpy()[rng.integers(0, len(out), hit.sum())]
    return out


def _median_pair(with_ci: Callable[[], Any], runs: int) -> tuple[float, float]:
    """Median seconds of ``with_ci`` as it is and with the interval's steps stubbed out."""
    stubs = {"attack_set_moments": lambda *a, **k: (0.0, 0.0),
             "f1_interval": lambda *a, **k: (0.0, 0.0, 0.0)}
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(runs):
        for keep in (True, False):
            patches = [] if keep else [mock.patch.object(risk.membership, name, stub)
                                       for name, stub in stubs.items()]
            for p in patches:
                p.start()
            try:
                start = time.perf_counter()
                with_ci()
                times[keep].append(time.perf_counter() - start)
            finally:
                for p in patches:
                    p.stop()
    return statistics.median(times[True]), statistics.median(times[False])


def bench(adult: pd.DataFrame, runs: int) -> list[str]:
    rows = ["| n/N | n_train | h | call | with interval s | without s | ratio |",
            "|---|---|---|---|---|---|---|"]
    for fraction in (0.05, 0.5):
        idx = np.random.default_rng(34).permutation(len(adult))[: round(fraction * len(adult))]
        sample = adult.iloc[idx].reset_index(drop=True)
        train, holdout = sample[: len(sample) // 2], sample[len(sample) // 2:]
        synthetic = perturbed(train, 0.15, seed=1)
        for h in (0, 2):
            for curve in (False, True):
                call = functools.partial(
                    risk.membership_disclosure, train, holdout, synthetic,
                    population_size=len(adult), hamming_threshold=h, repeats=100,
                    random_state=0, curve=curve)
                call()  # warm caches
                with_ci, without = _median_pair(call, runs)
                rows.append(f"| {fraction:g} | {len(train):,} | {h} | "
                            f"{'release (curve)' if curve else 'trial'} | {with_ci:.4f} | "
                            f"{without:.4f} | {with_ci / without:.3f} |")
                print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    adult = read_adult()
    report = [
        "# Cost of M's confidence interval (issue 34)", "",
        f"Machine: {platform.processor() or platform.machine()}, Python "
        f"{platform.python_version()}; command: `python -m "
        "experiments.benchmarks.bench_m_interval`. Median wall seconds of "
        f"{args.runs} alternating runs of `membership_disclosure` (R = 100) with the interval "
        "and with its two steps stubbed out; ratio = with / without (the issue allows 2).", "",
        *bench(adult, args.runs), "",
    ]
    write_section(args.output, "bench_m_interval", "\n".join(report))
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
