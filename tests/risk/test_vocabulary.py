"""One vocabulary across risk's public API (issue 27): ``train`` is the real frame the
generator was fitted on, ``keys`` what the intruder knows. No released version spoke the old
names (0.1.0 is the first release, CHANGELOG.md), so none is kept: an old keyword is refused as
Python refuses any unknown one."""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import risk

OLD = {"original": "train", "real": "train", "quasi_identifiers": "keys", "known": "keys"}
OLD_FIELDS = {"n_original": "n_train", "cap_original": "cap_train",
              "risk_original_model": "risk_train_model", "mse_original_model": "mse_train_model"}
ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = [getattr(risk, n) for n in risk.__all__ if inspect.isfunction(getattr(risk, n))]
RESULTS = [getattr(risk, n) for n in risk.__all__
           if inspect.isclass(getattr(risk, n)) and dataclasses.is_dataclass(getattr(risk, n))]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_no_public_function_takes_an_old_name(fn):
    params = set(inspect.signature(fn).parameters)
    assert not params & set(OLD), (fn.__name__, params & set(OLD))


@pytest.mark.parametrize("cls", RESULTS, ids=lambda c: c.__name__)
def test_no_result_field_has_an_old_name(cls):
    names = {f.name for f in dataclasses.fields(cls)}
    assert not names & (set(OLD) | set(OLD_FIELDS)), (cls.__name__, names & set(OLD))


def _frames():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 3, 60), "b": rng.integers(0, 2, 60),
                          "t": rng.integers(0, 2, 60)})
    return frame.iloc[:30].reset_index(drop=True), frame.iloc[30:].reset_index(drop=True)


def _calls():
    train, other = _frames()
    return {
        "cap": (risk.cap, (), dict(train=train, synthetic=other, keys=["a", "b"], target="t")),
        "cap_per_record": (risk.cap_per_record, (),
                           dict(train=train, synthetic=other, keys=["a", "b"], target="t")),
        "disclosure": (risk.disclosure, (),
                       dict(train=train, synthetic=other, keys=["a", "b"], target="t")),
        "attribute_inference": (risk.attribute_inference, (),
                                dict(train=train, synthetic=other, keys=["a", "b"],
                                     target="t", random_state=0)),
        "identification_risk": (risk.identification_risk, (),
                                dict(train=train, synthetic=other, keys=["a"],
                                     synthesized=["b"])),
        "hellinger_utility": (risk.hellinger_utility, (), dict(train=train, synthetic=other)),
        "membership_disclosure": (risk.membership_disclosure, (train, other, other),
                                  dict(keys=["a", "b"], sampling_fraction=0.3, repeats=3,
                                       random_state=0)),
        "membership_distances": (risk.membership_distances, (train, other), dict(keys=["a"])),
    }


def _same(a, b):
    if isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b)
    elif isinstance(a, risk.Result):
        assert pd.Series(a.to_dict()).equals(pd.Series(b.to_dict()))  # NaN equals NaN
    else:
        assert a == b


@pytest.mark.parametrize("name", sorted(_calls()))
def test_an_old_argument_name_is_refused_as_unknown(name):
    fn, args, kwargs = _calls()[name]
    fn(*args, **kwargs)  # the call in the new words runs
    for old, current in OLD.items():
        if current not in kwargs:
            continue
        moved = {(old if k == current else k): v for k, v in kwargs.items()}
        with pytest.raises(TypeError, match=rf"unexpected keyword argument '{old}'"):
            fn(*args, **moved)


def test_no_result_keeps_an_old_field_name():
    train, other = _frames()
    mem = risk.membership_disclosure(train, other, other, keys=["a", "b"],
                                     sampling_fraction=0.3, repeats=3, random_state=0)
    cap = risk.cap(train, other, keys=["a", "b"], target="t")
    for res, old in [(mem, "quasi_identifiers"), (cap, "n_original"), (cap, "cap_original")]:
        assert not hasattr(res, old), old
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mem.keys == ("a", "b") and cap.n_train == 30


def _parameters(tree):
    import ast
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                yield node, arg.arg


def test_no_leftover_of_the_old_vocabulary_in_the_code():
    """Every public function of risk and tuner and every line of their code speak the new
    words (issue 35, item 4): a leftover is caught by its name
    or by substring."""
    import ast
    leftovers = []
    for path in sorted([*ROOT.glob("risk/**/*.py"), *ROOT.glob("tuner/**/*.py")]):
        text = path.read_text()
        private_module = path.name.startswith("_") and path.name != "__init__.py"
        # "known" outside risk is the given part of a conditional sample, not the intruder's
        old_names = {"original", "real", "quasi_identifiers"} | (
            {"known"} if path.parts[-2] == "risk" else set())
        for node, name in _parameters(ast.parse(text)):
            if name in old_names and not (private_module or node.name.startswith("_")):
                leftovers.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}({name})")
        for number, line in enumerate(text.splitlines(), 1):
            for old in OLD_FIELDS:
                if old in line:
                    leftovers.append(f"{path.relative_to(ROOT)}:{number} {old}")
    assert not leftovers, leftovers
