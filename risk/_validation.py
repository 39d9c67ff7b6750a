"""Input validation shared by every risk measure.

Every check raises :class:`RiskInputError` (a ``ValueError``) or ``TypeError`` with a message
that names the argument, echoes the offending value and says what was expected, in the one
form of :mod:`risk.params` ("`NAME` must be EXPECTED, got VALUE": "`low <= high` must hold,
got (low=3, high=1)").

What every measure refuses, rather than computing a silently wrong number:

* frames that are not DataFrames, have no rows, duplicated column names or MultiIndex columns;
* a column whose kind (numeric, datetime, categorical) differs between frames, and a
  categorical column whose values are of different types in different frames (``True`` in one,
  ``"True"`` in another; ``1`` in one, ``"1"`` in another): such values never compare equal;
* complex numbers, and values that cannot be compared at all (lists, dicts);
* ``inf`` or ``-inf`` in a numeric column: an infinite value stretches equal-width bins and
  ranges to infinity and so turns the whole column into one bin (membership, CAP, Hellinger),
  one distance (DCR) or one match (identification radius). The error names the frame, the
  column and the count; replace them by a finite value or by a missing value (NaN), which every
  measure handles by its documented rule. Finite values beyond +-1e150 (``LARGEST_NUMBER``)
  are refused the same way: ranges and squared distances of such numbers overflow.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from risk._errors import RiskInputError
from risk.params import Range, check


def _short(values: Iterable[Any], limit: int = 8) -> str:
    items = list(values)
    text = ", ".join(repr(v) for v in items[:limit])
    if len(items) > limit:
        text += f", ... ({len(items) - limit} more)"
    return f"[{text}]"


def check_frame(frame: Any, name: str, *, allow_empty: bool = False) -> pd.DataFrame:
    """Return ``frame`` if it is a non-empty DataFrame with unique, flat column names.

    Column names may be any hashable labels (strings, integers); a MultiIndex is refused
    (selecting ``"a"`` from it returns a frame, not a column).
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`{name}` must be a pandas DataFrame, got {type(frame).__name__}.")
    if not allow_empty and len(frame) == 0:
        raise RiskInputError(f"`{name}` must have at least one row, got an empty DataFrame.")
    if isinstance(frame.columns, pd.MultiIndex):
        raise RiskInputError(
            f"`{name}` must have flat column names, got a MultiIndex of "
            f"{frame.columns.nlevels} levels; flatten it first (e.g. join the levels)."
        )
    if frame.columns.has_duplicates:
        dup = frame.columns[frame.columns.duplicated()].unique().tolist()
        raise RiskInputError(f"`{name}` has duplicated column names: {_short(dup)}.")
    return frame


_ROLE_ARGUMENTS = {
    "quasi-identifier": "`keys`",
    "key/target": "`keys`/`target`",
    "compared": "`columns`",
    "keys/synthesized": "`keys`/`synthesized`",
}


def check_columns(frame: pd.DataFrame, name: str, columns: Sequence[str], role: str) -> None:
    """Raise when ``frame`` lacks any of ``columns`` (used in the role ``role``)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        source = _ROLE_ARGUMENTS.get(role)
        named = f" named by {source}" if source else ""
        raise RiskInputError(
            f"`{name}` lacks the {role} column(s) {_short(missing)}{named}; "
            f"its columns are {_short(frame.columns)}."
        )


def check_column_list(value: Any, name: str, *, allow_empty: bool = False) -> list[str]:
    """Normalise a column argument (a name or a list of names) to a list of names.

    Sets and mappings are refused (a set has no order, a mapping's values would be ignored);
    numpy scalars (from an array of names) become Python scalars.
    """
    cols: list[Any]  # column labels as pandas holds them (names, or numbers, or bytes)
    if isinstance(value, (str, bytes)):
        cols = [value]
    elif isinstance(value, (Mapping, set, frozenset)) or not isinstance(value, Iterable):
        raise TypeError(
            f"`{name}` must be a column name or a list of column names, got "
            f"{type(value).__name__} {value!r}."
        )
    else:
        cols = [c.item() if isinstance(c, np.generic) else c for c in value]
    for c in cols:
        if isinstance(c, (list, tuple, set, dict, np.ndarray, pd.Index, pd.Series)):
            raise TypeError(
                f"`{name}` must list column names, but it holds {type(c).__name__} {c!r}."
            )
    if not cols and not allow_empty:
        raise RiskInputError(f"`{name}` must name at least one column, got {value!r}.")
    if len(set(cols)) != len(cols):
        raise RiskInputError(f"`{name}` names a column twice: {cols!r}.")
    return cols


def check_column_name(value: Any, name: str) -> Any:
    """Return ``value`` if it is one column label (a string, or a number for frames with
    integer column names); numpy scalars become Python scalars."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"`{name}` must be one column name, got {value!r}.")
    return value


def same_columns(frames: dict[str, pd.DataFrame]) -> list[str]:
    """Return the shared column list, or raise naming what is missing or extra per frame."""
    names = list(frames)
    ref_name = names[0]
    ref = list(frames[ref_name].columns)
    if not ref:
        raise RiskInputError(f"`{ref_name}` must have at least one column, got none.")
    for other in names[1:]:
        cols = list(frames[other].columns)
        missing = [c for c in ref if c not in cols]
        extra = [c for c in cols if c not in ref]
        if missing or extra:
            raise RiskInputError(
                f"`{other}` must have the same columns as `{ref_name}` when no column list is "
                f"given, but it lacks {_short(missing)} and has extra {_short(extra)}."
            )
    return ref


def column_kind(series: pd.Series) -> str:
    """numeric, datetime or categorical (bool counts as categorical)."""
    if pd.api.types.is_bool_dtype(series):
        return "categorical"
    if pd.api.types.is_complex_dtype(series):
        raise TypeError(
            f"Column {series.name!r} holds complex numbers (dtype {series.dtype}), which no risk "
            "measure can order or bin; split them into real columns first."
        )
    if pd.api.types.is_datetime64_any_dtype(series):
        return "datetime"
    if pd.api.types.is_numeric_dtype(series):
        return "numeric"
    return "categorical"


def column_kinds(frames: dict[str, pd.DataFrame], columns: Sequence[str]) -> dict[str, str]:
    """Return each column's kind (numeric, datetime, categorical), equal across all frames.

    Object columns holding only numbers (e.g. after a CSV round trip of an all-NaN column) are
    still "categorical"; a column that is numeric in one frame and text in another is an error,
    because comparing ``1`` with ``"1"`` silently never matches. For the same reason a
    categorical column must hold the same type of values in every frame (booleans, text or
    numbers; all-missing and mixed columns agree with any): a ``bool`` column against the
    strings ``"True"``/``"False"`` is an error. Numeric columns must be finite and within
    +-``LARGEST_NUMBER`` (refused with a count per frame), and values must be hashable.
    """
    kinds: dict[str, str] = {}
    for col in columns:
        seen = {}
        for name, frame in frames.items():
            try:
                seen[name] = column_kind(frame[col])
            except TypeError as err:
                raise TypeError(f"`{name}`: {err}") from None
        values = set(seen.values())
        if len(values) > 1:
            detail = ", ".join(f"{n}: {frames[n][col].dtype}" for n in seen)
            raise RiskInputError(
                f"Column {col!r} must have the same kind of dtype in every frame, got "
                f"({detail})."
            )
        kinds[col] = values.pop()
        if kinds[col] == "numeric":
            _check_finite(frames, col)
        elif kinds[col] == "categorical":
            _check_value_types(frames, col)
    return kinds


LARGEST_NUMBER = 1e150
"""Largest magnitude of a numeric value: beyond it ranges, bin widths and squared distances
(scikit-learn's scaling, mean squared errors) can overflow to inf."""


def _check_finite(frames: dict[str, pd.DataFrame], col: str) -> None:
    """Raise when a numeric column holds inf, -inf or a value beyond ``LARGEST_NUMBER`` in
    magnitude in any frame, with the count per frame."""
    infinite, huge = {}, {}
    for name, frame in frames.items():
        values = np.abs(frame[col].to_numpy(dtype=float, na_value=np.nan))
        n_inf = int(np.isinf(values).sum())
        n_huge = int((values > LARGEST_NUMBER).sum()) - n_inf
        if n_inf:
            infinite[name] = n_inf
        if n_huge:
            huge[name] = n_huge
    if infinite:
        detail = ", ".join(f"`{n}`: {k}" for n, k in infinite.items())
        raise RiskInputError(
            f"Numeric column {col!r} holds infinite values ({detail}); an inf stretches the "
            "column's bins and ranges to infinity, so every measure would silently ignore the "
            "column. Replace them by a finite value or by NaN (missing)."
        )
    if huge:
        detail = ", ".join(f"`{n}`: {k}" for n, k in huge.items())
        raise RiskInputError(
            f"Numeric column {col!r} holds values beyond +-{LARGEST_NUMBER:g} ({detail}), where "
            "ranges, bin widths and squared distances overflow; rescale the column."
        )


_FAMILIES = {
    "string": "text", "bytes": "bytes", "boolean": "bool", "integer": "number",
    "floating": "number", "mixed-integer-float": "number", "decimal": "number",
    "timedelta": "timedelta", "timedelta64": "timedelta", "datetime": "datetime",
    "datetime64": "datetime", "date": "date", "time": "time", "period": "period",
    "interval": "interval", "empty": None,
}


def _value_type(series: pd.Series) -> str | None:
    """bool, text, bytes, number, a time type, or mixed (anything else); None when all
    missing."""
    if pd.api.types.is_bool_dtype(series):
        return "bool"
    if isinstance(series.dtype, pd.CategoricalDtype):
        if not (series.cat.codes.to_numpy() >= 0).any():
            return None
        return _categories_type(series.dtype)
    if pd.api.types.is_string_dtype(series) and not pd.api.types.is_object_dtype(series):
        return "text"
    inferred = pd.api.types.infer_dtype(series, skipna=True)
    return _FAMILIES.get(inferred, "mixed")


@functools.lru_cache(maxsize=64)
def _categories_type(dtype: pd.CategoricalDtype) -> str | None:
    """:func:`_value_type` of a categorical dtype's categories (a trial's frames share one)."""
    return _value_type(pd.Series(dtype.categories))


def _check_value_types(frames: dict[str, pd.DataFrame], col: str) -> None:
    types = {name: _value_type(frame[col]) for name, frame in frames.items()}
    for name, kind in types.items():
        if kind == "mixed":
            _check_hashable(frames[name][col], name)
    pure = {k for k in types.values() if k not in (None, "mixed")}
    if len(pure) > 1:
        detail = ", ".join(
            f"{n}: {k or 'all missing'} (dtype {frames[n][col].dtype})" for n, k in types.items()
        )
        raise RiskInputError(
            f"Column {col!r} must hold the same type of values in every frame, got "
            f"({detail}); values of different types (True and 'True', 1 and '1') never "
            "compare equal, so every match would silently fail. Convert the column first."
        )


def _check_hashable(series: pd.Series, name: str) -> None:
    for value in series.to_numpy():
        try:
            hash(value)
        except TypeError:
            raise TypeError(
                f"`{name}` column {series.name!r} holds {type(value).__name__} values such as "
                f"{value!r}, which cannot be compared; risk measures need scalar values."
            ) from None


MISSING_ADVICE = (
    "pass missing='category' to treat a missing value as a category of its own, or impute"
)


def check_no_missing(
    frame: pd.DataFrame, name: str, columns: Sequence[str], role: str,
    advice: str = MISSING_ADVICE,
) -> None:
    """Raise when any of ``columns`` holds a missing value, with the count per column.

    ``advice`` says what to do; the default names the ``missing`` option, so a measure without
    one must pass its own.
    """
    counts = frame[list(columns)].isna().sum()
    bad = counts[counts > 0]
    if len(bad):
        detail = ", ".join(f"{c!r}: {int(n)}" for c, n in bad.items())
        raise RiskInputError(
            f"`{name}` has missing values in {role} column(s) ({detail}); {advice}."
        )


def check_number(value: Any, name: str, *, finite: bool = True) -> float:
    """Return ``value`` (a Python or numpy real number, not a bool) as a float, not NaN and,
    with ``finite``, not infinite."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"`{name}` must be a number, got {type(value).__name__} {value!r}.")
    v = float(value)
    if math.isnan(v):
        raise RiskInputError(f"`{name}` must not be NaN, got {name}={value!r}.")
    if finite and math.isinf(v):
        raise RiskInputError(f"`{name}` must be finite, got {name}={value!r}.")
    return v


def resolve_seed(random_state: Any) -> int:
    """Return the integer seed actually used: ``random_state`` itself, or fresh entropy.

    Results record this seed, so a run with ``random_state=None`` can be repeated exactly.
    """
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0])
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
        raise TypeError(
            f"`random_state` must be an int or None, got {type(random_state).__name__} "
            f"{random_state!r}."
        )
    return int(check(random_state, "random_state", Range(0)))


def as_synthetic_sets(synthetic: Any) -> list[pd.DataFrame]:
    """One synthetic DataFrame or a non-empty list of m of them, as a list."""
    if isinstance(synthetic, pd.DataFrame):
        return [synthetic]
    if isinstance(synthetic, (list, tuple)) and synthetic:
        return list(synthetic)
    raise TypeError(
        "`synthetic` must be a DataFrame or a non-empty list of DataFrames, got "
        f"{type(synthetic).__name__}."
    )
