"""A patient table as a hospital system exports it, made up from a seed (no real person).

The columns of issue 33's example: Id, BIRTHDATE, DEATHDATE (mostly missing), SSN, DRIVERS,
PASSPORT, PREFIX, FIRST, LAST, MAIDEN, ADDRESS, CITY, COUNTY, ZIP, LAT, LON (15 decimals),
HEALTHCARE_EXPENSES, HEALTHCARE_COVERAGE: direct identifiers, dates as ISO text, and strong
quasi-identifiers (coordinates, dates of birth) beside two amounts. Every value is drawn with
NumPy from short made-up lists and digit patterns (SSNs in the 999 area, never issued), so a
table of 400,000 records takes seconds (``experiments.patients.bench_read`` uses one).

Run: ``python -m experiments.patients.generate OUT.csv [--records N] [--seed S]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

FIRST = ("Ana", "Ben", "Chloe", "Dev", "Ema", "Finn", "Gita", "Hugo", "Iris", "Jon", "Kara",
         "Liam", "Mia", "Noor", "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tess", "Uma", "Vic",
         "Wren", "Xavi", "Yara", "Zane", "Alba", "Bruno", "Cleo", "Dario")
LAST = ("Abbot", "Baker", "Castro", "Dunn", "Ellis", "Fox", "Grant", "Hale", "Ives", "Jonas",
        "Kerr", "Lund", "Moss", "Nash", "Ortiz", "Pike", "Quade", "Reyes", "Stone", "Tate",
        "Underhill", "Vance", "Wolfe", "Young", "Zeller", "Ames", "Brook", "Crane", "Dale", "Eady")
STREETS = ("Oak", "Maple", "Cedar", "Elm", "Pine", "Birch", "Willow", "Ash", "Hill", "Lake")
KINDS = ("Street", "Avenue", "Road", "Lane", "Way")
# the direct identifiers among its columns, as [data] identifiers declares them
IDENTIFIERS = ["ADDRESS", "DRIVERS", "FIRST", "Id", "LAST", "MAIDEN", "PASSPORT", "SSN"]
CITIES = (("Springfield", "Hampden County", "01101", 42.10, -72.59),
          ("Worcester", "Worcester County", "01601", 42.26, -71.80),
          ("Lowell", "Middlesex County", "01850", 42.63, -71.31),
          ("Quincy", "Norfolk County", "02169", 42.25, -71.00),
          ("New Bedford", "Bristol County", "02740", 41.63, -70.93))


def _digits(rng: np.random.Generator, n: int, width: int) -> pd.Series:
    return pd.Series(rng.integers(0, 10 ** width, n)).astype(str).str.zfill(width)


def patients(records: int = 543, *, seed: int = 0) -> pd.DataFrame:
    """``records`` made-up patients, every value as text or a number, as a CSV reader gives it."""
    rng = np.random.default_rng(seed)
    n = records
    birth = pd.Timestamp("1925-01-01") + pd.to_timedelta(rng.integers(0, 35_000, n), unit="D")
    dead = rng.random(n) < 0.15
    death = birth + pd.to_timedelta(rng.integers(3_000, 30_000, n), unit="D")
    death = death.where(dead & (death < pd.Timestamp("2024-12-31")))
    female = rng.random(n) < 0.5
    married = rng.random(n) < 0.6
    city = rng.integers(0, len(CITIES), n)
    place = pd.DataFrame(CITIES, columns=["city", "county", "zip", "lat", "lon"]).iloc[city]
    hexes = [pd.Series(rng.integers(0, 16 ** 8, n)).map("{:08x}".format),
             pd.Series(rng.integers(0, 16 ** 4, n)).map("{:04x}".format)]
    frame = pd.DataFrame({
        "Id": hexes[0] + "-" + hexes[1] + "-4" + _digits(rng, n, 3) + "-a" + _digits(rng, n, 3)
              + "-" + _digits(rng, n, 12),
        "BIRTHDATE": pd.Series(birth.strftime("%Y-%m-%d")),
        "DEATHDATE": pd.Series(death.strftime("%Y-%m-%d")).where(~pd.isna(death)),
        "SSN": "999-" + _digits(rng, n, 2) + "-" + _digits(rng, n, 4),
        "DRIVERS": "S99" + _digits(rng, n, 6),
        "PASSPORT": "X" + _digits(rng, n, 8) + "X",
        "PREFIX": np.where(female, np.where(married, "Mrs.", "Ms."), "Mr."),
        "FIRST": np.asarray(FIRST)[rng.integers(0, len(FIRST), n)] + _digits(rng, n, 3),
        "LAST": np.asarray(LAST)[rng.integers(0, len(LAST), n)] + _digits(rng, n, 3),
    })
    maiden = pd.Series(np.asarray(LAST)[rng.integers(0, len(LAST), n)]) + _digits(rng, n, 3)
    frame["MAIDEN"] = maiden.where(female & married)
    frame["ADDRESS"] = (pd.Series(rng.integers(1, 9_999, n)).astype(str) + " "
                        + np.asarray(STREETS)[rng.integers(0, len(STREETS), n)] + " "
                        + np.asarray(KINDS)[rng.integers(0, len(KINDS), n)]
                        + np.where(rng.random(n) < 0.3, " Unit " + _digits(rng, n, 2), ""))
    frame["CITY"] = place["city"].to_numpy()
    frame["COUNTY"] = place["county"].to_numpy()
    frame["ZIP"] = place["zip"].to_numpy()
    frame["LAT"] = np.round(place["lat"].to_numpy() + rng.normal(0, 0.05, n), 15)
    frame["LON"] = np.round(place["lon"].to_numpy() + rng.normal(0, 0.05, n), 15)
    frame["HEALTHCARE_EXPENSES"] = np.round(rng.lognormal(11, 1, n), 2)
    frame["HEALTHCARE_COVERAGE"] = np.round(rng.lognormal(9, 1.5, n), 2)
    return frame


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--records", type=int, default=543)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    patients(args.records, seed=args.seed).to_csv(args.output, index=False)
    print(f"wrote {args.records:,} made-up patients to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
