"""Joint encoding of columns of several frames into integer codes.

All risk measures compare records of different frames (real vs synthetic) on some columns.
They do it on integer codes made *jointly* over all frames, so that equal values get equal codes
whatever frame they come from. The rules (design §3, step 3):

* numeric columns with more than ``numeric_bins`` distinct values (over all frames together)
  are cut into ``numeric_bins`` equal-width bins whose edges span the values of all frames
  (values outside any frame-derived range cannot occur, but the end bins are open anyway);
  with ``fit_frames`` only the named frames decide both (CAP fits on the original alone), and
  values of the other frames outside their range fall into the end bins;
* datetimes become numeric days first;
* every other column is compared as categories (exact equality);
* a missing value is a category of its own (missing matches missing).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from risk._arguments import argument

DEFAULT_NUMERIC_BINS = 20
_INT64_HEADROOM = 2**62


@dataclasses.dataclass(frozen=True)
class Encoded:
    """Integer codes of ``columns`` for each input frame, and each column's number of codes."""

    codes: tuple[np.ndarray, ...]  # one (n_rows, n_columns) int64 array per frame
    cardinalities: tuple[int, ...]
    columns: tuple[str, ...]
    binned: tuple[str, ...]  # the numeric columns that were cut into bins


def _numeric_values(series: pd.Series, kind: str) -> np.ndarray:
    if kind == "datetime":
        days = series.astype("datetime64[ns]").astype("int64").astype(float) / 86_400e9
        return np.where(series.isna().to_numpy(), np.nan, days)
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)


def _bin(values: np.ndarray, n_bins: int, fit: np.ndarray | None = None) -> np.ndarray:
    """Equal-width bin codes of ``values``; edges span ``fit`` (default: ``values``)."""
    reference = values if fit is None else fit
    finite = reference[~np.isnan(reference)]
    lo, hi = float(finite.min()), float(finite.max())
    edges = np.linspace(lo, hi, n_bins + 1)
    codes = np.searchsorted(edges[1:-1], values, side="right")
    codes = np.clip(codes, 0, n_bins - 1)
    return np.where(np.isnan(values), n_bins, codes).astype(np.int64)


def _categories(values: pd.Series) -> np.ndarray:
    codes, _ = pd.factorize(values, use_na_sentinel=True)
    codes = codes.astype(np.int64)
    missing = codes < 0
    if missing.any():
        codes[missing] = codes.max() + 1
    return codes


def encode(
    frames: Sequence[pd.DataFrame],
    columns: Sequence[str],
    kinds: dict[str, str],
    *,
    numeric_bins: int | None = DEFAULT_NUMERIC_BINS,
    fit_frames: Sequence[int] | None = None,
) -> Encoded:
    """Encode ``columns`` of every frame jointly (see the module docstring for the rules).

    ``numeric_bins=None`` compares numeric values exactly, as categories. ``fit_frames``
    (indices into ``frames``; default all) are the frames whose values decide whether a
    numeric column is binned and where its edges lie: with ``[0]``, adding a frame cannot
    change the codes' meaning for the others.
    """
    if numeric_bins is not None:
        argument(numeric_bins, "numeric_bins")
    sizes = [len(f) for f in frames]
    splits = np.cumsum(sizes)[:-1]
    fit_mask: np.ndarray | None = None
    if fit_frames is not None:
        owner = np.repeat(np.arange(len(frames)), sizes)
        fit_mask = np.isin(owner, np.asarray(list(fit_frames), dtype=np.int64))
    per_column: list[np.ndarray] = []
    cards: list[int] = []
    binned: list[str] = []
    for col in columns:
        stacked = pd.concat([f[col] for f in frames], ignore_index=True)
        kind = kinds[col]
        codes: np.ndarray | None = None
        if kind in ("numeric", "datetime") and numeric_bins is not None:
            values = _numeric_values(stacked, kind)
            fit = values if fit_mask is None else values[fit_mask]
            distinct = np.unique(fit[~np.isnan(fit)]).size
            if distinct > numeric_bins:
                codes = _bin(values, numeric_bins, fit)
                binned.append(col)
        if codes is None:
            codes = _categories(stacked)
        per_column.append(codes)
        cards.append(int(codes.max()) + 1 if codes.size else 1)
    matrix = (
        np.column_stack(per_column) if per_column else np.zeros((sum(sizes), 0), dtype=np.int64)
    )
    return Encoded(
        codes=tuple(np.split(matrix, splits)),
        cardinalities=tuple(cards),
        columns=tuple(columns),
        binned=tuple(binned),
    )


def combine(codes: np.ndarray, cardinalities: Sequence[int]) -> np.ndarray:
    """Map each row of a code matrix to one int64 id; equal rows get equal ids.

    Mixed-radix packing, re-densified whenever the next column could overflow int64. The ids
    are comparable across frames only when the rows were combined in one call (stack first).
    """
    n = codes.shape[0]
    ids = np.zeros(n, dtype=np.int64)
    for j, card in enumerate(cardinalities):
        if n and int(ids.max()) >= _INT64_HEADROOM // max(card, 1):
            ids = np.unique(ids, return_inverse=True)[1].astype(np.int64)
        ids = ids * card + codes[:, j]
    return ids


def combine_many(codes: Sequence[np.ndarray], cardinalities: Sequence[int]) -> list[np.ndarray]:
    """:func:`combine` over several code matrices at once, so ids agree between them."""
    sizes = [c.shape[0] for c in codes]
    ids = combine(np.concatenate(codes, axis=0), cardinalities)
    return list(np.split(ids, np.cumsum(sizes)[:-1]))


def lookup_counts(query_ids: np.ndarray, reference_ids: np.ndarray) -> np.ndarray:
    """For each query id, how many times it occurs in ``reference_ids`` (a vectorised join)."""
    uniq, counts = np.unique(reference_ids, return_counts=True)
    if uniq.size == 0:
        return np.zeros(query_ids.shape[0], dtype=np.int64)
    pos = np.searchsorted(uniq, query_ids)
    pos = np.clip(pos, 0, uniq.size - 1)
    found = uniq[pos] == query_ids
    return np.where(found, counts[pos], 0).astype(np.int64)
