"""Identification risk (design §6) against Hu's published ACS numbers and a slow loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import risk
from risk.identification import match_counts
from tests.data import load_acs, load_ce
from tests.examples import examples

KNOWN = ["SEX", "RACE", "MAR"]
SYNTH = ["LANX", "WAOB", "DIS", "HICOV"]


def test_hu_acs_m1_matches_lecture():
    # J. Hu, Data Confidentiality, "Methods for Risk Evaluation #1": expected match risk 41.37,
    # true match rate 0.0005 (5 records), false match rate 0.97, s = 195 (190 false).
    org, syn = load_acs()
    res = risk.identification_risk(org, syn[0], keys=KNOWN, synthesized=SYNTH)
    assert res.expected_match_risk == pytest.approx(41.37, abs=0.005)
    assert res.true_match_rate == pytest.approx(0.0005, abs=1e-9)
    assert res.false_match_rate == pytest.approx(0.97, abs=0.005)
    assert res.per_set[0].unique_matches == 195
    assert res.per_set[0].false_unique_matches == 190


def test_hu_acs_m3_matches_lecture():
    # Hu, "Methods for Risk Evaluation #2": means over m = 3 of 41.47, 0.0006, 0.96, s = 161.
    org, syn = load_acs()
    res = risk.identification_risk(org, syn, keys=KNOWN, synthesized=SYNTH)
    assert res.n_sets == 3
    assert res.expected_match_risk == pytest.approx(41.47, abs=0.005)
    assert res.true_match_rate == pytest.approx(0.0006, abs=0.00005)
    assert res.false_match_rate == pytest.approx(0.96, abs=0.005)
    assert res.unique_matches == pytest.approx(161, abs=0.5)


def _slow_counts(orig, rel, exact, near, radius, relative):
    """Obviously correct: compare every target with every released row."""
    c = np.zeros(len(orig), dtype=int)
    t = np.zeros(len(orig), dtype=bool)
    for i in range(len(orig)):
        for j in range(len(rel)):
            ok = all(orig[col].iloc[i] == rel[col].iloc[j] for col in exact)
            for col in near:
                x = orig[col].iloc[i]
                r = radius * abs(x) if relative else radius
                diff = rel[col].iloc[j] - x
                ok = ok and (abs(diff) < r or diff == 0)
            c[i] += ok
            if j == i:
                t[i] = ok
    return c, t


@settings(max_examples=examples(40), deadline=None)
@given(
    n=st.integers(1, 25),
    seed=st.integers(0, 10_000),
    radius=st.sampled_from([0.5, 1.5, 3.0]),
    relative=st.booleans(),
)
def test_vectorised_counts_equal_slow_loop(n, seed, radius, relative):
    rng = np.random.default_rng(seed)
    # x includes 0 and negative values: a relative radius is a share of |x|
    orig = pd.DataFrame({"k": rng.integers(0, 3, n), "s": rng.integers(0, 2, n),
                         "x": rng.integers(-4, 8, n).astype(float)})
    rel = orig.copy()
    flip = rng.random(n) < 0.5
    rel.loc[flip, "s"] = rng.integers(0, 2, flip.sum())
    rel["x"] = rel["x"] + rng.normal(0, 1.5, n).round(1)
    res = risk.identification_risk(orig, rel, keys=["k"], synthesized=["s", "x"],
                                   radius={"x": radius if not relative else radius / 4},
                                   relative_radius=relative)
    c, t = _slow_counts(orig, rel, ["k", "s"], ["x"], radius if not relative else radius / 4,
                        relative)
    # Reiter & Mitra's summaries written out (design §6), not through the library's summarize
    unique = c == 1
    got = res.per_set[0]
    assert got.expected_match_risk == pytest.approx(sum(t[i] / c[i] for i in range(n) if c[i]))
    assert got.unique_matches == unique.sum()
    assert got.true_unique_matches == (unique & t).sum()
    assert got.false_unique_matches == (unique & ~t).sum()
    assert got.true_match_rate == pytest.approx((unique & t).sum() / n)
    if unique.any():
        assert got.false_match_rate == pytest.approx((unique & ~t).sum() / unique.sum())
    else:
        assert np.isnan(got.false_match_rate)


def test_small_block_size_gives_same_counts(monkeypatch):
    import risk.identification as ident

    ce = load_ce()
    rng = np.random.default_rng(0)
    rel = ce.copy()
    rel["Income"] = ce["Income"] * np.exp(rng.normal(0, 0.3, len(ce)))
    kwargs = dict(keys=["UrbanRural", "Race"], synthesized=["Income"], radius=0.2,
                  relative_radius=True)
    big = risk.identification_risk(ce, rel, **kwargs)
    monkeypatch.setattr(ident, "_PAIR_BLOCK", 97)
    small = risk.identification_risk(ce, rel, **kwargs)
    assert big.per_set == small.per_set
    # a larger radius can only add matches
    c_big, t_big = match_counts(
        np.zeros(len(ce), dtype=np.int64), np.zeros(len(ce), dtype=np.int64),
        ce[["Income"]].to_numpy(float), rel[["Income"]].to_numpy(float),
        np.abs(ce[["Income"]].to_numpy(float)) * 0.5,
    )
    c_small, t_small = match_counts(
        np.zeros(len(ce), dtype=np.int64), np.zeros(len(ce), dtype=np.int64),
        ce[["Income"]].to_numpy(float), rel[["Income"]].to_numpy(float),
        np.abs(ce[["Income"]].to_numpy(float)) * 0.2,
    )
    assert np.all(c_big >= c_small) and np.all(t_big >= t_small)
    assert np.any(c_big > c_small) and np.any(t_big > t_small)  # ... and here it does


def test_identical_release_is_fully_identified_when_unique():
    orig = pd.DataFrame({"a": [1, 2, 3, 3], "b": [1, 1, 1, 2]})
    res = risk.identification_risk(orig, orig, keys=["a"], synthesized=["b"])
    assert res.expected_match_risk == pytest.approx(4.0)
    assert res.true_match_rate == pytest.approx(1.0)
    assert res.false_match_rate == pytest.approx(0.0)


def test_no_unique_match_gives_nan_false_match_rate():
    # two targets with the same values: each matches both rows (c = 2), so s = 0 and the
    # false match rate sum F_i / s is undefined (NaN), not 0
    orig = pd.DataFrame({"a": [1, 1], "b": [5, 5]})
    res = risk.identification_risk(orig, orig, keys=["a"], synthesized=["b"])
    assert res.expected_match_risk == pytest.approx(1.0)  # 1/2 + 1/2
    assert res.true_match_rate == 0.0 and res.unique_matches == 0
    assert np.isnan(res.false_match_rate)


def test_row_count_mismatch_and_overlap_are_errors():
    orig = pd.DataFrame({"a": [1, 2], "b": [1, 2]})
    with pytest.raises(risk.RiskInputError, match="one row per training record"):
        risk.identification_risk(orig, orig.iloc[:1], keys=["a"], synthesized=["b"])
    with pytest.raises(risk.RiskInputError, match="both a key and synthesized"):
        risk.identification_risk(orig, orig, keys=["a"], synthesized=["a", "b"])
    with pytest.raises(risk.RiskInputError, match="no synthesized column is numeric"):
        risk.identification_risk(orig.astype(str), orig.astype(str), keys=["a"],
                                 synthesized=["b"], radius=1.0)
