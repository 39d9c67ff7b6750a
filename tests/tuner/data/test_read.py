"""Reading the custodian's file: codes with a leading zero stay text, and only the columns a
study uses are read (tuner/data/_read.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from tuner.data import read_table
from tuner.errors import InputError
from tuner.search.context import apply_missing_codes

CSV = "zip,age,income,member,patient_no\n02134,30,0.5,true,10\n10001,40,1.5,false,007\n" \
      ",50,,true,8\n"


def test_a_number_with_a_leading_zero_is_read_as_the_code_it_is(tmp_path):
    (tmp_path / "t.csv").write_text(CSV)
    frame = read_table(tmp_path / "t.csv")
    assert frame["zip"].tolist()[:2] == ["02134", "10001"] and pd.isna(frame["zip"][2])
    assert frame["patient_no"].tolist() == ["10", "007", "8"]  # one zero makes a column text
    assert frame["age"].dtype == "int64" and frame["income"].dtype == "float64"  # 0.5: a number
    assert frame["member"].dtype == bool
    assert frame.attrs["codes_as_text"] == ["zip", "patient_no"]
    # written back, the file's text again
    frame.to_csv(tmp_path / "back.csv", index=False)
    assert (tmp_path / "back.csv").read_text() == CSV.replace("true", "True").replace(
        "false", "False")


@pytest.mark.parametrize("value", ["0", "0.25", "-0.5", "10", "100"])
def test_zero_itself_and_decimals_below_one_are_numbers(tmp_path, value):
    (tmp_path / "t.csv").write_text(f"x\n{value}\n7\n")
    frame = read_table(tmp_path / "t.csv")
    assert pd.api.types.is_numeric_dtype(frame["x"]) and frame.attrs["codes_as_text"] == []


def test_a_missing_code_matches_a_code_column_read_as_text(tmp_path):
    (tmp_path / "t.csv").write_text("zip,age\n02134,30\n-8,40\n")
    frame = apply_missing_codes(read_table(tmp_path / "t.csv"), {"zip": (-8,)})
    assert frame["zip"].iloc[0] == "02134" and pd.isna(frame["zip"].iloc[1])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_the_columns_a_study_names_are_the_only_ones_read(tmp_path, suffix, monkeypatch):
    path = tmp_path / f"t{suffix}"
    table = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [0.5, 1.5], "d": [3, 4]})
    table.to_csv(path, index=False) if suffix == ".csv" else table.to_parquet(path)
    name = "read_csv" if suffix == ".csv" else "read_parquet"
    reader, seen = getattr(pd, name), []

    def spy(*args, **kwargs):
        frame = reader(*args, **kwargs)
        seen.extend(frame.columns)
        return frame

    monkeypatch.setattr(pd, name, spy)
    frame = read_table(path, ["c", "a"], skip=["a"])
    assert list(frame.columns) == ["c"] and set(seen) == {"c"}
    with pytest.raises(InputError, match=r"data.columns names \['e'\], not in .*\(columns: "
                                        r"\['a', 'b', 'c', 'd'\]\)"):
        read_table(path, ["a", "e"])
