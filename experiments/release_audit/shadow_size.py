"""Do shadow tables of 1,000 records audit a release trained on many more? (issue 32, item 5)

The release audit refits the released family on shadow tables, with and without each target,
and attacks the target in their synthetic data (design §13, ``risk.membership_audit``). Its
shadow tables held ``[audit] shadow_size = 1000`` records whatever the training size, and the
docs called the small table "the conservative choice" without a measurement. Here the same
release candidate (family and parameters) is audited with shadow tables of 1,000 records and
of the training size ``n_train``, on the same targets, the same number of games and the same
attacks, and the pooled TPR at 1 % FPR (with its clustered interval) is compared.

Set-up: Adult (the 48,842 people of ``../shared/data``, Kohavi & Becker 1996), a seeded sample;
the training table is its first ``n_train`` records, the shadows' pool the next 15,000 (so that
a shadow table can hold ``n_train`` records: the tuner's holdout is smaller than its training
set). Each shadow table samples as many synthetic records as it holds (the release's ratio).
The shared design (every table holds each target with probability one half) for both sizes:
the per-target game of 20 x 100 fits at ``n_train`` = 12,000 would not fit in the default
``max_minutes`` on 2 cores, and the comparison needs the same game at both sizes.

    python -m experiments.release_audit.shadow_size            # n_train 3,000 and 12,000
    python -m experiments.release_audit.shadow_size --quick    # a smoke size (a minute)

Results: ``results/shadow_size.csv`` (one row per cell, appended; a rerun skips cells already
there) and ``results/shadow_size.md``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import risk
from experiments.datasets import read_adult
from experiments.reporting import append_rows, markdown_table
from tuner.release import ReleasedFamily

RESULTS = Path(__file__).resolve().parent / "results"
POOL = 15_000
FAMILIES: list[tuple[str, dict[str, Any]]] = [
    ("cart", {"min_samples_leaf": 5}),
    ("gaussian_copula", {"default_distribution": "norm"}),
]


def cell(adult: pd.DataFrame, family: str, params: dict[str, Any], *, n_train: int,
         shadow_size: int, targets: int, shadows: int, jobs: int, seed: int) -> dict[str, Any]:
    """One audit: ``family`` on the first ``n_train`` records, shadows of ``shadow_size``."""
    train = adult.iloc[:n_train].reset_index(drop=True)
    pool = adult.iloc[n_train:n_train + POOL].reset_index(drop=True)
    fam = ReleasedFamily(family, params, "cpu", "remove")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = risk.membership_audit(train, pool, fam, targets=targets, shadows=shadows,
                                    shadow_size=shadow_size, design="shared", n_jobs=jobs,
                                    random_state=seed)
    ci = res.tpr_at_1pct_interval
    return {"family": family, "params": str(params), "n_train": n_train,
            "shadow_size": shadow_size, "targets": res.n_targets, "shadows": res.n_shadows,
            "seed": seed, "tpr_1pct": res.tpr_at_1pct, "tpr_1pct_low": ci.low,
            "tpr_1pct_high": ci.high, "fpr_1pct": res.fpr_at_1pct,
            "tpr_10pct": res.tpr_at_10pct, "median_auc": float(np.nanmedian(res.target_auc)),
            "max_auc": res.max_auc, "refused": ci.high > 0.05,
            "seconds": round(time.perf_counter() - start, 1)}


def summary(frame: pd.DataFrame) -> str:
    """The Markdown table of every cell, sizes side by side."""
    shown = frame.assign(tpr=[f"{t:.3f} [{lo:.3f}, {hi:.3f}]" for t, lo, hi in zip(
        frame.tpr_1pct, frame.tpr_1pct_low, frame.tpr_1pct_high, strict=True)])
    cols = ["family", "n_train", "shadow_size", "seed", "tpr", "fpr_1pct", "tpr_10pct",
            "median_auc", "max_auc", "refused", "seconds"]
    return markdown_table(shown.sort_values(["family", "n_train", "seed", "shadow_size"])[cols])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-train", type=int, nargs="+", default=[3000, 12000])
    parser.add_argument("--targets", type=int, default=20)
    parser.add_argument("--shadows", type=int, default=200)
    parser.add_argument("--seeds", type=int, nargs="+", default=[2026])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="n_train 1,500, 6 x 16 games")
    parser.add_argument("--out", type=Path, default=RESULTS / "shadow_size.csv")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_train, args.targets, args.shadows = [1500], 6, 16
        args.out = Path("/tmp/shadow_size_quick.csv")
    adult = read_adult().sample(frac=1.0, random_state=2026).reset_index(drop=True)
    done = set()
    if args.out.exists():
        old = pd.read_csv(args.out)
        done = set(zip(old.family, old.n_train, old.shadow_size, old.seed, old.shadows,
                        strict=True))
    for seed in args.seeds:
        for n_train in args.n_train:
            for family, params in FAMILIES:
                for size in (1000, n_train):
                    if (family, n_train, size, seed, args.shadows) in done:
                        continue
                    row = cell(adult, family, params, n_train=n_train, shadow_size=size,
                               targets=args.targets, shadows=args.shadows, jobs=args.jobs,
                               seed=seed)
                    print(f"{family} n_train={n_train:,} shadow_size={size:,} seed={seed}: "
                          f"TPR@1%FPR {row['tpr_1pct']:.3f} [{row['tpr_1pct_low']:.3f}, "
                          f"{row['tpr_1pct_high']:.3f}] ({row['seconds']:.0f} s)", flush=True)
                    append_rows(args.out, [row])
    frame = pd.read_csv(args.out)
    text = summary(frame)
    if not args.quick:
        (RESULTS / "shadow_size.md").write_text(
            "# Shadow tables of 1,000 records against shadow tables of the training size\n\n"
            "Made by `python -m experiments.release_audit.shadow_size` (module docstring: "
            "set-up).\nTPR at 1 % FPR, pooled over targets, with its 95 % interval clustered "
            "by fit; refused: the interval's upper end over the default limit 0.05.\n\n"
            + text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
