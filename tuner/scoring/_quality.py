"""SDMetrics' single-table Quality Report, computed with array operations (issue 13).

The report (SDMetrics 0.32, ``sdmetrics.reports.QualityReport`` on one table, which scores exactly
as the deprecated ``sdmetrics.reports.single_table.QualityReport`` it replaces) is the mean of two
properties, each the mean of per-column or per-pair scores:

* **Column Shapes**: ``1 - D`` (KSComplement: D the two-sample Kolmogorov-Smirnov statistic on
  the non-missing values rounded to 14 decimals) for numerical columns; ``1 - TV`` (TVComplement:
  total variation distance of the non-missing category frequencies, with SDMetrics' 1e-6 count
  for a category only the synthetic data have) for categorical and boolean columns.
* **Column Pair Trends**: for two numerical columns ``1 - |r_real - r_syn| / 2`` (Pearson r on
  the rows where both are present); for every other pair ``1 - TV`` of the joint frequencies
  (ContingencySimilarity, missing values a category of their own), a numerical partner first
  cut into ``np.histogram_bin_edges``' 10 bins of *its own* data set, as SDMetrics does (the
  real and the synthetic column are binned on different edges). A pair counts only where the
  real data's association exceeds SDMetrics' default thresholds (|r| > 0.5 for two numerical
  columns, Cramer's V > 0.3 otherwise: ``sdmetrics.reports.utils``); a pair below them, or whose
  score is undefined (a constant column, no rows), is left out of the mean, as the report
  leaves it out.

SDMetrics loops over columns and pairs with pandas group-bys (its time beside ours:
``docs/usage.md``); here every column is coded to integers once and each pair is one
``np.bincount``. The scores
equal SDMetrics' to rounding (``tests/tuner/scoring/test_quality.py`` checks it on the shared
data sets and on random frames). One deliberate difference: above 50,000 rows SDMetrics scores each
contingency pair on an *unseeded* random subsample of 50,000 rows, so its score changes from call
to call; this module always uses every row. Four more, all where SDMetrics' number is an
accident of pandas or scipy rather than a definition (found by a review of this module; none
arises with the tuner's own data, read from CSV with numpy dtypes): a ``category`` column with
an unused category (scipy's Cramer's V then fails and SDMetrics drops every pair with that
column; here the empty category changes nothing), missing values of a nullable dtype in one
table against NaN in the other (SDMetrics counts them as two cells; here one), strings in a
numerical synthetic column (SDMetrics drops the column and its pairs, which rewards broken
output; here they are missing values) and integers beyond 2**53 (compared as float64 here).
Datetime columns are not handled here
(:func:`supports` says so; :func:`tuner.scoring._utility.quality_report` then calls SDMetrics).
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from scipy.stats import contingency

#: KSComplement rounds values to this many decimals before the test (``sys.float_info.dig - 1``).
KS_DECIMALS = sys.float_info.dig - 1
#: SDMetrics' count for a category seen only in the synthetic data (``utils.get_frequencies``).
UNSEEN_COUNT = 1e-6
#: The report scores a pair only where the real data's |Pearson r| (two numerical columns) or
#: Cramer's V (any other pair) exceeds these (``sdmetrics.reports.utils``' defaults).
CORRELATION_THRESHOLD = 0.5
ASSOCIATION_THRESHOLD = 0.3
#: Bins of a numerical column paired with a categorical one (``np.histogram_bin_edges``' default).
PAIR_BINS = 10


@dataclass(frozen=True)
class QualityScores:
    """The report's score, its two properties and every column's and pair's score."""

    score: float
    column_shapes: float
    column_pair_trends: float
    columns: dict[str, float]
    pairs: dict[tuple[str, str], float]


def _ks_sorted(values: np.ndarray) -> np.ndarray:
    """The non-missing values rounded as KSComplement rounds them, sorted."""
    return np.sort(np.round(values[~np.isnan(values)], KS_DECIMALS))


def _ks_complement(real_sorted: np.ndarray, synthetic: np.ndarray) -> float:
    """``1 - D``, D the two-sample KS statistic (scipy's ``ks_2samp`` statistic, exactly);
    ``real_sorted`` from :func:`_ks_sorted`, prepared once. Not ``ks_2samp`` itself: it also
    computes a p-value, exactly (slowly) below 10,000 rows, that the report does not use."""
    synthetic = _ks_sorted(synthetic)
    if real_sorted.size == 0 or synthetic.size == 0:
        return float("nan")
    points = np.concatenate([real_sorted, synthetic])
    cdf_real = np.searchsorted(real_sorted, points, side="right") / real_sorted.size
    cdf_syn = np.searchsorted(synthetic, points, side="right") / synthetic.size
    return float(1.0 - np.max(np.abs(cdf_real - cdf_syn)))


def _tv_complement(train: np.ndarray, synthetic: np.ndarray, missing: int) -> float:
    """``1 - TV`` of the category frequencies; the code ``missing`` (a missing value) dropped."""
    train, synthetic = train[train != missing], synthetic[synthetic != missing]
    if train.size == 0 or synthetic.size == 0:
        return float("nan")
    n_codes = max(train.max(), synthetic.max()) + 1
    count_real = np.bincount(train, minlength=n_codes).astype(float)
    count_syn = np.bincount(synthetic, minlength=n_codes).astype(float)
    count_real[(count_real == 0) & (count_syn > 0)] = UNSEEN_COUNT
    seen = count_real > 0
    share_real = count_real[seen] / count_real.sum()
    share_syn = count_syn[seen] / synthetic.size
    return float(1.0 - 0.5 * np.abs(share_syn - share_real).sum())


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson r (scipy's ``pearsonr``, as CorrelationSimilarity calls it) on the rows where
    both are present; NaN where it is undefined (fewer than 2 rows, a constant)."""
    both = ~(np.isnan(x) | np.isnan(y))
    x, y = x[both], y[both]
    if x.size < 2 or _is_constant(x) or _is_constant(y):
        return float("nan")
    return float(stats.pearsonr(x, y).statistic)


def _cramers_v(counts: np.ndarray) -> float:
    """Cramer's V of a contingency table (scipy's ``association``, as ContingencySimilarity
    calls it) without its empty rows and columns; NaN for a table with one row or column."""
    counts = counts[counts.sum(axis=1) > 0][:, counts.sum(axis=0) > 0]
    if counts.sum() == 0 or min(counts.shape) < 2:
        return float("nan")
    return float(contingency.association(counts, method="cramer"))


def _numeric(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _bin_codes(values: np.ndarray) -> np.ndarray | None:
    """SDMetrics' discretisation: ``np.digitize`` on 10 equal bins of the column's own
    non-missing range, codes 0..11. Kept as SDMetrics has it: the maximum value and a missing
    value both get code 11 (past the last edge), so the pair's table has PAIR_BINS + 2 codes."""
    try:
        return np.digitize(values, bins=np.histogram_bin_edges(values[~np.isnan(values)]))
    except (ValueError, IndexError):
        return None


def _is_constant(values: np.ndarray) -> bool:
    present = values[~np.isnan(values)]
    return present.size > 0 and bool((present == present[0]).all())


class _Categories:
    """A categorical column's codes: the real data's categories 0..k-1, missing k, and values
    only a synthetic set has k+1, k+2, ..."""

    def __init__(self, train: pd.Series) -> None:
        codes, uniques = pd.factorize(train.astype(object))
        self.index = pd.Index(uniques, dtype=object)
        self.missing = len(uniques)
        self.train = np.where(codes < 0, self.missing, codes)

    def code(self, synthetic: pd.Series) -> tuple[np.ndarray, int]:
        """Codes of a synthetic column and the number of codes they may take."""
        values = synthetic.astype(object)
        codes = self.index.get_indexer(values)
        absent = values.isna().to_numpy()
        codes[absent] = self.missing
        new = (codes < 0)
        if new.any():
            extra, uniques = pd.factorize(values[new])
            codes[new] = self.missing + 1 + extra
            return codes, self.missing + 1 + len(uniques)
        return codes, self.missing + 1


class QualityReport:
    """The Quality Report against one real table, prepared once and scored on many synthetic
    sets (a study's trials): everything that depends on the real data alone (categories, sorted
    values, bins, which pairs pass the association thresholds) is computed here.

    ``sdtypes`` maps every column of ``real`` to ``"numerical"``, ``"categorical"`` or
    ``"boolean"`` (the metadata the report would get); see :func:`supports`."""

    def __init__(self, train: pd.DataFrame, sdtypes: dict[str, str]) -> None:
        if not supports(sdtypes):
            raise ValueError(f"sdtypes must be numerical, categorical or boolean, got {sdtypes}")
        self.columns = list(sdtypes)
        self.numeric = {c: _numeric(train[c]) for c in self.columns if sdtypes[c] == "numerical"}
        self.sorted = {c: _ks_sorted(v) for c, v in self.numeric.items()}
        self.bins = {c: _bin_codes(v) for c, v in self.numeric.items()}
        self.categories = {c: _Categories(train[c]) for c in self.columns if c not in self.numeric}
        self.correlations: dict[tuple[str, str], float] = {}
        self.contingencies: list[tuple[str, str]] = []
        constant = {c: _is_constant(v) for c, v in self.numeric.items()}
        for a, b in itertools.combinations(self.columns, 2):
            if a in self.numeric and b in self.numeric:
                r = _pearson(self.numeric[a], self.numeric[b])
                if not (constant[a] or constant[b]) and abs(r) > CORRELATION_THRESHOLD:
                    self.correlations[(a, b)] = r
                continue
            code_a, code_b = self._real_codes(a), self._real_codes(b)
            if code_a is None or code_b is None:
                continue  # a numerical column SDMetrics could not bin
            (ca, ka), (cb, kb) = code_a, code_b
            table = np.bincount(ca.astype(np.int64) * kb + cb, minlength=ka * kb)
            if _cramers_v(table.reshape(ka, kb)) > ASSOCIATION_THRESHOLD:
                self.contingencies.append((a, b))

    def _real_codes(self, column: str) -> tuple[np.ndarray, int] | None:
        if column in self.categories:
            cats = self.categories[column]
            return cats.train, cats.missing + 1
        bins = self.bins[column]
        return None if bins is None else (bins, PAIR_BINS + 2)

    def score(self, synthetic: pd.DataFrame) -> QualityScores:
        """The report of ``synthetic`` (its columns those of the real table)."""
        shapes: dict[str, float] = {}
        numeric = {c: _numeric(synthetic[c]) for c in self.numeric}
        coded: dict[str, tuple[np.ndarray, int] | None] = {}
        for column in self.columns:
            if column in numeric:
                shapes[column] = _ks_complement(self.sorted[column], numeric[column])
                bins = _bin_codes(numeric[column])
                coded[column] = None if bins is None else (bins, PAIR_BINS + 2)
                continue
            cats = self.categories[column]
            codes = cats.code(synthetic[column])
            coded[column] = codes
            shapes[column] = _tv_complement(cats.train, codes[0], cats.missing)
        pairs: dict[tuple[str, str], float] = {}
        for (a, b), r_real in self.correlations.items():
            if _is_constant(numeric[a]) or _is_constant(numeric[b]):
                continue
            r_syn = _pearson(numeric[a], numeric[b])
            if np.isfinite(r_syn):
                pairs[(a, b)] = 1.0 - abs(r_real - r_syn) / 2.0
        for a, b in self.contingencies:
            syn_a, syn_b = coded[a], coded[b]
            real_a, real_b = self._real_codes(a), self._real_codes(b)
            if syn_a is None or syn_b is None or real_a is None or real_b is None:
                continue
            pairs[(a, b)] = _total_variation_complement(
                (real_a[0], syn_a[0]), (real_b[0], syn_b[0]), max(real_b[1], syn_b[1]))
        return _summary(shapes, pairs)


def _total_variation_complement(a: tuple[np.ndarray, np.ndarray],
                                b: tuple[np.ndarray, np.ndarray], width: int) -> float:
    """``1 - TV`` of the joint frequencies of two coded columns, real and synthetic."""
    shares = [np.bincount(x.astype(np.int64) * width + y) / x.size
              for x, y in zip(a, b, strict=True)]
    size = max(s.size for s in shares)
    train, syn = (np.pad(s, (0, size - s.size)) for s in shares)
    return float(1.0 - 0.5 * np.abs(train - syn).sum())


def _summary(shapes: dict[str, float], pairs: dict[tuple[str, str], float]) -> QualityScores:
    """Property scores as SDMetrics averages them (a NaN score left out), and their mean."""
    finite = [s for s in shapes.values() if np.isfinite(s)]
    column_shapes = float(np.mean(finite)) if finite else float("nan")
    column_pair_trends = float(np.mean(list(pairs.values()))) if pairs else float("nan")
    properties = [p for p in (column_shapes, column_pair_trends) if np.isfinite(p)]
    return QualityScores(score=float(np.mean(properties)) if properties else float("nan"),
                         column_shapes=column_shapes, column_pair_trends=column_pair_trends,
                         columns=shapes, pairs=pairs)


def supports(sdtypes: dict[str, str]) -> bool:
    """Whether this module computes the report for these sdtypes (datetime: no)."""
    return all(kind in ("numerical", "categorical", "boolean") for kind in sdtypes.values())


def quality_scores(train: pd.DataFrame, synthetic: pd.DataFrame,
                   sdtypes: dict[str, str]) -> QualityScores:
    """The Quality Report of ``synthetic`` against ``real`` (module docstring)."""
    return QualityReport(train, sdtypes).score(synthetic)


__all__ = ["QualityReport", "QualityScores", "quality_scores", "supports"]
