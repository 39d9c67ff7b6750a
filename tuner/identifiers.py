"""Direct identifiers: dropped before anything else, and undeclared ones refused (design §9.1).

A column that takes a different value in every record (a name, a record number, a phone
number) identifies every person by itself; synthesising it copies or invents identifiers, and
no risk measure on the other columns can see that. Declared identifiers (``[data]
identifiers``) are removed from the table before the split. An undeclared column unique for
every record stops the run before any trial, naming the column and the fix; one unique for at
least 95 % of the records is warned about. Float columns are measurements (an income, a
weight) whose values are naturally all distinct, so they are not judged by uniqueness; a
unique-per-record column that is not an identifier is declared in ``[data] keep_unique``.
"""

from __future__ import annotations

import pandas as pd

from tuner.config import Config, ConfigError

NEARLY_UNIQUE = 0.95
MIN_RECORDS = 50  # below this, any column with many levels is unique by chance


def _judged(series: pd.Series) -> bool:
    return not pd.api.types.is_float_dtype(series)


def unique_shares(frame: pd.DataFrame) -> dict[str, float]:
    """Share of distinct non-missing values among the records, per non-float column."""
    n = len(frame)
    return {str(c): frame[c].nunique(dropna=True) / n for c in frame.columns
            if n and _judged(frame[c])}


def drop_identifiers(cfg: Config, frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` without the declared identifiers, and warnings about nearly unique columns.

    :class:`ConfigError` for an undeclared column unique for every record (in tables of at
    least ``MIN_RECORDS`` records)."""
    declared = list(cfg.data.identifiers)
    unknown = [c for c in declared if c not in frame.columns]
    if unknown:
        raise ConfigError(f"data.identifiers names column(s) {unknown} that the data do not "
                          f"have; the data's columns are {list(map(str, frame.columns))}")
    rest = frame.drop(columns=declared)
    if rest.shape[1] == 0:
        raise ConfigError("data.identifiers names every column: nothing is left to synthesise")
    if len(rest) < MIN_RECORDS:
        return rest, []
    shares = {c: s for c, s in unique_shares(rest).items() if c not in cfg.data.keep_unique}
    unique = [c for c, s in shares.items() if s >= 1.0]
    if unique:
        raise ConfigError(
            f"column(s) {unique} take a different value in every record: a direct identifier "
            "would be synthesised and released. Declare it in [data] identifiers = "
            f"{unique!r} to drop it, or, if it is not an identifier, in [data] keep_unique = "
            f"{unique!r}")
    warnings = [f"column {c!r} is unique for {s:.1%} of the records: if it identifies people, "
                f"declare it in [data] identifiers" for c, s in shares.items()
                if NEARLY_UNIQUE <= s < 1.0]
    return rest, warnings
