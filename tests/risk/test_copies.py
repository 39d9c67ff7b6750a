"""Exact copies and synthpop's replicated uniques (design §9.1): hand-made frames, slow loops."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from risk._validation import RiskInputError
from risk.copies import ExactCopiesResult, exact_copies, replicated_uniques, share_at_size
from tests.data import load_adult
from tests.examples import examples

# train: (1, a) twice, (2, b), (3, missing), (4.5, c); holdout: (2, b), (9, z)
TRAIN = pd.DataFrame({"n": [1, 1, 2, 3, 4.5], "c": ["a", "a", "b", None, "c"]})
HOLDOUT = pd.DataFrame({"n": [2.0, 9.0], "c": ["b", "z"]})
SYNTHETIC = pd.DataFrame({
    "n": [1.0, 2.0, 3.0, 4.5, 4.5, 7.0, 3.0],
    "c": ["a", "b", np.nan, "c", "c", "a", "q"],
})


def test_hand_made_frames_have_known_counts():
    res = exact_copies(TRAIN, SYNTHETIC, holdout=HOLDOUT)
    # copies of train: rows 0 (1, a), 1 (2, b), 2 (3, missing: missing matches missing),
    # 3 and 4 (4.5, c); not 5 (7, a) nor 6 (3, q)
    assert res.train_copies == 5
    assert res.train_share == pytest.approx(5 / 7)
    # train-unique records: (2, b), (3, missing), (4.5, c); (1, a) occurs twice
    assert res.train_uniques == 3
    assert res.train_unique_copies == 4  # rows 1, 2, 3, 4
    # synthpop's replicated uniques: also unique in the synthetic data, so not (4.5, c) twice
    assert res.replicated_uniques == 2
    assert res.replicated_unique_share == pytest.approx(2 / 7)
    assert res.holdout_copies == 1 and res.holdout_unique_copies == 1  # (2, b)
    assert res.holdout_share == pytest.approx(1 / 7)
    assert res.train_unique_share == pytest.approx(4 / 7)
    assert res.holdout_unique_share == pytest.approx(1 / 7)
    # a record twice in the holdout is copied, but not a copy of a holdout-unique record
    twice = exact_copies(TRAIN, SYNTHETIC, holdout=pd.concat([HOLDOUT, HOLDOUT]))
    assert (twice.holdout_copies, twice.holdout_unique_copies) == (1, 0)
    assert twice.holdout_unique_share == 0.0
    # train (5 records) is compared at the holdout's size, 2: a copy of a record c times in
    # train is in a uniform pair of train records with probability 1 - C(5 - c, 2) / C(5, 2):
    # (1, a) twice: 1 - 3/10 = 0.7; each of the four copies of a unique record: 1 - 6/10 = 0.4
    assert res.matched_size == 2
    assert res.train_share_matched == pytest.approx((0.7 + 4 * 0.4) / 7)
    assert res.holdout_share_matched == pytest.approx(1 / 7)
    assert res.difference == pytest.approx((0.7 + 4 * 0.4 - 1) / 7)
    assert res.difference_interval.low < res.difference < res.difference_interval.high
    assert (res.n_train, res.n_holdout, res.n_synthetic) == (5, 2, 7)
    assert res.columns == ("n", "c")


def test_replicated_uniques_follow_synthpop():
    mask = replicated_uniques(TRAIN, SYNTHETIC)
    np.testing.assert_array_equal(mask, [False, True, True, False, False, False, False])
    wide = replicated_uniques(TRAIN, SYNTHETIC, synthetic_unique_only=False)
    np.testing.assert_array_equal(wide, [False, True, True, True, True, False, False])
    assert wide.sum() == exact_copies(TRAIN, SYNTHETIC).train_unique_copies


def test_without_holdout_the_holdout_fields_are_nan_or_none():
    res = exact_copies(TRAIN, SYNTHETIC)
    assert math.isnan(res.holdout_share) and math.isnan(res.difference)
    assert res.holdout_copies is None and res.n_holdout is None
    flat = res.to_dict()
    assert flat["holdout_copies"] == "none"
    assert all(isinstance(v, (float, str)) for v in flat.values())
    json.dumps({k: v for k, v in flat.items() if not (isinstance(v, float) and math.isnan(v))})
    assert "holdout_share" not in res.metrics()


def test_values_compare_by_value_across_dtypes():
    train = pd.DataFrame({
        "i": np.array([1, 2], dtype=np.int64),
        "b": [True, False],
        "k": pd.Categorical(["x", "y"]),
        "t": pd.to_datetime(["2020-01-01", "2021-06-01"]),
    })
    synthetic = pd.DataFrame({
        "i": [1.0, 2.5],  # float against int: 1 == 1.0
        "b": np.array([True, False], dtype=object),
        "k": ["x", "y"],  # object against categorical, by value
        "t": pd.to_datetime(["2020-01-01", "2021-06-01"]),
    })
    res = exact_copies(train, synthetic)
    assert res.train_copies == 1
    assert exact_copies(train, synthetic, columns=["b", "k", "t"]).train_copies == 2
    nullable = synthetic.assign(i=pd.array([1, None], dtype="Int64"))
    assert exact_copies(train, nullable, columns=["i"]).train_copies == 1


def test_missing_matches_missing_in_every_form():
    train = pd.DataFrame({"x": [np.nan, 1.0], "s": [None, "a"]})
    synthetic = pd.DataFrame({"x": [np.nan, np.nan], "s": [np.nan, pd.NA]})
    assert exact_copies(train, synthetic).train_copies == 2


def test_a_copy_of_train_is_all_copies():
    rng = np.random.default_rng(0)
    real = pd.DataFrame({"a": rng.normal(size=100), "b": rng.choice(["x", "y"], 100)})
    train, holdout = real.iloc[:50], real.iloc[50:]
    res = exact_copies(train, train.copy(), holdout=holdout)
    assert res.train_share == 1.0
    assert res.holdout_share == 0.0
    assert res.train_unique_copies == res.train_uniques == res.replicated_uniques == 50


def _slow(train, synthetic, holdout):
    """Obvious definition: compare each synthetic row with each real row, value by value."""
    def same(x, y):
        return all((pd.isna(a) and pd.isna(b)) or (not pd.isna(a) and not pd.isna(b) and a == b)
                   for a, b in zip(x, y, strict=True))

    syn = [tuple(r) for r in synthetic.itertuples(index=False)]
    tr = [tuple(r) for r in train.itertuples(index=False)]
    ho = [tuple(r) for r in holdout.itertuples(index=False)]
    in_train = [sum(same(s, t) for t in tr) for s in syn]
    in_syn = [sum(same(s, o) for o in syn) for s in syn]
    in_hold = [sum(same(s, h) for h in ho) for s in syn]
    m = min(len(tr), len(ho))

    def matched(pool: list, counts: list[int]) -> float:
        # every subsample of m records of the pool, enumerated: the share of synthetic
        # records with an equal record in it, averaged over the subsamples
        subs = list(itertools.combinations(range(len(pool)), m))
        hits = [sum(any(same(s, pool[i]) for i in sub) for s in syn) for sub in subs]
        return sum(hits) / len(subs) / len(syn)

    return {
        "difference": matched(tr, in_train) - matched(ho, in_hold),
        "train_copies": sum(c > 0 for c in in_train),
        "train_unique_copies": sum(c == 1 for c in in_train),
        "replicated_uniques": sum(c == 1 and u == 1 for c, u in zip(in_train, in_syn, strict=True)),
        "holdout_copies": sum(c > 0 for c in in_hold),
        "holdout_unique_copies": sum(c == 1 for c in in_hold),
        "train_uniques": sum(sum(same(t, o) for o in tr) == 1 for t in tr),
    }


def _table(draw, n):
    return pd.DataFrame({
        "i": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
        "f": draw(st.lists(st.sampled_from([0.0, 1.0, 2.5, np.nan]), min_size=n, max_size=n)),
        "s": draw(st.lists(st.sampled_from(["a", "b", None]), min_size=n, max_size=n)),
    })


@st.composite
def tables(draw):
    sizes = [draw(st.integers(1, 12)) for _ in range(3)]
    train, holdout, synthetic = (_table(draw, n) for n in sizes)
    # float copies of integer columns must still match
    return train, holdout, synthetic.assign(i=synthetic["i"].astype(float))


@settings(max_examples=examples(60), deadline=None)
@given(tables())
def test_hash_join_equals_slow_loop(frames):
    train, holdout, synthetic = frames
    res = exact_copies(train, synthetic, holdout=holdout)
    want = _slow(train, synthetic, holdout)
    difference = want.pop("difference")
    assert {k: getattr(res, k) for k in want} == want
    assert replicated_uniques(train, synthetic).sum() == want["replicated_uniques"]
    n = len(synthetic)
    shares = {
        "train_share": want["train_copies"] / n,
        "holdout_share": want["holdout_copies"] / n,
        "difference": difference,
        "train_unique_share": want["train_unique_copies"] / n,
        "holdout_unique_share": want["holdout_unique_copies"] / n,
        "replicated_unique_share": want["replicated_uniques"] / n,
    }
    assert {k: getattr(res, k) for k in shares} == pytest.approx(shares)


@settings(max_examples=examples(30), deadline=None)
@given(tables(), st.integers(0, 10**6))
def test_row_order_invariance_and_inputs_untouched(frames, seed):
    train, holdout, synthetic = frames
    before = [f.copy() for f in frames]
    res = exact_copies(train, synthetic, holdout=holdout)
    mask = replicated_uniques(train, synthetic)
    for got, want in zip(frames, before, strict=True):
        pd.testing.assert_frame_equal(got, want)
    perm = np.random.default_rng(seed).permutation(len(synthetic))
    shuffled = exact_copies(train.sample(frac=1, random_state=seed % 97), synthetic.iloc[perm],
                            holdout=holdout.iloc[::-1])
    _assert_same(shuffled, res)
    np.testing.assert_array_equal(replicated_uniques(train, synthetic.iloc[perm]), mask[perm])


def _assert_same(a: ExactCopiesResult, b: ExactCopiesResult) -> None:
    da, db = a.to_dict(), b.to_dict()
    assert da.keys() == db.keys()
    for key, value in da.items():
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(db[key]), key
        else:
            assert value == pytest.approx(db[key]), key


def test_bad_inputs_raise_naming_the_argument():
    with pytest.raises(TypeError, match="`train` must be a pandas DataFrame"):
        exact_copies(TRAIN.to_numpy(), SYNTHETIC)
    with pytest.raises(TypeError, match="`holdout` must be a pandas DataFrame"):
        exact_copies(TRAIN, SYNTHETIC, holdout=[1, 2])
    with pytest.raises(RiskInputError, match="`synthetic` must have at least one row"):
        exact_copies(TRAIN, SYNTHETIC.iloc[:0])
    with pytest.raises(RiskInputError, match=r"`synthetic` lacks the compared column\(s\) \['zz"):
        exact_copies(TRAIN.assign(zz=1), SYNTHETIC, columns=["n", "zz"])
    with pytest.raises(RiskInputError, match="same columns as `train`.*extra \\['e'\\]"):
        exact_copies(TRAIN, SYNTHETIC.assign(e=0))
    with pytest.raises(TypeError, match="`columns` must be a column name or a list"):
        exact_copies(TRAIN, SYNTHETIC, columns=5)
    with pytest.raises(RiskInputError, match="`columns` must name at least one column"):
        exact_copies(TRAIN, SYNTHETIC, columns=[])
    with pytest.raises(RiskInputError, match="same kind of dtype"):
        exact_copies(TRAIN, SYNTHETIC.assign(n=SYNTHETIC["n"].astype(str)))
    with pytest.raises(TypeError, match="`synthetic_unique_only` must be a bool"):
        replicated_uniques(TRAIN, SYNTHETIC, synthetic_unique_only="yes")
    with pytest.raises(RiskInputError, match="at least one column"):
        exact_copies(pd.DataFrame(index=[0]), pd.DataFrame(index=[0]))


def test_result_is_frozen():
    res = exact_copies(TRAIN, SYNTHETIC, holdout=HOLDOUT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.train_share = 0.0  # type: ignore[misc]


def test_adult_copy_and_fresh_records():
    adult = load_adult()
    idx = np.random.default_rng(0).permutation(len(adult))
    half = len(adult) // 2
    train, holdout = adult.iloc[idx[:half]], adult.iloc[idx[half:]]
    leak = exact_copies(train, train.copy(), holdout=holdout)
    assert leak.train_share == 1.0
    # Adult has a few dozen duplicated people, so a handful of holdout rows copy train rows
    assert leak.holdout_share < 0.01
    fresh = exact_copies(train, holdout.copy(), holdout=holdout.sample(frac=1, random_state=1))
    assert fresh.train_share < 0.01 and fresh.holdout_share == 1.0
    assert fresh.difference < 0


# near copies: numeric columns binned on the real records (train + holdout), as M bins them

def _slow_binned(train, synthetic, holdout, bins):
    """Obvious definition: equal-width bins of each numeric column with more than ``bins``
    distinct real values, edges spanning the real values, end bins open; then the exact loop."""
    real = pd.concat([train, holdout])
    out = []
    for frame in (train, synthetic, holdout):
        coded = frame.copy()
        for col in frame.columns:
            values = real[col].dropna()
            if not pd.api.types.is_numeric_dtype(real[col]) or values.nunique() <= bins:
                continue
            lo, hi = values.min(), values.max()
            width = (hi - lo) / bins

            def code(v, lo=lo, width=width):
                if pd.isna(v):
                    return -1
                return int(min(max((v - lo) // width, 0), bins - 1))
            coded[col] = [code(v) for v in frame[col]]
        out.append(coded)
    return _slow(out[0], out[1], out[2])


@st.composite
def numeric_tables(draw):
    sizes = [draw(st.integers(1, 12)) for _ in range(3)]

    def table(n):
        return pd.DataFrame({
            "x": draw(st.lists(st.sampled_from([0.0, 0.3, 1.1, 2.0, 4.7, 9.9, np.nan]),
                               min_size=n, max_size=n)),
            "s": draw(st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n)),
        })
    return tuple(table(n) for n in sizes)


@settings(max_examples=examples(60), deadline=None)
@given(numeric_tables(), st.integers(1, 5))
def test_binned_copies_equal_slow_loop(frames, bins):
    train, holdout, synthetic = frames
    res = exact_copies(train, synthetic, holdout=holdout, numeric_bins=bins)
    want = _slow_binned(train, synthetic, holdout, bins)
    assert res.difference == pytest.approx(want.pop("difference"))
    assert {k: getattr(res, k) for k in want} == want
    assert res.numeric_bins == bins


def test_near_copies_count_only_with_bins():
    rng = np.random.default_rng(1)
    real = pd.DataFrame({"w": rng.uniform(1e4, 1e6, 400), "age": rng.uniform(17, 90, 400),
                         "s": rng.choice(list("abcd"), 400)})
    train, holdout = real.iloc[:200], real.iloc[200:]
    nudged = train.assign(w=train["w"] * 1.001)  # every record a near copy, none exact
    exact = exact_copies(train, nudged, holdout=holdout)
    near = exact_copies(train, nudged, holdout=holdout, numeric_bins=20)
    assert exact.train_copies == 0 and exact.binned_columns == ()
    assert near.binned_columns == ("w", "age")
    # nearly every record falls in its original bins; 1,600 cells: few holdout matches
    assert near.train_share > 0.95
    assert near.holdout_share < 0.3
    assert near.difference > 0.6
    # a synthetic outlier does not move the bins fitted on the real records
    outlier = pd.concat([nudged, pd.DataFrame({"w": [1e12], "age": [train["age"].iloc[0]],
                                               "s": ["a"]})], ignore_index=True)
    again = exact_copies(train, outlier, holdout=holdout, numeric_bins=20)
    assert again.n_synthetic == near.n_synthetic + 1
    # (bins stretched to 1e12 would put every w in one bin: most holdout records would match)
    assert again.train_copies - near.train_copies in (0, 1)  # the outlier: top end bin
    assert again.holdout_copies - near.holdout_copies in (0, 1)
    # few distinct values are compared exactly, as without bins
    few = pd.DataFrame({"k": [1.0, 2.0, 3.0] * 10, "s": ["a"] * 30})
    res = exact_copies(few, few.assign(k=few["k"] + 0.001), numeric_bins=20)
    assert res.train_copies == 0 and res.binned_columns == ()


def test_numeric_bins_is_checked():
    with pytest.raises(RiskInputError, match="`numeric_bins` must be >= 1"):
        exact_copies(TRAIN, SYNTHETIC, numeric_bins=0)
    with pytest.raises(TypeError, match="`numeric_bins` must be an integer"):
        exact_copies(TRAIN, SYNTHETIC, numeric_bins=2.5)


def test_equal_sizes_difference_is_the_plain_one():
    res = exact_copies(TRAIN, SYNTHETIC, holdout=pd.concat([HOLDOUT] * 3).iloc[:5])
    assert res.matched_size == 5
    assert res.difference == pytest.approx(res.train_share - res.holdout_share)


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(1, n), st.lists(st.integers(0, n), min_size=1, max_size=5))))
def test_share_at_size_equals_enumerated_subsamples(case):
    # slow and obviously correct: every subsample of m of the n records, records 0..c-1 equal
    n, m, counts = case
    subsets = list(itertools.combinations(range(n), m))
    slow = [sum(any(i < c for i in s) for s in subsets) / len(subsets) for c in counts]
    np.testing.assert_allclose(share_at_size(np.array(counts), n, m), slow, atol=1e-12)
