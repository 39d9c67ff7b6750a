"""Utility measures the search never saw, scored on the holdout: TSTR AUC and correlation error.

The tuner's U (SDMetrics' Quality Report by default) compares the synthetic data with the
*training* records, and every method of the benchmark searches on it. A method could win by
overfitting that one number, so each chosen release is also judged on two measures that are
computed against the *holdout* (records no generator saw) and by other means:

* **TSTR AUC**: a gradient-boosting classifier (scikit-learn's ``HistGradientBoostingClassifier``,
  fixed seed, one thread) trained on the synthetic data predicts a binary target for the
  holdout records; the ROC AUC of its scores. The same model trained on the real training
  records gives the reference (TRTR). A synthetic set whose target takes one value trains no
  classifier: its AUC is 0.5 (a constant score), said in the result.
* **Correlation error**: the mean, over every pair of columns, of the absolute difference
  between the pair's association in the synthetic data and in the holdout. Association is
  Spearman's rho for two numeric columns, Cramer's V for two categorical ones and the
  correlation ratio (eta, on ranks) for a numeric and a categorical one; a missing value is a
  category of its own, or left out of a numeric pair. 0 is a perfect match; SDMetrics' pair
  trends, inside U, use other statistics (contingency similarity, Pearson) on the training data.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

from tuner.data import sdtype

MODEL_SEED = 0


@dataclasses.dataclass(frozen=True)
class Target:
    """The TSTR target: ``column`` is positive where it equals ``positive``, or, with
    ``above_median``, where it exceeds the median of the real training records (a numeric
    column made binary; the threshold comes from real data, never from the synthetic)."""

    column: str
    positive: object = None
    above_median: bool = False

    def __post_init__(self) -> None:
        if (self.positive is None) == (not self.above_median):
            raise ValueError(f"target {self.column!r}: give exactly one of `positive` and "
                             f"`above_median`, got positive={self.positive!r}, "
                             f"above_median={self.above_median}")

    def labels(self, frame: pd.DataFrame, train: pd.DataFrame) -> np.ndarray:
        values = frame[self.column]
        if self.above_median:
            threshold = float(pd.to_numeric(train[self.column]).median())
            return (pd.to_numeric(values, errors="coerce") > threshold).to_numpy()
        return (values.astype(str) == str(self.positive)).to_numpy()


def _features(frame: pd.DataFrame, train: pd.DataFrame, target: str,
              categories: dict[str, list[str]]) -> np.ndarray:
    """Numeric columns as floats; categorical ones as codes of the real data's categories (a
    category the real data lack, or a missing value, is NaN: the model's missing branch)."""
    cols = []
    for col in train.columns:
        if col == target:
            continue
        if col in categories:
            codes = pd.Categorical(frame[col].astype(str), categories=categories[col]).codes
            cols.append(np.where(codes < 0, np.nan, codes).astype(float))
        else:
            cols.append(pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float))
    return np.column_stack(cols)


def tstr_auc(fit_on: pd.DataFrame, train: pd.DataFrame, holdout: pd.DataFrame,
             target: Target) -> tuple[float, str]:
    """AUC on ``holdout`` of a classifier fitted on ``fit_on`` (synthetic or real training
    data); ``train`` (the real training records) fixes the encoding and a median threshold.
    Returns the AUC and a note (empty, or why the score is 0.5)."""
    y_fit = target.labels(fit_on, train)
    y_test = target.labels(holdout, train)
    if len(set(y_test)) < 2:
        raise ValueError(f"the holdout's target {target.column!r} takes one value: no AUC")
    if len(set(y_fit)) < 2:
        return 0.5, f"the data's target {target.column!r} takes one value"
    categorical = [c for c in train.columns if c != target.column
                   and sdtype(train[c]) != "numerical"]
    categories = {c: sorted(set(train[c].astype(str)) | set(holdout[c].astype(str)))
                  for c in categorical}
    mask = [c in categories for c in train.columns if c != target.column]
    model = HistGradientBoostingClassifier(random_state=MODEL_SEED, categorical_features=mask)
    # one OpenMP thread: with other jobs on the cores, more made the fit minutes long
    with threadpool_limits(limits=1, user_api="openmp"):
        model.fit(_features(fit_on, train, target.column, categories), y_fit)
        scores = model.predict_proba(_features(holdout, train, target.column,
                                               categories))[:, 1]
    return float(roc_auc_score(y_test, scores)), ""


def _cramers_v(a: pd.Series, b: pd.Series) -> float:
    table = pd.crosstab(a, b).to_numpy(dtype=float)
    n = table.sum()
    if n == 0 or min(table.shape) < 2:
        return 0.0
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / n
    chi2 = float(((table - expected) ** 2 / expected).sum())
    return math.sqrt(chi2 / (n * (min(table.shape) - 1)))


def _eta(categories: pd.Series, values: pd.Series) -> float:
    """Correlation ratio of ``values`` (ranked) on ``categories``."""
    keep = values.notna()
    ranks = values[keep].rank()
    if len(ranks) < 2 or ranks.var(ddof=0) == 0:
        return 0.0
    groups = ranks.groupby(categories[keep].to_numpy())
    between = float((groups.size() * (groups.mean() - ranks.mean()) ** 2).sum())
    return math.sqrt(between / (ranks.var(ddof=0) * len(ranks)))


def _spearman(a: pd.Series, b: pd.Series) -> float:
    keep = a.notna() & b.notna()
    if keep.sum() < 2 or a[keep].nunique() < 2 or b[keep].nunique() < 2:
        return 0.0
    return float(a[keep].rank().corr(b[keep].rank()))


def associations(frame: pd.DataFrame, numeric: set[str]) -> dict[tuple[str, str], float]:
    """The association of every pair of columns (see the module docstring)."""
    cats = {c: frame[c].astype(str) for c in frame.columns if c not in numeric}
    nums = {c: pd.to_numeric(frame[c], errors="coerce") for c in numeric}
    out = {}
    for a, b in itertools.combinations(frame.columns, 2):
        if a in nums and b in nums:
            out[(a, b)] = _spearman(nums[a], nums[b])
        elif a in cats and b in cats:
            out[(a, b)] = _cramers_v(cats[a], cats[b])
        else:
            cat, num = (cats[a], nums[b]) if a in cats else (cats[b], nums[a])
            out[(a, b)] = _eta(cat, num)
    return out


def correlation_error(synthetic: pd.DataFrame, holdout: pd.DataFrame,
                      train: pd.DataFrame) -> float:
    """Mean absolute difference of pairwise associations, synthetic against holdout (column
    kinds read from the real training records, as the tuner reads them)."""
    numeric = {c for c in train.columns if sdtype(train[c]) == "numerical"}
    real = associations(holdout[list(train.columns)], numeric)
    syn = associations(synthetic[list(train.columns)], numeric)
    return float(np.mean([abs(real[k] - syn[k]) for k in real]))


@dataclasses.dataclass(frozen=True)
class Unseen:
    """The unseen measures of one synthetic data set."""

    tstr_auc: float
    correlation_error: float
    note: str = ""


def unseen(synthetic: pd.DataFrame, train: pd.DataFrame, holdout: pd.DataFrame,
           target: Target) -> Unseen:
    auc, note = tstr_auc(synthetic, train, holdout, target)
    return Unseen(auc, correlation_error(synthetic, holdout, train), note)
