"""Loaders for the shared real datasets (../shared/data), skipping cleanly when absent."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
    "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
    "hours_per_week", "native_country", "income",
]


def require(relative: str) -> Path:
    """Path of a shared data file, or skip the calling test with the reason."""
    path = DATA_DIR / relative
    if not path.exists():
        pytest.skip(f"shared dataset {path} is absent (tests read ../shared/data)")
    return path


def load_acs() -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """Hu's ACS original and its three partially synthetic versions (row names dropped)."""
    org = pd.read_csv(require("hu_acs/ACSdata_org.csv"))
    syn = [pd.read_csv(require("hu_acs/ACSdata_syn.csv"))]
    for name in ("ACSdata_syn2.csv", "ACSdata_syn3.csv"):
        frame = pd.read_csv(require(f"hu_acs/{name}"))
        syn.append(frame.drop(columns=frame.columns[0]))
    return org, syn


def load_ce() -> pd.DataFrame:
    return pd.read_csv(require("hu_ce/CEdata.csv"))


def load_adult() -> pd.DataFrame:
    """adult.data + adult.test: the 48,842 people; '?' is missing; test labels lose the dot."""
    parts = []
    for name, skip in (("adult.data", 0), ("adult.test", 1)):
        frame = pd.read_csv(
            require(f"adult_uci/{name}"), header=None, names=ADULT_COLUMNS, skiprows=skip,
            skipinitialspace=True, na_values="?",
        )
        parts.append(frame.dropna(how="all"))
    adult = pd.concat(parts, ignore_index=True)
    adult["income"] = adult["income"].str.rstrip(".")
    return adult
