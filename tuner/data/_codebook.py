"""The codebook: each column's public domain (``[data] codebook``).

A release leaks what its generator reads from the confidential table *around* the model: the
categories present, each number's minimum and maximum (SDV's ``enforce_min_max_values``, the
DP families' bins), the share of missing values. A codebook says what is public instead, as a
statistics office's codebook does: per column its allowed categories, or its range, or that
its domain may be read from the data (``"public"``: the custodian says it is public, e.g. a
``sex`` column). Annamalai, Ganev & De Cristofaro (USENIX Security 2024) found DP synthetic
data generators whose guarantee failed exactly there; Hundepool et al., *Statistical
Disclosure Control* (Wiley 2012), section 3.4, on coding what is published.

Format, JSON (``codebook.json``): one entry per column, the columns under ``"columns"`` or at
the top level::

    {"columns": {
        "age":        {"min": 17, "max": 99},
        "sex":        {"categories": ["Female", "Male"]},
        "occupation": {"categories": ["Sales", "Tech-support", ...], "missing": true},
        "admitted":   {"min": "2000-01-01", "max": "2024-12-31"},
        "fnlwgt":     "public"}}

or CSV (``codebook.csv``, what a spreadsheet or SDV metadata plus a published codebook turn
into): a header ``column,type,categories,min,max,missing`` and one row per column, ``type``
one of ``categorical``, ``numerical``, ``datetime`` or ``public``, categories separated by
``|``, ``missing`` ``true`` or empty. SDV's metadata has no field for categories or ranges,
so the codebook is its own file. ``missing`` (false unless said) declares that the column may
be missing. Every value of the table must lie in its column's domain (checked at read, exit 2
naming the column); a column the codebook does not name has its domain read from the data.

What takes the domain from it: the DP families' bins and categories
(:mod:`tuner.synthesis._dp`), the range every family's records are clipped to (in place of
the training minimum and maximum), and value protection (:mod:`tuner.data._protect`), which
leaves a column the codebook declares alone: its categories and range are public.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

import risk
from tuner.errors import InputError

CSV_TYPES = {"categorical": "categories", "numerical": "range", "datetime": "range",
             "public": "public"}
CSV_HEADER = ("column", "type", "categories", "min", "max", "missing")


@dataclasses.dataclass(frozen=True)
class Domain:
    """One column's public domain: ``kind`` ``"categories"`` (``categories``), ``"range"``
    (``low`` to ``high``, numbers or ISO dates) or ``"public"`` (read from the data, declared
    public); ``missing``: the column may be missing."""

    column: str
    kind: str
    categories: tuple[Any, ...] = ()
    low: Any = None
    high: Any = None
    missing: bool = False

    def bounds(self, values: pd.Series) -> tuple[Any, Any]:
        """``low`` and ``high`` in the type of ``values`` (timestamps for a date column;
        the integers inside the range for an integer column)."""
        if pd.api.types.is_datetime64_any_dtype(values):
            low, high = pd.Timestamp(self.low), pd.Timestamp(self.high)
            zone = getattr(values.dtype, "tz", None)
            return (low.tz_localize(zone), high.tz_localize(zone)) if zone else (low, high)
        if pd.api.types.is_integer_dtype(values):
            return math.ceil(self.low), math.floor(self.high)
        return self.low, self.high

    def outside(self, values: pd.Series) -> tuple[int, list[Any]]:
        """How many present values of ``values`` lie outside the domain, and up to three."""
        if self.kind == "public":
            return 0, []
        present = values.dropna()
        if self.kind == "categories":
            hit = ~present.isin(self.categories)
        else:
            low, high = self.bounds(values)
            hit = (present < low) | (present > high)
        bad = present[hit.to_numpy(dtype=bool)]
        return len(bad), list(pd.unique(bad.astype(object)))[:3]


@dataclasses.dataclass(frozen=True)
class Codebook:
    """The public domain of the columns it names (module docstring); ``source``: its file."""

    domains: Mapping[str, Domain]
    source: str = ""

    @property
    def declared(self) -> frozenset[str]:
        """The columns whose domain is public by declaration (value protection skips them)."""
        return frozenset(self.domains)

    def uncovered(self, frame: pd.DataFrame) -> list[str]:
        """The columns of ``frame`` whose domain would be read from the data: neither in the
        codebook nor boolean (a boolean's domain is its type's)."""
        return [str(c) for c in frame.columns if str(c) not in self.domains
                and not pd.api.types.is_bool_dtype(frame[c])]

    def problems(self, frame: pd.DataFrame) -> list[str]:
        """What the table does that its codebook does not allow, one line per column."""
        where = f"data.codebook ({self.source})" if self.source else "data.codebook"
        absent = sorted(set(self.domains) - set(map(str, frame.columns)))
        out = ([f"{where} names column(s) {absent} that the data do not have; the data's "
                f"columns are {list(map(str, frame.columns))}"] if absent else [])
        for name, d in self.domains.items():
            if name not in frame.columns:
                continue
            values = frame[name]
            kind = risk.column_kind(values)
            if d.kind == "range" and kind not in ("numeric", "datetime"):
                out.append(f"{where}: column {name!r} is given a range [{d.low}, {d.high}], but "
                           f"it holds {kind} values; give its categories instead")
                continue
            if d.kind == "range" and (kind == "datetime") != _is_date(d.low):
                out.append(f"{where}: column {name!r} holds {kind} values, but its range "
                           f"[{d.low!r}, {d.high!r}] is not of that kind")
                continue
            count, examples = d.outside(values)
            if count:
                allowed = (f"its {len(d.categories)} categories" if d.kind == "categories"
                           else f"its range [{d.low}, {d.high}]")
                out.append(f"{where}: column {name!r} has {count} value(s) outside {allowed}, "
                           f"e.g. {examples}: widen the codebook or recode the data")
            missing = int(values.isna().sum())
            if missing and not d.missing and d.kind != "public":
                out.append(f"{where}: column {name!r} has {missing} missing value(s) but its "
                           'entry does not allow them: add "missing": true')
        return out

    def clip(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` with each ranged column clipped into its range (a copy where any is)."""
        out = frame
        for name, d in self.domains.items():
            if d.kind != "range" or name not in frame.columns:
                continue
            values = frame[name]
            if not (pd.api.types.is_numeric_dtype(values)
                    or pd.api.types.is_datetime64_any_dtype(values)):
                continue  # a synthesiser that gave text here: the gate's checks say so
            low, high = d.bounds(values)
            if out is frame:
                out = frame.copy()
            out[name] = values.clip(low, high).astype(values.dtype)
        return out

    def ranges(self, frame: pd.DataFrame) -> bool:
        """Whether the codebook gives a range to a column of ``frame``."""
        return any(d.kind == "range" and name in frame.columns for name, d in self.domains.items())

    def bounding(self, train: pd.DataFrame) -> Codebook:
        """This codebook with every other number and date column of ``train`` given its
        training minimum and maximum: the ranges records are clipped to where a synthesiser's
        own clipping (SDV's ``enforce_min_max_values``, to the training range of *every*
        column) is switched off so that the codebook's ranges hold in its place."""
        extra = {}
        for name in train.columns:
            values = train[name]
            if str(name) in self.domains or pd.api.types.is_bool_dtype(values) or \
                    risk.column_kind(values) not in ("numeric", "datetime") or \
                    values.notna().sum() == 0:
                continue
            extra[str(name)] = Domain(str(name), "range", low=values.min(), high=values.max(),
                                      missing=True)
        return dataclasses.replace(self, domains={**self.domains, **extra})

    def record(self) -> dict[str, Any]:
        """The manifest's ``codebook`` entry: the file and each column's kind (the domain is
        public, but the file is the reference; its values are not repeated)."""
        return {"source": self.source,
                "columns": {name: d.kind for name, d in self.domains.items()}}


def _is_date(value: Any) -> bool:
    return isinstance(value, str)


def _number(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{where} must be a finite number, got {value!r}")
    return value


def _date(where: str, value: Any) -> str:
    try:
        pd.Timestamp(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where} must be an ISO date such as \"2000-01-31\", got "
                         f"{value!r}") from exc
    return value


def _domain(where: str, column: str, entry: Any) -> Domain:
    """One entry of the JSON form (module docstring)."""
    if entry == "public" or entry == {"public": True}:
        return Domain(column, "public", missing=True)
    if not isinstance(entry, dict):
        raise InputError(f'{where}: the entry of column {column!r} must be "public" or an object '
                         f'with "categories" or "min" and "max", got {entry!r}')
    unknown = sorted(set(entry) - {"categories", "min", "max", "missing"})
    if unknown:
        raise InputError(f"{where}: the entry of column {column!r} has unknown key(s) {unknown};"
                         ' valid keys: "categories", "min", "max", "missing"')
    missing = entry.get("missing", False)
    if not isinstance(missing, bool):
        raise InputError(f'{where}: "missing" of column {column!r} must be true or false, but '
                         f"got {missing!r}")
    if "categories" in entry:
        cats = entry["categories"]
        if "min" in entry or "max" in entry or not isinstance(cats, list) or not cats:
            raise InputError(f'{where}: column {column!r} takes "categories" (a non-empty list) '
                             f'or "min" and "max", not both; got {entry!r}')
        if len(set(map(repr, cats))) < len(cats):
            raise InputError(f"{where}: the categories of column {column!r} repeat a value")
        return Domain(column, "categories", categories=tuple(cats), missing=missing)
    if "min" not in entry or "max" not in entry:
        raise InputError(f'{where}: column {column!r} needs "categories", or both "min" and '
                         f'"max"; got {entry!r}')
    low, high = entry["min"], entry["max"]
    if isinstance(low, str) or isinstance(high, str):
        low, high = (_date(f"{where}: min of column {column!r}", low),
                     _date(f"{where}: max of column {column!r}", high))
        ordered = pd.Timestamp(low) < pd.Timestamp(high)
    else:
        low, high = (_number(f"{where}: min of column {column!r}", low),
                     _number(f"{where}: max of column {column!r}", high))
        ordered = low < high
    if not ordered:
        raise InputError(f"{where}: column {column!r} needs min < max, got min {low!r} and "
                         f"max {high!r}")
    return Domain(column, "range", low=low, high=high, missing=missing)


def _csv_entries(where: str, path: Path) -> dict[str, Any]:
    """The CSV form as JSON entries."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if not rows or tuple(h.strip().lower() for h in rows[0]) != CSV_HEADER:
        raise InputError(f"{where}: the first row must be the header {','.join(CSV_HEADER)}, "
                         f"but it is {','.join(rows[0]) if rows else '(empty file)'}")
    out: dict[str, Any] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(CSV_HEADER):
            raise InputError(f"{where}, line {line}: {len(row)} fields, expected "
                             f"{len(CSV_HEADER)} ({','.join(CSV_HEADER)})")
        column, kind, cats, low, high, missing = (cell.strip() for cell in row)
        if kind not in CSV_TYPES:
            raise InputError(f"{where}, line {line}: type {kind!r} of column {column!r} must be "
                             f"one of {sorted(CSV_TYPES)}")
        if column in out:
            raise InputError(f"{where}, line {line}: column {column!r} is given twice")
        if kind == "public":
            out[column] = "public"
            continue
        entry: dict[str, Any] = {"missing": missing.lower() in ("true", "yes", "1")}
        if kind == "categorical":
            entry["categories"] = [c for c in cats.split("|")] if cats else []
        elif kind == "datetime":
            entry |= {"min": low, "max": high}
        else:
            try:
                entry |= {"min": float(low), "max": float(high)}
            except ValueError as exc:
                raise InputError(f"{where}, line {line}: min and max of column {column!r} must "
                                 f"be numbers, got {low!r} and {high!r}") from exc
        out[column] = entry
    return out


def read_codebook(path: Path) -> Codebook:
    """The codebook in ``path`` (JSON, or CSV by its ``.csv`` suffix; module docstring);
    :class:`~tuner.errors.InputError` naming the file, the column and what was expected."""
    where = f"data.codebook ({path.name})"
    if not path.is_file():
        raise InputError(f"data.codebook: codebook file {path} does not exist")
    if path.suffix.lower() == ".csv":
        entries = _csv_entries(where, path)
    else:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"{where} is not valid JSON: {exc}") from exc
        if isinstance(raw, dict) and set(raw) == {"columns"}:
            raw = raw["columns"]
        if not isinstance(raw, dict) or not raw:
            raise InputError(f"{where} must map each column to its domain (a non-empty object)")
        entries = raw
    domains = {str(c): _domain(where, str(c), e) for c, e in entries.items()}
    return Codebook(domains, source=path.name)
