"""Gower's distance as :mod:`risk.dcr` defines it, with codes fitted once on real records and
applied to any later frame (the release audit encodes hundreds of shadow synthetic sets).

:mod:`risk._gower_tables` codes all frames jointly in one call, which suits a single DCR; the
audit needs one fixed code book made from the real records (train and reference) so that a
synthetic set sampled later, in another process, is coded the same way. The rules are DCR's:

* numeric and datetime (in days) columns with more than one real value: scaled by the real
  range, a part ``min(|x - y|, 1)``; their missingness is a profile code (missing vs value 1,
  missing vs missing 0, the numeric part 0 then);
* every other column (and a numeric one constant in the real data): 0 if equal, 1 if not, a
  missing value a category of its own; a value no real record has never equals a real value.

``binned`` gives every column as codes for exact matching on subsets of columns: categories as
above, scaled numeric values cut into ``bins`` equal-width bins of the real range (values
outside fall into the end bins, missing has a bin of its own), as the membership attack bins.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.spatial.distance import cdist

from risk._encode import _numeric_values

UNSEEN = -1  # a value no real record has
_CHUNK_ENTRIES = 2**22  # entries of one distance block


@dataclasses.dataclass(frozen=True)
class Coded:
    """A frame in Gower's terms: ``profile`` (n, q) int codes compared by equality, ``values``
    (n, k) numeric columns scaled by the real range (NaN missing), ``binned`` (n, p) codes of
    every column for exact matching."""

    profile: np.ndarray
    values: np.ndarray
    binned: np.ndarray

    def __len__(self) -> int:
        return self.profile.shape[0]

    @property
    def n_columns(self) -> int:
        """Columns compared (a scaled numeric column has a value and a missingness code)."""
        return self.binned.shape[1]

    def rows(self, index: np.ndarray | slice) -> Coded:
        return Coded(self.profile[index], self.values[index], self.binned[index])


@dataclasses.dataclass(frozen=True)
class GowerCoder:
    """The code book of ``columns``, fitted on real records by :func:`fit_coder`."""

    columns: tuple[str, ...]
    kinds: dict[str, str]
    numeric: tuple[str, ...]  # scaled columns, in order
    ranges: dict[str, tuple[float, float]]
    categories: dict[str, pd.Index]  # every other column: the real values, in code order
    bins: int

    @property
    def n_columns(self) -> int:
        return len(self.columns)

    def transform(self, frame: pd.DataFrame) -> Coded:
        """``frame``'s codes under this code book."""
        n = len(frame)
        profile: list[np.ndarray] = []
        values: list[np.ndarray] = []
        binned: list[np.ndarray] = []
        for col in self.columns:
            if col in self.ranges:
                lo, hi = self.ranges[col]
                v = (_numeric_values(frame[col], self.kinds[col]) - lo) / (hi - lo)
                values.append(v)
                profile.append(np.isnan(v).astype(np.int64))
                codes = np.clip(np.floor(v * self.bins), 0, self.bins - 1)
                binned.append(np.where(np.isnan(v), self.bins, codes).astype(np.int64))
            else:
                codes = _category_codes(frame[col], self.kinds[col], self.categories[col])
                profile.append(codes)
                binned.append(codes)
        return Coded(_stack(profile, n, np.int64), _stack(values, n, np.float64),
                     _stack(binned, n, np.int64))


def _stack(parts: list[np.ndarray], n: int, dtype: type) -> np.ndarray:
    return np.column_stack(parts).astype(dtype) if parts else np.zeros((n, 0), dtype)


def _category_values(series: pd.Series, kind: str) -> pd.Series:
    """What is compared for equality: numbers by value (1 == 1.0), others as they are."""
    if kind in ("numeric", "datetime"):
        return pd.Series(_numeric_values(series, kind))
    return series.reset_index(drop=True).astype(object)


def _category_codes(series: pd.Series, kind: str, index: pd.Index) -> np.ndarray:
    values = _category_values(series, kind)
    codes = index.get_indexer(values).astype(np.int64)
    missing = values.isna().to_numpy()
    codes[missing] = len(index)  # missing: a category of its own, after the real values
    return codes


def fit_coder(real: Sequence[pd.DataFrame], columns: Sequence[str], kinds: dict[str, str], *,
              bins: int = 20) -> GowerCoder:
    """The code book of ``columns`` from the real frames (ranges and categories)."""
    ranges: dict[str, tuple[float, float]] = {}
    categories: dict[str, pd.Index] = {}
    numeric: list[str] = []
    for col in columns:
        stacked = pd.concat([f[col] for f in real], ignore_index=True)
        if kinds[col] in ("numeric", "datetime"):
            v = _numeric_values(stacked, kinds[col])
            present = v[~np.isnan(v)]
            if present.size and present.max() > present.min():
                ranges[col] = (float(present.min()), float(present.max()))
                numeric.append(col)
                continue
        values = _category_values(stacked, kinds[col])
        categories[col] = pd.Index(pd.unique(values[values.notna()]))
    return GowerCoder(tuple(columns), dict(kinds), tuple(numeric), ranges, categories, bins)


def summed_distances(a: Coded, b: Coded) -> np.ndarray:
    """(len(a), len(b)) summed Gower distances (``p`` times the mean), DCR's rules.

    Profile mismatches and the numeric columns without missing values whose values lie in the
    real range on both sides (no cap applies) go through scipy's compiled ``cdist`` (Hamming,
    city block); a column with a missing value or a value outside the range is summed here.
    """
    out = np.zeros((len(a), len(b)))
    if a.profile.shape[1]:
        out += np.rint(cdist(a.profile, b.profile, "hamming") * a.profile.shape[1])
    fast = [c for c in range(a.values.shape[1]) if _in_range(a.values[:, c])
            and _in_range(b.values[:, c])]
    if fast:
        out += cdist(a.values[:, fast], b.values[:, fast], "cityblock")
    for c in sorted(set(range(a.values.shape[1])) - set(fast)):
        part = np.abs(a.values[:, c, None] - b.values[None, :, c])
        np.minimum(part, 1.0, out=part)
        part[np.isnan(part)] = 0.0  # missing: counted by its profile code
        out += part
    return out


def _in_range(v: np.ndarray) -> bool:
    """No missing value and every value within the real range (scaled: [0, 1])."""
    return bool(v.size == 0 or (np.all(v >= 0.0) and np.all(v <= 1.0)))


def chunks(n_query: int, n_ref: int) -> list[slice]:
    """Row blocks of the query such that one block's distance matrix stays bounded."""
    size = max(1, _CHUNK_ENTRIES // max(1, n_ref))
    return [slice(s, min(s + size, n_query)) for s in range(0, n_query, size)]


def nearest_mean_distance(coded: Coded, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    """Per record (of ``rows``, default all), the mean Gower distance (summed / p) to its ``k``
    nearest *other* records of the same real table (duplicates count, at distance 0). Exact,
    in bounded blocks: the profile mismatches as ``q`` minus a product of one-hot codes, the
    numeric part as in :func:`summed_distances`; the ``k`` nearest are chosen in single
    precision (a partition of float64 costs four times as much; distances below 16 differ by
    < 2e-6)."""
    n = len(coded)
    if n <= k:
        raise ValueError(f"need more than k={k} records, got {n}")
    rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
    p = max(1, coded.n_columns)
    hot = _one_hot(coded.profile)
    plain = Coded(np.zeros((n, 0), np.int64), coded.values, coded.binned)
    out = np.empty(rows.size)
    for block in chunks(rows.size, n):
        these = rows[block]
        d = summed_distances(plain.rows(these), plain).astype(np.float32)
        d += coded.profile.shape[1] - hot[these] @ hot.T
        d[np.arange(these.size), these] = np.inf  # not itself
        nearest = np.partition(d, k - 1, axis=1)[:, :k]
        out[block] = nearest.astype(np.float64).mean(axis=1) / p
    return out


def _one_hot(codes: np.ndarray) -> np.ndarray:
    """(n, sum of cardinalities) float32 indicators of integer code columns (codes >= -1)."""
    shifted = codes + 1  # UNSEEN (-1) gets a slot of its own
    widths = shifted.max(axis=0) + 1 if codes.size else np.zeros(0, np.int64)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    out = np.zeros((codes.shape[0], int(widths.sum())), np.float32)
    out[np.arange(codes.shape[0])[:, None], offsets + shifted] = 1.0
    return out
