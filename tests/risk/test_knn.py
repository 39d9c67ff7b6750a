"""The default inference attack's exact k-NN (risk._knn) against a slow loop and scikit-learn."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import Pipeline

import risk._knn
from risk._knn import ExactKNN
from risk.inference import _features
from tests.examples import examples


def _slow(train: pd.DataFrame, query: pd.DataFrame, numeric: list[str], categorical: list[str],
          target: str, k: int, regression: bool) -> list:
    """By the definition: squared distance per record pair, sorted by (distance, row)."""
    scale = {c: (train[c].std(ddof=0) or 1.0) for c in numeric}
    known = {c: set(train[c].tolist()) for c in categorical}
    out = []
    for _, q in query.iterrows():
        dist = []
        for pos, (_, r) in enumerate(train.iterrows()):
            d = 0.0
            for c in numeric:
                d += ((float(q[c]) - float(r[c])) / scale[c]) ** 2
            # the categorical part is an integer, added once
            d += sum(0 if q[c] == r[c] else (2 if q[c] in known[c] else 1) for c in categorical)
            dist.append((d, pos, r[target]))
        near = [t for _, _, t in sorted(dist)[:k]]
        if regression:
            out.append(float(np.mean(near)))
        else:
            counts = pd.Series(near).value_counts()
            out.append(min(counts.index[counts == counts.max()]))  # smallest class on a tie
    return out


@st.composite
def tables(draw):
    n, m = draw(st.integers(3, 30)), draw(st.integers(1, 15))

    def frame(size: int, values: list) -> pd.DataFrame:
        return pd.DataFrame({
            "x": draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.5]), min_size=size,
                               max_size=size)),
            "a": draw(st.lists(st.sampled_from(values), min_size=size, max_size=size)),
            "b": draw(st.lists(st.sampled_from(["p", "q"]), min_size=size, max_size=size)),
            "t": draw(st.lists(st.sampled_from(["u", "v", "w"]), min_size=size, max_size=size)),
            "y": draw(st.lists(st.integers(0, 9), min_size=size, max_size=size)),
        })
    # the query may hold a category the training data never had ("z": one-hot all zeros)
    return frame(n, ["l", "m"]), frame(m, ["l", "m", "z"])


LEVELS = {"_LEVEL_COST": 0}
LEVELS_ROW_BY_ROW = {"_LEVEL_COST": 0, "_LEVEL_SPAN": 0}  # every farther level from the matrix
PROPOSALS = {"_PROFILE_ENTRIES": 0}
ALL_EXACT = {"_PROFILE_ENTRIES": 0, "_SLACK": np.inf}


@pytest.mark.parametrize("patch", [LEVELS, LEVELS_ROW_BY_ROW, PROPOSALS, ALL_EXACT],
                         ids=["level-search", "levels-row-by-row", "proposals", "all-exact"])
@settings(max_examples=examples(60), deadline=None)
@given(frames=tables(), regression=st.booleans(), numeric=st.sampled_from([["x"], []]),
       categorical=st.sampled_from([["a", "b"], ["a"], []]), as_category=st.booleans())
def test_exact_knn_equals_slow_loop(patch, frames, regression, numeric, categorical,
                                    as_category):
    train, query = frames
    if as_category:  # pandas categoricals, with categories no record has
        dtype = pd.CategoricalDtype(["n", "z", "l", "m", "unused"])
        train, query = (f.assign(a=f["a"].astype(dtype)) for f in (train, query))
    if not numeric and not categorical:
        categorical = ["b"]
    keys = [*numeric, *categorical]
    target = "y" if regression else "t"
    with mock.patch.multiple(risk._knn, **patch):
        model = ExactKNN(_features(keys, set(numeric)), numeric, categorical, n_neighbors=3,
                         regression=regression).fit(train[keys], train[target])
        got = model.predict(query[keys])
    want = _slow(train, query, numeric, categorical, target, 3, regression)
    if regression:
        np.testing.assert_allclose(got, want, rtol=1e-12)
    else:
        assert list(got) == want


def test_equals_scikit_learn_where_no_two_records_are_equidistant():
    # continuous keys: distinct distances, so scikit-learn's rounding decides no tie
    rng = np.random.default_rng(0)
    train = pd.DataFrame({"u": rng.normal(size=500), "v": rng.exponential(size=500),
                          "c": rng.choice(list("pqr"), 500)})
    train["t"] = np.where(train["u"] + rng.normal(size=500) > 0, "hi", "lo")
    train["y"] = train["v"] * 3 + rng.normal(size=500)
    query = pd.DataFrame({"u": rng.normal(size=300), "v": rng.exponential(size=300),
                          "c": rng.choice(list("pqrs"), 300)})
    keys = ["u", "v", "c"]
    for target, est, regression in [("t", KNeighborsClassifier(n_neighbors=3), False),
                                    ("y", KNeighborsRegressor(n_neighbors=3), True)]:
        sk = Pipeline([("f", _features(keys, {"u", "v"})), ("m", est)])
        want = sk.fit(train[keys], train[target]).predict(query[keys])
        got = ExactKNN(_features(keys, {"u", "v"}), ["u", "v"], ["c"], n_neighbors=3,
                       regression=regression).fit(train[keys], train[target]).predict(query[keys])
        if regression:
            np.testing.assert_allclose(got, want, rtol=1e-12)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("patch", [LEVELS, PROPOSALS], ids=["level-search", "proposals"])
def test_categorical_dtype_with_unused_categories_predicts_as_text(patch):
    # the dtype lists categories no record has, before the ones they have: codes run past the
    # number of values seen, which must not merge two profiles
    rng = np.random.default_rng(1)
    train = pd.DataFrame({"a": rng.choice(list("lm"), 300), "b": rng.choice(list("pqr"), 300),
                          "x": rng.integers(0, 5, 300).astype(float),
                          "t": rng.choice(list("uvw"), 300)})
    query = pd.DataFrame({"a": rng.choice(list("lmz"), 200), "b": rng.choice(list("pqrs"), 200),
                          "x": rng.integers(0, 5, 200).astype(float)})
    dtype = {"a": pd.CategoricalDtype(["u1", "u2", "u3", "u4", "l", "m", "z"]),
             "b": pd.CategoricalDtype(["p", "u1", "u2", "u3", "q", "u4", "u5", "r", "s"])}
    keys = ["x", "a", "b"]

    def predict(tr: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
        return ExactKNN(_features(keys, {"x"}), ["x"], ["a", "b"], n_neighbors=3,
                        regression=False).fit(tr[keys], tr["t"]).predict(q[keys])

    with mock.patch.multiple(risk._knn, **patch):
        as_text = predict(train, query)
        typed = predict(train.astype(dtype), query.astype(dtype))
    np.testing.assert_array_equal(typed, as_text)
    np.testing.assert_array_equal(as_text, _slow(train, query, ["x"], ["a", "b"], "t", 3, False))


def test_scale_follows_standard_scaler_also_for_a_key_constant_up_to_float_noise():
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(2)
    train = pd.DataFrame({"noise": 1.0 + rng.choice([0.0, 2e-14], 400),
                          "age": rng.integers(17, 90, 400).astype(float),
                          "c": rng.choice(list("pq"), 400), "t": rng.choice(list("uv"), 400)})
    model = ExactKNN(_features(["noise", "age", "c"], {"noise", "age"}), ["noise", "age"],
                     ["c"], n_neighbors=3, regression=False).fit(train[["noise", "age", "c"]],
                                                                  train["t"])
    scaler = StandardScaler().fit(train[["noise", "age"]])
    assert scaler.scale_[0] == 1.0  # scikit-learn calls the noisy key constant
    np.testing.assert_allclose(model.scale, scaler.scale_, rtol=1e-12)
