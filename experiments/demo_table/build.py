"""Make the demo's embedded table: a seeded sample of UCI Adult, written as a gzip'd CSV.

``tuner/demo_data/adult_demo.csv.gz`` (``builtin:adult``, the default of ``risk-tuner demo``)
is ``SIZE`` people drawn without replacement, with the seed ``SEED``, from the 48,842 people of
UCI Adult's two files (``adult.data`` + ``adult.test`` as read by
:func:`experiments.datasets.read_adult`; Kohavi & Becker 1996, CC BY 4.0), kept in the files'
order, every column as distributed, a missing value (UCI's ``?``) an empty field. Why this size:
``experiments/demo_table/README.md``.

The bytes are reproducible: the CSV is written by pandas with ``\\n`` line ends, and gzip'd
with no file name and time stamp in its header, so the same pandas and zlib give the same
file. The SHA-256 of the CSV text (what the table *is*, whatever the compressor) is recorded in
``tuner/demo_data/README.md``; ``--check`` re-makes the table and compares both digests::

    python -m experiments.demo_table.build            # write tuner/demo_data/adult_demo.csv.gz
    python -m experiments.demo_table.build --check    # re-make it and compare, write nothing
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.datasets import read_adult

SIZE = 5000
SEED = 28  # the issue that asked for the table
TARGET = Path(__file__).resolve().parents[2] / "tuner" / "demo_data" / "adult_demo.csv.gz"


def sample_rows(population_size: int, *, size: int = SIZE, seed: int = SEED) -> np.ndarray:
    """Positions of ``size`` of ``population_size`` records drawn without replacement by
    ``seed``, sorted. ``ValueError`` when ``size`` is not between 1 and ``population_size``."""
    if not 1 <= size <= population_size:
        raise ValueError(f"size must be between 1 and the population's {population_size} "
                         f"records, got {size}")
    return np.sort(np.random.default_rng(seed).choice(population_size, size=size, replace=False))


def sample(population: pd.DataFrame, *, size: int = SIZE, seed: int = SEED) -> pd.DataFrame:
    """The records of ``population`` at :func:`sample_rows`, in their order."""
    rows = sample_rows(len(population), size=size, seed=seed)
    return population.iloc[rows].reset_index(drop=True)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The table as UTF-8 CSV text: a header row, ``\\n`` line ends, missing values empty."""
    return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")


def gzipped(data: bytes) -> bytes:
    """``data`` gzip'd without a file name or time stamp (the same input, the same bytes)."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def digests(path: Path) -> dict[str, str]:
    """SHA-256 of a ``.csv.gz`` file and of the CSV text inside it."""
    packed = path.read_bytes()
    return {"csv.gz": hashlib.sha256(packed).hexdigest(),
            "csv": hashlib.sha256(gzip.decompress(packed)).hexdigest()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help=f"re-make the table and compare it with {TARGET.name}; write nothing")
    parser.add_argument("--output", type=Path, default=TARGET, help="where to write the table")
    args = parser.parse_args(argv)
    data = csv_bytes(sample(read_adult()))
    made = {"csv.gz": hashlib.sha256(gzipped(data)).hexdigest(),
            "csv": hashlib.sha256(data).hexdigest()}
    if args.check:
        found = digests(args.output)
        for kind in ("csv", "csv.gz"):
            same = "same" if found[kind] == made[kind] else "DIFFERENT"
            print(f"SHA-256 of the {kind:6}: re-made {made[kind]}, {args.output.name} "
                  f"{found[kind]}: {same}")
        return 0 if found["csv"] == made["csv"] else 1
    args.output.write_bytes(gzipped(data))
    print(f"wrote {args.output} ({args.output.stat().st_size:,} bytes, {SIZE} records)")
    for kind, digest in made.items():
        print(f"SHA-256 of the {kind:6}: {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
