"""ML attribute inference (design §5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.tree import DecisionTreeClassifier

import risk
from tests.data import load_acs, load_ce
from tests.examples import examples


def test_categorical_target_on_acs_against_direct_sklearn():
    orig, syn = load_acs()
    keys = ["SEX", "RACE", "MAR", "LANX", "WAOB"]
    res = risk.attribute_inference(orig, syn[0], keys=keys, target="DIS",
                                   estimator=DecisionTreeClassifier(random_state=0))
    # the same attack written out: one-hot keys, tree fitted on synthetic, scored on original
    x_s = pd.get_dummies(syn[0][keys].astype(str))
    x_o = pd.get_dummies(orig[keys].astype(str)).reindex(columns=x_s.columns, fill_value=0)
    tree = DecisionTreeClassifier(random_state=0).fit(x_s, syn[0]["DIS"])
    own = DecisionTreeClassifier(random_state=0).fit(x_o, orig["DIS"])
    assert res.target_type == "categorical"
    # within 10 of the 10,000 records (tie-breaks of the tree may depend on column and row
    # order); the tree fitted on the original scores 0.005 higher, so this tells them apart
    assert res.risk == pytest.approx(np.mean(tree.predict(x_o) == orig["DIS"]), abs=1e-3)
    assert res.risk_train_model == pytest.approx(np.mean(own.predict(x_o) == orig["DIS"]),
                                                    abs=1e-3)
    assert res.protection == pytest.approx(1 - res.risk)
    assert res.baseline == pytest.approx(np.mean(orig["DIS"] == syn[0]["DIS"].mode()[0]))
    assert res.estimator == "DecisionTreeClassifier"


def test_numeric_target_before_after_and_holdout():
    ce = load_ce()
    rng = np.random.default_rng(1)
    idx = rng.permutation(len(ce))
    train, holdout = ce.iloc[idx[:600]], ce.iloc[idx[600:]]
    leaky = train.copy()  # releasing the training records themselves
    res = risk.attribute_inference(train, leaky, keys=["UrbanRural", "Race", "Expenditure"],
                                   target="Income", holdout=holdout, tolerance=0.1)
    assert res.target_type == "numeric"
    assert res.risk == pytest.approx(res.risk_train_model)
    assert res.less_accurate_share == 0.0
    assert res.mse == pytest.approx(res.mse_train_model)
    assert res.holdout_risk is not None
    assert res.difference == pytest.approx(res.risk - res.holdout_risk)
    assert res.risk > res.holdout_risk  # members are easier to attack than non-members
    noisy = train.assign(Income=lambda f: f["Income"].sample(frac=1, random_state=2).to_numpy())
    worse = risk.attribute_inference(train, noisy, keys=["UrbanRural", "Race", "Expenditure"],
                                     target="Income")
    assert worse.risk < res.risk
    assert worse.less_accurate_share > 0.5


def test_tolerance_is_relative_to_true_value():
    orig = pd.DataFrame({"k": [0, 1], "y": [100.0, 10.0]})
    syn = pd.DataFrame({"k": [0, 1], "y": [109.0, 11.5]})
    res = risk.attribute_inference(orig, syn, keys="k", target="y", tolerance=0.1,
                                   estimator=__import__("sklearn.neighbors").neighbors
                                   .KNeighborsRegressor(n_neighbors=1))
    # 109 is within 10% of 100; 11.5 is not within 10% of 10 (it would be of the guess 11.5)
    assert res.risk == pytest.approx(0.5)
    assert res.median_relative_error == pytest.approx(np.median([0.09, 0.15]))
    assert res.mse == pytest.approx((9.0**2 + 1.5**2) / 2)
    assert res.mse_train_model == pytest.approx(0.0) and res.risk_train_model == 1.0
    assert res.less_accurate_share == 1.0 and res.zero_targets == 0


def test_tolerance_boundary_and_zero_targets():
    one_nn = KNeighborsRegressor(n_neighbors=1)
    # exactly on the tolerance counts as within: |125 - 100| = 0.25 * 100 (exact in binary)
    orig = pd.DataFrame({"k": [0, 1], "y": [100.0, 8.0]})
    syn = pd.DataFrame({"k": [0, 1], "y": [125.0, 10.5]})
    res = risk.attribute_inference(orig, syn, keys="k", target="y", tolerance=0.25,
                                   estimator=one_nn)
    assert res.risk == pytest.approx(0.5)  # 10.5 is 2.5 > 0.25 * 8 away
    # a true 0 has no relative error: counted apart, and within only if predicted exactly
    orig = pd.DataFrame({"k": [0, 1, 2], "y": [0.0, 10.0, 20.0]})
    syn = pd.DataFrame({"k": [0, 1, 2], "y": [1.0, 10.0, 21.0]})
    res = risk.attribute_inference(orig, syn, keys="k", target="y", estimator=one_nn)
    assert res.zero_targets == 1
    assert res.median_relative_error == pytest.approx(np.median([0.0, 0.05]))
    assert res.risk == pytest.approx(2 / 3)


def test_baselines_are_the_keyless_guesses_from_the_synthetic_data():
    # what an intruder reads off the release without keys: its majority class, its mean;
    # the original's own majority ("a") and mean (70) would score 2/3 and 0 instead
    orig = pd.DataFrame({"k": [0, 1, 2], "t": ["a", "a", "b"], "y": [100.0, 100.0, 10.0]})
    syn = pd.DataFrame({"k": [0, 1, 2, 3], "t": ["b", "b", "b", "a"],
                        "y": [100.0, 100.0, 100.0, 100.0]})
    cat = risk.attribute_inference(orig, syn, keys="k", target="t",
                                   estimator=KNeighborsClassifier(n_neighbors=1))
    assert cat.baseline == pytest.approx(1 / 3)
    num = risk.attribute_inference(orig, syn, keys="k", target="y",
                                   estimator=KNeighborsRegressor(n_neighbors=1))
    assert num.baseline == pytest.approx(2 / 3)  # 100 is within 10% of 100, 100; not of 10


def test_categorical_holdout_is_attacked_with_the_same_model():
    syn = pd.DataFrame({"k": [0, 1, 2, 3], "t": ["a", "b", "a", "b"]})
    holdout = pd.DataFrame({"k": [0, 1, 2, 3], "t": ["b", "b", "b", "b"]})
    res = risk.attribute_inference(syn.copy(), syn, keys="k", target="t", holdout=holdout,
                                   estimator=DecisionTreeClassifier(random_state=0))
    assert res.risk == 1.0
    assert res.holdout_risk == pytest.approx(0.5)  # predicted a, b, a, b
    assert res.difference == pytest.approx(0.5)


def test_estimator_without_fit_predict_is_type_error():
    df = pd.DataFrame({"k": [0, 1, 2], "y": ["a", "b", "a"]})
    with pytest.raises(TypeError, match="fit and predict"):
        risk.attribute_inference(df, df, keys="k", target="y", estimator=object())


def test_user_estimator_is_not_fitted_in_place():
    df = pd.DataFrame({"k": [0, 1, 2, 3], "y": ["a", "b", "a", "b"]})
    est = DecisionTreeClassifier()
    risk.attribute_inference(df, df, keys="k", target="y", estimator=est)
    assert not hasattr(est, "tree_")


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_row_order_of_the_data_does_not_change_the_attack(seed):
    # categorical keys with few values: many equidistant neighbours, so k-NN must break ties
    rng = np.random.default_rng(seed)
    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.choice(list("pq"), n),
                             "t": rng.choice(list("uvw"), n)})
    original, synthetic, holdout = table(60), table(50), table(40)
    base = risk.attribute_inference(original, synthetic, keys=["a", "b"], target="t",
                                    holdout=holdout, random_state=seed)
    shuffled = risk.attribute_inference(
        original.sample(frac=1, random_state=1), synthetic.sample(frac=1, random_state=2),
        keys=["a", "b"], target="t", holdout=holdout.sample(frac=1, random_state=3),
        random_state=seed)
    assert shuffled.risk == pytest.approx(base.risk)
    assert shuffled.difference == pytest.approx(base.difference)
    assert shuffled.risk_train_model == pytest.approx(base.risk_train_model)


@pytest.mark.parametrize("majority", ["u", "v"])
def test_ties_are_broken_at_random_not_by_target_value(majority):
    # one key cell, 95% of the synthetic records carry the majority target: three neighbours
    # drawn at random from the tie almost surely vote for it (a tie-break that groups records
    # by target value would pick the same value whatever the majority)
    minority = "v" if majority == "u" else "u"
    synthetic = pd.DataFrame({"k": ["a"] * 200, "t": [majority] * 190 + [minority] * 10})
    original = pd.DataFrame({"k": ["a"] * 20, "t": [majority] * 20})
    result = risk.attribute_inference(original, synthetic, keys=["k"], target="t",
                                      random_state=0)
    assert result.risk == pytest.approx(1.0)


def test_seed_is_recorded_and_reproduces():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"k": rng.choice(list("ab"), 300), "t": rng.choice(list("uvw"), 300)})
    first = risk.attribute_inference(frame.iloc[:100], frame.iloc[100:], keys="k", target="t")
    again = risk.attribute_inference(frame.iloc[:100], frame.iloc[100:], keys="k", target="t",
                                     random_state=first.random_state)
    assert first == again
    assert first.to_dict()["random_state"] == float(first.random_state)
    # the seed drives the tie-break: with two key cells of ~100 tied records, other seeds
    # draw other neighbours and predict other values
    risks = {risk.attribute_inference(frame.iloc[:100], frame.iloc[100:], keys="k", target="t",
                                      random_state=s).risk for s in range(4)}
    assert len(risks) > 1


def test_the_original_model_is_reused_with_the_same_numbers(monkeypatch):
    import risk.inference as inference

    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.choice(list("xyz"), n),
                          "y": rng.choice(["lo", "hi"], n)})
    original, holdout = frame.iloc[:150], frame.iloc[150:]
    syn1 = frame.sample(150, random_state=1)
    syn2 = frame.sample(150, random_state=2)
    monkeypatch.setattr(inference, "_ORIGINAL_MODEL_CACHE", {})
    fits: list[int] = []
    real = inference._fit_predict

    def counting(model, train, *args):
        fits.append(len(train))
        return real(model, train, *args)

    monkeypatch.setattr(inference, "_fit_predict", counting)
    kw = dict(keys=["a", "b"], target="y", holdout=holdout, random_state=5)
    first = risk.attribute_inference(original, syn1, **kw)
    second = risk.attribute_inference(original, syn2, **kw)
    assert len(fits) == 3  # synthetic, original, synthetic: the original model once
    monkeypatch.setattr(inference, "_ORIGINAL_MODEL_CACHE", {})
    fresh = risk.attribute_inference(original, syn2, **kw)
    assert fresh == second and first.risk_train_model == second.risk_train_model
    # any change to the original, its order, the seed or the estimator is a fresh fit
    changed = original.copy()
    changed.iloc[0, 2] = "lo" if changed.iloc[0, 2] == "hi" else "hi"
    n_fits = len(fits)
    risk.attribute_inference(changed, syn2, **kw)
    risk.attribute_inference(original.iloc[::-1], syn2, **kw)
    risk.attribute_inference(original, syn2, **(kw | {"random_state": 6}))
    assert len(fits) - n_fits == 6
    monkeypatch.setattr(inference, "_ORIGINAL_MODEL_CACHE", {})
    reversed_fresh = risk.attribute_inference(original.iloc[::-1], syn2, **kw)
    assert reversed_fresh == risk.attribute_inference(original.iloc[::-1], syn2, **kw)
    tree = DecisionTreeClassifier(random_state=0)
    n_fits = len(fits)
    risk.attribute_inference(original, syn2, estimator=tree, **kw)
    risk.attribute_inference(original, syn2, estimator=tree, **kw)
    assert len(fits) - n_fits == 4  # a user's estimator is never cached


def test_baseline_majority_on_a_tie_is_the_first_class_to_appear_whatever_the_dtype():
    synthetic = pd.DataFrame({"k": list("xyxy"), "t": list("abab")})
    original = pd.DataFrame({"k": list("xxyyx"), "t": list("bbbaa")})
    text = risk.attribute_inference(original, synthetic, keys="k", target="t")
    typed = synthetic.assign(t=synthetic["t"].astype(pd.CategoricalDtype(["b", "a"])))
    coded = risk.attribute_inference(original, typed, keys="k", target="t")
    assert text.baseline == pytest.approx(0.4)  # "a" appears first: 2 of 5 originals
    assert coded.baseline == text.baseline


def test_difference_interval_is_newcombes_as_statsmodels_computes_it():
    sm = pytest.importorskip("statsmodels.stats.proportion")
    rng = np.random.default_rng(2)
    f = pd.DataFrame({"a": rng.integers(0, 3, 400), "b": rng.choice(list("xyz"), 400),
                      "t": rng.choice(["p", "q"], 400)})
    res = risk.attribute_inference(f.iloc[:200], f.iloc[200:300], keys=["a", "b"], target="t",
                                   holdout=f.iloc[300:], random_state=0)
    low, high = sm.confint_proportions_2indep(
        round(res.risk * 200), 200, round(res.holdout_risk * 100), 100, method="newcomb")
    assert (res.difference_interval.low, res.difference_interval.high) == pytest.approx(
        (low, high))
