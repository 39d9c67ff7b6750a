"""Benchmark of the gate's exact-copy and DCR measures on Adult (design §9.1), in one run.

* ``exact_copies`` on all of Adult (train and holdout halves, a 48,842-row "synthetic" set
  drawn with replacement from all of Adult) against the plain pandas way to get the same two
  shares: two left merges on every column. Same shares asserted; median of several runs.
* ``distance_to_closest_record`` at 20,000 x 20,000 (+ 20,000 holdout) Adult records, for a
  leaky generator (train records with small noise) and a safe one (the 8,842 unused records,
  resampled with the same noise); and against SDMetrics' ``DCROverfittingProtection`` at
  1,000 x 1,000 (+ 1,000), where SDMetrics takes seconds. There train and holdout are given the
  same numeric ranges (the 12 records holding the extremes are added to both), so that both
  definitions coincide and SDMetrics' ``closer_to_training`` must equal our strict share.
* Peak memory (tracemalloc, above the inputs) and time of DCR on 1,000,000 synthetic records.

Run: ``python -m experiments.benchmarks.bench_gate [--repeats 5] [--output FILE]`` from the
repository root with ../shared/data present. Prints a Markdown report and writes it to its
block of ``experiments/benchmarks/RESULTS.md`` (other blocks are kept).
"""

from __future__ import annotations

import argparse
import os
import platform
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.datasets import read_adult
from experiments.reporting import timed, write_section
from risk.copies import exact_copies
from risk.dcr import distance_to_closest_record

NUMERIC = ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]


def perturb(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Small noise on age and fnlwgt: near, not equal to, the records it starts from."""
    out = frame.reset_index(drop=True).copy()
    out["age"] = out["age"] + rng.integers(-1, 2, len(out))
    out["fnlwgt"] = (out["fnlwgt"] * rng.uniform(0.95, 1.05, len(out))).round()
    return out


def bench_copies(adult: pd.DataFrame, repeats: int) -> list[str]:
    idx = np.random.default_rng(0).permutation(len(adult))
    half = len(adult) // 2
    train, holdout = adult.iloc[idx[:half]], adult.iloc[idx[half:]]
    synthetic = adult.sample(len(adult), replace=True, random_state=1)

    def merge_shares() -> tuple[float, float]:
        shares = []
        for real in (train, holdout):
            found = synthetic.merge(real.drop_duplicates(), how="left", indicator=True)
            shares.append(float((found["_merge"] == "both").mean()))
        return shares[0], shares[1]

    ours, t_ours = timed(lambda: exact_copies(train, synthetic, holdout=holdout), repeats)
    ref, t_ref = timed(merge_shares, repeats)
    assert abs(ours.train_share - ref[0]) < 1e-12 and abs(ours.holdout_share - ref[1]) < 1e-12
    return [
        f"train {len(train):,}, holdout {len(holdout):,}, synthetic {len(synthetic):,} rows "
        f"(drawn with replacement from all of Adult), {adult.shape[1]} columns.", "",
        "| | train share | holdout share | train-unique copies | replicated uniques | s |",
        "|---|---|---|---|---|---|",
        f"| `exact_copies` | {ours.train_share:.4f} | {ours.holdout_share:.4f} | "
        f"{ours.train_unique_copies:,} | {ours.replicated_uniques:,} | {t_ours:.3f} |",
        f"| two pandas merges | {ref[0]:.4f} | {ref[1]:.4f} | | | {t_ref:.3f} |",
        "",
        f"Time ratio exact_copies / merges: {t_ours / t_ref:.2f} (exact_copies also counts "
        "uniques and replicated uniques).",
    ]


def bench_dcr(adult: pd.DataFrame, repeats: int) -> list[str]:
    idx = np.random.default_rng(0).permutation(len(adult))
    n = 20_000
    train, holdout = adult.iloc[idx[:n]], adult.iloc[idx[n:2 * n]]
    unused = adult.iloc[idx[2 * n:]]
    rng = np.random.default_rng(2)
    cases = {
        "leaky: train + noise": perturb(train, rng),
        f"safe: {len(unused):,} unused records resampled + noise":
            perturb(unused.sample(n, replace=True, random_state=3), rng),
        "copy of train": train.copy(),
    }
    rows = ["| synthetic (rows) | share closer to train | 95% interval | baseline | ties | "
            "exact copies of train | median DCR train / holdout | s |",
            "|---|---|---|---|---|---|---|---|"]
    for name, syn in cases.items():
        res, sec = timed(lambda s=syn: distance_to_closest_record(train, s, holdout=holdout),
                         repeats)
        rows.append(
            f"| {name} ({len(syn):,}) | {res.share_closer_to_train:.4f} | "
            f"[{res.interval.low:.4f}, {res.interval.high:.4f}] | {res.baseline:.2f} | "
            f"{res.share_ties:.4f} | {res.share_exact_train:.4f} | "
            f"{res.dcr_train.median:.4f} / {res.dcr_holdout.median:.4f} | {sec:.2f} |")
        print(rows[-1], flush=True)
    return [f"train {len(train):,}, holdout {len(holdout):,} Adult rows, 15 columns (6 "
            "numeric); median of " f"{repeats} runs.", "", *rows]


def _with_extremes(frame: pd.DataFrame, extremes: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([extremes, frame], ignore_index=True)


def bench_sdmetrics(adult: pd.DataFrame, repeats: int, n: int = 1000) -> list[str]:
    from sdmetrics.single_table import DCROverfittingProtection

    sample = adult.sample(4 * n, random_state=4).reset_index(drop=True)
    extremes = sample.loc[sorted({i for c in NUMERIC
                                  for i in (sample[c].idxmin(), sample[c].idxmax())})]
    rest = sample.drop(index=extremes.index)
    train = _with_extremes(rest.iloc[:n], extremes)
    holdout = _with_extremes(rest.iloc[n:2 * n], extremes)
    rng = np.random.default_rng(5)
    synthetic = pd.concat([perturb(train.iloc[: n // 2], rng),
                           perturb(rest.iloc[2 * n: 2 * n + n // 2], rng)], ignore_index=True)
    metadata = {"columns": {c: {"sdtype": "numerical" if c in NUMERIC else "categorical"}
                            for c in adult.columns}}
    ours, t_ours = timed(lambda: distance_to_closest_record(train, synthetic, holdout=holdout),
                         repeats)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref, t_ref = timed(lambda: DCROverfittingProtection.compute_breakdown(
            train, synthetic, holdout, metadata, None), 1)
    closer = float(ref["synthetic_data_percentages"]["closer_to_training"])
    assert abs(closer - ours.share_strictly_closer_to_train) < 1e-12, (closer, ours)
    return [
        f"train {len(train):,}, holdout {len(holdout):,} (each with the {len(extremes)} records "
        f"holding the numeric extremes), synthetic {len(synthetic):,} (half train + noise, half "
        "unused records + noise).", "",
        "| | closer to train (strict) | ties | share, ties half | SDMetrics score | s |",
        "|---|---|---|---|---|---|",
        f"| ours | {ours.share_strictly_closer_to_train:.4f} | {ours.share_ties:.4f} | "
        f"{ours.share_closer_to_train:.4f} | | {t_ours:.3f} |",
        f"| SDMetrics DCROverfittingProtection | {closer:.4f} | (counted as holdout) | | "
        f"{float(ref['score']):.4f} | {t_ref:.1f} |",
        "",
        f"Speed-up at this size: {t_ref / t_ours:,.0f}x (SDMetrics one run; it cross-joins "
        "every pair in pandas, so it grows with n_synthetic x n_real).",
    ]


def bench_memory(adult: pd.DataFrame, rows: int) -> list[str]:
    idx = np.random.default_rng(0).permutation(len(adult))
    train, holdout = adult.iloc[idx[:20_000]], adult.iloc[idx[20_000:40_000]]
    synthetic = perturb(adult.sample(rows, replace=True, random_state=6), np.random.default_rng(7))
    distinct = len(synthetic.drop_duplicates())
    res, sec = timed(lambda: distance_to_closest_record(train, synthetic, holdout=holdout), 1)
    tracemalloc.start()
    distance_to_closest_record(train, synthetic, holdout=holdout)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    frame_mb = synthetic.memory_usage(deep=True).sum() / 2**20
    return [
        f"synthetic {len(synthetic):,} rows ({distinct:,} distinct; the input frame itself "
        f"takes {frame_mb:,.0f} MiB), train {len(train):,}, holdout {len(holdout):,}.", "",
        f"Wall time {sec:.1f} s (one run); peak memory allocated during the call "
        f"(tracemalloc) {peak / 2**20:,.0f} MiB; share closer to train "
        f"{res.share_closer_to_train:.4f}.",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--memory-rows", type=int, default=1_000_000)
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    adult = read_adult()
    print(f"Adult: {len(adult):,} rows x {adult.shape[1]} columns", flush=True)
    report = [
        "# Gate measures: exact copies and DCR", "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores "
        f"(shared), Python {platform.python_version()}; command: "
        "`python -m experiments.benchmarks.bench_gate`. Wall seconds, median of "
        f"{args.repeats} runs unless said otherwise. Adult: {len(adult):,} rows.", "",
        "## exact_copies vs pandas merges (all of Adult)", "",
        *bench_copies(adult, args.repeats), "",
        "## DCR share at 20,000 x 20,000 (+ 20,000 holdout)", "",
        *bench_dcr(adult, min(args.repeats, 3)), "",
        "## DCR vs SDMetrics DCROverfittingProtection (1,000 x 1,000 + 1,000)", "",
        *bench_sdmetrics(adult, args.repeats), "",
        f"## DCR memory on {args.memory_rows:,} synthetic rows", "",
        *bench_memory(adult, args.memory_rows), "",
    ]
    text = "\n".join(report)
    print(text)
    write_section(args.output, "bench_gate", text)
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
