"""tuner.scoring._quality against SDMetrics' own Quality Report: the same scores, column by column
and pair
by pair, on the shared data sets (a real CTGAN release of Adult among them) and on random frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.data import load_acs, load_ce, require
from tests.examples import examples
from tuner.data import sdtype
from tuner.scoring._quality import QualityReport, QualityScores, quality_scores
from tuner.scoring._utility import _quality, quality_report

TOL = 1e-12


def sdmetrics_scores(real: pd.DataFrame, synthetic: pd.DataFrame) -> dict:
    """SDMetrics' report, reduced to what it averages: scored columns and pairs."""
    report = _quality(real, synthetic)
    props = {r.Property: r.Score for r in report.get_properties().itertuples()}
    shapes = report.get_details("Column Shapes")
    pairs = report.get_details("Column Pair Trends")
    counted = pairs["Meets Threshold?"].astype("boolean").fillna(False) & pairs["Score"].notna()
    return {
        "score": report.get_score(), "shapes": props["Column Shapes"],
        "trends": props["Column Pair Trends"],
        "columns": dict(zip(shapes["Column"], shapes["Score"], strict=True)),
        "pairs": {(a, b): s for a, b, s in zip(pairs.loc[counted, "Column 1"],
                                              pairs.loc[counted, "Column 2"],
                                              pairs.loc[counted, "Score"], strict=True)},
    }


def assert_same(real: pd.DataFrame, synthetic: pd.DataFrame) -> QualityScores:
    expected = sdmetrics_scores(real, synthetic)
    ours = quality_scores(real, synthetic, {c: sdtype(real[c]) for c in real.columns})
    assert ours.pairs.keys() == expected["pairs"].keys()
    for pair, value in expected["pairs"].items():
        assert ours.pairs[pair] == pytest.approx(value, abs=TOL), pair
    for column, value in expected["columns"].items():
        if np.isnan(value):
            assert np.isnan(ours.columns[column]), column
        else:
            assert ours.columns[column] == pytest.approx(value, abs=TOL), column
    for ours_value, key in ((ours.column_shapes, "shapes"), (ours.column_pair_trends, "trends"),
                            (ours.score, "score")):
        if np.isnan(expected[key]):
            assert np.isnan(ours_value), key
        else:
            assert ours_value == pytest.approx(expected[key], abs=TOL), key
    return ours


def test_a_ctgan_release_of_adult_scores_as_sdmetrics_scores_it():
    real = pd.read_csv(require("anonymeter_adult/adult_train.csv")).sample(6000, random_state=1)
    synthetic = pd.read_csv(require("anonymeter_adult/adult_syn_ctgan.csv")).sample(
        5000, random_state=2)
    assert_same(real, synthetic)


def test_sd2011_with_missing_values_and_unseen_categories():
    sd = pd.read_csv(require("sd2011/sd2011_orig.csv"))
    rng = np.random.default_rng(0)
    synthetic = sd.apply(lambda c: c.sample(frac=1, random_state=int(rng.integers(1e6)))
                         .reset_index(drop=True)).iloc[:3000].copy()
    synthetic.loc[:40, "edu"] = "NEVER SEEN"
    synthetic.loc[41:400, "income"] = np.nan
    synthetic.loc[:200, ["depress", "age"]] = synthetic.loc[:200, ["age", "depress"]].to_numpy()
    assert sd.isna().any().any()  # the real table has missing values of its own
    assert_same(sd, synthetic)
    half = assert_same(sd, sd.iloc[::2].reset_index(drop=True))
    assert len(half.pairs) >= 5  # related columns: pairs pass the association thresholds


def test_hu_ce_and_acs_halves():
    ce = load_ce()
    assert_same(ce.iloc[::2].reset_index(drop=True), ce.iloc[1::2].reset_index(drop=True))
    org, syn = load_acs()
    assert_same(org, syn[0])


def test_total_variation_counts_an_unseen_category_as_sdmetrics_does():
    """By hand: real a a b b, synthetic a a a c. SDMetrics gives c a real count of 1e-6, so
    the real shares are 2/(4+1e-6), 2/(4+1e-6), 1e-6/(4+1e-6) against 3/4, 0, 1/4."""
    real, synthetic = pd.DataFrame({"x": list("aabb")}), pd.DataFrame({"x": list("aaac")})
    n = 4 + 1e-6
    tv = abs(0.75 - 2 / n) + abs(0 - 2 / n) + abs(0.25 - 1e-6 / n)
    ours = quality_scores(real, synthetic, {"x": "categorical"})
    assert ours.columns["x"] == pytest.approx(1 - tv / 2, abs=1e-15)
    assert np.isnan(ours.column_pair_trends) and ours.score == ours.columns["x"]
    assert ours.score == pytest.approx(sdmetrics_scores(real, synthetic)["score"], abs=TOL)


def test_a_prepared_report_scores_every_set_as_a_fresh_one():
    sd = pd.read_csv(require("sd2011/sd2011_orig.csv"))
    real = sd.iloc[:2000]
    sdtypes = {c: sdtype(real[c]) for c in real.columns}
    prepared = QualityReport(real, sdtypes)
    for start in (2000, 3500):
        other = sd.iloc[start:start + 1000].reset_index(drop=True)
        again, fresh = prepared.score(other), quality_scores(real, other, sdtypes)
        assert len(again.pairs) >= 5  # pairs pass the thresholds: the prepared part is used
        assert (again.score, again.columns, again.pairs) == (
            fresh.score, fresh.columns, fresh.pairs)
        assert quality_report(real, other) == pytest.approx(
            sdmetrics_scores(real, other)["score"], abs=TOL)


def test_datetime_columns_fall_back_to_sdmetrics():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"when": pd.to_datetime("2020-01-01")
                          + pd.to_timedelta(rng.integers(0, 900, 400), unit="D"),
                          "x": rng.normal(size=400), "k": rng.choice(list("abc"), 400)})
    real, synthetic = frame.iloc[:200], frame.iloc[200:].reset_index(drop=True)
    assert quality_report(real, synthetic) == sdmetrics_scores(real, synthetic)["score"]
    with pytest.raises(ValueError, match="sdtypes"):
        QualityReport(real, {"when": "datetime", "x": "numerical", "k": "categorical"})


def test_an_unused_category_changes_nothing_here_but_drops_pairs_in_sdmetrics():
    """A documented difference: scipy's Cramer's V fails on the empty category, so SDMetrics
    leaves out every pair with that column; here the score is that of the frames without it."""
    rng = np.random.default_rng(4)
    z = rng.normal(size=400)
    frame = pd.DataFrame({"x": z + rng.normal(0, 0.3, 400), "y": 2 * z,
                          "k": pd.Categorical(np.where(z > 0, "hi", "lo"),
                                              categories=["hi", "lo", "unused"])})
    real, synthetic = frame.iloc[:200], frame.iloc[200:].reset_index(drop=True)
    sdtypes = {c: sdtype(real[c]) for c in real.columns}
    ours = quality_scores(real, synthetic, sdtypes)
    used = [f.assign(k=f["k"].cat.remove_unused_categories()) for f in (real, synthetic)]
    assert ours.score == quality_scores(*used, sdtypes).score
    assert ours.score == pytest.approx(sdmetrics_scores(*used)["score"], abs=TOL)
    theirs = sdmetrics_scores(real, synthetic)["pairs"]
    assert ("x", "k") in ours.pairs and ("x", "k") not in theirs


@st.composite
def frames(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two tables of related columns: continuous (some missing, some constant), few-valued
    numbers, strings with missing values, booleans; the synthetic one with unseen values."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_real, n_syn = draw(st.integers(30, 400)), draw(st.integers(30, 400))

    def table(n: int, shift: float) -> pd.DataFrame:
        z = rng.normal(size=n)
        out = pd.DataFrame({
            "u": z + rng.normal(0, draw(st.sampled_from([0.1, 1.0, 5.0])), n),
            "v": np.round(z * 2 + shift),
            "k": np.where(z + rng.normal(0, 0.5, n) > shift, "hi", "lo"),
            "g": rng.choice(["a", "b", "c", None], n, p=[0.4, 0.3, 0.2, 0.1]),
            "flag": z > 0,
        })
        out.loc[rng.random(n) < draw(st.sampled_from([0.0, 0.1, 0.5])), "u"] = np.nan
        if draw(st.booleans()):
            out["w"] = 3.0 if draw(st.booleans()) else rng.normal(size=n)
        else:
            out["w"] = -z + rng.normal(0, 0.2, n)
        return out

    real = table(n_real, 0.0)
    synthetic = table(n_syn, draw(st.sampled_from([0.0, 0.7])))
    if draw(st.booleans()):
        synthetic.loc[: n_syn // 5, "g"] = "unseen"
    return real, synthetic


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames())
def test_random_frames_score_as_sdmetrics_scores_them(pair):
    real, synthetic = pair
    assert_same(real, synthetic)
