"""A trial's frames with their text columns as one shared pandas categorical, for the measures.

Every risk measure starts by turning each text column of train, holdout and synthetic into
integer codes (``pd.factorize`` on the stacked values), and a trial runs seven of them: on
20,000 Adult rows that hashing of strings was about a third of the risk evaluation. Here each
text column becomes a :class:`pandas.CategoricalDtype` shared by the three frames, so the
measures factorize integer codes instead. The real side is converted once per study (cached
with the split); a trial converts only its synthetic data, whose categories are the real ones
plus any value only the synthetic data have (appended, so no value is ever lost to NaN).

Only columns whose values are all strings in every frame are converted (mixed types keep their
own dtype, so the measures' checks still see them). The values and the missing entries are the
same, so every measure gives the same numbers (``tests/tuner/scoring/test_categorical.py``
checks every flat metric of a trial against the text frames); the released data are never these
copies.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tuner.data import Split

_CACHE: dict[int, tuple[Split, dict[str, pd.Index], pd.DataFrame, pd.DataFrame]] = {}


def _text(series: pd.Series) -> bool:
    return series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) == "string"


def _real(split: Split) -> tuple[dict[str, pd.Index], pd.DataFrame, pd.DataFrame]:
    """Categories of every all-text column and the split with them (once per split)."""
    hit = _CACHE.get(id(split))
    if hit is not None and hit[0] is split:
        return hit[1], hit[2], hit[3]
    categories: dict[str, pd.Index] = {}
    train, holdout = split.train.copy(deep=False), split.holdout.copy(deep=False)
    for col in split.train.columns:
        if _text(split.train[col]) and _text(split.holdout[col]):
            values = pd.concat([split.train[col], split.holdout[col]], ignore_index=True)
            categories[col] = pd.Index(pd.unique(values.dropna()), dtype=object)
            dtype = pd.CategoricalDtype(categories[col])
            train[col] = split.train[col].astype(dtype)
            holdout[col] = split.holdout[col].astype(dtype)
    _CACHE.clear()  # one study at a time: the split is held, so its id is not reused
    _CACHE[id(split)] = (split, categories, train, holdout)
    return categories, train, holdout


def coded(split: Split, *synthetic: pd.DataFrame) -> tuple[pd.DataFrame, ...]:
    """``(train, holdout, *synthetic)`` with shared categorical text columns (module doc).

    The synthetic frames must have the split's columns. A column that is not all text (or all
    missing) in one of the synthetic frames is left as it is in every frame, train and holdout
    included, so that the measures' type checks see it. The split's converted frames are
    cached by the split object for the next trials: its frames must not change in place during
    a study (the tuner never changes them).
    """
    categories, cached_train, cached_holdout = _real(split)
    train, holdout = cached_train.copy(deep=False), cached_holdout.copy(deep=False)
    out = [f.copy(deep=False) for f in synthetic]
    for col, real in categories.items():
        if not all(_text(f[col]) or f[col].isna().all() for f in synthetic):
            train[col], holdout[col] = split.train[col], split.holdout[col]
            continue
        values = [f[col].to_numpy(dtype=object) for f in synthetic]
        codes = [real.get_indexer(v) for v in values]  # -1: missing, or not a real value
        new = [(c < 0) & pd.notna(v) for c, v in zip(codes, values, strict=True)]
        extra = pd.Index([], dtype=object)
        if any(n.any() for n in new):
            extra_codes, extra = pd.factorize(np.concatenate([v[n] for v, n in
                                                               zip(values, new, strict=True)]))
            bounds = np.cumsum([int(n.sum()) for n in new])[:-1]
            for c, n, e in zip(codes, new, np.split(extra_codes, bounds), strict=True):
                c[n] = len(real) + e
            extra = pd.Index(extra, dtype=object)
        dtype = pd.CategoricalDtype(real.append(extra))
        if len(extra):
            train[col] = train[col].cat.set_categories(dtype.categories)
            holdout[col] = holdout[col].cat.set_categories(dtype.categories)
        for f, c in zip(out, codes, strict=True):
            f[col] = pd.Categorical.from_codes(c, dtype=dtype)
    return (train, holdout, *out)
