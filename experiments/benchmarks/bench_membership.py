"""Membership disclosure's distances against a plain hash join, and its memory on 1M rows.

``membership_disclosure`` needs every real record's Hamming distance d to its nearest synthetic
record: the decision at the chosen h is ``d <= h``, and the F1 curve it always reports
(design §3, step 4) needs d itself for every h from 0 to p. So the work is the same at h = 0
and h = 2; what
is measured here is how far that work is from the floor, a hash join on the encoded keys.

* Adult (48,842 people), every column a quasi-identifier; train, holdout and "synthetic" are
  its thirds as in ``bench_risk`` (synthetic = real non-members: distances 0 to 6, the hard
  case), and a perturbed copy of train (15% of the cells resampled from their column).
* Same work, one run, median of 5, public API only: ``membership_disclosure`` (validation,
  encoding, distances, 100 repeats) at h = 0 and at h = 2, and ``membership_distances``
  (encoding and distances), each against the floor: the same encoded keys made with pandas
  (numeric columns with more than 20 distinct values cut into 20 equal-width bins over real
  and synthetic values, design §3, step 3; missing equal to missing) and a ``pandas.merge`` of the
  real rows with the distinct synthetic rows, giving each real row's exact-match flag. The
  flag is checked equal to ``distance == 0`` for every row, so both sides use the same keys.
* Memory: membership with 1,000,000 synthetic rows (Adult rows bootstrapped, 15% or 60% of the
  cells resampled: most real rows then match exactly or at distance 1, or many lie at 2 to 5,
  which takes the matrix product over a million rows): the tracemalloc peak during the call
  (numpy and pandas buffers), and the peak resident set above its size before the call (Linux
  VmHWM, reset first; this also counts OpenBLAS's buffers), both above the frames themselves.

Run from the repository root with ../shared/data present:

    python -m experiments.benchmarks.bench_membership [--rows 1000000] [--output FILE]

Prints a Markdown report and writes it to its block of ``experiments/benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import gc
import platform
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import risk
from experiments.datasets import read_adult as load_adult
from experiments.reporting import timed, write_section

RUNS = 5
MiB = 2**20


def perturbed(frame: pd.DataFrame, n: int, share: float, seed: int) -> pd.DataFrame:
    """``n`` rows of ``frame`` drawn with replacement, ``share`` of each column's cells replaced
    by the value of another random row (a crude generator: near copies and new combinations)."""
    rng = np.random.default_rng(seed)
    out = frame.iloc[rng.integers(0, len(frame), n)].reset_index(drop=True)
    for col in out.columns:
        flip = rng.random(n) < share
        values = frame[col].to_numpy()[rng.integers(0, len(frame), int(flip.sum()))]
        out.loc[flip, col] = values
    return out


def design_keys(frames: list[pd.DataFrame], bins: int = 20) -> list[pd.DataFrame]:
    """The encoded keys of design §3, step 3 made with pandas alone: numeric columns with more than
    ``bins`` distinct values (over all frames) cut into ``bins`` equal-width bins spanning all
    values, the rest kept as they are (merge matches missing with missing)."""
    sizes = np.cumsum([len(f) for f in frames])[:-1]
    out = {}
    for col in frames[0].columns:
        values = pd.concat([f[col] for f in frames], ignore_index=True)
        if (pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
                and values.nunique() > bins):
            x = values.to_numpy(dtype=float)
            edges = np.linspace(np.nanmin(x), np.nanmax(x), bins + 1)
            codes = np.clip(np.searchsorted(edges[1:-1], x, side="right"), 0, bins - 1)
            values = pd.Series(np.where(np.isnan(x), -1, codes))
        out[col] = values.to_numpy()
    return [pd.DataFrame({c: v[lo:hi] for c, v in out.items()})
            for lo, hi in zip([0, *sizes], [*sizes, sum(len(f) for f in frames)], strict=True)]


def hash_join(real: pd.DataFrame, syn: pd.DataFrame) -> np.ndarray:
    """Exact-match flag of each real row on the encoded keys: one pandas merge."""
    real_keys, syn_keys = design_keys([real, syn])
    cols = list(real_keys.columns)
    merged = real_keys.merge(syn_keys.drop_duplicates(), on=cols, how="left", indicator=True,
                             sort=False)
    return (merged["_merge"] == "both").to_numpy()


def distinct(*frames: pd.DataFrame) -> list[int]:
    """Distinct encoded rows of each frame (keys made over all of them together)."""
    return [len(keys.drop_duplicates()) for keys in design_keys(list(frames))]


def bench_case(name: str, train: pd.DataFrame, holdout: pd.DataFrame, syn: pd.DataFrame,
               n_pop: int) -> list[str]:
    real = pd.concat([train, holdout], ignore_index=True)
    flags, t_join = timed(lambda: hash_join(real, syn), RUNS)
    dist, t_dist = timed(lambda: risk.membership_distances(real, syn), RUNS)
    assert np.array_equal(flags, (dist == 0).to_numpy()), "the keys differ from ours"
    counts = np.bincount(dist.to_numpy())
    n_real, n_syn = distinct(real, syn)
    rows = [
        f"**{name}**: {len(train):,} train + {len(holdout):,} holdout real rows "
        f"({n_real:,} distinct encoded), {len(syn):,} synthetic rows "
        f"({n_syn:,} distinct), p = {real.shape[1]}; real rows at distance 0, 1, 2, "
        f"...: {', '.join(f'{c:,}' for c in counts)}.", "",
        "| ours (median of 5) | seconds | pandas: encoded keys + merge | ratio |",
        "|---|---|---|---|",
    ]
    for h in (0, 2):
        for curve in (True, False):
            def call(h: int = h, curve: bool = curve) -> risk.MembershipResult:
                return risk.membership_disclosure(train, holdout, syn, population_size=n_pop,
                                                  hamming_threshold=h, random_state=0,
                                                  curve=curve)

            res, t_m = timed(call, RUNS)
            what = "with the F1 curve (the release)" if curve else "curve=False (a trial)"
            rows.append(f"| membership_disclosure, h = {h}, {what} (M = {res.m:.3f}) | "
                        f"{t_m:.3f} | {t_join:.3f} | {t_m / t_join:.1f}x |")
    rows.append(f"| membership_distances (encoding + every distance) | {t_dist:.3f} | "
                f"{t_join:.3f} | {t_dist / t_join:.1f}x |")
    print("\n".join(rows), flush=True)
    return rows


def _status_bytes(field: str) -> int | None:
    """A ``Vm*`` line of /proc/self/status in bytes (Linux), or None."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_rss_growth(fn: Callable[[], Any]) -> float | None:
    """Bytes by which the resident set peaks above its size before ``fn`` (Linux: the peak,
    VmHWM, is reset through /proc/self/clear_refs first), or None where that is unavailable."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        return None
    before = _status_bytes("VmRSS")
    fn()
    peak = _status_bytes("VmHWM")
    return None if before is None or peak is None else float(peak - before)


def bench_memory(adult: pd.DataFrame, train: pd.DataFrame, holdout: pd.DataFrame,
                 n_rows: int) -> list[str]:
    rows = [
        f"{n_rows:,} synthetic rows (Adult rows drawn with replacement, a share of the cells "
        f"resampled) against {len(train):,} + {len(holdout):,} real rows.", "",
        "| cells resampled | distinct synthetic | real rows at distance 0, 1, 2, ... | frames "
        "(pandas, deep) | seconds (under tracemalloc) | tracemalloc peak above the data | "
        "peak resident set above its size before the call |",
        "|---|---|---|---|---|---|---|",
    ]
    for share in (0.15, 0.6):
        syn = perturbed(adult, n_rows, share, seed=1)
        data = sum(int(f.memory_usage(deep=True).sum()) for f in (train, holdout, syn))

        def call(syn: pd.DataFrame = syn) -> risk.MembershipResult:
            return risk.membership_disclosure(train, holdout, syn, population_size=len(adult),
                                              random_state=0)

        rss = peak_rss_growth(call)
        gc.collect()
        tracemalloc.start()
        start = time.perf_counter()
        call()
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        counts = np.bincount(risk.membership_distances(pd.concat([train, holdout]), syn))
        rss_cell = "n/a" if rss is None else f"{rss / MiB:,.0f} MiB"
        rows.append(f"| {share:.0%} | {distinct(train, holdout, syn)[2]:,} | "
                    f"{', '.join(f'{c:,}' for c in counts)} | {data / MiB:,.0f} MiB | "
                    f"{seconds:.1f} | {peak / MiB:,.0f} MiB | {rss_cell} |")
        print(rows[-1], flush=True)
        del syn
        gc.collect()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000,
                        help="synthetic rows of the memory run")
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    adult = load_adult()
    idx = np.random.default_rng(0).permutation(len(adult))
    third = len(adult) // 3
    train, holdout = adult.iloc[idx[:third]], adult.iloc[idx[third:2 * third]]
    others = adult.iloc[idx[2 * third:]]
    report = [
        "## Membership disclosure: distances vs a hash join, and memory on 1M synthetic rows", "",
        f"Machine: {platform.processor() or platform.machine()}, Python "
        f"{platform.python_version()}; command: `python -m "
        "experiments.benchmarks.bench_membership`. Ratios are of medians of 5 runs taken in "
        "the same run. The F1 curve for every h needs every distance (exact join, "
        "deletion-neighbourhood hash joins for d = 1, 2, ... while cheaper than the matrix "
        "product, a blocked one-hot product for the rest); `curve=False`, what a tuning trial "
        "computes, stops once the distances up to h are known (h = 0: the exact join alone), "
        "with the same M.", "",
        *bench_case("Adult thirds, synthetic = real non-members", train, holdout, others,
                    len(adult)), "",
        *bench_case("Adult thirds, synthetic = train with 15% of cells resampled", train,
                    holdout, perturbed(train, len(train), 0.15, seed=2), len(adult)), "",
        "### Memory", "",
        *bench_memory(adult, train, holdout, args.rows), "",
    ]
    write_section(args.output, "bench_membership", "\n".join(report))
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
