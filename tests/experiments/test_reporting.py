"""Shared results files (each script replaces its own block and keeps the others) and timing."""

from __future__ import annotations

import pandas as pd
import pytest

from experiments.reporting import append_rows, write_section


def test_write_section_replaces_own_block_and_keeps_others(tmp_path):
    path = tmp_path / "RESULTS.md"
    write_section(path, "risk", "# risk\nold")
    write_section(path, "cart", "## cart\ntable")
    write_section(path, "risk", "# risk\nnew")
    text = path.read_text()
    assert "old" not in text and text.count("# risk\nnew") == 1
    assert text.count("## cart\ntable") == 1
    assert text.index("# risk") < text.index("## cart")  # a block keeps its place
    # replacing a block keeps exactly one blank line before the next one, run after run
    write_section(path, "risk", "# risk\nnewer")
    assert "<!-- end risk -->\n\n<!-- begin cart -->" in path.read_text()


def test_timed_calls_n_times_and_returns_the_last_result_and_the_median(monkeypatch):
    import experiments.reporting as reporting

    clock = iter([0.0, 1.0, 10.0, 13.0, 20.0, 22.0])  # calls of 1 s, 3 s and 2 s
    monkeypatch.setattr(reporting.time, "perf_counter", lambda: next(clock))
    calls = []
    out, seconds = reporting.timed(lambda: calls.append(1) or len(calls), 3)
    assert (out, seconds, len(calls)) == (3, 2.0, 3)


def test_appended_rows_land_under_their_own_columns(tmp_path):
    path = tmp_path / "cells.csv"
    append_rows(path, [{"a": 1, "b": 2}])
    append_rows(path, [{"b": 4, "a": 3}])  # another order: matched by name
    append_rows(path, [{"a": 5}])  # a missing column is left empty
    frame = pd.read_csv(path)
    assert frame["a"].tolist() == [1, 3, 5]
    assert frame["b"].tolist()[:2] == [2, 4] and pd.isna(frame["b"].iloc[2])
    with pytest.raises(ValueError, match=r"column\(s\) \['c'\] its header lacks"):
        append_rows(path, [{"a": 6, "c": 7}])
