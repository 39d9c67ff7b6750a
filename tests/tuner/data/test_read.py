"""Reading the custodian's file: codes with a leading zero stay text, and only the columns a
study uses are read (tuner/data/_read.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from tuner.data import read_table
from tuner.errors import InputError
from tuner.search._context import apply_missing_codes

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


@pytest.mark.parametrize("value", ["0", "0.25", "-0.5", "10", "100", "-01", "0.0", "00.5"])
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
    with pytest.raises(InputError, match=r"^data.columns names \['e'\], not in .*\(columns: "
                                        r"\['a', 'b', 'c', 'd'\]\)"):
        read_table(path, ["a", "e"])


def test_a_parquet_index_is_not_a_column_to_name(tmp_path):
    pd.DataFrame({"a": [1, 2]}, index=pd.Index([5, 6], name="idx")).to_parquet(tmp_path / "t.pq")
    with pytest.raises(InputError, match=r"^data.columns names \['idx'\], not in .*\(columns: "
                                        r"\['a'\]\)"):
        read_table(tmp_path / "t.pq", ["idx"])


def test_a_code_is_its_digits_without_the_spaces_around_them(tmp_path):
    (tmp_path / "t.csv").write_text("code,n\n 0123 ,1\n7,2\n")
    assert read_table(tmp_path / "t.csv")["code"].tolist() == ["0123", "7"]


def test_a_study_made_when_codes_were_numbers_says_why_it_cannot_go_on(tmp_path, monkeypatch,
                                                                      capsys):
    """A study whose CSV has a ZIP column, made when the column was read as numbers, is refused
    as run on other data, and the refusal names the column read as text since."""
    import tuner.data._read as reading
    from tests.tuner.conftest import write_config
    from tuner import config
    from tuner.data import read_builtin
    from tuner.search._context import prepare
    from tuner.search._storage import DataChanged, open_study

    frame = read_builtin("builtin:fair").head(400)
    frame.insert(0, "zip", [f"0{1000 + i % 90}" for i in range(len(frame))])
    frame.to_csv(tmp_path / "fair.csv", index=False)
    path = write_config(tmp_path, synthesizers=("cart",), n_trials=1)
    path.write_text(path.read_text().replace('"builtin:fair"', '"fair.csv"'))
    with monkeypatch.context() as old:  # the reader before codes kept their zeros
        old.setattr(reading, "_codes_as_text", lambda frame, read: frame)
        open_study(prepare(config.load(path)))
    capsys.readouterr()
    with pytest.raises(DataChanged, match=r"was run on other data .* \(or the study was made "
                                          r"before columns written with leading zeros, here "
                                          r"\['zip'\], were read as text"):
        open_study(prepare(config.load(path)))
    # the run names them as docs/usage.md shows
    assert "note: data column(s) ['zip'] hold numbers written with a leading zero" in \
        capsys.readouterr().out


@pytest.mark.parametrize(("declared", "noted"), [
    (None, True),  # no metadata: released as the file's text
    ({"sdtype": "categorical"}, True),  # codes as labels: the text again
    ({"sdtype": "numerical"}, False),  # the metadata makes them numbers: no code is kept
    ({"sdtype": "postcode", "pii": True}, False),  # a fake column: no real value released
], ids=["no-metadata", "categorical", "numerical", "fake"])
def test_the_codes_note_names_only_columns_released_as_codes(tmp_path, capsys, declared, noted):
    import json

    from tests.tuner.conftest import write_config
    from tuner import config
    from tuner.data import read_builtin
    from tuner.search import prepare

    frame = read_builtin("builtin:fair").head(300)
    frame.insert(0, "zip", [f"0{1000 + i % 90}" for i in range(len(frame))])
    frame.to_csv(tmp_path / "fair.csv", index=False)
    path = write_config(tmp_path, synthesizers=("cart",), n_trials=1)
    text = path.read_text().replace('"builtin:fair"', '"fair.csv"')
    if declared is not None:
        (tmp_path / "metadata.json").write_text(json.dumps(
            {"METADATA_SPEC_VERSION": "SINGLE_TABLE_V1", "columns": {"zip": declared}}))
        text = text.replace('path = "fair.csv"', 'path = "fair.csv"\nmetadata = "metadata.json"')
    path.write_text(text)
    ctx = prepare(config.load(path))
    said = capsys.readouterr().out
    assert ("note: data column(s) ['zip'] hold numbers written with a leading zero" in said) \
        is noted, said
    if "zip" in ctx.frame.columns:  # what the note says is what the table holds
        assert bool(ctx.frame["zip"].dropna().astype(str).str.startswith("0").all()) is noted


@pytest.mark.parametrize(("text", "sep"), [
    ("a;b;c\n1;x;0,5\n2;y;1,5\n", ";"),  # a spreadsheet's export with decimal commas
    ("a\tb\tc\n1\tx\t0.5\n2\ty\t1.5\n", "\t"),
], ids=["semicolon", "tab"])
def test_a_file_separated_otherwise_than_by_commas_is_named_so(tmp_path, text, sep):
    # read as CSV it is one column named 'a;b;c' (or ragged with decimal commas), and the
    # refusal used to be about identifiers or ragged rows
    (tmp_path / "t.csv").write_text(text)
    header = f"a{sep}b{sep}c"
    with pytest.raises(InputError) as err:
        read_table(tmp_path / "t.csv")
    assert f"reads as one column named {header!r}: it seems separated by {sep!r}" in str(err.value)
