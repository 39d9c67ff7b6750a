"""The script that makes the demo's table re-makes the committed file, byte for byte in its CSV
text, and the copy-ceiling experiment's committed numbers are what the code computes."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from experiments.demo_table import build, ceiling
from tests.data import load_adult


def test_sample_rows_are_seeded_sorted_and_distinct():
    rows = build.sample_rows(1000, size=50, seed=3)
    assert len(np.unique(rows)) == 50 and (np.diff(rows) > 0).all() and rows.max() < 1000
    assert (rows == build.sample_rows(1000, size=50, seed=3)).all()
    assert not (rows == build.sample_rows(1000, size=50, seed=4)).all()
    for size in (0, 1001):
        with pytest.raises(ValueError, match=rf"between 1 and the population's 1000 records, "
                                             rf"got {size}"):
            build.sample_rows(1000, size=size)


def test_the_gzip_holds_no_time_or_name_and_round_trips():
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", None]})
    data = build.csv_bytes(frame)
    assert data == b"a,b\n1,x\n2,\n"  # missing is an empty field, \n line ends
    packed = build.gzipped(data)
    assert packed == build.gzipped(data) and gzip.decompress(packed) == data
    assert packed[4:8] == b"\x00\x00\x00\x00"  # MTIME: none, so the bytes do not age


def test_the_committed_table_is_made_again_from_uci_adult(capsys):
    load_adult()  # skips, saying why, without ../shared/data
    assert build.main(["--check"]) == 0
    out = capsys.readouterr().out
    assert "SHA-256 of the csv   : re-made" in out and out.count(": same") >= 1


def test_parts_are_disjoint_shares_and_bad_shares_are_refused():
    frame = pd.DataFrame({"id": range(100)})
    train, holdout = ceiling.parts(frame, train=0.5, holdout=0.3, seed=0)
    assert (len(train), len(holdout)) == (50, 30)
    assert not set(train["id"]) & set(holdout["id"])
    with pytest.raises(ValueError, match=r"got \(train=0.8, holdout=0.3\)"):
        ceiling.parts(frame, train=0.8, holdout=0.3, seed=0)


def test_the_committed_ceilings_are_what_the_code_computes():
    adult = load_adult()
    committed = pd.read_csv(ceiling.RESULTS / "ceiling.csv")
    inside = np.zeros(len(adult), dtype=bool)
    inside[build.sample_rows(len(adult))] = True
    table, others = (adult[rows].reset_index(drop=True) for rows in (inside, ~inside))
    again = ceiling.ceiling_row(table, others, population_size=len(adult), split="0.5/0.3",
                                seed=0, keys=None)
    row = committed.query("records == 5000 and split == '0.5/0.3' and seed == 0 and "
                          "keys == 'every column'").iloc[0]
    for key in ("copy_ceiling", "m_others", "members_per_attack_set"):
        assert again[key] == pytest.approx(row[key], abs=1e-12), key
    # every size on both splits lets M bind: the table's size is argued by members and time
    assert committed.query("keys == 'every column'")["can_bind"].all()
