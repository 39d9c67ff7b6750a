"""Membership disclosure (DESIGN 3): behaviour on Adult, and vectorised parts vs slow loops."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import risk
from risk._encode import encode
from risk._neighbors import min_hamming
from risk._validation import column_kinds
from risk.membership import scores_from_counts
from tests.data import load_adult


@pytest.fixture(scope="module")
def adult_thirds():
    adult = load_adult()
    idx = np.random.default_rng(0).permutation(len(adult))
    third = len(adult) // 3
    parts = [adult.iloc[idx[i * third:(i + 1) * third]] for i in range(3)]
    return len(adult), parts


def test_copying_training_records_is_high_risk(adult_thirds):
    n_pop, (train, holdout, _) = adult_thirds
    res = risk.membership_disclosure(train, holdout, train.copy(), population_size=n_pop,
                                     random_state=3)
    assert res.m > 0.5
    assert res.m_interval.low > 0.5
    assert res.sampling_fraction == pytest.approx(len(train) / n_pop)
    assert res.f_naive == pytest.approx(2 * res.sampling_fraction / (1 + res.sampling_fraction))
    assert res.quasi_identifiers == tuple(train.columns)
    assert res.missing_values > 0  # Adult's '?' are kept as a category, and counted
    assert not res.acceptable


def test_real_non_members_as_synthetic_is_no_risk(adult_thirds):
    n_pop, (train, holdout, others) = adult_thirds
    for h in (0, 2):
        res = risk.membership_disclosure(train, holdout, others, population_size=n_pop,
                                         hamming_threshold=h, random_state=4)
        assert res.m <= 0.0 + 0.02, (h, res.m)
        assert res.acceptable


def test_t_equal_one_and_missing_population_are_errors():
    df = pd.DataFrame({"a": [1, 2, 3, 4], "b": [0, 1, 0, 1]})
    with pytest.raises(risk.RiskInputError, match="Exactly one of `population_size`"):
        risk.membership_disclosure(df, df, df)
    with pytest.raises(risk.RiskInputError, match="Exactly one of"):
        risk.membership_disclosure(df, df, df, population_size=100, sampling_fraction=0.1)
    with pytest.raises(risk.RiskInputError, match="0.0 < sampling_fraction < 1.0"):
        risk.membership_disclosure(df, df, df, sampling_fraction=1.0)
    with pytest.raises(risk.RiskInputError, match="population_size >= len"):
        risk.membership_disclosure(df, df, df, population_size=4)
    with pytest.raises(risk.RiskInputError, match="hamming_threshold"):
        risk.membership_disclosure(df, df, df, sampling_fraction=0.5, hamming_threshold=3)


def test_seed_is_recorded_and_reproduces():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 4, 200), "b": rng.integers(0, 3, 200)})
    first = risk.membership_disclosure(df.iloc[:100], df.iloc[100:], df.iloc[:50],
                                       sampling_fraction=0.3)
    again = risk.membership_disclosure(df.iloc[:100], df.iloc[100:], df.iloc[:50],
                                       sampling_fraction=0.3, random_state=first.random_state)
    assert first == again
    other = risk.membership_disclosure(df.iloc[:100], df.iloc[100:], df.iloc[:50],
                                       sampling_fraction=0.3, random_state=first.random_state + 1)
    assert other.random_state != first.random_state


def _slow_min_hamming(q, r):
    return np.array([min(int(np.sum(x != y)) for y in r) for x in q])


codes = st.integers(1, 5).flatmap(
    lambda p: st.tuples(
        st.lists(st.lists(st.integers(0, 2), min_size=p, max_size=p), min_size=1, max_size=25),
        st.lists(st.lists(st.integers(0, 2), min_size=p, max_size=p), min_size=1, max_size=25),
    )
)


@settings(max_examples=60, deadline=None)
@given(codes)
def test_min_hamming_equals_slow_loop(pair):
    q, r = (np.array(x, dtype=np.int64) for x in pair)
    got = min_hamming(q, r, [3] * q.shape[1])
    np.testing.assert_array_equal(got, _slow_min_hamming(q, r))


@settings(max_examples=60, deadline=None)
@given(
    d_members=st.lists(st.integers(0, 4), min_size=1, max_size=30),
    d_non=st.lists(st.integers(0, 4), min_size=1, max_size=30),
)
def test_scores_from_counts_equal_per_record_loop(d_members, d_non):
    p = 4
    precision, recall, f1 = scores_from_counts(np.bincount(d_members, minlength=p + 1),
                                               np.bincount(d_non, minlength=p + 1))
    for h in range(p + 1):
        tp = sum(d <= h for d in d_members)
        fp = sum(d <= h for d in d_non)
        fn = len(d_members) - tp
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        assert precision[h] == pytest.approx(prec)
        assert recall[h] == pytest.approx(rec)
        assert f1[h] == pytest.approx(f)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(4, 40))
def test_distances_invariant_to_row_order_and_inputs_untouched(seed, n):
    rng = np.random.default_rng(seed)
    real = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.choice(["x", "y", None], n),
                         "c": rng.normal(size=n)})
    syn = real.sample(frac=0.5, random_state=seed % 100).assign(a=lambda f: f["a"] + 1)
    before = real.copy()
    d = risk.membership_distances(real, syn)
    pd.testing.assert_frame_equal(real, before)
    shuffled = risk.membership_distances(real.iloc[::-1], syn.sample(frac=1, random_state=1))
    pd.testing.assert_series_equal(d, shuffled.loc[d.index])
    # numeric column with > 20 distinct values is binned; distances are within [0, p]
    assert d.between(0, 3).all()


def test_binning_rule_uses_real_and_synthetic_values():
    real = pd.DataFrame({"x": np.arange(30, dtype=float)})
    syn = pd.DataFrame({"x": [100.0]})
    frames = {"real": real, "syn": syn}
    enc = encode([real, syn], ["x"], column_kinds(frames, ["x"]))
    assert enc.binned == ("x",)
    # edges span 0..100 in 20 bins of width 5: 0-4 -> bin 0, ..., 25-29 -> bin 5; 100 -> 19
    assert enc.codes[0][:, 0].max() == 5
    assert enc.codes[1][0, 0] == 19
    few = pd.DataFrame({"x": [1.0, 2.0, np.nan]})
    enc2 = encode([few], ["x"], column_kinds({"few": few}, ["x"]))
    assert enc2.binned == () and enc2.cardinalities == (3,)  # missing is its own category


def _slow_mean_f1(train, holdout, synthetic, t, a, h, repeats, seed):
    """DESIGN 3 steps 2-5 literally: draw records, match each, score, average over repeats."""
    syn_rows = [tuple(r) for r in synthetic.itertuples(index=False)]

    def dist(row):
        return min(sum(x != y for x, y in zip(row, s, strict=True)) for s in syn_rows)

    d_train = [dist(tuple(r)) for r in train.itertuples(index=False)]
    d_hold = [dist(tuple(r)) for r in holdout.itertuples(index=False)]
    k = int(np.floor(a * t + 0.5))
    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(repeats):
        members = rng.choice(len(train), k, replace=False)
        others = rng.choice(len(holdout), a - k, replace=False)
        tp = sum(d_train[i] <= h for i in members)
        fp = sum(d_hold[i] <= h for i in others)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / k
        scores.append(2 * precision * recall / (precision + recall) if tp else 0.0)
    return float(np.mean(scores)), float(np.std(scores, ddof=1))


@pytest.mark.parametrize(("seed", "h"), [(0, 0), (1, 0), (2, 1), (3, 2)])
def test_count_draws_match_drawing_records(seed, h):
    # membership_disclosure draws how many sampled members/non-members fall at each distance
    # (multivariate hypergeometric) instead of drawing records: same distribution of F1
    rng = np.random.default_rng(seed)
    def table(n):
        return pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.integers(0, 2, n),
                             "c": rng.integers(0, 4, n), "d": rng.integers(0, 6, n),
                             "e": rng.integers(0, 5, n)})

    real = table(140)
    train, holdout = real.iloc[:60], real.iloc[60:]
    synthetic = pd.concat([train.sample(20, random_state=seed), table(20)])
    fast = risk.membership_disclosure(train, holdout, synthetic, sampling_fraction=0.3,
                                      attack_size=40, hamming_threshold=h, repeats=4000,
                                      numeric_bins=None, random_state=seed)
    slow_mean, slow_std = _slow_mean_f1(train, holdout, synthetic, 0.3, 40, h, 4000, seed + 100)
    # both are means of 4,000 draws: standard error about 0.002; the spread is that of draws
    # without replacement (with replacement it would be about 10% wider here)
    assert fast.f1 == pytest.approx(slow_mean, abs=0.012)
    assert fast.f1_std == pytest.approx(slow_std, rel=0.05)
