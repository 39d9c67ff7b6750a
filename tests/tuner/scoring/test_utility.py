"""Utility measures (design §7): known extremes and orderings."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tuner.data import metadata_for, read_builtin, sdtype
from tuner.scoring._quality import quality_scores
from tuner.scoring._utility import _quality, efficacy, hellinger, quality_breakdown, quality_report

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def frames():
    rng = np.random.default_rng(0)
    n = 1200
    a = rng.choice(["u", "v", "w"], n)
    x = rng.normal(size=n) + (a == "u") * 2.0
    y = np.where(x + rng.normal(0, 0.3, n) > 1.0, "hi", "lo")
    frame = pd.DataFrame({"a": a, "x": x, "y": y})
    return frame.iloc[:600].reset_index(drop=True), frame.iloc[600:].reset_index(drop=True)


def test_hellinger_extremes_and_order(frames):
    train, holdout = frames
    assert hellinger(train, train) == pytest.approx(1.0)
    disjoint = train.assign(a="z")  # no common cell at all
    assert hellinger(train, disjoint) == pytest.approx(0.0)
    shuffled = train.assign(y=train["y"].sample(frac=1, random_state=1).to_numpy())
    assert 0.0 < hellinger(train, shuffled) < hellinger(train, holdout) + 0.2
    # by hand: one column, p = (1/2, 1/2), q = (1, 0): H = sqrt(1 - sqrt(1/2))
    p = pd.DataFrame({"c": ["a", "b"]})
    q = pd.DataFrame({"c": ["a", "a"]})
    assert hellinger(p, q) == pytest.approx(1 - np.sqrt(1 - np.sqrt(0.5)))


def test_efficacy_real_data_scores_one_and_broken_data_less(frames):
    train, holdout = frames
    assert efficacy(train, holdout, train, target="y", seed=0) == pytest.approx(1.0)
    broken = train.assign(y=train["y"].sample(frac=1, random_state=2).to_numpy())
    assert efficacy(train, holdout, broken, target="y", seed=0) < 0.8


def test_quality_report_prefers_faithful_data(frames):
    train, holdout = frames
    noise = train.assign(x=np.random.default_rng(3).uniform(-10, 10, len(train)))
    assert quality_report(train, holdout) > quality_report(train, noise)


def _datetime_halves() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A datetime column (SDMetrics scores it: tuner.scoring._quality does not), related numbers, a
    category and a boolean."""
    rng = np.random.default_rng(3)
    n = 400
    z = rng.normal(size=n)
    frame = pd.DataFrame({
        "when": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D"),
        "x": z, "y": 2 * z + rng.normal(0, 0.5, n),
        "k": np.where(z + rng.normal(0, 0.5, n) > 0, "hi", "lo"), "flag": rng.random(n) > 0.4,
    })
    return frame.iloc[:200].reset_index(drop=True), frame.iloc[200:].reset_index(drop=True)


def _fair_halves() -> tuple[pd.DataFrame, pd.DataFrame]:
    fair = read_builtin("builtin:fair")
    return fair.iloc[::2].reset_index(drop=True), fair.iloc[1::2].reset_index(drop=True)


@pytest.mark.parametrize("halves", [_datetime_halves, _fair_halves], ids=["datetime", "fair"])
def test_breakdown_is_that_of_the_deprecated_single_table_report(halves):
    """The unified report scores one table exactly as the single-table one it replaced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            from sdmetrics.reports.single_table.quality_report import QualityReport
        except ImportError:
            pytest.skip("SDMetrics no longer has the single-table QualityReport to compare with")
    real, synthetic = halves()
    old = QualityReport()
    old.generate(real, synthetic, metadata_for(real).to_dict()["tables"]["table"], verbose=False)
    new = _quality(real, synthetic)
    assert new.get_score() == old.get_score()
    pd.testing.assert_frame_equal(new.get_properties(), old.get_properties(), check_exact=True)
    for prop in ("Column Shapes", "Column Pair Trends"):
        pd.testing.assert_frame_equal(new.get_details(prop).drop(columns="Table"),
                                      old.get_details(prop), check_exact=True)
    breakdown = quality_breakdown(real, synthetic)
    assert breakdown["score"] == old.get_score()
    props = old.get_properties()
    assert breakdown["properties"] == dict(zip(props["Property"], props["Score"], strict=True))
    shapes, pairs = old.get_details("Column Shapes"), old.get_details("Column Pair Trends")
    assert breakdown["columns"] == dict(zip(shapes["Column"], shapes["Score"], strict=True))
    scored = pairs[pairs["Score"].notna()]
    assert len(scored) >= 1 and breakdown["pairs"] == {
        f"{a} ~ {b}": s
        for a, b, s in zip(scored["Column 1"], scored["Column 2"], scored["Score"], strict=True)}


def test_breakdown_agrees_with_the_fast_report():
    """Independent of the deprecated class: the breakdown is tuner.scoring._quality's, pair by
    pair."""
    real, synthetic = _fair_halves()
    breakdown = quality_breakdown(real, synthetic)
    ours = quality_scores(real, synthetic, {c: sdtype(real[c]) for c in real.columns})
    assert breakdown["score"] == pytest.approx(quality_report(real, synthetic), abs=1e-12)
    assert breakdown["score"] == pytest.approx(ours.score, abs=1e-12)
    assert breakdown["properties"] == pytest.approx(
        {"Column Shapes": ours.column_shapes, "Column Pair Trends": ours.column_pair_trends},
        abs=1e-12)
    assert breakdown["columns"] == pytest.approx(ours.columns, abs=1e-12)
    assert len(ours.pairs) >= 1 and breakdown["pairs"] == pytest.approx(
        {f"{a} ~ {b}": s for (a, b), s in ours.pairs.items()}, abs=1e-12)


@pytest.mark.slow
def test_importing_and_a_breakdown_raise_no_sdmetrics_future_warning():
    """In a fresh interpreter, where a deprecated SDMetrics module would warn on import."""
    code = textwrap.dedent("""
        import sys, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from tuner.data import read_builtin
            from tuner.scoring._utility import quality_breakdown
            fair = read_builtin("builtin:fair").iloc[:400]
            quality_breakdown(fair.iloc[:200], fair.iloc[200:].reset_index(drop=True))
        bad = [f"{w.filename}: {w.message}" for w in caught
               if issubclass(w.category, FutureWarning)
               and ("sdmetrics" in w.filename or "sdmetrics" in str(w.message))]
        assert not bad, bad
        assert "sdmetrics.reports.single_table.quality_report" not in sys.modules
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
