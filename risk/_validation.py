"""Input validation shared by every risk measure.

Every check raises :class:`RiskInputError` (a ``ValueError``) or ``TypeError`` with a message
that names the argument, echoes the offending value and says what was expected, in the manner
of Optuna's messages ("`low <= high` must hold, but got (low=3, high=1)").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd


class RiskInputError(ValueError):
    """Raised when an input to a risk measure is malformed."""


def _short(values: Iterable[Any], limit: int = 8) -> str:
    items = list(values)
    text = ", ".join(repr(v) for v in items[:limit])
    if len(items) > limit:
        text += f", ... ({len(items) - limit} more)"
    return f"[{text}]"


def check_frame(frame: Any, name: str, *, allow_empty: bool = False) -> pd.DataFrame:
    """Return ``frame`` if it is a non-empty DataFrame with unique string-like column names."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`{name}` must be a pandas DataFrame, but got {type(frame).__name__}.")
    if not allow_empty and len(frame) == 0:
        raise RiskInputError(f"`{name}` must have at least one row, but got an empty DataFrame.")
    if frame.columns.has_duplicates:
        dup = frame.columns[frame.columns.duplicated()].unique().tolist()
        raise RiskInputError(f"`{name}` has duplicated column names: {_short(dup)}.")
    return frame


def check_columns(frame: pd.DataFrame, name: str, columns: Sequence[str], role: str) -> None:
    """Raise when ``frame`` lacks any of ``columns`` (used in the role ``role``)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise RiskInputError(
            f"`{name}` lacks the {role} column(s) {_short(missing)}; "
            f"its columns are {_short(frame.columns)}."
        )


def check_column_list(value: Any, name: str, *, allow_empty: bool = False) -> list[str]:
    """Normalise a column argument (a name or a list of names) to a list of names."""
    if isinstance(value, str):
        cols = [value]
    elif isinstance(value, Iterable):
        cols = list(value)
    else:
        raise TypeError(
            f"`{name}` must be a column name or a list of column names, but got {value!r}."
        )
    if not cols and not allow_empty:
        raise RiskInputError(f"`{name}` must name at least one column, but got {value!r}.")
    if len(set(cols)) != len(cols):
        raise RiskInputError(f"`{name}` names a column twice: {cols!r}.")
    return cols


def same_columns(frames: dict[str, pd.DataFrame]) -> list[str]:
    """Return the shared column list, or raise naming what is missing or extra per frame."""
    names = list(frames)
    ref_name = names[0]
    ref = list(frames[ref_name].columns)
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
    if pd.api.types.is_datetime64_any_dtype(series):
        return "datetime"
    if pd.api.types.is_numeric_dtype(series):
        return "numeric"
    return "categorical"


def column_kinds(frames: dict[str, pd.DataFrame], columns: Sequence[str]) -> dict[str, str]:
    """Return each column's kind (numeric, datetime, categorical), equal across all frames.

    Object columns holding only numbers (e.g. after a CSV round trip of an all-NaN column) are
    still "categorical"; a column that is numeric in one frame and text in another is an error,
    because comparing ``1`` with ``"1"`` silently never matches.
    """
    kinds: dict[str, str] = {}
    for col in columns:
        seen = {name: column_kind(frame[col]) for name, frame in frames.items()}
        values = set(seen.values())
        if len(values) > 1:
            detail = ", ".join(f"{n}: {frames[n][col].dtype}" for n in seen)
            raise RiskInputError(
                f"Column {col!r} must have the same kind of dtype in every frame, but got "
                f"({detail})."
            )
        kinds[col] = values.pop()
    return kinds


def check_no_missing(frame: pd.DataFrame, name: str, columns: Sequence[str], role: str) -> None:
    """Raise when any of ``columns`` holds a missing value, with the count per column."""
    counts = frame[list(columns)].isna().sum()
    bad = counts[counts > 0]
    if len(bad):
        detail = ", ".join(f"{c!r}: {int(n)}" for c, n in bad.items())
        raise RiskInputError(
            f"`{name}` has missing values in {role} column(s) ({detail}); pass "
            f"missing='category' to treat a missing value as a category of its own, or impute."
        )


def check_fraction(value: Any, name: str, *, low: float = 0.0, high: float = 1.0) -> float:
    """Return ``value`` as a float strictly inside ``(low, high)``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"`{name}` must be a number, but got {value!r}.")
    v = float(value)
    if not (low < v < high):
        raise RiskInputError(f"`{low} < {name} < {high}` must hold, but got {name}={value!r}.")
    return v


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"`{name}` must be an integer, but got {value!r}.")
    if value < minimum:
        raise RiskInputError(f"`{name} >= {minimum}` must hold, but got {name}={value!r}.")
    return int(value)


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices``."""
    if value not in choices:
        raise RiskInputError(f"`{name}` must be one of {list(choices)!r}, but got {value!r}.")
    return str(value)


def resolve_seed(random_state: Any) -> int:
    """Return the integer seed actually used: ``random_state`` itself, or fresh entropy.

    Results record this seed, so a run with ``random_state=None`` can be repeated exactly.
    """
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0])
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
        raise TypeError(
            f"`random_state` must be an int or None, but got {type(random_state).__name__} "
            f"{random_state!r}."
        )
    if random_state < 0:
        raise RiskInputError(f"`random_state >= 0` must hold, but got {random_state!r}.")
    return int(random_state)


def as_synthetic_sets(synthetic: Any) -> list[pd.DataFrame]:
    """One synthetic DataFrame or a non-empty list of m of them, as a list."""
    if isinstance(synthetic, pd.DataFrame):
        return [synthetic]
    if isinstance(synthetic, (list, tuple)) and synthetic:
        return list(synthetic)
    raise TypeError(
        "`synthetic` must be a DataFrame or a non-empty list of DataFrames, but got "
        f"{type(synthetic).__name__}."
    )
