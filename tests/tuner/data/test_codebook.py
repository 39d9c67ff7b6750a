"""The codebook (tuner/data/_codebook.py): its two forms, its checks against the table, and
what takes the domain from it (value protection, the clipping of records, the DP families)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.data import Codebook, Domain, protect, read_builtin, read_codebook
from tuner.errors import InputError

FAIR = {"age": {"categories": [17.5, 22, 27, 32, 37, 42]},
        "religious": {"categories": [1, 2, 3, 4]},
        "affairs": {"min": 0, "max": 60}}


def _write(folder: Path, content: object, name: str = "codebook.json") -> Path:
    path = folder / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_the_json_and_csv_forms_read_alike(tmp_path):
    from_json = read_codebook(_write(tmp_path, {"columns": {
        "age": {"min": 17, "max": 99}, "sex": {"categories": ["F", "M"], "missing": True},
        "admitted": {"min": "2000-01-01", "max": "2024-12-31"}, "weight": "public"}}))
    from_csv = read_codebook(_write(tmp_path, (
        "column,type,categories,min,max,missing\n"
        "age,numerical,,17,99,\n"
        "sex,categorical,F|M,,,true\n"
        "admitted,datetime,,2000-01-01,2024-12-31,\n"
        "weight,public,,,,\n"), "codebook.csv"))
    assert from_json.domains == from_csv.domains
    assert from_json.domains["sex"] == Domain("sex", "categories", ("F", "M"), missing=True)
    assert from_json.domains["age"].kind == "range" and from_json.domains["weight"].kind == \
        "public"
    assert from_json.record() == {"source": "codebook.json", "columns": {
        "age": "range", "sex": "categories", "admitted": "range", "weight": "public"}}


@pytest.mark.parametrize(("content", "said"), [
    ({"age": {"min": 5, "max": 5}}, "column 'age' needs min < max"),
    ({"age": {"min": 5}}, "column 'age' needs \"categories\", or both"),
    ({"age": {"min": 0, "max": 9, "step": 1}}, "unknown key(s) ['step']"),
    ({"age": {"categories": ["a"], "min": 0}}, "not both"),
    ({"age": {"categories": []}}, "non-empty list"),
    ({"age": {"categories": ["a", "a"]}}, "repeat a value"),
    ({"age": {"min": "soon", "max": "2020-01-01"}}, "must be an ISO date"),
    ({"age": {"min": 0, "max": float("inf")}}, "must be a finite number"),
    ({"age": {"min": 0, "max": 1, "missing": "no"}}, '"missing" of column \'age\''),
    ({"age": 17}, 'must be "public" or an object'),
    ([], "must map each column"),
])
def test_a_bad_entry_is_refused_naming_its_column_and_what_was_expected(tmp_path, content, said):
    with pytest.raises(InputError, match="data.codebook") as err:
        read_codebook(_write(tmp_path, content))
    assert said in str(err.value)


@pytest.mark.parametrize(("text", "said"), [
    ("col,type\nage,numerical\n", "the first row must be the header"),
    ("column,type,categories,min,max,missing\nage,number,,0,9,\n", "type 'number'"),
    ("column,type,categories,min,max,missing\nage,numerical,,zero,9,\n", "must be numbers"),
    ("column,type,categories,min,max,missing\nage,numerical,,0,9\n", "line 2: 5 fields"),
    ("column,type,categories,min,max,missing\nage,public,,,,\nage,public,,,,\n", "given twice"),
])
def test_a_bad_csv_codebook_is_refused_at_its_line(tmp_path, text, said):
    with pytest.raises(InputError, match="data.codebook") as err:
        read_codebook(_write(tmp_path, text, "codebook.csv"))
    assert said in str(err.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_codebook(tmp_path / "nope.json")


def test_the_table_is_checked_against_its_codebook(tmp_path):
    frame = pd.DataFrame({"age": [17, 30, 120], "sex": ["F", "M", "X"],
                          "town": ["a", None, "b"], "when": pd.to_datetime(
                              ["2001-01-01", "2030-06-01", "2002-01-01"])})
    book = read_codebook(_write(tmp_path, {
        "age": {"min": 17, "max": 99}, "sex": {"categories": ["F", "M"]},
        "town": {"categories": ["a", "b"]}, "when": {"min": "2000-01-01", "max": "2024-12-31"},
        "gone": "public"}))
    said = "\n".join(book.problems(frame))
    assert "names column(s) ['gone'] that the data do not have" in said
    assert "column 'age' has 1 value(s) outside its range [17, 99], e.g. [120]" in said
    assert "column 'sex' has 1 value(s) outside its 2 categories, e.g. ['X']" in said
    assert "column 'town' has 1 missing value(s)" in said and '"missing": true' in said
    assert "column 'when' has 1 value(s) outside its range" in said
    wrong_kind = read_codebook(_write(tmp_path, {"sex": {"min": 0, "max": 1},
                                                 "when": {"min": 0, "max": 1}}))
    said = "\n".join(wrong_kind.problems(frame))
    assert "column 'sex' is given a range" in said and "holds datetime values" in said
    fair = read_builtin("builtin:fair")
    assert read_codebook(_write(tmp_path, FAIR)).problems(fair) == []


def _clip_slowly(values: list[float], low: float, high: float) -> list[float]:
    return [min(max(v, low), high) if not np.isnan(v) else v for v in values]


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.floats(-1e6, 1e6) | st.just(float("nan")), min_size=1, max_size=40),
       low=st.floats(-1e3, 0), width=st.floats(1, 1e3))
def test_records_are_clipped_into_the_range_as_one_value_at_a_time_would_be(values, low, width):
    book = Codebook({"x": Domain("x", "range", low=low, high=low + width)})
    out = book.clip(pd.DataFrame({"x": values, "y": values}))
    np.testing.assert_array_equal(out["x"], _clip_slowly(values, low, low + width))
    np.testing.assert_array_equal(out["y"], values)  # a column it does not name: as it was


def test_an_integer_column_is_clipped_to_the_integers_inside_the_range():
    book = Codebook({"n": Domain("n", "range", low=0.5, high=9.5)})
    out = book.clip(pd.DataFrame({"n": [-3, 4, 12]}))
    assert out["n"].tolist() == [1, 4, 9] and out["n"].dtype == np.int64


def test_value_protection_leaves_a_declared_column_alone():
    rng = np.random.default_rng(0)
    train = pd.DataFrame({"gain": np.r_[rng.integers(0, 100, 199), 99_999],
                          "land": ["here"] * 199 + ["alone"]})
    frames = {"train": train, "holdout": train.iloc[:50]}
    coded, said = protect(frames, 10)
    assert coded["train"]["gain"].max() < 99_999 and "alone" not in set(coded["train"]["land"])
    kept, said = protect(frames, 10, public=frozenset({"gain", "land"}))
    assert kept["train"]["gain"].max() == 99_999 and "alone" in set(kept["train"]["land"])
    assert said.columns == {} and said.record()["public_by_codebook"] == ["gain", "land"]


def test_a_family_clips_to_the_codebook_where_it_gives_a_range():
    from tuner.synthesis import synthesize
    from tuner.synthesis._synthesizers import bounds, build

    train = pd.DataFrame({"a": np.linspace(0, 10, 50), "b": np.linspace(5, 6, 50)})
    book = Codebook({"a": Domain("a", "range", low=-100, high=100)})
    assert build("gaussian_copula", {}, train, seed=0, domain=book).enforce_min_max_values is \
        False
    assert build("gaussian_copula", {}, train, seed=0).enforce_min_max_values is True
    records = pd.DataFrame({"a": [-500.0, 50.0, 500.0], "b": [0.0, 5.5, 9.0]})
    bound = bounds("gaussian_copula", book, train)
    out = bound.clip(records)
    # the codebook's range for a, the training range (what SDV's clipping did) for b
    assert out["a"].tolist() == [-100.0, 50.0, 100.0] and out["b"].tolist() == [5.0, 5.5, 6.0]
    assert bounds("gaussian_copula", None, train) is None
    assert bounds("mst", book, train) is None  # a DP family takes the codebook whole
    # the whole path: a range narrower than the data's (the table's check would refuse it;
    # here it shows that the records sampled are the ones clipped)
    narrow = Codebook({"a": Domain("a", "range", low=2.0, high=3.0)})
    sampled = synthesize("gaussian_copula", {}, train, seed=0, domain=narrow).synthetic
    assert sampled["a"].between(2.0, 3.0).all() and (sampled["a"] == 3.0).any()


def _neighbours() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two tables that differ in one record, an outlier (an age above every other, a country
    nobody else has)."""
    rng = np.random.default_rng(3)
    base = pd.DataFrame({"age": rng.integers(18, 70, 300),
                         "country": rng.choice(["DE", "FR", "IT"], 300),
                         "smoker": rng.random(300) < 0.3})
    outlier = pd.DataFrame({"age": [97], "country": ["IS"], "smoker": [True]})
    return base, pd.concat([base, outlier], ignore_index=True)


def test_neighbouring_tables_give_the_same_domain_with_a_codebook_and_not_without():
    from tuner.synthesis._dp import Discretizer

    book = Codebook({"age": Domain("age", "range", low=0, high=120),
                     "country": Domain("country", "categories", ("DE", "FR", "IT", "IS"))})
    one, other = _neighbours()
    with_book = [Discretizer(8, book).fit(t).columns for t in (one, other)]
    assert repr(with_book[0]) == repr(with_book[1])
    without = [Discretizer(8).fit(t).columns for t in (one, other)]
    assert repr(without[0]) != repr(without[1])  # the data-read domain shows the outlier


@pytest.mark.slow
def test_mst_over_a_codebook_releases_inside_it_from_either_neighbour():
    pytest.importorskip("mbi")
    from tuner.data import TABLE, metadata_for
    from tuner.synthesis._dp import MSTSynthesizer

    book = Codebook({"age": Domain("age", "range", low=0, high=120),
                     "country": Domain("country", "categories", ("DE", "FR", "IT", "IS"))})
    for table in _neighbours():
        synth = MSTSynthesizer(metadata_for(table), epsilon=1.0, bins=8, iters=100,
                               domain=book)
        synth.fit({TABLE: table})
        out = synth.sample(400)[TABLE]
        assert out["age"].between(0, 120).all() and out["age"].dtype == np.int64
        assert set(out["country"]) <= {"DE", "FR", "IT", "IS"}
        assert set(out["smoker"]) <= {True, False}
        assert synth._model.discretizer.sizes == {"c0": 8, "c1": 4, "c2": 2}
