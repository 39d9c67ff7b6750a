"""Utility U in [0, 1], higher is better (design §7)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.metrics import f1_score, r2_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

import risk
from tuner.data import metadata_for, sdtype
from tuner.scoring._quality import QualityReport, supports


def _quality(train: pd.DataFrame, synthetic: pd.DataFrame) -> Any:
    """SDMetrics' Quality Report, generated on one table.

    The unified ``sdmetrics.reports.QualityReport`` (its single-table predecessor is deprecated)
    takes ``{name: frame}`` and ``{"tables": {name: columns}}``; on one table it scores exactly
    as that predecessor did (``tests/tuner/scoring/test_utility.py`` compares them while both
    exist), and its details carry a leading ``Table`` column."""
    from sdmetrics.reports import QualityReport as SDMetricsQualityReport

    meta = metadata_for(train).to_dict()
    (name,) = meta["tables"]
    report = SDMetricsQualityReport()
    report.generate({name: train}, {name: synthetic}, meta, verbose=False)
    return report


_PREPARED: dict[tuple[Any, ...], QualityReport] = {}


def _prepared(train: pd.DataFrame, sdtypes: dict[str, str]) -> QualityReport:
    """The report prepared on ``real``, kept for the next trials of the study (a few tables at
    most, keyed by the data's content and sdtypes)."""
    key = (int(pd.util.hash_pandas_object(train, index=False).sum()), train.shape,
           tuple(sdtypes.items()))
    if key not in _PREPARED:
        if len(_PREPARED) >= 4:
            _PREPARED.pop(next(iter(_PREPARED)))
        _PREPARED[key] = QualityReport(train, sdtypes)
    return _PREPARED[key]


def quality_report(train: pd.DataFrame, synthetic: pd.DataFrame) -> float:
    """SDMetrics' Quality Report overall score on one table (column shapes and pair trends).

    Computed by :mod:`tuner.scoring._quality` (the same number, faster once the real table is
    prepared: ``docs/usage.md``); by SDMetrics itself where a column is a datetime."""
    sdtypes = {str(c): sdtype(train[c]) for c in train.columns}
    if not supports(sdtypes) or list(sdtypes) != list(train.columns):
        return float(_quality(train, synthetic).get_score())
    return _prepared(train, sdtypes).score(synthetic[list(train.columns)]).score


def quality_breakdown(train: pd.DataFrame, synthetic: pd.DataFrame) -> dict[str, Any]:
    """The Quality Report's score, its two properties, each column's shape score and each
    column pair's trend score (scores only: no value of the data)."""
    report = _quality(train, synthetic)
    props = report.get_properties()
    shapes = report.get_details("Column Shapes")
    pairs = report.get_details("Column Pair Trends")
    return {
        "score": float(report.get_score()),
        "properties": {str(r.Property): float(r.Score) for r in props.itertuples()},
        "columns": {str(r.Column): float(r.Score) for r in shapes.itertuples()},
        # SDMetrics leaves a pair's score NaN where its metric does not apply: left out
        "pairs": {f"{a} ~ {b}": float(sc) for a, b, sc in
                  zip(pairs["Column 1"], pairs["Column 2"], pairs["Score"], strict=True)
                  if np.isfinite(sc)},
    }


def hellinger(train: pd.DataFrame, synthetic: pd.DataFrame, *, bins: int = 20) -> float:
    """``1 - H``, H the Hellinger distance of the joint distributions.

    See :func:`risk.hellinger_utility`."""
    return risk.hellinger_utility(train, synthetic, bins=bins)


def efficacy(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame, *,
             target: str, seed: int) -> float:
    """Train-on-synthetic/test-on-real score over train-on-real, clipped to [0, 1].

    A random forest (seeded) predicts ``target`` from every other column; score is macro F1
    for a categorical target and R^2 for a numeric one, both measured on ``holdout``.
    """
    features = [c for c in train.columns if c != target]
    categorical = [c for c in features if sdtype(train[c]) != "numerical"]
    numeric_target = sdtype(train[target]) == "numerical"

    def model() -> Pipeline:
        prep = ColumnTransformer(
            [("cat", OneHotEncoder(handle_unknown="ignore"), categorical)],
            remainder="passthrough",
        )
        est = (RandomForestRegressor if numeric_target else RandomForestClassifier)(
            n_estimators=100, random_state=seed, n_jobs=1
        )
        return Pipeline([("prep", prep), ("model", est)])

    def as_model_input(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
        x = frame[features].astype({c: str for c in categorical})
        y = frame[target] if numeric_target else frame[target].astype(str)
        return x, y

    x_test, y_test = as_model_input(holdout)

    def score_trained_on(frame: pd.DataFrame) -> float:
        pred = model().fit(*as_model_input(frame)).predict(x_test)
        if numeric_target:
            return float(r2_score(y_test, pred))
        return float(f1_score(y_test, np.asarray(pred).astype(str), average="macro"))

    real_score = score_trained_on(train)
    if real_score <= 0:
        return 0.0
    return float(np.clip(score_trained_on(synthetic) / real_score, 0.0, 1.0))


__all__ = ["efficacy", "hellinger", "quality_breakdown", "quality_report"]
