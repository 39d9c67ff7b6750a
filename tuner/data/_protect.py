"""Value protection before any fit: top- and bottom-coding, and rare categories merged.

The gate and the audit judge what a model learned; a real value can also reach the release
around the model. Every family reads a numeric column's range from its training data (SDV's
``enforce_min_max_values``, the DP families' bins) and CART samples real leaf values, so the
largest income or the only person born in a country is released as it is, and its presence in
a release tells who was in the training data (a generator learns a category only when someone
in its data holds it). Statistics offices code such values before anything is published:
top- and bottom-coding and the suppression of rare categories (Hundepool et al.,
*Statistical Disclosure Control*, Wiley 2012, sections 3.4.3-3.4.4; sdcMicro's
``topBotCoding`` and ``localSuppression``).

Here, with ``k = [data] protect_k`` (10 by default, docs/audit.md says why; 0 switches it off),
before the split reaches any synthesiser:

* **numbers and dates**: a value above the ``k``-th largest training value is set to it, one
  below the ``k``-th smallest to that (so the most extreme value a model can see is held by at
  least ``k`` training records);
* **categories** (text columns): a category held by fewer than ``k`` training records becomes
  one protected level, :data:`PROTECTED`. When the rare categories together are still held by
  fewer than ``k`` training records, the protected level would itself single them out: they are
  then set missing where the column's missing values and they make ``k`` or more (local
  suppression, sdcMicro's ``localSuppression``), else merged with the least frequent category
  held by ``k`` or more (of equals, the first in the training records), so that no level of
  fewer than ``k`` people is left.

The thresholds are the training records' (the data the models see); the same coding is applied
to the holdout and the audit set, so that every measure compares like with like. Booleans,
missing values and the columns a codebook declares (their domain is public,
:mod:`tuner.data._codebook`) are left as they are. The record (:class:`Protection`) names the
columns and how many values changed, never a value.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

import risk

PROTECTED = "(protected: rare)"  # the level rare categories are merged into


@dataclasses.dataclass(frozen=True)
class ColumnRule:
    """One column's coding, fixed on the training records: ``low``/``high`` (numbers and
    dates: the ``k``-th smallest and largest training values) or ``kept`` (categories: those
    left as they are; every other value, one the training records do not hold included, is
    coded), with ``merged``, how many training categories are coded."""

    column: str
    kind: str  # "range" or "categories"
    low: Any = None
    high: Any = None
    kept: frozenset[Any] = frozenset()
    merged: int = 0
    to_missing: bool = False  # the rare categories are set missing (local suppression)

    def apply(self, values: pd.Series) -> tuple[pd.Series, int]:
        """The coded column and how many of its values changed (the column itself, not a
        copy, where none did)."""
        if self.kind == "range":
            plain = _plain(values)
            if plain is None:  # an extension dtype (nullable integers, time zones): pandas'
                low_hit = (values < self.low).to_numpy(dtype=bool, na_value=False)
                high_hit = (values > self.high).to_numpy(dtype=bool, na_value=False)
            else:  # NumPy's comparisons, False for NaN and NaT as pandas' are
                low_hit, high_hit = plain < self.low, plain > self.high
            changed = int(low_hit.sum() + high_hit.sum())
            if not changed:
                return values, 0
            if plain is not None:
                coded = plain.copy()
                coded[low_hit], coded[high_hit] = self.low, self.high
                return pd.Series(coded, index=values.index, name=values.name), changed
            out = values.mask(low_hit, self.low).mask(high_hit, self.high)
            return out.astype(values.dtype), changed
        # the few categories kept, not the many coded, and missing values with them: one
        # linear pass (isin matches NaN with NaN, None with None)
        hit = ~values.isin([*self.kept, np.nan, None]).to_numpy(dtype=bool)
        changed = int(hit.sum())
        if not changed:
            return values, 0
        return values.astype(object).where(~hit, None if self.to_missing else PROTECTED), changed


@dataclasses.dataclass(frozen=True)
class Protection:
    """What was protected: ``k``, and per column what was done and how many training, holdout
    and audit values changed (never the values)."""

    k: int
    columns: dict[str, dict[str, Any]]
    public: tuple[str, ...] = ()  # declared by the codebook: left alone

    def record(self) -> dict[str, Any]:
        """The manifest's ``protection`` entry."""
        return {"k": self.k, "columns": self.columns, "public_by_codebook": list(self.public),
                "method": "numbers and dates beyond the k-th largest or smallest training value "
                          "top- or bottom-coded to it; categories held by fewer than k training "
                          f"records merged into {PROTECTED!r}; before any fit"}


def _plain(values: pd.Series) -> np.ndarray | None:
    """The column's NumPy floats, integers or datetimes (no copy), or None for an extension
    dtype, where pandas' own operations are used."""
    array = values.to_numpy() if isinstance(values.dtype, np.dtype) else None
    return array if array is not None and array.dtype.kind in "fiuM" else None


def _range_rule(column: str, values: pd.Series, k: int) -> ColumnRule | None:
    plain = _plain(values)
    if plain is None:
        present = values.dropna().to_numpy()
    elif plain.dtype.kind == "M":  # as integers: NumPy selects among datetimes 20 times slower
        ticks = plain.view(np.int64)
        present = ticks[ticks != np.iinfo(np.int64).min]  # NaT
    else:
        present = plain[~np.isnan(plain)] if plain.dtype.kind == "f" else plain
    if present.size < 2 * k:  # too few values to code either end
        return None
    # the k-th smallest and largest by one selection, not a sort (linear on 400,000 records)
    low, high = np.partition(present, (k - 1, present.size - k))[[k - 1, present.size - k]]
    if plain is not None and plain.dtype.kind == "M":
        low, high = np.array([low, high]).view(plain.dtype)
    return ColumnRule(column, "range", low=low, high=high)


def _counts(values: pd.Series) -> tuple[pd.Series, int]:
    """Each category's count (those nobody holds left out, in no particular order) and how many
    values are missing: the counts of ``values.dropna().value_counts()``, from one hashing pass
    (``pd.factorize``; a categorical's own codes) instead of ``dropna``'s copy and
    ``value_counts``' hashing and sort (``tests/tuner/data/test_protect.py`` checks the two
    agree). No rule reads their order: of equally rare categories the one merged is the first
    in the training records."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes, levels = values.cat.codes.to_numpy(), values.cat.categories
    else:
        codes, levels = pd.factorize(values)  # missing values coded -1
    counts = pd.Series(np.bincount(codes[codes >= 0], minlength=len(levels)), index=levels)
    return counts[counts > 0], int((codes < 0).sum())  # a categorical lists levels nobody holds


def _category_rule(column: str, values: pd.Series, k: int) -> ColumnRule | None:
    counts, missing = _counts(values)
    common = counts[counts >= k]
    rare = counts.size - common.size
    if not rare:  # a category the training records lack may still be in another part
        return ColumnRule(column, "categories", kept=frozenset(common.index))
    held = int(counts.sum() - common.sum())
    if held < k:  # the protected level alone would single them out
        if held + missing >= k:
            return ColumnRule(column, "categories", kept=frozenset(common.index), merged=rare,
                              to_missing=True)
        if not common.empty:  # merged with the least frequent category held by k or more,
            # of equals the first to appear in the training records (not an order a sort left)
            lowest = common.index[common.to_numpy() == common.min()]
            least = values[values.isin(lowest)].iloc[0]
            return ColumnRule(column, "categories", kept=frozenset(common.index) - {least},
                              merged=rare + 1)
    return ColumnRule(column, "categories", kept=frozenset(common.index), merged=rare)


def rules(train: pd.DataFrame, k: int) -> list[ColumnRule]:
    """Each column's coding, fixed on ``train`` (module docstring)."""
    out: list[ColumnRule] = []
    for column in train.columns:
        values = train[column]
        if pd.api.types.is_bool_dtype(values):
            continue
        kind = risk.column_kind(values)
        rule = (_range_rule(str(column), values, k) if kind in ("numeric", "datetime")
                else _category_rule(str(column), values, k))
        if rule is not None:
            out.append(rule)
    return out


def protect(frames: dict[str, pd.DataFrame], k: int, *,
            public: frozenset[str] = frozenset()) -> tuple[dict[str, pd.DataFrame], Protection]:
    """``frames`` (``train`` first, then the holdout and the audit set) coded by the rules of
    ``frames["train"]`` (module docstring); ``k = 0`` returns them as they are. ``public``:
    the columns a codebook declares (:mod:`tuner.data._codebook`), left as they are: their
    categories and range are public by declaration."""
    if k <= 0:
        return frames, Protection(0, {}, tuple(sorted(public)))
    found = [r for r in rules(frames["train"], k) if r.column not in public]
    out = {name: frame.copy(deep=False) for name, frame in frames.items()}  # columns replaced
    said: dict[str, dict[str, Any]] = {}
    for rule in found:
        changed = {}
        for name, frame in out.items():
            if rule.column in frame.columns and len(frame):
                frame[rule.column], changed[name] = rule.apply(frame[rule.column])
        if not any(changed.values()):
            continue
        said[rule.column] = ({"coded": "top and bottom", "changed": changed}
                             if rule.kind == "range" else
                             {"coded": "rare categories set missing" if rule.to_missing else
                                       "rare categories merged",
                              "categories_merged": rule.merged, "changed": changed})
    return out, Protection(k, said, tuple(sorted(public)))
