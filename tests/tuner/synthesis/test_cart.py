"""The sequential CART synthesiser behaves like an SDV synthesiser."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sdv.utils import load_synthesizer

import risk
from tuner.data import TABLE, metadata_for
from tuner.synthesis._cart import CARTSynthesizer
from tuner.synthesis._synthesizers import synthesize


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    n = 1500
    a = rng.integers(0, 4, n)
    b = np.where(rng.random(n) < 0.8, a % 2, 1 - a % 2)
    x = rng.normal(a * 2.0, 1.0, n)
    return pd.DataFrame({"a": a.astype(str), "b": b, "x": x,
                         "y": x * 3 + rng.normal(0, 0.5, n)})


def test_fit_sample_save_load(frame, tmp_path):
    synth = CARTSynthesizer(metadata_for(frame), min_samples_leaf=10)
    synth.fit({TABLE: frame})
    out = synth.sample(200)[TABLE]
    assert list(out.columns) == list(frame.columns)
    assert len(out) == 200
    assert set(out["a"]) <= set(frame["a"])
    synth.save(tmp_path / "cart.pkl")
    loaded = load_synthesizer(str(tmp_path / "cart.pkl"))
    synth.reset_sampling()
    loaded.reset_sampling()
    pd.testing.assert_frame_equal(synth.sample(50)[TABLE], loaded.sample(50)[TABLE])
    assert synth.get_parameters()["min_samples_leaf"] == 10


def test_same_seed_same_data_other_seed_other_data(frame):
    one = synthesize("cart", {"min_samples_leaf": 5}, frame, seed=1).synthetic
    two = synthesize("cart", {"min_samples_leaf": 5}, frame, seed=1).synthetic
    three = synthesize("cart", {"min_samples_leaf": 5}, frame, seed=2).synthetic
    pd.testing.assert_frame_equal(one, two)
    assert not one.equals(three)


def test_keeps_dependence_between_columns(frame):
    out = synthesize("cart", {"min_samples_leaf": 20}, frame, seed=3).synthetic
    assert np.corrcoef(out["x"], out["y"])[0, 1] > 0.9


def test_small_leaves_copy_records_large_leaves_do_not(frame):
    train, holdout = frame.iloc[:750], frame.iloc[750:]
    ms = {}
    for leaf in (1, 100):
        syn = synthesize("cart", {"min_samples_leaf": leaf, "smoothing": False}, train,
                         seed=4).synthetic
        ms[leaf] = risk.membership_disclosure(train, holdout, syn, population_size=15000,
                                              numeric_bins=None, random_state=0).m
    assert ms[1] > ms[100] + 0.1


def test_bad_parameters_are_errors(frame):
    with pytest.raises(ValueError, match="min_samples_leaf"):
        CARTSynthesizer(metadata_for(frame), min_samples_leaf=0)
    with pytest.raises(ValueError, match="visit_order"):
        CARTSynthesizer(metadata_for(frame), visit_order="sideways")


def test_few_valued_float_column_with_missing_values_is_synthesised():
    # used to crash with "Input y contains NaN" whenever such a column came after the first
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"b": rng.normal(size=300), "c": rng.choice(["x", "y"], 300),
                          "a": rng.choice([1.0, 2.0, 3.0, np.nan], 300)})
    params = {"min_samples_leaf": 5, "max_depth": 0, "visit_order": "original",
              "smoothing": False}
    out = synthesize("cart", params, frame, seed=1).synthetic
    assert set(out["a"].dropna().unique()) <= {1.0, 2.0, 3.0}
    assert 0.1 < out["a"].isna().mean() < 0.4  # missing about as often as in the data (25 %)


def test_smoothing_leaves_few_valued_numbers_on_their_values(frame):
    # "rating" holds the floats 1.0-4.0 (a category to SDV, as Fair's ratings are) and "x" is
    # continuous: smoothing (synthpop's "density") adds kernel noise to x only; on the demo's
    # Fair data noisy ratings had dropped the Quality Report to 0.04
    rng = np.random.default_rng(1)
    frame = frame.assign(rating=(frame["b"] + rng.integers(1, 4, len(frame))).astype(float))
    out = synthesize("cart", {"min_samples_leaf": 20, "smoothing": True}, frame,
                     seed=5).synthetic
    assert set(out["rating"]) <= set(frame["rating"])
    assert not set(out["x"]) <= set(frame["x"])  # smoothed: not only donor values
    rough = synthesize("cart", {"min_samples_leaf": 20, "smoothing": False}, frame,
                       seed=5).synthetic
    assert set(rough["x"]) <= set(frame["x"])
