"""Bad inputs to every public ``risk`` function ("Nothing silent, nothing lost").

Every malformed frame or option value must end in one of two ways: a clean ``ValueError``
(``risk.RiskInputError`` included) or ``TypeError`` raised by ``risk`` itself whose message names
the offending argument, or a correct result (finite where it must be, in its documented range).
Never a traceback from deep inside numpy, pandas or scikit-learn, never a RuntimeWarning from a
computation on garbage, and never a silently wrong number.

Two parts: an explicit battery (one case per known bad input, each asserting the exception type
and that the message names the culprit), and hypothesis property tests that throw malformed
frames and option values at every public function.
"""

from __future__ import annotations

import dataclasses
import math
import re
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import risk
from risk.disclosure import MEASURES as DISCLOSURE_MEASURES
from tests.examples import examples

RNG = np.random.default_rng(11)
N = 24
BASE = pd.DataFrame({
    "a": RNG.integers(0, 3, N),
    "b": RNG.choice(["x", "y", "z"], N),
    "c": RNG.normal(size=N).round(3),
    "t": RNG.choice(["p", "q"], N),
    "f": RNG.choice([True, False], N),
})
TRAIN = BASE.iloc[:12].reset_index(drop=True)
HOLD = BASE.iloc[12:].reset_index(drop=True)
SYN = BASE.sample(12, random_state=3, replace=True).reset_index(drop=True)


# ------------------------------------------------------------------------------ the functions


def _resample(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """A generator for the membership audit: its table, resampled with replacement."""
    return table.sample(len(table), replace=True, random_state=seed).reset_index(drop=True)


@dataclasses.dataclass(frozen=True)
class Spec:
    """A public function, valid arguments for it, and which of them are frames."""

    fn: Callable[..., Any]
    args: dict[str, Any]
    frames: tuple[str, ...] = ()


SPECS: dict[str, Spec] = {
    "membership_disclosure": Spec(
        risk.membership_disclosure,
        dict(train=TRAIN, holdout=HOLD, synthetic=SYN, sampling_fraction=0.3, repeats=5,
             random_state=0),
        ("train", "holdout", "synthetic")),
    "membership_distances": Spec(
        risk.membership_distances, dict(records=TRAIN, synthetic=SYN), ("records", "synthetic")),
    "cap": Spec(
        risk.cap, dict(train=TRAIN, synthetic=SYN, keys=["a", "b"], target="t", holdout=HOLD),
        ("train", "synthetic", "holdout")),
    "cap_per_record": Spec(
        risk.cap_per_record, dict(train=TRAIN, synthetic=SYN, keys=["a", "b"], target="t"),
        ("train", "synthetic")),
    "disclosure": Spec(
        risk.disclosure, dict(train=TRAIN, synthetic=SYN, keys=["a", "b"], target="t"),
        ("train", "synthetic")),
    "exact_copies": Spec(
        risk.exact_copies, dict(train=TRAIN, synthetic=SYN, holdout=HOLD),
        ("train", "synthetic", "holdout")),
    "replicated_uniques": Spec(
        risk.replicated_uniques, dict(train=TRAIN, synthetic=SYN), ("train", "synthetic")),
    "distance_to_closest_record": Spec(
        risk.distance_to_closest_record, dict(train=TRAIN, synthetic=SYN, holdout=HOLD),
        ("train", "synthetic", "holdout")),
    "distances_to_closest_record": Spec(
        risk.distances_to_closest_record, dict(train=TRAIN, synthetic=SYN, holdout=HOLD),
        ("train", "synthetic", "holdout")),
    "attribute_inference": Spec(
        risk.attribute_inference,
        dict(train=TRAIN, synthetic=SYN, keys=["a", "b", "c"], target="t", holdout=HOLD,
             random_state=0),
        ("train", "synthetic", "holdout")),
    "identification_risk": Spec(
        risk.identification_risk,
        dict(train=TRAIN, synthetic=SYN, keys=["a"], synthesized=["b", "c"],
             radius={"c": 0.5}),
        ("train", "synthetic")),
    "hellinger_utility": Spec(
        risk.hellinger_utility, dict(train=TRAIN, synthetic=SYN), ("train", "synthetic")),
    "membership_audit": Spec(
        risk.membership_audit,
        dict(train=TRAIN, reference=HOLD, fit_sample=_resample, targets=2, shadows=8,
             shadow_size=6, random_state=0),
        ("train", "reference")),
    "vulnerability": Spec(
        risk.vulnerability, dict(train=TRAIN, reference=HOLD, neighbours=2),
        ("train", "reference")),
    "risk_utility_loss": Spec(risk.risk_utility_loss, dict(m=0.3, utility=0.8)),
    "risk_utility_weight": Spec(risk.risk_utility_weight, dict(m=0.3)),
    "naive_f1": Spec(risk.naive_f1, dict(sampling_fraction=0.3)),
    "relative_f1": Spec(risk.relative_f1, dict(f1=0.5, sampling_fraction=0.3)),
}
FRAME_SPECS = [name for name, spec in SPECS.items() if spec.frames]
RISK_DIR = Path(risk.__file__).resolve().parent


def call(name: str, **overrides: Any) -> Any:
    spec = SPECS[name]
    return spec.fn(**(spec.args | overrides))


def raised_cleanly(err: BaseException) -> None:
    """The error was raised by ``risk`` itself, not deep inside numpy, pandas or sklearn."""
    assert isinstance(err, (ValueError, TypeError)), repr(err)
    last = traceback.extract_tb(err.__traceback__)[-1]
    assert Path(last.filename).resolve().is_relative_to(RISK_DIR), (
        f"{type(err).__name__} from {last.filename}:{last.lineno}: {err}"
    )


def assert_clean_error(err: BaseException, *culprits: str) -> None:
    raised_cleanly(err)
    message = str(err)
    assert any(c in message for c in culprits), (
        f"message does not name any of {culprits}: {message}"
    )


# ------------------------------------------------------------------------------ valid results


def _largest_weight(threshold: float) -> float:
    """1, except for the published floor 0.31 at thresholds below 0.2, where w(M) just above
    the threshold is 0.31 + 1 / (1 + exp(threshold - 1)) (documented at risk.loss.max_floor)."""
    return max(1.0, risk.PUBLISHED_FLOOR + 1.0 / (1.0 + math.exp(threshold - 1.0))) + 1e-12


def _unit(value: Any, what: str, *, nan: bool = False) -> None:
    if nan and value is not None and math.isnan(value):
        return
    assert value is not None and math.isfinite(value) and -1e-9 <= value <= 1 + 1e-9, (what, value)


def _finite_fields(result: Any, allow_nan: tuple[str, ...] = ()) -> None:
    for key, value in result.to_dict().items():
        if isinstance(value, float) and not any(key.endswith(a) for a in allow_nan):
            assert math.isfinite(value), (key, value)


def check_result(name: str, args: dict[str, Any], res: Any) -> None:
    """The result of a call that did not raise is in its documented range."""
    if name == "membership_disclosure":
        _finite_fields(res)
        t = res.sampling_fraction
        assert -2 * t / (1 - t) - 1e-9 <= res.m <= 1 + 1e-9
        for v in (res.f1, res.precision, res.recall, *res.f1_by_threshold):
            _unit(v, "f1/precision/recall")
        assert res.m_spread.low <= res.m_spread.high
    elif name == "membership_distances":
        assert isinstance(res, pd.Series) and res.index.equals(args["records"].index)
        assert pd.api.types.is_integer_dtype(res) and ((res >= 0) & (res <= 5)).all()
    elif name == "cap":
        _finite_fields(res, allow_nan=())
        for f in ("cap_v1", "cap_v2", "cap_train", "baseline", "lower_bound_v1",
                  "lower_bound_v2", "disco", "disco_over_dis"):
            _unit(getattr(res, f), f)
        for f in ("holdout_cap_v1", "holdout_cap_v2"):
            if getattr(res, f) is not None:
                _unit(getattr(res, f), f)
    elif name == "cap_per_record":
        assert isinstance(res, pd.Series) and len(res) == len(args["train"])
        unmatched = args.get("unmatched", 0.0)
        nan_ok = isinstance(unmatched, float) and math.isnan(unmatched)
        for v in res:
            _unit(v, "cap", nan=nan_ok)
    elif name == "disclosure":
        # synthpop's own NaNs: the mean DiSCO cell of no DiSCO cell, and TCAP when no key of
        # the original occurs in the synthetic data (0 / 0)
        _finite_fields(res, allow_nan=("mean_denom", "TCAP"))
        for m in DISCLOSURE_MEASURES:
            if m not in ("max_denom", "mean_denom") and not math.isnan(getattr(res, m)):
                assert 0.0 <= getattr(res, m) <= 100.0 + 1e-9, (m, getattr(res, m))
    elif name == "exact_copies":
        for f in ("train_share", "train_unique_share", "replicated_unique_share"):
            _unit(getattr(res, f), f)
        has_holdout = args.get("holdout") is not None
        for f in ("holdout_share", "holdout_unique_share"):
            _unit(getattr(res, f), f, nan=not has_holdout)
    elif name == "replicated_uniques":
        assert isinstance(res, np.ndarray) and res.dtype == bool
        assert res.shape == (len(args["synthetic"]),)
    elif name == "distance_to_closest_record":
        _finite_fields(res)
        for f in ("share_closer_to_train", "baseline", "share_ties", "share_exact_train"):
            _unit(getattr(res, f), f)
        assert 0.0 <= res.interval.low <= res.interval.high <= 1.0
    elif name == "distances_to_closest_record":
        assert isinstance(res, pd.DataFrame) and res.index.equals(args["synthetic"].index)
        values = res.to_numpy()
        assert np.isfinite(values).all() and (values >= 0).all() and (values <= 1 + 1e-9).all()
    elif name == "attribute_inference":
        for f in ("risk", "baseline", "risk_train_model", "less_accurate_share"):
            _unit(getattr(res, f), f)
        if res.holdout_risk is not None:
            _unit(res.holdout_risk, "holdout_risk")
        if res.mse is not None:
            assert math.isfinite(res.mse) and res.mse >= 0
    elif name == "identification_risk":
        assert 0.0 <= res.expected_match_risk <= res.n_targets
        _unit(res.true_match_rate, "true_match_rate")
        _unit(res.false_match_rate, "false_match_rate", nan=True)
    elif name == "hellinger_utility":
        _unit(res, "hellinger")
    elif name == "membership_audit":
        for f in ("tpr_at_1pct", "fpr_at_1pct", "tpr_at_10pct", "fpr_at_10pct"):
            _unit(getattr(res, f), f)
        for auc in res.target_auc:
            _unit(auc, "target_auc", nan=True)
        assert res.epsilon_lower_bound >= 0 and res.n_fits == res.n_targets * res.n_shadows
    elif name == "vulnerability":
        assert isinstance(res, pd.Series) and res.index.equals(args["train"].index)
        for v in res:
            _unit(v, "vulnerability")
    elif name in ("risk_utility_loss", "risk_utility_weight"):
        weight = res.weight if name == "risk_utility_loss" else res
        threshold = float(args.get("threshold", risk.ACCEPTABLE_M))
        assert math.isfinite(weight) and 0.0 < weight <= _largest_weight(threshold), weight
        if name == "risk_utility_loss":
            assert math.isfinite(res.loss) and res.loss == pytest.approx(-weight * res.utility)
    elif name == "naive_f1":
        assert 0.0 < res < 1.0
    elif name == "relative_f1":
        values = np.asarray(res, dtype=float)
        assert np.isfinite(values).all() and (values <= 1 + 1e-9).all()
    else:  # pragma: no cover - a new function must get its check here
        raise AssertionError(f"no result check for {name}")


def run_and_check(name: str, args: dict[str, Any], *culprits: str) -> None:
    """Call ``name`` with ``args``: a clean error naming a culprit, or a valid result."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            res = SPECS[name].fn(**args)
        except (ValueError, TypeError) as err:
            assert_clean_error(err, *culprits)
            return
    check_result(name, args, res)


# ------------------------------------------------------------------------------ the battery

CASES: list[Any] = []


def case(name: str, error: type[Exception], match: str, **overrides: Any) -> None:
    CASES.append(pytest.param(name, overrides, error, match,
                              id=f"{name}-{'-'.join(overrides) or 'base'}-{len(CASES)}"))


def with_column(frame: pd.DataFrame, col: str, values: Any) -> pd.DataFrame:
    out = frame.copy()
    out[col] = values
    return out


def with_value(frame: pd.DataFrame, col: str, row: int, value: Any) -> pd.DataFrame:
    out = frame.copy()
    numeric = pd.api.types.is_numeric_dtype(out[col]) and not pd.api.types.is_bool_dtype(out[col])
    if numeric and isinstance(value, (int, float)) and not isinstance(value, bool):
        out[col] = out[col].astype(float)
    else:
        out[col] = out[col].astype(object)
    out.loc[row, col] = value
    return out


RUE = risk.RiskInputError

# the cases: risk_utility_loss
for kw, match in [
    (dict(floor=-10), r"floor.*got floor=-10"),
    (dict(floor=float("inf")), r"floor.*got floor=inf"),
    (dict(floor=float("nan")), r"`floor` must not be NaN"),
    (dict(floor=0.45), r"0 <= floor <= 0.3100255.*floor=0.45"),
    (dict(m=float("-inf")), r"`m` must be finite.*m=-inf"),
    (dict(m=float("inf")), r"`m` must be finite"),
    (dict(m=float("nan")), r"`m` must not be NaN"),
    (dict(m=1.5), r"`m <= 1`.*m=1.5"),
    (dict(utility=float("nan")), r"`utility` must not be NaN"),
    (dict(utility=float("inf")), r"0 <= utility <= 1.*utility=inf"),
    (dict(utility=-0.1), r"0 <= utility <= 1.*utility=-0.1"),
    (dict(threshold=0.0), r"0 < threshold < 1.*threshold=0.0"),
    (dict(threshold=float("nan")), r"`threshold` must not be NaN"),
    (dict(threshold=np.float32(1.0)), r"0 < threshold < 1"),
]:
    case("risk_utility_loss", RUE, match, **kw)
for kw, match in [
    (dict(floor="0.3"), r"`floor` must be a number, got str '0.3'"),
    (dict(m=True), r"`m` must be a number, got bool True"),
    (dict(m=np.bool_(True)), r"`m` must be a number"),
    (dict(utility=None), r"`utility` must be a number, got NoneType None"),
    (dict(threshold=[0.2]), r"`threshold` must be a number"),
]:
    case("risk_utility_loss", TypeError, match, **kw)
case("risk_utility_weight", RUE, r"floor.*floor=-0.1", floor=-0.1)
case("risk_utility_weight", RUE, r"`m` must be finite", m=float("-inf"))
case("risk_utility_weight", TypeError, r"`m` must be a number", m="0.3")

# naive_f1 and relative_f1
case("naive_f1", RUE, r"`sampling_fraction` must be in \(0, 1\), got 1.0", sampling_fraction=1.0)
case("naive_f1", RUE, r"sampling_fraction.*nan", sampling_fraction=float("nan"))
case("naive_f1", TypeError, r"`sampling_fraction` must be a number", sampling_fraction="x")
case("naive_f1", TypeError, r"`sampling_fraction` must be a number", sampling_fraction=None)
case("relative_f1", RUE, r"`sampling_fraction` must be in \(0, 1\), got 1.0", sampling_fraction=1.0)
case("relative_f1", RUE, r"0 <= f1 <= 1.*1.2", f1=np.array([0.2, 1.2]))
case("relative_f1", RUE, r"0 <= f1 <= 1.*nan", f1=float("nan"))
case("relative_f1", RUE, r"0 <= f1 <= 1.*inf", f1=float("inf"))
case("relative_f1", TypeError, r"`f1` must be a number.*'x'", f1="x")
case("relative_f1", TypeError, r"`f1` must be a number.*None", f1=None)

# inf in a numeric column: refused, naming the column, the frame and the count
for name in FRAME_SPECS:
    frame = SPECS[name].frames[-1] if name != "cap" else "synthetic"
    label = "synthetic" if frame == "synthetic" else frame
    col = "c" if name not in ("cap", "cap_per_record", "disclosure") else "a"
    bad = with_value(with_value(SPECS[name].args[frame], col, 0, np.inf), col, 3, -np.inf)
    case(name, RUE, rf"column '{col}' holds infinite values \(`{label}(\[0\])?`: 2\)",
         **{frame: bad})

# finite values so large that ranges and squares overflow
for name, col in [("distance_to_closest_record", "c"), ("cap", "a"), ("attribute_inference", "c"),
                  ("membership_disclosure", "c"), ("hellinger_utility", "c")]:
    first = SPECS[name].frames[0]
    huge = with_column(SPECS[name].args[first], col,
                       np.where(np.arange(12) % 2, 1.5e308, -1.5e308))
    case(name, RUE, rf"column '{col}' holds values beyond \+-1e\+150 \(`{first}`: 12\)",
         **{first: huge})

# all-missing keys where missing values are refused: the count per column
case("cap", RUE, r"`synthetic\[0\]` has missing values in key/target column\(s\) \('b': 12\)",
     synthetic=with_column(SYN, "b", None))
case("identification_risk", RUE, r"`train` has missing values in keys/synthesized "
     r"column\(s\) \('c': 12\)", train=with_column(TRAIN, "c", np.nan))
case("attribute_inference", RUE, r"`holdout` has missing values.*\('a': 12\)",
     holdout=with_column(HOLD, "a", np.nan))

# time types against text
case("exact_copies", RUE, r"Column 'a' must hold the same type.*timedelta.*text",
     train=with_column(TRAIN, "a", pd.to_timedelta(TRAIN["a"], "D")),
     holdout=with_column(HOLD, "a", pd.to_timedelta(HOLD["a"], "D")),
     synthetic=with_column(SYN, "a", pd.to_timedelta(SYN["a"], "D").astype(str)))
case("membership_disclosure", RUE, r"Column 'a' must have the same kind of dtype.*datetime64",
     synthetic=with_column(SYN, "a", pd.Timestamp("2020-01-01") + pd.to_timedelta(SYN["a"], "D")))

# a bool column against the strings "True"/"False": never silently unequal
for name in FRAME_SPECS:
    col = "f"
    args = SPECS[name].args
    if name in ("cap", "cap_per_record", "disclosure", "attribute_inference"):
        overrides = dict(keys=["a", "f"])
    elif name == "identification_risk":
        overrides = dict(keys=["a", "f"])
    else:
        overrides = {}
    last = "synthetic" if "synthetic" in SPECS[name].frames else SPECS[name].frames[-1]
    bad = with_column(args[last], col, args[last][col].astype(str))
    case(name, RUE, rf"Column 'f' must hold the same type of values.*bool.*{last}(\[0\])?: text",
         **{last: bad}, **overrides)

# integers in one frame, their text in another (object dtype both times)
for name in ("cap", "exact_copies", "membership_disclosure", "disclosure"):
    args = SPECS[name].args
    objects = {f: with_column(args[f], "a", args[f]["a"].astype(object))
               for f in SPECS[name].frames if f != "synthetic"}
    txt = with_column(args["synthetic"], "a", args["synthetic"]["a"].astype(str))
    case(name, RUE, r"Column 'a' must hold the same type.*number.*text", synthetic=txt,
         **objects)

# the NaN advice of attribute_inference names no option it lacks
case("attribute_inference", RUE, r"`train` has missing values in key/target column\(s\) "
     r"\('c': 1\); attribute_inference has no option for missing values",
     train=with_value(TRAIN, "c", 0, np.nan))

# numeric_bins / bins: 0, negative, float, bool are refused
for name, opt in [("membership_disclosure", "numeric_bins"), ("membership_distances",
                  "numeric_bins"), ("cap", "numeric_bins"), ("cap_per_record", "numeric_bins"),
                  ("hellinger_utility", "bins")]:
    case(name, RUE, rf"`{opt}` must be >= 1, got 0", **{opt: 0})
    case(name, RUE, rf"`{opt}` must be >= 1, got -3", **{opt: -3})
    case(name, TypeError, rf"`{opt}` must be an integer, got 2.5", **{opt: 2.5})
    case(name, TypeError, rf"`{opt}` must be an integer, got True", **{opt: True})

# frames that are not frames, empty, without columns, with duplicated or MultiIndex names
for name in FRAME_SPECS:
    first = SPECS[name].frames[0]
    case(name, TypeError, rf"`{first}` must be a pandas DataFrame, got NoneType",
         **{first: None})
    case(name, TypeError, rf"`{first}` must be a pandas DataFrame, got ndarray",
         **{first: TRAIN.to_numpy()})
    case(name, RUE, rf"`{first}` must have at least one row", **{first: TRAIN.iloc[:0]})
    case(name, RUE, rf"`{first}` has duplicated column names: \['a'\]",
         **{first: pd.concat([TRAIN, TRAIN[["a"]]], axis=1)})
    case(name, RUE, rf"`{first}` must have flat column names, got a MultiIndex",
         **{first: TRAIN.set_axis(pd.MultiIndex.from_product([TRAIN.columns, [0]]), axis=1)})
for name in ("membership_disclosure", "membership_distances", "exact_copies",
             "replicated_uniques", "distance_to_closest_record", "hellinger_utility"):
    first = SPECS[name].frames[0]
    empty = {f: SPECS[name].args[f][[]] for f in SPECS[name].frames}
    case(name, RUE, rf"`{first}` must have at least one column, got none", **empty)
case("identification_risk", TypeError, r"`synthetic` must be a DataFrame or a non-empty list",
     synthetic=None)
case("identification_risk", TypeError, r"`synthetic` must be a DataFrame or a non-empty list",
     synthetic=[])
case("cap", TypeError, r"`synthetic\[1\]` must be a pandas DataFrame", synthetic=[SYN, None])
case("disclosure", TypeError, r"`synthetic` must be a DataFrame or a non-empty list",
     synthetic=SYN.to_numpy())

# column lists: unknown names, bad containers, non-hashable entries
for name, opt in [("membership_disclosure", "keys"), ("cap", "keys"),
                  ("exact_copies", "columns"), ("distance_to_closest_record", "columns"),
                  ("attribute_inference", "keys"), ("identification_risk", "keys")]:
    case(name, RUE, rf"lacks the .*column\(s\) \['zz'\] named by `{opt}`", **{opt: ["zz"]})
    case(name, TypeError, rf"`{opt}` must be a column name or a list of column names, got "
         r"set", **{opt: {"a"}})
    case(name, TypeError, rf"`{opt}` must be a column name or a list.*dict", **{opt: {"a": 1}})
    case(name, TypeError, rf"`{opt}` must list column names, but it holds list \['a'\]",
         **{opt: [["a"]]})
    case(name, RUE, rf"`{opt}` names a column twice", **{opt: ["a", "a"]})
case("membership_disclosure", RUE, r"`keys` must name at least one column",
     keys=[])
case("cap", TypeError, r"`target` must be one column name, got \['t'\]", target=["t"])
case("cap", RUE, r"`target` must not be one of the `keys`", target="a")
case("identification_risk", RUE, r"both a key and synthesized: \['b'\]", keys=["a", "b"])

# choice options: unknown strings
case("cap", RUE, r"`matching` must be one of \('exact', 'nearest'\), got 'closest'",
     matching="closest")
case("cap", RUE, r"`missing` must be one of \('error', 'category'\), got 'drop'",
     missing="drop")
case("cap_per_record", RUE, r"`matching` must be one of", matching=None)
case("identification_risk", RUE, r"`missing` must be one of.*'ignore'", missing="ignore")
case("attribute_inference", RUE, r"`target_type` must be 'numeric' or 'categorical', got "
     r"'binary'", target_type="binary")

# membership_disclosure's options
for kw, error, match in [
    (dict(sampling_fraction=None), RUE, r"Exactly one of `population_size` and "
     r"`sampling_fraction`"),
    (dict(sampling_fraction=None, population_size=10), RUE, r"population_size >= len\(train\) "
     r"\+ len\(holdout\).*population_size=10"),
    (dict(sampling_fraction=None, population_size=1e6), TypeError,
     r"`population_size` must be an integer, got 1000000.0"),
    (dict(sampling_fraction=1.5), RUE, r"`sampling_fraction` must be in \(0, 1\), got 1.5"),
    (dict(sampling_fraction=float("inf")), RUE,
     r"`sampling_fraction` must be in \(0, 1\), got inf"),
    (dict(hamming_threshold=6), RUE, r"0 <= hamming_threshold <= 5.*hamming_threshold=6"),
    (dict(hamming_threshold=0.5), TypeError, r"`hamming_threshold` must be an integer"),
    (dict(attack_size=1), RUE, r"`attack_size` must be >= 2, got 1"),
    (dict(attack_size=10**9), RUE, r"`attack_size`=1000000000 at t=0.3 needs"),
    (dict(repeats=0), RUE, r"`repeats` must be in \[1, 1_000_000\], got 0"),
    (dict(repeats=10**30), RUE, r"`repeats` must be in \[1, 1_000_000\], got 10+"),
    (dict(repeats=5.0), TypeError, r"`repeats` must be an integer, got 5.0"),
    (dict(confidence=1.0), RUE, r"`confidence` must be in \(0, 1\), got 1.0"),
    (dict(random_state=-1), RUE, r"`random_state` must be >= 0, got -1"),
    (dict(random_state=1.5), TypeError, r"`random_state` must be an int or None, got float"),
    (dict(m_threshold=float("inf")), RUE,
     r"`m_threshold` must be < 1 \(M is at most 1\), got inf"),
    (dict(m_threshold="0.2"), TypeError, r"`m_threshold` must be a number, got '0.2'"),
    (dict(min_members=0), RUE, r"`min_members` must be >= 1, got 0"),
]:
    case("membership_disclosure", error, match, **kw)

# cap_per_record's `unmatched`
case("cap_per_record", RUE, r"`unmatched` must be a CAP in \[0, 1\] or NaN.*unmatched=2",
     unmatched=2)
case("cap_per_record", RUE, r"`unmatched` must be a CAP.*unmatched=-inf", unmatched=-np.inf)
case("cap_per_record", TypeError, r"`unmatched` must be a number, got str '0'",
     unmatched="0")
case("cap_per_record", TypeError, r"`unmatched` must be a number, got NoneType",
     unmatched=None)

# disclosure's options
for kw, error, match in [
    (dict(denom_lim=0), RUE, r"`denom_lim` must be >= 1, got 0"),
    (dict(use_target_na=1), TypeError, r"`use_target_na` must be True or False, got 1"),
    (dict(use_keys_na=[True]), RUE, r"`use_keys_na` must have one entry per key"),
    (dict(ngroups_keys=1), RUE, r"`ngroups_keys` must be None, 0.*1 is refused"),
    (dict(ngroups_target=2.5), TypeError, r"`ngroups_target` must be None, 0 or an integer"),
    (dict(thresh_1way=(float("nan"), 90)), RUE, r"`thresh_1way` must be \(count, percent\)"),
    (dict(thresh_2way=(4, 180)), RUE, r"`thresh_2way` must be \(count, percent\).*180"),
    (dict(thresh_1way=(-1, 90)), RUE, r"`thresh_1way` must be \(count, percent\)"),
    (dict(thresh_2way=(float("inf"), 80)), RUE, r"`thresh_2way`.*inf"),
    (dict(thresh_1way=(50,)), TypeError, r"`thresh_1way` must be a pair"),
    (dict(not_targetlev="nope"), RUE, r"`not_targetlev` names the level 'nope'"),
    (dict(exclude_keys=["a"]), RUE, r"`exclude_keys`, `exclude_keylevs` and "
     r"`exclude_targetlevs` must have the same length"),
    (dict(cont_na={"zz": [1]}), RUE, r"`cont_na` names 'zz'"),
    (dict(cont_na=[1]), TypeError, r"`cont_na` must be a mapping"),
]:
    case("disclosure", error, match, **kw)

# exact copies, replicated uniques, DCR
case("replicated_uniques", TypeError, r"`synthetic_unique_only` must be a bool, got 'yes'",
     synthetic_unique_only="yes")
case("exact_copies", TypeError, r"`holdout` must be a pandas DataFrame, got ndarray",
     holdout=HOLD.to_numpy())
case("distance_to_closest_record", TypeError, r"`holdout` must be a pandas DataFrame, got "
     r"NoneType", holdout=None)
case("distance_to_closest_record", RUE, r"`max_synthetic` must be >= 1, got 0", max_synthetic=0)
case("distance_to_closest_record", TypeError, r"`max_synthetic` must be an integer, got "
     r"True", max_synthetic=True)
case("distance_to_closest_record", RUE, r"`confidence` must be in \(0, 1\), got nan",
     confidence=float("nan"))

# attribute inference
case("attribute_inference", TypeError, r"`estimator` must have callable fit and predict "
     r"methods, but str has no fit", estimator="knn")
case("attribute_inference", RUE, r"`tolerance` must be > 0, got -0.1", tolerance=-0.1)
case("attribute_inference", RUE, r"`synthetic` has 2 row\(s\), fewer than the 3 neighbours of "
     r"the default `estimator`", synthetic=SYN.iloc[:2])
case("attribute_inference", RUE, r"`synthetic` column 'b' mixes value types \(int, str\)",
     synthetic=with_value(SYN, "b", 0, 7))
case("attribute_inference", RUE, r"target_type='numeric' needs a numeric `target`",
     target_type="numeric")

# identification risk
for kw, error, match in [
    (dict(radius={"c": np.inf}), RUE, r"`radius` for 'c' must be a finite number > 0, got "
     r"inf"),
    (dict(radius=-1.0), RUE, r"`radius` for 'c' must be a finite number > 0, got -1.0"),
    (dict(radius={"zz": 1.0}), RUE, r"`radius` names column\(s\) \['zz'\]"),
    (dict(relative_radius="yes"), TypeError, r"`relative_radius` must be True or False, got "
     r"'yes'"),
    (dict(relative_radius=1), TypeError, r"`relative_radius` must be True or False, got 1"),
    (dict(synthetic=SYN.iloc[:5]), RUE, r"`synthetic\[0\]` must have one row per training "
     r"record"),
]:
    case("identification_risk", error, match, **kw)

# values that cannot be compared at all, complex numbers
for name in ("membership_disclosure", "exact_copies", "cap", "hellinger_utility"):
    lists = with_column(SPECS[name].args["synthetic"], "b",
                        [[v] for v in SPECS[name].args["synthetic"]["b"]])
    case(name, TypeError, r"`synthetic(\[0\])?` column 'b' holds list values such as \['",
         synthetic=lists)
for name in ("distance_to_closest_record", "identification_risk", "attribute_inference"):
    complex_c = with_column(SPECS[name].args["synthetic"], "c",
                            SPECS[name].args["synthetic"]["c"].astype(complex))
    case(name, TypeError, r"`synthetic(\[0\])?`: Column 'c' holds complex numbers",
         synthetic=complex_c)


def test_battery_is_large():
    assert len(CASES) >= 100


@pytest.mark.parametrize(("name", "overrides", "error", "match"), CASES)
def test_battery_bad_input_is_a_clean_error_naming_the_culprit(name, overrides, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(error) as info:
            call(name, **overrides)
    raised_cleanly(info.value)
    assert re.search(match, str(info.value)), f"{match!r} not in: {info.value}"


# ------------------------------------------------------------------------------ accepted inputs


@pytest.mark.parametrize("number", [np.float32(0.5), np.float64(0.5), np.float16(0.5)])
def test_numpy_scalars_are_accepted_by_the_loss(number):
    res = risk.risk_utility_loss(number, np.float32(0.8), threshold=np.float64(0.2),
                                 floor=np.float32(0.3))
    plain = risk.risk_utility_loss(0.5, 0.8, threshold=0.2, floor=float(np.float32(0.3)))
    assert res.loss == pytest.approx(plain.loss, rel=1e-6)
    assert risk.risk_utility_weight(np.int64(0)) == 1.0
    assert risk.naive_f1(np.float32(0.5)) == pytest.approx(2 / 3, rel=1e-6)
    assert risk.identification_risk(
        TRAIN, SYN, keys=["a"], synthesized=["c"], radius=np.float32(0.5)
    ).radius == (0.5,)


def test_published_floor_is_accepted_at_any_threshold():
    # the tuner passes its configured threshold with the default floor
    for threshold in (0.05, 0.1, 0.2, 0.5, 0.9):
        assert 0.8 <= risk.risk_utility_loss(0.95, 1.0, threshold=threshold).weight <= 1.03
    assert risk.risk_utility_weight(0.21, floor=0.0) == pytest.approx(1 / (1 + math.exp(-0.79)))


def test_numeric_bins_zero_and_negative_are_rejected_everywhere():
    for name in ("membership_disclosure", "membership_distances", "cap", "cap_per_record"):
        for bad in (0, -1):
            with pytest.raises(risk.RiskInputError, match="`numeric_bins` must be >= 1"):
                call(name, numeric_bins=bad)


def test_inference_nan_advice_names_no_missing_option():
    with pytest.raises(risk.RiskInputError) as info:
        call("attribute_inference", synthetic=with_value(SYN, "b", 2, None))
    assert "missing='category'" not in str(info.value)
    assert "'b': 1" in str(info.value) and "impute" in str(info.value)
    # the measures that have the option still name it
    with pytest.raises(risk.RiskInputError, match="missing='category'"):
        call("cap", synthetic=with_value(SYN, "b", 2, None))


def test_bool_column_matches_object_bools_with_missing_values():
    # a bool column read back with a missing value is object dtype: same values, same type
    syn = with_value(SYN, "f", 0, None)
    res = risk.exact_copies(TRAIN, syn, holdout=HOLD)
    ref = risk.exact_copies(TRAIN, SYN.drop(index=0), holdout=HOLD)
    assert res.train_copies == ref.train_copies


def test_integer_column_names_are_accepted_as_labels():
    renamed = [f.set_axis(range(5), axis=1) for f in (TRAIN, HOLD, SYN)]
    got = risk.exact_copies(renamed[0], renamed[2], holdout=renamed[1])
    assert got.train_share == risk.exact_copies(TRAIN, SYN, holdout=HOLD).train_share
    res = risk.cap(renamed[0], renamed[2], keys=np.array([0, 1]), target=np.int64(3),
                   holdout=renamed[1])
    assert res.cap_v1 == pytest.approx(call("cap").cap_v1)
    assert res.keys == (0, 1) and res.target == 3


def test_column_names_from_a_numpy_array_work_with_inference():
    res = risk.attribute_inference(TRAIN, SYN, keys=np.array(["a", "b"]), target="t",
                                   random_state=0)
    assert res.keys == ("a", "b") and all(type(k) is str for k in res.keys)


# ------------------------------------------------------------------------------ hypothesis

_INTS = st.one_of(st.integers(-5, 40), st.sampled_from([10**30, -(10**30), 2**63, 2**64]))
_FLOATS = st.floats(allow_nan=True, allow_infinity=True)
_NAMES = st.sampled_from(["a", "b", "c", "t", "f", "zz", 3, None, b"a"])
ANY_VALUE = st.one_of(
    st.none(), st.booleans(), _INTS, _FLOATS, st.text(max_size=3),
    st.sampled_from([
        "", "x", "zz", "exact", "nearest", "error", "category", "numeric", "categorical",
        [], [1], ("a",), {"a": 1}, {"a"}, (4, 80), (50, 90), (1, 2, 3), [0.5, 1.5],
        np.int64(3), np.float32(0.5), np.bool_(True), np.array(["a"]), np.array([0.2, 0.9]),
        np.uint8(7), object(),
    ]),
    st.lists(_NAMES, max_size=4),
    st.dictionaries(_NAMES.filter(lambda v: v is not None), _FLOATS, max_size=2),
)
OPTIONS: dict[str, dict[str, dict[str, Any]]] = {
    # option name -> other arguments it needs to be tested alone
    "membership_disclosure": {
        "population_size": dict(sampling_fraction=None), "sampling_fraction": {},
        "keys": {}, "hamming_threshold": {}, "attack_size": {}, "repeats": {},
        "numeric_bins": {}, "confidence": {}, "random_state": {}, "m_threshold": {},
        "min_members": {},
    },
    "membership_distances": {"keys": {}, "numeric_bins": {}},
    "cap": {"keys": {}, "target": {}, "matching": {}, "numeric_bins": {}, "missing": {},
            "holdout": {}},
    "cap_per_record": {"keys": {}, "target": {}, "matching": {}, "numeric_bins": {},
                       "missing": {}, "unmatched": {}},
    "disclosure": {
        "keys": {}, "target": {}, "denom_lim": {}, "exclude_ov_denom_lim": {},
        "not_targetlev": {}, "use_target_na": {}, "use_keys_na": {}, "exclude_keys": {},
        "exclude_keylevs": {}, "exclude_targetlevs": {}, "ngroups_target": {},
        "ngroups_keys": {}, "cont_na": {}, "thresh_1way": {}, "thresh_2way": {},
    },
    "exact_copies": {"columns": {}, "holdout": {}},
    "replicated_uniques": {"columns": {}, "synthetic_unique_only": {}},
    "distance_to_closest_record": {"columns": {}, "max_synthetic": {}, "confidence": {},
                                   "random_state": dict(max_synthetic=4)},
    "distances_to_closest_record": {"columns": {}, "holdout": {}},
    "attribute_inference": {"keys": {}, "target": {}, "estimator": {}, "tolerance": {},
                            "target_type": {}, "random_state": {}, "holdout": {}},
    "identification_risk": {"keys": {}, "synthesized": {}, "radius": {},
                            "relative_radius": {}, "missing": {}},
    "hellinger_utility": {"bins": {}},
    "membership_audit": {"fit_sample": {}, "targets": {}, "shadows": {}, "shadow_size": {},
                         "design": {}, "columns": {}, "neighbours": {}, "n_jobs": {},
                         "progress": {}, "random_state": {}},
    "vulnerability": {"reference": {}, "columns": {}, "neighbours": {}},
    "risk_utility_loss": {"m": {}, "utility": {}, "threshold": {}, "floor": {}},
    "risk_utility_weight": {"m": {}, "threshold": {}, "floor": {}},
    "naive_f1": {"sampling_fraction": {}},
    "relative_f1": {"f1": {}, "sampling_fraction": {}},
}
assert set(OPTIONS) == set(SPECS) == {n for n in risk.__all__ if n[0].islower()} - {"column_kind"}


def _culprits(option: str, spec_name: str) -> tuple[str, ...]:
    names = [option]
    if option == "holdout":  # a holdout is compared with the other frames by name
        names.append("holdout")
    if spec_name == "identification_risk" and option in ("keys", "synthesized"):
        names += ["keys", "synthesized"]  # the overlap and radius checks name both
    if option in ("keys", "target"):
        names += ["keys", "target"]
    return tuple(names)


@settings(max_examples=examples(400), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_any_option_value_is_a_clean_error_or_a_valid_result(data):
    name = data.draw(st.sampled_from(sorted(OPTIONS)), label="function")
    option = data.draw(st.sampled_from(sorted(OPTIONS[name])), label="option")
    value = data.draw(ANY_VALUE, label="value")
    args = SPECS[name].args | OPTIONS[name][option] | {option: value}
    run_and_check(name, args, *_culprits(option, name))


def _numeric(series: pd.Series) -> pd.Series:
    return pd.Series(pd.factorize(series)[0], index=series.index).astype(float)


COLUMN_DAMAGE: dict[str, Callable[[pd.DataFrame, str], Any]] = {
    "drop": lambda f, c: f.drop(columns=c),
    "duplicate": lambda f, c: pd.concat([f, f[[c]]], axis=1),
    "all_nan": lambda f, c: with_column(f, c, np.nan),
    "all_none": lambda f, c: with_column(f, c, pd.Series([None] * len(f), dtype=object)),
    "some_missing": lambda f, c: with_value(with_value(f, c, 0, np.nan), c, 1, None),
    "inf": lambda f, c: with_value(with_column(f, c, _numeric(f[c])), c, 0, np.inf),
    "minus_inf": lambda f, c: with_value(with_column(f, c, _numeric(f[c])), c, 2, -np.inf),
    "inf_in_text": lambda f, c: with_value(f, c, 0, np.inf),
    "as_text": lambda f, c: with_column(f, c, f[c].astype(str)),
    "as_object_ints": lambda f, c: with_column(f, c, pd.factorize(f[c])[0].astype(object)),
    "mixed_types": lambda f, c: with_column(
        f, c, [str(v) if i % 2 else v for i, v in enumerate(f[c])]),
    "as_bool": lambda f, c: with_column(f, c, pd.factorize(f[c])[0] % 2 == 0),
    "as_category": lambda f, c: with_column(f, c, f[c].astype("category")),
    "as_string_dtype": lambda f, c: with_column(f, c, f[c].astype(str).astype("string")),
    "as_nullable": lambda f, c: with_column(f, c, pd.array(pd.factorize(f[c])[0], "Int64")),
    "as_datetime": lambda f, c: with_column(
        f, c, pd.Timestamp("2020-01-01") + pd.to_timedelta(pd.factorize(f[c])[0], "D")),
    "as_timedelta": lambda f, c: with_column(f, c, pd.to_timedelta(_numeric(f[c]), "D")),
    "lists": lambda f, c: with_column(f, c, [[v] for v in f[c]]),
    "complex": lambda f, c: with_column(f, c, _numeric(f[c]).astype(complex)),
    "constant": lambda f, c: with_column(f, c, f[c].iloc[0]),
    "large_values": lambda f, c: with_column(f, c, _numeric(f[c]) * 1e140),
    "huge_values": lambda f, c: with_column(
        f, c, np.where(np.arange(len(f)) % 2, 1.5e308, -1.5e308)),
    "negative_zero": lambda f, c: with_column(f, c, -_numeric(f[c]) * 0.0),
}
FRAME_DAMAGE: dict[str, Callable[[pd.DataFrame], Any]] = {
    "none": lambda f: None,
    "ndarray": lambda f: f.to_numpy(),
    "series": lambda f: f.iloc[:, 0],
    "records": lambda f: f.to_dict("records"),
    "dict_of_lists": lambda f: f.to_dict("list"),
    "no_rows": lambda f: f.iloc[:0],
    "no_columns": lambda f: f[[]],
    "one_row": lambda f: f.iloc[:1],
    "three_rows": lambda f: f.iloc[:3],
    "integer_names": lambda f: f.set_axis(range(f.shape[1]), axis=1),
    "multiindex": lambda f: f.set_axis(pd.MultiIndex.from_product([f.columns, [0]]), axis=1),
    "shuffled": lambda f: f.sample(frac=1.0, random_state=0),
    "reordered_columns": lambda f: f[f.columns[::-1]],
    "string_index": lambda f: f.set_axis([f"r{i}" for i in range(len(f))], axis=0),
}


@settings(max_examples=examples(400), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_any_malformed_frame_is_a_clean_error_or_a_valid_result(data):
    name = data.draw(st.sampled_from(FRAME_SPECS), label="function")
    spec = SPECS[name]
    which = data.draw(st.sampled_from(spec.frames), label="frame")
    frame = spec.args[which]
    if data.draw(st.booleans(), label="whole frame"):
        damage = data.draw(st.sampled_from(sorted(FRAME_DAMAGE)), label="damage")
        bad = FRAME_DAMAGE[damage](frame)
    else:
        damage = data.draw(st.sampled_from(sorted(COLUMN_DAMAGE)), label="damage")
        col = data.draw(st.sampled_from(list(frame.columns)), label="column")
        bad = COLUMN_DAMAGE[damage](frame, col)
    args = spec.args | {which: bad}
    # an error must name the damaged frame (or, comparing frames, every frame by name)
    run_and_check(name, args, which)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=_FLOATS, utility=_FLOATS, threshold=_FLOATS, floor=_FLOATS)
def test_loss_is_finite_and_a_discount_or_an_error(m, utility, threshold, floor):
    args = dict(m=m, utility=utility, threshold=threshold, floor=floor)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            res = risk.risk_utility_loss(**args)
        except risk.RiskInputError as err:
            assert_clean_error(err, "`m", "utility", "threshold", "floor")
            return
    assert math.isfinite(res.loss) and res.loss == pytest.approx(-res.weight * res.utility)
    assert 0.0 < res.weight <= _largest_weight(threshold)
    continuous = 1.0 - 1.0 / (1.0 + math.exp(threshold - 1.0))
    if floor <= continuous:  # a discount, never a reward for disclosure
        assert res.weight <= 1.0 + 1e-12
