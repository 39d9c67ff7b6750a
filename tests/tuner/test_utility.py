"""Utility measures (DESIGN 7): known extremes and orderings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tuner.utility import efficacy, hellinger, quality_report


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
