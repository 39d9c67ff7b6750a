"""Dates are dates: date and datetime columns read as datetimes and released in their input's
format (issue 33, item 2).

A CSV holds dates as text; read as text, a birth date is a category with one label per day,
so a synthesiser can only re-emit real dates and the utility report compares labels. Here a
text column whose values all parse with one of :data:`FORMATS` (judged on a sample, then
parsed in full), or one declared in ``[data] dates = {COLUMN = "%d/%m/%Y"}``, becomes a
``datetime64`` column: SDV synthesises it with its datetime sdtype (:func:`tuner.data.sdtype`),
and every risk measure reads it as a number of days (``risk._encode``, ``risk.dcr``). The
release writes it back in the format it was read in (:func:`formatted`). A Parquet file's
datetime columns are datetimes already; its ``date`` columns (read by pandas as Python dates)
and time-zone-aware ones (as UTC) are made plain ``datetime64`` the same way.

An unparseable value in a date column stops the run naming the column, the value and its line:
reading it as missing would change the column's missing share without a word.
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd

from tuner.errors import InputError

# the formats tried on a text column, in order: ISO first; day-first before month-first (an
# ambiguous column, every day <= 12, is read day-first: declare it in [data] dates otherwise)
FORMATS = ("%Y-%m-%d", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M",
           "%Y-%m-%dT%H:%M", "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%d-%m-%Y",
           "%d/%m/%Y %H:%M", "%m/%d/%Y %H:%M", "%d/%m/%Y %H:%M:%S", "%m/%d/%Y %H:%M:%S")
ISO_DATE, ISO_DATETIME = "%Y-%m-%d", "%Y-%m-%d %H:%M:%S"
SAMPLE = 200  # values tried per text column before a format is parsed on the whole column
PARSED = 0.9  # share of the sampled values a format must parse; the rest are named as errors
# a cheap first filter: a four-digit year, digits and date separators, maybe a time
_SHAPE = re.compile(r"(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4})"
                    r"([ T]\d{1,2}:\d{2}(:\d{2})?)?")


def _sample(values: pd.Series) -> pd.Series:
    """The non-missing values among :data:`SAMPLE` records spread over the column (every k-th;
    taken before the missing ones are dropped, so that a big column is never scanned whole);
    when those are all missing, the column's first non-missing values (a column with one date
    among 400 records is a date column: it was judged an identifier)."""
    step = max(1, len(values) // SAMPLE)
    sample = values.iloc[::step].iloc[:SAMPLE].dropna()
    return sample if len(sample) or step == 1 else values.dropna().iloc[:SAMPLE]


def _shaped_text(values: pd.Series, shape: re.Pattern[str]) -> pd.Series | None:
    """The stripped sampled values (:func:`_sample`) of a text column, when at least
    :data:`PARSED` of them have ``shape``; None otherwise (not text, no value, other shapes)."""
    if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
        return None
    sample = _sample(values)
    if sample.empty or not all(isinstance(v, str) for v in sample):
        return None
    text = sample.str.strip()
    return text if text.str.fullmatch(shape).mean() >= PARSED else None


def detect_format(values: pd.Series) -> str | None:
    """The first of :data:`FORMATS` that parses the most sampled values of a text column, when
    it parses at least :data:`PARSED` of them (a date column with a typo is a date column, its
    typo an error: :func:`read_dates`), or None (not text, no value, or not dates)."""
    text = _shaped_text(values, _SHAPE)
    if text is None:
        return None
    shares: list[float] = []
    for fmt in FORMATS:  # the first that parses every value ends the search
        shares.append(float(pd.to_datetime(text, format=fmt, errors="coerce").notna().mean()))
        if shares[-1] == 1.0:
            return fmt
    best = max(range(len(FORMATS)), key=lambda i: (shares[i], -i))
    return FORMATS[best] if shares[best] >= PARSED else None


# what reads as a date or a time to a person, in any of the forms below or others: ISO with a
# zone (Z, +02:00), two-digit years; a column of such values that no one form reads is refused
_LOOSE = re.compile(r"(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2}(\d{2})?)"
                    r"([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?\s*(Z|[+-]\d{2}:?\d{2})?")
_ZONE = re.compile(r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}:?\d{2})$")
# slashes only: 10-12-15 is as often a code as a date, 1.2.10 a version
_SHORT_YEAR = re.compile(r"\d{1,2}/\d{1,2}/\d{2}")


def mixed_forms(values: pd.Series, column: str) -> str | None:
    """Why a text column that reads as dates to a person is not read as dates (no one form of
    :data:`FORMATS` reads it): times with a zone, two-digit years, or several forms in one
    column (two example values in different forms); None when it does not look like dates.
    Read as categories, such a column would be released as real dates in mixed forms."""
    text = _shaped_text(values, _LOOSE)
    if text is None:
        return None
    if (zoned := text[text.str.contains(_ZONE)]).size:
        return (f"column {column!r} holds times with a time zone (e.g. {zoned.iloc[0]!r}), "
                "which the tuner does not synthesise: write them in one zone without the "
                "offset (UTC, or local time), and they are read as dates")
    if (short := text[text.str.fullmatch(_SHORT_YEAR)]).size == text.size:
        return (f"column {column!r} holds dates with two-digit years (e.g. {short.iloc[0]!r}), "
                "whose century is a guess: write four-digit years, or declare the format, e.g. "
                f'[data] dates = {{{column} = "%d/%m/%y"}} (Python reads 69-99 as 19xx)')
    forms: dict[str, str] = {}
    for value in text:
        for fmt in (*FORMATS, "%d/%m/%y", "%m/%d/%y"):
            if not pd.isna(pd.to_datetime(value, format=fmt, errors="coerce")):
                forms.setdefault(fmt, value)
                break
    if len(forms) < 2:
        return None
    (f1, v1), (f2, v2) = list(forms.items())[:2]
    return (f"column {column!r} holds dates in several forms ({v1!r} reads as {f1!r}, {v2!r} "
            f"as {f2!r}): write them in one form and declare it if it is not detected, e.g. "
            f'[data] dates = {{{column} = "{f1}"}}')


def _parse(values: pd.Series, fmt: str, *, column: str, first_line: int) -> pd.Series:
    """``values`` parsed with ``fmt``; :class:`InputError` naming the first value that does
    not parse and its line (``first_line``: the line of the first record). Values with spaces
    around them are tried again
    stripped, only when some value did not parse (on 400,000 records a second pass costs a
    third of the parse: ``experiments/patients/bench_read.py``)."""
    if "%z" in fmt or "%Z" in fmt:  # aware times, or Python objects when the offsets differ
        present = values.dropna()
        shown = repr(str(present.iloc[0])) if len(present) else "none"
        raise InputError(
            f"date column {column!r} is declared with a time zone ({fmt!r}; first value "
            f"{shown}), which the tuner does not synthesise: write the times in one zone "
            "without the offset (UTC, or local time) and declare that format in [data] dates")
    # ISO forms have pandas' fast parser, and its cache of distinct values (a pass over the
    # column) costs more than it saves; other forms parse each distinct value once
    cache = not fmt.startswith("%Y-%m-%d")
    try:  # the common case, every value a date or missing: no second pass over the column
        return pd.to_datetime(values, format=fmt, cache=cache)
    except (ValueError, TypeError):
        pass
    text = values.astype("string").str.strip()
    parsed = pd.to_datetime(text, format=fmt, errors="coerce")
    bad = (parsed.isna() & text.notna() & (text != "")).to_numpy()
    if bad.any():
        position = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"date column {column!r} holds {str(values.iloc[position])!r} on line "
            f"{position + first_line}, which does not parse as {fmt!r} ({int(bad.sum())} "
            "value(s) do not): correct the value, make it empty (missing), or give the "
            f"column's format: [data] dates = {{{column} = \"...\"}}, or its datetime_format "
            "in the SDV metadata file when that declares it")
    return parsed


def _plain(values: pd.Series) -> tuple[pd.Series, str] | None:
    """A Parquet datetime column as naive ``datetime64`` and its release format; None when the
    column holds no dates (judged on :func:`_sample` for a column of Python objects)."""
    if pd.api.types.is_datetime64_any_dtype(values):
        out = values.dt.tz_convert("UTC").dt.tz_localize(None) \
            if getattr(values.dt, "tz", None) is not None else values
    elif pd.api.types.is_object_dtype(values):
        sample = _sample(values)
        if sample.empty or not all(isinstance(v, dt.date) for v in sample):
            return None
        out = pd.to_datetime(values)
    else:
        return None
    stamps = out.to_numpy(dtype="datetime64[ns]")
    whole_days = bool((stamps[~np.isnat(stamps)].view("int64") % 86_400_000_000_000 == 0).all())
    return out, ISO_DATE if whole_days else ISO_DATETIME


# day-first forms and the month-first form that reads the same text
SWAPPED = {"%d/%m/%Y": "%m/%d/%Y", "%d/%m/%Y %H:%M": "%m/%d/%Y %H:%M",
           "%d/%m/%Y %H:%M:%S": "%m/%d/%Y %H:%M:%S"}


def ambiguous_dates(frame: pd.DataFrame, formats: dict[str, str], *,
                    declared: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(column, month-first format) for each column read day first (a detected
    :data:`FORMATS` form, not ``declared``) whose dates all read month first too (every day 12
    or less): ``03/02/2001`` is 3 February or 2 March, and the release keeps the reading the
    run chose."""
    out = []
    for col, fmt in formats.items():
        if fmt not in SWAPPED or col in (declared or {}) or col not in frame.columns:
            continue
        dates = frame[col].dropna()
        if len(dates) and bool((dates.dt.day <= 12).all()):
            out.append((col, SWAPPED[fmt]))
    return out


def read_dates(frame: pd.DataFrame, declared: dict[str, str] | None = None, *,
               first_line: int = 2) -> tuple[pd.DataFrame, dict[str, str]]:
    """``frame`` with its date columns as ``datetime64``, and each one's release format.

    ``declared`` (``[data] dates``) gives formats for named columns; every other text column
    is tried with :data:`FORMATS`. ``first_line``: the line of the first record in the file (2
    below a header row), for the error naming a value that does not parse. A declared column
    the data lack is a :class:`InputError` naming it."""
    declared = dict(declared or {})
    unknown = [c for c in declared if c not in frame.columns]
    if unknown:
        raise InputError(f"data.dates names column(s) {unknown} that the data do not have; the "
                         f"data's columns are {list(map(str, frame.columns))}")
    formats: dict[str, str] = {}
    converted: dict[str, pd.Series] = {}
    for col in frame.columns:
        name = str(col)
        values = frame[col]
        if name in declared:
            if pd.api.types.is_datetime64_any_dtype(values):
                plain = _plain(values)
                converted[name] = plain[0] if plain else values
            else:
                converted[name] = _parse(values, declared[name], column=name,
                                         first_line=first_line)
            formats[name] = declared[name]
        elif (fmt := detect_format(values)) is not None:
            converted[name] = _parse(values, fmt, column=name, first_line=first_line)
            formats[name] = fmt
        elif (plain := _plain(values)) is not None:
            converted[name], formats[name] = plain
        elif (why := mixed_forms(values, name)) is not None:
            raise InputError(why)
    if not converted:
        return frame, formats
    out = frame.copy(deep=False)  # the other columns shared, not copied (400,000 records)
    for name, values in converted.items():
        out[name] = values
    return out, formats


def formatted(frame: pd.DataFrame, formats: dict[str, str]) -> pd.DataFrame:
    """``frame`` in the release's form of the input's values: each datetime column of
    ``formats`` as text in its format (a missing date stays missing), and each column of
    floats whose every value is a whole number as integers (a column of whole numbers with a
    missing value is read as floats: written as they are, ZIP code 60614 would be released as
    ``60614.0`` and age 63 as ``63.0``)."""
    out = {c: frame[c].dt.strftime(fmt) for c, fmt in formats.items()
           if c in frame.columns and pd.api.types.is_datetime64_any_dtype(frame[c])}
    out |= {c: frame[c].astype("Int64") for c in frame.columns  # a missing one stays empty
            if c not in out and pd.api.types.is_float_dtype(frame[c])
            and whole_numbers(frame[c]) and frame[c].abs().max() < 2.0 ** 63}
    return frame.assign(**out) if out else frame


def whole_numbers(values: pd.Series) -> bool:
    """Whether a float column holds whole numbers only, at least one (missing values aside; an
    integer column with a missing value is read as floats)."""
    x = values.dropna().to_numpy(dtype=float)
    return bool(x.size) and bool(np.isfinite(x).all() and (x == np.floor(x)).all())
