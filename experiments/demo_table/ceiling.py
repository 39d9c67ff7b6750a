"""How large must the demo's table be for M to bind? The copy ceiling by table size (issue #28).

M can only refuse a leaky release when a verbatim copy of the training records would score
above the threshold (the *copy ceiling*, ``tuner.measures._membership.copy_ceiling``) and an
attack set holds at least 20 members (``risk.MIN_MEMBERS``). For tables of ``SIZES`` records
drawn from UCI Adult as :func:`experiments.demo_table.build.sample` draws the demo's table (the
5,000-record row *is* the demo's table), this computes, on five seeded splits each:

* the copy ceiling: ``risk.membership_disclosure(train, holdout, train)`` with N = 48,842, every
  column a quasi-identifier (the tuner's default), h = 0, 20 numeric bins, 100 attack sets, as
  the tuner does;
* the members per attack set (``round(a t)``, t = n_train / N);
* the M of a release that leaks nothing: ``n_train`` other people of Adult, drawn from outside
  the table, as the synthetic data (what a perfect generator could at best resemble), with the
  width of its 95 % spread over the attack sets: how far one study's M of a safe release
  wanders by the luck of the attack sets (it narrows as the members per attack set grow).

Two splits: ``0.5/0.3``, the study's split with a sealed audit set (train 0.5, holdout 0.3 of
the records; the audit set's 0.2 is not used by M), and ``0.5/0.5``, the split before the audit
set existed. One more row puts the demo's table under a weaker intruder who knows only the six
``attribute_keys`` of ``tuner/demo.toml``. Run from the repository root (``../shared/data`` beside
it; about a minute on 2 cores)::

    python -m experiments.demo_table.ceiling

Results: ``results/ceiling.csv`` (one row per size, split, seed and key set) and
``results/ceiling.md`` (mean and range over the seeds), quoted in this folder's README.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import risk
from experiments.datasets import read_adult
from experiments.demo_table.build import SIZE, sample_rows
from experiments.reporting import markdown_table

SIZES = (2500, 3000, 4000, 5000, 6000, 8000)
SPLITS = {"0.5/0.3": (0.5, 0.3), "0.5/0.5": (0.5, 0.5)}
SEEDS = range(5)
SIX_KEYS = ["age", "sex", "race", "marital_status", "education", "native_country"]
RESULTS = Path(__file__).resolve().parent / "results"


def parts(frame: pd.DataFrame, *, train: float, holdout: float,
          seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A seeded split: ``train`` and ``holdout`` shares of ``frame``'s records, disjoint (what
    is left over would be the sealed audit set)."""
    if not (0 < train and 0 < holdout and train + holdout <= 1):
        raise ValueError(f"train and holdout must be positive shares summing to <= 1, got "
                         f"(train={train}, holdout={holdout})")
    order = np.random.default_rng(seed).permutation(len(frame))
    n_train, n_holdout = round(train * len(frame)), round(holdout * len(frame))
    return (frame.iloc[np.sort(order[:n_train])].reset_index(drop=True),
            frame.iloc[np.sort(order[n_train:n_train + n_holdout])].reset_index(drop=True))


def ceiling_row(table: pd.DataFrame, others: pd.DataFrame, *, population_size: int,
                split: str, seed: int, keys: list[str] | None) -> dict[str, object]:
    """The copy ceiling of ``table`` on one split, and the M of ``n_train`` of ``others``
    (people outside the table) as the release; ``keys``: the intruder's columns, or all."""
    train, holdout = parts(table, train=SPLITS[split][0], holdout=SPLITS[split][1], seed=seed)
    strangers = others.sample(n=len(train), random_state=seed).reset_index(drop=True)
    copy, safe = (risk.membership_disclosure(
        train, holdout, synthetic, population_size=population_size, keys=keys,
        random_state=seed, curve=False) for synthetic in (train, strangers))
    return {"records": len(table), "split": split, "seed": seed,
            "keys": "every column" if keys is None else "six attribute_keys",
            "n_train": len(train), "n_holdout": len(holdout), "copy_ceiling": copy.m,
            "members_per_attack_set": copy.attack_members, "attack_size": copy.attack_size,
            "can_bind": bool(copy.can_bind and copy.m > copy.m_threshold),
            "m_others": safe.m, "m_others_low": safe.m_spread.low,
            "m_others_high": safe.m_spread.high}


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """Per size, split and key set, over the seeds: the ceiling's mean and range, members per
    attack set, the mean M of other people and the mean width of its spread over the attack
    sets, and on how many seeds M binds."""
    rows = rows.assign(spread_width=rows["m_others_high"] - rows["m_others_low"])
    grouped = rows.groupby(["keys", "split", "records"], sort=False)
    out = grouped.agg(n_train=("n_train", "first"), n_holdout=("n_holdout", "first"),
                      ceiling=("copy_ceiling", "mean"), lowest=("copy_ceiling", "min"),
                      highest=("copy_ceiling", "max"),
                      members=("members_per_attack_set", "first"),
                      m_others=("m_others", "mean"), spread=("spread_width", "mean"),
                      binds=("can_bind", "sum"), seeds=("can_bind", "size"))
    out["M binds"] = out.pop("binds").astype(str) + " of " + out.pop("seeds").astype(str)
    return out.reset_index().sort_values(["keys", "split", "records"], kind="stable")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    adult = read_adult()
    rows = []
    for n in SIZES:
        inside = np.zeros(len(adult), dtype=bool)
        inside[sample_rows(len(adult), size=n)] = True
        table, others = (adult[rows_].reset_index(drop=True) for rows_ in (inside, ~inside))
        rows += [ceiling_row(table, others, population_size=len(adult), split=split, seed=seed,
                             keys=SIX_KEYS if keys else None)
                 for keys in (False, True) if n == SIZE or not keys
                 for split in SPLITS if split == "0.5/0.3" or not keys for seed in SEEDS]
    frame = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out / "ceiling.csv", index=False)
    table = markdown_table(summarize(frame), floatfmt=".3f")
    seconds = time.perf_counter() - started
    (args.out / "ceiling.md").write_text(
        "# Copy ceiling of M by table size (UCI Adult, N = 48,842; h = 0, 20 bins, 100 attack "
        f"sets; {len(SEEDS)} split seeds)\n\n{table}\n\n{len(rows)} rows, {seconds:.0f} s.\n")
    print(table)
    print(f"wrote {args.out / 'ceiling.csv'} and ceiling.md ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
