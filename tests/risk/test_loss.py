"""Risk-utility loss (design §3.1; El Emam, Mosquera & Fang 2022)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import risk


def test_weight_values_from_the_formula():
    assert risk.risk_utility_weight(-0.5) == 1.0
    assert risk.risk_utility_weight(0.2) == 1.0
    # just above the threshold: 0.31 + 1/(1+e^-0.8) = 0.99997..., the published step of 2.6e-5
    step = 1.0 - risk.risk_utility_weight(0.2 + 1e-12)
    assert step == pytest.approx(2.55e-5, abs=1e-6)
    assert risk.risk_utility_weight(1.0) == pytest.approx(0.81)
    assert risk.CONTINUOUS_FLOOR == pytest.approx(0.3100255, abs=1e-7)
    assert risk.risk_utility_weight(0.2 + 1e-12, floor=risk.CONTINUOUS_FLOOR) == pytest.approx(1.0)


@given(m=st.floats(-3, 1), u=st.floats(0, 1))
def test_loss_is_minus_weight_times_utility(m, u):
    res = risk.risk_utility_loss(m, u)
    w = 1.0 if m <= 0.2 else 0.31 + 1.0 / (1.0 + math.exp(m - 1.0))
    assert res.weight == pytest.approx(w)
    assert res.loss == pytest.approx(-w * u)
    assert 0.81 - 1e-12 <= res.weight <= 1.0
    assert res.acceptable == (m <= 0.2)


def test_threshold_is_a_parameter():
    # the same M on either side of a chosen threshold
    assert risk.risk_utility_weight(0.3, threshold=0.5) == 1.0
    assert risk.risk_utility_weight(0.15, threshold=0.1) == pytest.approx(
        0.31 + 1 / (1 + math.exp(0.15 - 1)))
    assert risk.risk_utility_loss(0.3, 0.8, threshold=0.5).acceptable
    assert risk.risk_utility_loss(0.3, 0.8, threshold=0.5).loss == pytest.approx(-0.8)
    assert not risk.risk_utility_loss(0.15, 0.8, threshold=0.1).acceptable
    assert risk.risk_utility_loss(0.5, 0.8, threshold=0.5).acceptable  # M <= threshold


def test_weight_decreases_with_m_above_threshold():
    ms = [0.21, 0.4, 0.6, 0.8, 1.0]
    weights = [risk.risk_utility_weight(m) for m in ms]
    assert weights == sorted(weights, reverse=True)


@pytest.mark.parametrize(("m", "u", "match"), [
    (0.1, 1.2, "0 <= utility <= 1"), (0.1, -0.1, "0 <= utility <= 1"),
    (1.5, 0.5, "m <= 1"), (float("nan"), 0.5, "NaN"),
])
def test_bad_values_are_errors(m, u, match):
    with pytest.raises(risk.RiskInputError, match=match):
        risk.risk_utility_loss(m, u)


def test_bad_threshold_is_error():
    with pytest.raises(risk.RiskInputError, match="0 < threshold < 1"):
        risk.risk_utility_weight(0.1, threshold=1.0)
