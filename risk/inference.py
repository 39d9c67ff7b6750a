"""Attribute disclosure by machine-learning inference.

Attacker: trains a model on the synthetic data to predict a sensitive *target* from *key*
variables they know about a person, then applies it to real records. References: J. Hu, Data
Confidentiality course (Vassar College), attribute-risk lectures; Synthesized's
``AttributeInferenceAttackML`` (synthesized-io/insight); contract design §5.

* Categorical target: accuracy on the real records. Baseline: always guessing the synthetic
  data's majority class (all an intruder without keys can learn from the release).
* Numeric target: mean squared error, per-record relative absolute error ``|pred - y| / |y|``,
  and the share of records predicted within ``tolerance`` of the *true* value
  (``|pred - y| <= tolerance * |y|``; Synthesized divides by the guess instead, which rewards
  large guesses; here the true value is the yardstick). Baseline: guessing the synthetic mean.
* Before/after: the same estimator trained on the original records themselves (the risk of
  releasing the real data); the share of records the synthetic-trained attack gets *less*
  accurately than the original-trained one.
* Holdout: the same synthetic-trained attack on real records that were not used for training;
  the difference ``risk - holdout_risk`` is what membership adds.

Features: numeric keys are standardised, others one-hot encoded (unknown categories ignored), in
a scikit-learn pipeline fitted on the synthetic data. The default estimator is k-nearest
neighbours with k = 3 (classifier or regressor by the target's dtype), Euclidean on those
features, computed exactly over distinct key combinations by :mod:`risk._knn` (scikit-learn's
``KNeighborsClassifier``/``Regressor`` wherever no two records are equidistant; at equal
distance the earlier record of the seeded shuffle is the nearer, where scikit-learn's rounding
could pick either); any object with ``fit`` and ``predict`` is accepted and cloned, so the
caller's object is never fitted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from risk._arguments import argument, takes
from risk._knn import ExactKNN
from risk._result import Interval, Result, newcombe_interval
from risk._validation import (
    RiskInputError,
    check_column_list,
    check_column_name,
    check_columns,
    check_frame,
    check_no_missing,
    column_kinds,
    resolve_seed,
)


@dataclasses.dataclass(frozen=True)
class InferenceResult(Result):
    """Outcome of :func:`attribute_inference`.

    ``risk`` is the headline: accuracy (categorical target) or the share within tolerance
    (numeric target) on the training records; ``protection = 1 - risk``. ``risk_train_model``
    is the same attack trained on the training data, ``baseline`` the keyless guess.
    Numeric-only fields are ``None`` for categorical targets. With a holdout, ``difference =
    risk - holdout_risk`` and ``difference_interval`` its Newcombe (1998) interval, the two
    shares taken as independent proportions over the original and holdout records.
    """

    target_type: str
    risk: float
    protection: float
    baseline: float
    risk_train_model: float
    less_accurate_share: float
    holdout_risk: float | None
    difference: float | None
    mse: float | None
    mse_train_model: float | None
    median_relative_error: float | None
    tolerance: float | None
    zero_targets: int
    n_train: int
    n_synthetic: int
    n_holdout: int | None
    keys: tuple[str, ...]
    target: str
    estimator: str
    random_state: int
    difference_interval: Interval | None = None



CODED_CATEGORY_LIMIT = 20
DEFAULT_NEIGHBOURS = 3
_NO_MISSING = (
    "attribute_inference has no option for missing values (the estimator needs complete "
    "records): impute them or drop those records first"
)


def _check_categorical_types(frames: dict[str, pd.DataFrame], columns: list[str]) -> None:
    """scikit-learn's encoders need one type per categorical column: refuse a mixture (e.g.
    strings and integers), naming the frame and the column."""
    for col in columns:
        for name, frame in frames.items():
            series = frame[col]
            if pd.api.types.is_bool_dtype(series) or isinstance(series.dtype, pd.CategoricalDtype):
                continue
            inferred = pd.api.types.infer_dtype(series, skipna=True)
            if inferred.startswith("mixed") and inferred != "mixed-integer-float":
                types = sorted({type(v).__name__ for v in series.dropna().to_numpy()})
                raise RiskInputError(
                    f"`{name}` column {col!r} mixes value types ({', '.join(types)}); the "
                    "estimator's encoders need one type per column: convert it (e.g. "
                    ".astype(str)) in every frame."
                )


def _is_numeric(frames: dict[str, pd.DataFrame], col: str, kind: str) -> bool:
    """Numeric dtype, except integer codes with at most 20 distinct values (categories)."""
    if kind != "numeric":
        return False
    if all(pd.api.types.is_float_dtype(f[col]) for f in frames.values()):
        return True
    distinct = pd.concat([f[col] for f in frames.values()]).nunique()
    return bool(distinct > CODED_CATEGORY_LIMIT)


def _features(keys: list[str], numeric_keys: set[str]) -> ColumnTransformer:
    numeric = [k for k in keys if k in numeric_keys]
    other = [k for k in keys if k not in numeric_keys]
    parts: list[tuple[str, Any, list[str]]] = []
    if numeric:
        parts.append(("numeric", StandardScaler(), numeric))
    if other:
        # dense: brute-force k-NN on dense one-hot codes is ~5x faster than on sparse ones
        parts.append(("categorical",
                      OneHotEncoder(handle_unknown="ignore", sparse_output=False), other))
    return ColumnTransformer(parts)


def _estimator(estimator: Any, numeric_target: bool) -> Any:
    if estimator is None:
        if numeric_target:
            return KNeighborsRegressor(n_neighbors=DEFAULT_NEIGHBOURS)
        return KNeighborsClassifier(n_neighbors=DEFAULT_NEIGHBOURS)
    for method in ("fit", "predict"):
        if not callable(getattr(estimator, method, None)):
            raise TypeError(
                f"`estimator` must have callable fit and predict methods, but "
                f"{type(estimator).__name__} has no {method}()."
            )
    try:
        return clone(estimator)
    except TypeError:
        import copy

        return copy.deepcopy(estimator)


def _fit_predict(
    model: Any, train: pd.DataFrame, keys: list[str], target: str, seed: int,
    *queries: pd.DataFrame,
) -> list[np.ndarray]:
    # k-NN breaks ties among equidistant records (common with categorical keys) by their row
    # order. Sorting by content removes the input order (identical rows are interchangeable);
    # a seeded shuffle then interleaves the targets within each key cell, so the k tied
    # neighbours are a random draw from the cell, not a block of one target value.
    content = pd.util.hash_pandas_object(train[[*keys, target]], index=False).to_numpy()
    canonical = np.argsort(content, kind="stable")
    train = train.iloc[canonical[np.random.default_rng(seed).permutation(len(canonical))]]
    model.fit(train[keys], train[target])
    # predict once per distinct key combination over all queries: records with the same keys
    # get the same prediction from a fitted estimator, and real data repeat keys a lot
    stacked = pd.concat([q[keys] for q in queries], ignore_index=True)
    codes = stacked.groupby(list(keys), dropna=False, sort=False,
                            observed=True).ngroup().to_numpy()
    first = np.unique(codes, return_index=True)[1]
    distinct = np.asarray(model.predict(stacked.iloc[first]))
    predictions = distinct[codes]
    return np.split(predictions, np.cumsum([len(q) for q in queries])[:-1])


# The attack trained on the original answers the same for every synthetic data set of a study:
# a tuner scoring many trials against one training split recomputes it only when the split,
# keys, target, encoding or seed change (a few recent entries, read-only arrays).
_ORIGINAL_MODEL_CACHE: dict[tuple[Any, ...], np.ndarray] = {}
_CACHE_ENTRIES = 8


def _content_hash(frame: pd.DataFrame) -> tuple[int, int, tuple[str, ...]]:
    """Order-sensitive fingerprint of a frame's values (and shape and dtypes)."""
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    weights = np.arange(1, hashed.size + 1, dtype=np.uint64)
    return (int((hashed * weights).sum()), len(frame),
            tuple(f"{c}:{t}" for c, t in frame.dtypes.astype(str).items()))


def _remember(key: tuple[Any, ...], predictions: np.ndarray) -> None:
    while len(_ORIGINAL_MODEL_CACHE) >= _CACHE_ENTRIES:
        _ORIGINAL_MODEL_CACHE.pop(next(iter(_ORIGINAL_MODEL_CACHE)))
    predictions.setflags(write=False)
    _ORIGINAL_MODEL_CACHE[key] = predictions


def _numeric_scores(y: np.ndarray, pred: np.ndarray, tol: float) -> tuple[float, np.ndarray]:
    err = np.abs(pred.astype(float) - y)
    within = err <= tol * np.abs(y)
    return float(np.mean((pred.astype(float) - y) ** 2)), within


@takes("tolerance")
def attribute_inference(
    train: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    keys: Sequence[str] | str,
    target: str,
    estimator: Any = None,
    holdout: pd.DataFrame | None = None,
    tolerance: float = 0.1,
    target_type: str | None = None,
    random_state: int | None = None,
) -> InferenceResult:
    """ML attribute-inference risk of ``synthetic`` for ``train`` (design §5).

    Parameters
    ----------
    train, synthetic:
        The real records under attack (the generator's training data) and the release.
    keys, target:
        Known predictors and the sensitive attribute; the target may not be a key.
    estimator:
        Any object with ``fit``/``predict`` (cloned before use); default 3-nearest neighbours.
    holdout:
        Real records the generator never saw: the same attack on them is the baseline that
        membership adds to.
    tolerance:
        Numeric targets: a prediction counts as correct within ``tolerance * |true value|``.
    target_type:
        ``"categorical"`` or ``"numeric"``. By default float columns are numeric, and integer
        columns too unless they hold at most 20 distinct values (integer-coded categories, as
        in survey files); the same rule decides which keys are scaled and which one-hot encoded.
    random_state:
        Seed of the shuffle that breaks ties between equidistant training records (below); the
        seed used is recorded in the result. It does not seed ``estimator`` itself: give a
        random estimator its own ``random_state``.

    Notes
    -----
    Missing values in keys or target are refused with a count per column (impute first; there
    is no ``missing`` option here). So are infinite values, categorical columns that mix value
    types (scikit-learn's encoders cannot sort them), and, for the default estimator, fewer than
    3 records in ``synthetic`` or ``train`` (k-NN needs k of them).
    Categorical keys make many records equidistant; k-NN breaks such ties by training-row order,
    so each estimator is fitted on its rows sorted by content and then shuffled with
    ``random_state``: ties are broken at random, and for a given seed the result does not
    depend on how the frames are sorted.

    The default attack's predictions from the model trained on ``train`` are kept for reuse
    (a few recent ones, keyed by the content of ``train``'s keys and target, the encoding and
    the seed): a tuner scoring many synthetic data sets against one training split fits that
    model once (design §5's ``risk_train_model``; same numbers as a fresh fit).
    """
    key_list = check_column_list(keys, "keys")
    target = check_column_name(target, "target")
    if target in key_list:
        raise RiskInputError(
            f"`target` must not be one of the `keys`, got target={target!r} and "
            f"keys={key_list!r}."
        )
    tol = float(argument(tolerance, "tolerance"))
    frames = {"train": train, "synthetic": synthetic}
    if holdout is not None:
        frames["holdout"] = holdout
    cols = [*key_list, target]
    for name, frame in frames.items():
        check_frame(frame, name)
        check_columns(frame, name, cols, "key/target")
        check_no_missing(frame, name, cols, "key/target", advice=_NO_MISSING)
    kinds = column_kinds(frames, cols)
    _check_categorical_types(frames, [c for c in cols if kinds[c] == "categorical"])
    if estimator is None:
        for name in ("synthetic", "train"):
            if len(frames[name]) < DEFAULT_NEIGHBOURS:
                raise RiskInputError(
                    f"`{name}` has {len(frames[name])} row(s), fewer than the "
                    f"{DEFAULT_NEIGHBOURS} neighbours of the default `estimator` (k-NN, k = "
                    f"{DEFAULT_NEIGHBOURS}), which is trained on it; pass an `estimator` that "
                    "fits on so few records."
                )
    numeric_keys = {k for k in key_list if _is_numeric(frames, k, kinds[k])}
    if target_type is None:
        target_type = "numeric" if _is_numeric(frames, target, kinds[target]) else "categorical"
    if not isinstance(target_type, str) or target_type not in ("numeric", "categorical"):
        raise RiskInputError(
            f"`target_type` must be 'numeric' or 'categorical', got {target_type!r}."
        )
    numeric = target_type == "numeric"
    if numeric and kinds[target] != "numeric":
        raise RiskInputError(f"target_type='numeric' needs a numeric `target`, {target!r} is not.")
    est = _estimator(estimator, numeric)
    seed = resolve_seed(random_state)

    def pipeline() -> Any:
        if estimator is None:  # the default k-NN, computed exactly (risk._knn)
            return ExactKNN(_features(key_list, numeric_keys),
                            [k for k in key_list if k in numeric_keys],
                            [k for k in key_list if k not in numeric_keys],
                            n_neighbors=DEFAULT_NEIGHBOURS, regression=numeric)
        return Pipeline([("features", _features(key_list, numeric_keys)), ("model", clone(est))])

    queries = [train] + ([holdout] if holdout is not None else [])
    preds = _fit_predict(pipeline(), synthetic, key_list, target, seed, *queries)
    cache_key = None
    if estimator is None:  # the default k-NN is deterministic: its answer can be reused
        cache_key = (_content_hash(train[cols]), tuple(key_list), target, target_type,
                     tuple(sorted(numeric_keys)), seed)
    pred_orig_model = _ORIGINAL_MODEL_CACHE.get(cache_key) if cache_key else None
    if pred_orig_model is None:
        (pred_orig_model,) = _fit_predict(pipeline(), train, key_list, target, seed, train)
        if cache_key:
            _remember(cache_key, pred_orig_model)
    y = train[target].to_numpy()

    if numeric:
        y = y.astype(float)
        mse, within = _numeric_scores(y, preds[0], tol)
        mse_o, within_o = _numeric_scores(y, pred_orig_model, tol)
        err_syn = np.abs(preds[0].astype(float) - y)
        err_orig = np.abs(pred_orig_model.astype(float) - y)
        nonzero = y != 0
        rel = err_syn[nonzero] / np.abs(y[nonzero])
        risk, risk_o = float(within.mean()), float(within_o.mean())
        guess = float(synthetic[target].astype(float).mean())
        baseline = float(np.mean(np.abs(guess - y) <= tol * np.abs(y)))
        holdout_risk = None
        if holdout is not None:
            yh = holdout[target].to_numpy(dtype=float)
            holdout_risk = float(np.mean(np.abs(preds[1].astype(float) - yh) <= tol * np.abs(yh)))
        extra: dict[str, Any] = dict(
            mse=mse,
            mse_train_model=mse_o,
            median_relative_error=float(np.median(rel)) if rel.size else None,
            tolerance=tol,
            zero_targets=int((~nonzero).sum()),
        )
    else:
        correct = preds[0] == y
        correct_o = pred_orig_model == y
        err_syn, err_orig = (~correct).astype(float), (~correct_o).astype(float)
        risk, risk_o = float(correct.mean()), float(correct_o.mean())
        # the most frequent class, the first to appear in the synthetic data on a tie (the same
        # for text and categorical columns)
        codes, classes = pd.factorize(synthetic[target].to_numpy(dtype=object))
        majority = classes[np.bincount(codes).argmax()]
        baseline = float(np.mean(y == majority))
        holdout_risk = None
        if holdout is not None:
            holdout_risk = float(np.mean(preds[1] == holdout[target].to_numpy()))
        extra = dict(
            mse=None, mse_train_model=None, median_relative_error=None, tolerance=None,
            zero_targets=0,
        )
    return InferenceResult(
        target_type=target_type,
        risk=risk,
        protection=1.0 - risk,
        baseline=baseline,
        risk_train_model=risk_o,
        less_accurate_share=float(np.mean(err_syn > err_orig)),
        holdout_risk=holdout_risk,
        difference=None if holdout_risk is None else risk - holdout_risk,
        difference_interval=None if holdout_risk is None or holdout is None else
        newcombe_interval(risk, len(train), holdout_risk, len(holdout)),
        n_train=len(train),
        n_synthetic=len(synthetic),
        n_holdout=None if holdout is None else len(holdout),
        keys=tuple(key_list),
        target=target,
        estimator=type(est).__name__,
        random_state=seed,
        **extra,
    )
