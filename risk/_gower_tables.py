"""The tables of :mod:`risk._gower`: profile codes and scaled numeric values, grouped by profile.

A record's *profile* is its codes on the columns compared by equality plus which of its numeric
values are missing; numeric values are scaled by the real records' range. Identical rows are
collapsed and the distinct rows grouped by profile, each profile with its numeric box.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from risk._encode import _numeric_values, combine
from risk.copies import _value_codes


@dataclasses.dataclass(frozen=True)
class Table:
    profile: np.ndarray  # (n, q) int64: columns compared by equality, numeric missingness
    values: np.ndarray  # (k, n) float64: numeric columns scaled by the real range, NaN missing


def prepare(
    frames: Sequence[pd.DataFrame], n_real_frames: int, columns: Sequence[str],
    kinds: dict[str, str],
) -> tuple[list[Table], tuple[str, ...]]:
    """Split ``columns`` into profile codes and scaled numeric values, jointly over frames.

    The first ``n_real_frames`` frames are real: numeric ranges come from them.
    """
    sizes = [len(f) for f in frames]
    n_real = sum(sizes[:n_real_frames])
    profile: list[np.ndarray] = []
    values: list[np.ndarray] = []
    numeric: list[str] = []
    for col in columns:
        stacked = pd.concat([f[col] for f in frames], ignore_index=True)
        if kinds[col] in ("numeric", "datetime"):
            v = _numeric_values(stacked, kinds[col])
            real = v[:n_real][~np.isnan(v[:n_real])]
            if real.size and real.max() > real.min():
                lo, hi = float(real.min()), float(real.max())
                values.append((v - lo) / (hi - lo))
                numeric.append(col)
                missing = np.isnan(v)
                if missing.any():
                    profile.append(missing.astype(np.int64))
                continue
            profile.append(_value_codes(pd.Series(v), "numeric"))
        else:
            profile.append(_value_codes(stacked, kinds[col]))
    n = sum(sizes)
    prof = np.column_stack(profile) if profile else np.zeros((n, 0), np.int64)
    vals = np.vstack(values) if values else np.zeros((0, n))
    splits = np.cumsum(sizes)[:-1]
    tables = [
        Table(p, v)
        for p, v in zip(np.split(prof, splits), np.split(vals, splits, axis=1), strict=True)
    ]
    return tables, tuple(numeric)


def code_ids(codes: np.ndarray) -> np.ndarray:
    """One int64 id per row of an int code matrix (equal ids iff equal rows)."""
    if codes.shape[1] == 0:
        return np.zeros(codes.shape[0], dtype=np.int64)
    return combine(codes, [int(c) for c in codes.max(axis=0) + 1])


def row_ids(table: Table) -> np.ndarray:
    """Ids of whole rows (profile plus exact numeric values), one column folded in at a time."""
    ids = code_ids(table.profile)
    for v in table.values:
        ids = code_ids(np.column_stack([ids, _value_codes(pd.Series(v), "numeric")]))
    return ids


@dataclasses.dataclass(frozen=True)
class Grouped:
    """Distinct rows sorted by profile, with the profile table and where each profile starts."""

    profiles: np.ndarray  # (n_profiles, q) codes
    row_profile: np.ndarray  # (n_rows,) index into profiles, ascending
    starts: np.ndarray  # (n_profiles,) first row of each profile
    counts: np.ndarray  # (n_profiles,) rows of each profile
    values: np.ndarray  # (k, n_rows)
    has_missing: np.ndarray  # (k,) whether a numeric column has a missing value

    @functools.cached_property
    def boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """(k, n_profiles) smallest and largest value of each numeric column in each profile
        (NaN where the profile's values are missing: a profile fixes which ones are)."""
        if self.starts.size == 0:
            empty = np.zeros((self.values.shape[0], 0))
            return empty, empty
        return (np.minimum.reduceat(self.values, self.starts, axis=1),
                np.maximum.reduceat(self.values, self.starts, axis=1))


def group(table: Table) -> tuple[Grouped, np.ndarray, np.ndarray]:
    """Distinct rows of ``table`` grouped by profile; also ``inverse`` and multiplicities.

    ``inverse[i]`` is the distinct row of original row i; ``weights`` counts original rows.
    """
    _, first, inverse, weights = np.unique(
        row_ids(table), return_index=True, return_inverse=True, return_counts=True
    )
    prof_id = code_ids(table.profile)[first]
    order = np.argsort(prof_id, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    uniq, starts, row_profile, counts = np.unique(
        prof_id[order], return_index=True, return_inverse=True, return_counts=True
    )
    rows = first[order]
    grouped = Grouped(
        profiles=table.profile[rows[starts]],
        row_profile=row_profile.ravel(),
        starts=starts,
        counts=counts,
        values=table.values[:, rows],
        has_missing=np.isnan(table.values).any(axis=1),
    )
    return grouped, rank[inverse.ravel()], weights[order]
