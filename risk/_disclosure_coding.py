"""Variable coding for :mod:`risk.disclosure`: synthpop's factors and its ``group_num``.

Each key and the target become integer codes shared by the original and every synthetic set;
the last code is the missing value (synthpop's ``"Missing"`` level). Numeric variables asked to
be grouped are cut as synthpop 1.9-3 cuts them (``R/utility.syn.r``, ``group_num``): breaks from
``classInt::classIntervals`` over the original's and all synthetic sets' values together
(type-7 quantiles, ``"equal"`` widths when that leaves fewer than 3 groups, one class per value
when there are no more values than groups) and R's ``cut(right = FALSE, include.lowest = TRUE,
dig.lab = 8)`` labels; values listed in ``cont_na`` are groups of their own.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from risk._validation import RiskInputError

MISSING_LABEL = "Missing"


@dataclasses.dataclass(frozen=True)
class _Variable:
    """Codes of one variable in every frame; code ``len(labels) - 1`` is the missing value."""

    name: str
    codes: list[np.ndarray]
    labels: tuple[str, ...]
    values: pd.Index  # the level values (grouped: the labels), missing excluded
    grouped: bool

    @property
    def missing(self) -> int:
        return len(self.labels) - 1

    def code_of(self, value: Any, argument: str) -> int:
        """Code of a level named by the caller (``None``/NaN: missing; grouped: the label)."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return self.missing
        try:
            hash(value)
        except TypeError:
            raise TypeError(
                f"`{argument}` must name levels of {self.name!r} (a value, or a list of "
                f"values), but it holds {type(value).__name__} {value!r}."
            ) from None
        pos = self.values.get_indexer([str(value) if self.grouped else value])[0]
        if pos < 0:
            raise RiskInputError(
                f"`{argument}` names the level {value!r}, which {self.name!r} does not have; "
                f"its levels are {list(self.labels[:-1])[:12]!r} (None for missing)."
            )
        return int(pos)


def _label(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.15g}"  # R's as.character of a double
    return str(value)


def _factor(name: str, columns: list[pd.Series]) -> _Variable:
    stacked = pd.concat(columns, ignore_index=True)
    try:
        codes, uniques = pd.factorize(stacked, sort=True)
    except TypeError:  # unorderable mixture: keep order of appearance
        codes, uniques = pd.factorize(stacked)
    uniques = pd.Index(uniques)
    codes = np.where(codes < 0, len(uniques), codes).astype(np.int64)
    labels = (*(_label(v) for v in uniques), MISSING_LABEL)
    sizes = np.cumsum([len(c) for c in columns])[:-1]
    return _Variable(name, np.split(codes, sizes), labels, uniques, False)


def _quantile7(x: np.ndarray, n: int) -> np.ndarray:
    """R's ``quantile(x, seq(0, 1, 1/n))`` (type 7) with R's own arithmetic."""
    probs = np.minimum(np.arange(n + 1) * (1.0 / n), 1.0)
    index = 1.0 + (x.size - 1) * probs
    lo, hi = np.floor(index).astype(np.int64), np.ceil(index).astype(np.int64)
    qs = x[lo - 1]
    mix = (index > lo) & (x[hi - 1] != qs)
    h = index - lo
    return np.where(mix, (1.0 - h) * qs + h * x[hi - 1], qs)


def _breaks(name: str, pooled: np.ndarray, n: int, style: str) -> np.ndarray:
    """``classInt::classIntervals(pooled, n, style)$brks`` for the two styles synthpop uses."""
    distinct = np.unique(pooled)
    if distinct.size == 1:
        raise RiskInputError(
            f"cannot group {name!r}: the original and synthetic data hold a single value "
            f"({distinct[0]!r}) outside `cont_na`; pass ngroups 0 for it."
        )
    n = min(n, distinct.size)
    if n == distinct.size:  # classInt: "each different finite value is a separate class"
        gaps = np.diff(distinct)
        half = gaps.mean() / 2
        return np.concatenate([[distinct[0] - half], distinct[:-1] + gaps / 2,
                               [distinct[-1] + half]])
    if style == "quantile":
        return _quantile7(np.sort(pooled), n)
    lo, hi = distinct[0], distinct[-1]
    return np.concatenate([[lo], lo + np.arange(1, n) * ((hi - lo) / n), [hi]])


def _cut_labels(breaks: np.ndarray) -> list[str]:
    """Labels of R's ``cut(right = FALSE, include.lowest = TRUE, dig.lab = 8)``."""
    for digits in range(8, 13):
        text = [f"{b:.{digits}g}" for b in breaks]
        if all(a != b for a, b in zip(text[:-1], text[1:], strict=True)):
            break
    labels = [f"[{a},{b})" for a, b in zip(text[:-1], text[1:], strict=True)]
    labels[-1] = labels[-1][:-1] + "]"
    return labels


def _grouped(name: str, columns: list[pd.Series], n: int, special: Sequence[Any]) -> _Variable:
    """synthpop's ``group_num``: breaks from the original and all synthetic sets together."""
    values = [pd.to_numeric(c).to_numpy(dtype=float) for c in columns]
    special_arr = np.asarray([v for v in special if not pd.isna(v)], dtype=float)
    usable = [~np.isnan(v) & ~np.isin(v, special_arr) for v in values]
    if not any(u.any() for u in usable[1:]):
        raise RiskInputError(
            f"cannot group {name!r}: the synthetic data have no usable values (all missing or "
            "in `cont_na`); pass ngroups 0 for it."
        )
    pooled = np.concatenate([v[u] for v, u in zip(values, usable, strict=True)])
    labels: list[str] = []
    for style in ("quantile", "equal"):
        breaks = np.unique(_breaks(name, pooled, n, style))
        labels = _cut_labels(breaks) + [_label(v) for v in special_arr]
        if len(labels) >= 3:
            break
    n_bins = breaks.size - 1
    codes = []
    for v, u in zip(values, usable, strict=True):
        code = np.full(v.size, len(labels), dtype=np.int64)  # missing
        code[u] = np.clip(np.searchsorted(breaks, v[u], side="right") - 1, 0, n_bins - 1)
        for j, s in enumerate(special_arr):
            code[v == s] = n_bins + j
        codes.append(code)
    all_labels = (*labels, MISSING_LABEL)
    return _Variable(name, codes, all_labels, pd.Index(labels), True)
