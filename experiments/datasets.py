"""Readers for the shared real datasets in ``../shared/data`` (never copied into the repository).

The folder is found beside the repository root, or wherever ``RISK_TUNER_DATA`` points. A missing
file raises :class:`DatasetMissing` naming the path, so scripts can say what to fetch and tests
can skip with that reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

DATA_DIR = Path(
    os.environ.get("RISK_TUNER_DATA", Path(__file__).resolve().parents[1].parent / "shared/data")
)

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
    "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
    "hours_per_week", "native_country", "income",
]


class DatasetMissing(FileNotFoundError):
    """A shared dataset file is absent; the message names the path looked at."""


def path_of(relative: str) -> Path:
    """Path of a shared data file, or :class:`DatasetMissing` naming where it was looked for."""
    path = DATA_DIR / relative
    if not path.exists():
        raise DatasetMissing(
            f"shared dataset {path} is absent (expected ../shared/data beside the repository, "
            "or set RISK_TUNER_DATA to the folder holding adult_uci/, hu_acs/, hu_ce/)"
        )
    return path


def read_adult() -> pd.DataFrame:
    """UCI Adult, adult.data + adult.test: the 48,842 people (Kohavi & Becker 1996).

    '?' is read as missing; adult.test's junk first line is skipped and its labels lose their
    trailing dot, so ``income`` takes the two values ``<=50K`` and ``>50K``.
    """
    parts = []
    for name, skip in (("adult.data", 0), ("adult.test", 1)):
        frame = pd.read_csv(
            path_of(f"adult_uci/{name}"), header=None, names=ADULT_COLUMNS, skiprows=skip,
            skipinitialspace=True, na_values="?",
        )
        parts.append(frame.dropna(how="all"))
    adult = pd.concat(parts, ignore_index=True)
    adult["income"] = adult["income"].str.rstrip(".")
    return adult


def read_acs_sample() -> pd.DataFrame:
    """Hu's 2012 ACS extract ``ACSdata.csv``: 10,000 people, 10 integer-coded categoricals."""
    return pd.read_csv(path_of("hu_acs/ACSdata.csv"))


def read_acs_partial() -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """Hu's ACS original and its three partially synthetic versions (R row names dropped)."""
    org = pd.read_csv(path_of("hu_acs/ACSdata_org.csv"))
    syn = [pd.read_csv(path_of("hu_acs/ACSdata_syn.csv"))]
    for name in ("ACSdata_syn2.csv", "ACSdata_syn3.csv"):
        frame = pd.read_csv(path_of(f"hu_acs/{name}"))
        syn.append(frame.drop(columns=frame.columns[0]))
    return org, syn


def read_ce() -> pd.DataFrame:
    """Hu's Consumer Expenditure sample: 994 households, UrbanRural, Race, Income, Expenditure."""
    return pd.read_csv(path_of("hu_ce/CEdata.csv"))
