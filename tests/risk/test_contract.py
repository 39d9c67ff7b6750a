"""One set of checks that every risk measure must pass (STYLE: one generic check per metric)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import risk

RNG = np.random.default_rng(7)
N = 120
BASE = pd.DataFrame({
    "a": RNG.integers(0, 3, N), "b": RNG.choice(["x", "y", "z"], N),
    "c": RNG.normal(size=N), "t": RNG.choice(["p", "q"], N),
})
TRAIN, HOLD, SYN = BASE.iloc[:60], BASE.iloc[60:], BASE.sample(80, random_state=1, replace=True)

CALLS = {
    "membership": lambda tr, ho, sy: risk.membership_disclosure(
        tr, ho, sy, sampling_fraction=0.2, repeats=10, random_state=0),
    "cap": lambda tr, ho, sy: risk.cap(tr, sy, keys=["a", "b"], target="t", holdout=ho),
    "cap_nearest": lambda tr, ho, sy: risk.cap(tr, sy, keys=["a", "b"], target="t",
                                               matching="nearest"),
    "inference": lambda tr, ho, sy: risk.attribute_inference(tr, sy, keys=["a", "b", "c"],
                                                             target="t", holdout=ho),
    "disclosure": lambda tr, ho, sy: risk.disclosure(tr, sy, keys=["a", "b"], target="t"),
    "exact_copies": lambda tr, ho, sy: risk.exact_copies(tr, sy, holdout=ho),
    "dcr": lambda tr, ho, sy: risk.distance_to_closest_record(tr, sy, holdout=ho),
    "membership_audit": lambda tr, ho, sy: risk.membership_audit(
        tr, ho, lambda t, s: sy.sample(len(t), replace=True, random_state=s), targets=2,
        shadows=8, shadow_size=20, random_state=0),
    "identification": lambda tr, ho, sy: risk.identification_risk(
        tr, sy.iloc[: len(tr)], keys=["a"], synthesized=["b", "c"], radius={"c": 0.5}),
}


# the public function each entry of CALLS exercises
FUNCTIONS = {"membership": risk.membership_disclosure, "cap": risk.cap, "cap_nearest": risk.cap,
             "inference": risk.attribute_inference, "disclosure": risk.disclosure,
             "exact_copies": risk.exact_copies, "dcr": risk.distance_to_closest_record,
             "membership_audit": risk.membership_audit,
             "identification": risk.identification_risk}


def _table_measures() -> set[str]:
    """Every public function of ``risk`` that takes the training frame and returns a result
    object: found from ``risk.__all__`` and the annotations, not from a list."""
    import typing

    found = set()
    for name in risk.__all__:
        fn = getattr(risk, name)
        if not (inspect.isfunction(fn) and name[0].islower()):
            continue
        hints = typing.get_type_hints(fn)
        first = next(iter(inspect.signature(fn).parameters))
        returned = hints.get("return")
        if hints.get(first) is pd.DataFrame and isinstance(returned, type) and \
                issubclass(returned, risk.Result):
            found.add(name)
    return found


def test_every_table_measure_of_risk_is_in_this_contract():
    assert set(FUNCTIONS) == set(CALLS)
    measured = {fn.__name__ for fn in FUNCTIONS.values()}
    assert measured == _table_measures(), sorted(_table_measures() ^ measured)
    assert len(measured) >= 8  # the annotations were read (not an empty match)


@pytest.mark.parametrize("name", CALLS)
def test_result_is_frozen_flat_and_inputs_untouched(name):
    frames = [TRAIN.copy(), HOLD.copy(), SYN.copy()]
    res = CALLS[name](*frames)
    for got, want in zip(frames, (TRAIN, HOLD, SYN), strict=True):
        pd.testing.assert_frame_equal(got, want)
    assert dataclasses.is_dataclass(res)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.__setattr__(dataclasses.fields(res)[0].name, 0)
    flat = res.to_dict()
    assert flat and all(isinstance(v, (float, str)) for v in flat.values())
    json.dumps({k: v for k, v in flat.items() if not (isinstance(v, float) and math.isnan(v))})
    # metrics() is every finite float of to_dict(), no more (a logger refuses NaN) and no less
    finite = {k: v for k, v in flat.items() if isinstance(v, float) and math.isfinite(v)}
    assert res.metrics() == finite and len(finite) >= len(flat) // 2


@pytest.mark.parametrize("name", CALLS)
def test_empty_frame_is_error(name):
    with pytest.raises(risk.RiskInputError, match="at least one row"):
        CALLS[name](TRAIN.iloc[:0], HOLD, SYN)


@pytest.mark.parametrize("name", CALLS)
def test_missing_column_is_error_naming_it(name):
    with pytest.raises(risk.RiskInputError, match=r"lacks|same columns"):
        CALLS[name](TRAIN, HOLD, SYN.drop(columns=["b"]))


@pytest.mark.parametrize("name", CALLS)
def test_dtype_mismatch_is_error(name):
    with pytest.raises(risk.RiskInputError, match="same kind of dtype"):
        CALLS[name](TRAIN, HOLD, SYN.assign(a=SYN["a"].astype(str)))


@pytest.mark.parametrize("name", ["cap", "inference", "identification"])
def test_nan_in_keys_is_error_with_count(name):
    bad = TRAIN.copy()
    bad.loc[bad.index[:3], "a"] = np.nan
    with pytest.raises(risk.RiskInputError, match=r"missing values .*'a': 3"):
        CALLS[name](bad, HOLD, SYN)


def test_extra_column_without_qi_list_is_error():
    with pytest.raises(risk.RiskInputError, match="extra"):
        CALLS["membership"](TRAIN, HOLD, SYN.assign(extra=1))


def test_target_among_keys_is_error():
    with pytest.raises(risk.RiskInputError, match="must not be one of the `keys`"):
        risk.cap(TRAIN, SYN, keys=["a", "t"], target="t")
    with pytest.raises(risk.RiskInputError, match="must not be one of the `keys`"):
        risk.attribute_inference(TRAIN, SYN, keys=["a", "t"], target="t")


def test_non_frame_is_type_error():
    with pytest.raises(TypeError, match="must be a pandas DataFrame"):
        risk.membership_disclosure(TRAIN.to_numpy(), HOLD, SYN, sampling_fraction=0.5)


def test_missing_category_option_keeps_records():
    bad = TRAIN.copy()
    bad.loc[bad.index[:3], "a"] = np.nan
    res = risk.cap(bad, bad, keys=["a", "b"], target="t", missing="category")
    assert res.n_train == len(bad)


def test_risk_is_standalone():
    code = (
        "import sys, risk; bad = [m for m in ('tuner', 'sdv', 'optuna', 'mlflow', 'torch') "
        "if m in sys.modules]; print(','.join(bad)); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, f"risk imported {out.stdout.strip()}"


@pytest.mark.parametrize("bins", [0, -3, 2.5, True])
@pytest.mark.parametrize("call", [
    lambda b: risk.membership_disclosure(TRAIN, HOLD, SYN, sampling_fraction=0.2, repeats=3,
                                         numeric_bins=b),
    lambda b: risk.cap(TRAIN, SYN, keys=["a", "c"], target="t", numeric_bins=b),
    lambda b: risk.hellinger_utility(TRAIN, SYN, bins=b),
], ids=["membership", "cap", "hellinger"])
def test_bad_numeric_bins_is_a_clear_error(call, bins):
    # 0 or a negative count used to return numbers silently
    with pytest.raises((TypeError, ValueError), match="bins"):
        call(bins)
