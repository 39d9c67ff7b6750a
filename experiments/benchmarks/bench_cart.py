"""Sequential CART synthesiser on 20,000 Adult rows: speed, and min_samples_leaf as a dial.

For each min_samples_leaf: fit + sample seconds, utility U (SDMetrics Quality Report and
1 - Hellinger) and membership disclosure M (all columns quasi-identifiers, N = 48,842, the
other Adult rows as holdout). Run from the repository root with ../shared/data present:

    python -m experiments.benchmarks.bench_cart [--leaves 1 5 20 100] [--output FILE]

Writes its table to its block of ``experiments/benchmarks/RESULTS.md`` by default (other
blocks are kept).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

import risk
from experiments.datasets import read_adult as load_adult
from experiments.reporting import write_section
from tuner.scoring import hellinger, quality_report
from tuner.synthesis import synthesize


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leaves", type=int, nargs="+", default=[1, 2, 5, 20, 100, 500])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    adult = load_adult()
    idx = np.random.default_rng(0).permutation(len(adult))
    train = adult.iloc[idx[: args.rows]].reset_index(drop=True)
    holdout = adult.iloc[idx[args.rows:]].reset_index(drop=True)
    rows = [
        f"## Sequential CART on {args.rows:,} Adult rows (min_samples_leaf as the dial)", "",
        "Command: `python -m experiments.benchmarks.bench_cart`. M with every column a "
        f"quasi-identifier, h = 0, N = {len(adult):,}, the other {len(holdout):,} people as "
        "holdout; U from SDMetrics' Quality Report and 1 - Hellinger (20 bins).", "",
        "| min_samples_leaf | fit s | sample s | U quality | U 1-Hellinger | M | M 95% |",
        "|---|---|---|---|---|---|---|",
    ]
    for leaf in args.leaves:
        out = synthesize("cart", {"min_samples_leaf": leaf}, train, seed=0)
        m = risk.membership_disclosure(train, holdout, out.synthetic,
                                       population_size=len(adult), random_state=0)
        u_q = quality_report(train, out.synthetic)
        u_h = hellinger(train, out.synthetic)
        rows.append(f"| {leaf} | {out.fit_seconds:.2f} | {out.sample_seconds:.2f} | "
                    f"{u_q:.4f} | {u_h:.4f} | {m.m:.3f} | [{m.m_spread.low:.3f}, "
                    f"{m.m_spread.high:.3f}] |")
        print(rows[-1], flush=True)
    write_section(args.output, "bench_cart", "\n".join(rows))
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
