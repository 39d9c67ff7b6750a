"""SDV metadata in (``[data] metadata``), read into what the tuner needs: each column's sdtype
and datetime format, and which columns are released as fake values (issue 33, item 3).

The file is SDV's own JSON (https://docs.sdv.dev/sdv/reference/metadata-spec): the single-table
form (``"METADATA_SPEC_VERSION": "SINGLE_TABLE_V1"``, ``columns``, ``primary_key``, ...) or a
multi-table file holding one table (``"tables": {NAME: {...}}``, no relationship). It is read
and validated by SDV (``sdv.metadata.Metadata.load_from_dict`` and ``validate``), so a file SDV
accepts is accepted here and SDV's message says what is wrong with one it does not.

Which columns are fake follows SDV's rule (``sdv.data_processing.DataProcessor``, SDV 1.x):

* sdtype ``id``, the primary key and the alternate keys: new values, from the column's
  ``regex_format`` when it has one (drawn at random here, where SDV enumerates the regex in
  order from its first string), else SDV's defaults (``sdv-id-??????``, or an integer below
  2**24 for a numeric column);
* any other sdtype that is not one of the statistical ones (``numerical``, ``categorical``,
  ``boolean``, ``datetime``, ``ordinal``) is a Faker function (``first_name``, ``ssn``,
  ``email``, ``phone_number``, ``address``, ``passport_number``, ...) and PII unless the file
  says ``"pii": false``: values drawn from Faker as rdt's ``AnonymizedFaker`` draws them
  (``rdt.transformers.pii.anonymization.SDTYPE_ANONYMIZERS`` maps SDV's names to Faker's);
  with ``"pii": false`` the column is synthesised as a category, as SDV does;
* ``unknown``: SDV's ``sdv-pii-?????`` strings.

Fake columns leave the table before anything else, as declared identifiers do
(:mod:`tuner.data._identifiers`), and are filled at release (:mod:`tuner.data._fakes`). Nothing
of the file but names, sdtypes and datetime formats is kept: a ``regex_format`` is used to draw
values and never written out.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tuner.errors import InputError

STATISTICAL = ("numerical", "categorical", "boolean", "datetime", "ordinal")
# Faker sdtypes whose values are drawn from a list (names, places): a fake may equal a real
# value by chance, unlinked to that person; every other fake is checked against the real
# values (tuner.data._fakes.fill)
FROM_A_LIST = frozenset({
    "first_name", "last_name", "name", "name_female", "name_male", "first_name_female",
    "first_name_male", "last_name_female", "last_name_male", "first_name_nonbinary",
    "last_name_nonbinary", "prefix", "prefix_female", "prefix_male", "suffix",
    "suffix_female", "suffix_male", "city", "country", "country_code", "state", "state_abbr",
    "administrative_unit", "current_country", "city_suffix", "street_suffix", "job",
    "company", "company_suffix", "color_name", "language_name", "day_of_week", "month_name",
    "timezone", "currency_code", "currency_name", "safe_color_name", "postcode", "zipcode",
    "country_calling_code", "estimated_age"})
ID_TEXT = "sdv-id-??????"  # SDV's id without regex_format, text (DataProcessor)
ID_MAX = 16_777_216  # SDV's id without regex_format, numeric: random_int(0, 2**24)
UNKNOWN_TEXT = "sdv-pii-?????"  # SDV's unknown sdtype (DataProcessor._get_unknown_column_config)


@dataclasses.dataclass(frozen=True)
class Fake:
    """How a column's fake values are made: ``sdtype`` (SDV's), a Faker ``function`` with its
    ``kwargs``, or a ``regex``; ``checked``: no released value may equal a real one;
    ``unique``: every released value different (a key)."""

    column: str
    sdtype: str
    function: str | None = None
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    regex: str | None = dataclasses.field(default=None, repr=False)
    checked: bool = True
    unique: bool = False

    def how(self, *, numeric: bool = False) -> str:
        """How the values are made, in words for the manifest (no regex: it may hold values);
        ``numeric``: the real column holds numbers (:func:`tuner.data._fakes.draw`)."""
        if numeric and self.function == "bothify" and self.kwargs.get("text") == ID_TEXT:
            return f"random integers from 0 to {ID_MAX}, as SDV makes a numeric id"
        if self.regex is not None:
            return "random strings matching the metadata's regex_format (the pattern is not " \
                   "written out)"
        made = f"Faker {self.function}({', '.join(f'{k}={v!r}' for k, v in self.kwargs.items())})"
        return made + " (en_US), as SDV's AnonymizedFaker draws it"


@dataclasses.dataclass(frozen=True)
class Declared:
    """What a metadata file says: ``sdtypes`` of its columns, ``formats`` of its datetime
    columns (``datetime_format``), the ``fakes``, the columns declared ``"pii": false``
    (synthesised as categories, not refused as identifiers) and where it came from."""

    source: str
    sdtypes: dict[str, str]
    formats: dict[str, str]
    fakes: dict[str, Fake]
    not_pii: tuple[str, ...] = ()
    primary_key: str | None = None


def _table(raw: Any, where: str) -> dict[str, Any]:
    """The one table of an SDV metadata mapping, single-table or multi-table."""
    expected = ('SDV metadata: {"METADATA_SPEC_VERSION": "SINGLE_TABLE_V1", "columns": {...}} '
                'or a multi-table file {"tables": {NAME: {"columns": ...}}} with one table')
    if not isinstance(raw, dict):
        raise InputError(f"metadata file {where} holds {type(raw).__name__}, not {expected}")
    if "tables" not in raw:
        if "columns" not in raw:
            raise InputError(f"metadata file {where} has no \"columns\" (keys: {sorted(raw)}): "
                             f"it is not {expected}")
        return raw
    tables = raw["tables"]
    if not isinstance(tables, dict) or len(tables) != 1:
        names = sorted(tables) if isinstance(tables, dict) else tables
        raise InputError(f"metadata file {where} describes tables {names}: the tuner "
                         "synthesises one table; give a file with that table only")
    if raw.get("relationships"):
        raise InputError(f"metadata file {where} has relationships; one table has none")
    return dict(next(iter(tables.values())))


def _validated(table: dict[str, Any], where: str) -> dict[str, Any]:
    """``table`` as SDV reads and validates it (its own message when it does not)."""
    from sdv.metadata import Metadata

    body = {k: v for k, v in table.items() if k != "METADATA_SPEC_VERSION"}
    try:
        with warnings.catch_warnings():  # "no table name was provided": ours is "table"
            warnings.simplefilter("ignore")
            metadata = Metadata.load_from_dict({"tables": {"table": body}})
            metadata.validate()
    except Exception as exc:  # noqa: BLE001  SDV's errors (InvalidMetadataError, ValueError, ..)
        said = " ".join(str(exc).split())
        raise InputError(f"metadata file {where} is not valid SDV metadata: {said}") from None
    out: dict[str, Any] = metadata.to_dict()["tables"]["table"]
    return out


def _fake(column: str, meta: dict[str, Any], *, key: bool) -> Fake | None:
    """The :class:`Fake` of one column, or None when it is synthesised (module docstring)."""
    from rdt.transformers.pii.anonymization import SDTYPE_ANONYMIZERS

    sdtype = str(meta["sdtype"])
    if sdtype == "id" or (key and sdtype in STATISTICAL):
        if "regex_format" in meta:
            return Fake(column, sdtype, regex=str(meta["regex_format"]), unique=key)
        return Fake(column, sdtype, function="bothify", kwargs={"text": ID_TEXT}, unique=key)
    if sdtype == "unknown":
        return Fake(column, sdtype, function="bothify",
                    kwargs={"text": UNKNOWN_TEXT,
                            "letters": "0123456789abcdefghijklmnopqrstuvwxyz"}, unique=key)
    if sdtype in STATISTICAL or meta.get("pii") is False:
        return None
    function = SDTYPE_ANONYMIZERS.get(sdtype, {}).get("function_name", sdtype)
    return Fake(column, sdtype, function=function, checked=sdtype not in FROM_A_LIST,
                unique=key)


def read_metadata(path: Path) -> Declared:
    """The SDV metadata file at ``path``; :class:`InputError` when it is not JSON, not SDV's
    format, SDV refuses it, or it has more than one table."""
    where = repr(str(path))
    if not path.exists():
        raise InputError(f"data.metadata: metadata file {where} does not exist")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"metadata file {where} is not JSON ({exc}): expected SDV's metadata "
                         "JSON (Metadata.save_to_json)") from None
    table = _validated(_table(raw, where), where)
    columns: dict[str, dict[str, Any]] = table.get("columns", {})
    keys = {table.get("primary_key"), *table.get("alternate_keys", ())} - {None}
    fakes = {c: f for c, meta in columns.items() if (f := _fake(c, meta, key=c in keys))}
    return Declared(
        source=str(path),
        sdtypes={c: str(m["sdtype"]) for c, m in columns.items()},
        formats={c: str(m["datetime_format"]) for c, m in columns.items()
                 if m.get("sdtype") == "datetime" and "datetime_format" in m},
        fakes=fakes,
        not_pii=tuple(c for c, m in columns.items() if m.get("pii") is False),
        primary_key=table.get("primary_key"))


def conflicts(declared: Declared, named: Mapping[str, Sequence[str]]) -> list[str]:
    """Every option of ``named`` (option -> the columns it names) naming a fake column: a key,
    a target or a kept column must be one the release holds as synthesised."""
    out = []
    for option, cols in named.items():
        for col in (c for c in cols if c in declared.fakes):
            fake = declared.fakes[col]
            out.append(
                f"{option} names column {col!r}, which the metadata file {declared.source!r} "
                f"declares PII or a key (sdtype {fake.sdtype!r}): it is released as fake "
                "values, never its real ones, so it cannot be among the columns an intruder "
                f"knows, a target or kept data; remove {col!r} from {option}, or declare it "
                "data in the metadata (a statistical sdtype, or \"pii\": false)")
    return out


def missing_columns(declared: Declared, columns: list[str]) -> list[str]:
    """A problem naming the metadata's columns the data lack (none: empty)."""
    absent = [c for c in declared.sdtypes if c not in columns]
    if not absent:
        return []
    return [f"the metadata file {declared.source!r} describes column(s) {absent} that the data "
            f"do not have (the data's columns: {columns}); correct the metadata, or the data "
            "file (data.columns keeps a subset: the metadata must describe those only)"]


def merged_formats(declared: Declared, dates: dict[str, str] | None) -> dict[str, str]:
    """The metadata's datetime formats with ``[data] dates``; :class:`InputError` when the two
    give one column different formats."""
    given = dict(dates or {})
    clash = {c: (f, given[c]) for c, f in declared.formats.items() if c in given and given[c] != f}
    if clash:
        raise InputError(f"data.dates and the metadata file {declared.source!r} give column(s) "
                         f"{sorted(clash)} different formats ({clash}): give one")
    return {c: f for c, f in declared.formats.items() if c not in declared.fakes} | given


def _first_bad(values: pd.Series, bad: pd.Series, first_line: int) -> str:
    """The first value of ``values`` where ``bad`` holds, with its line."""
    position = int(np.flatnonzero(bad.to_numpy(dtype=bool))[0])
    return f"{str(values.iloc[position])!r} on line {position + first_line}"


def follow(declared: Declared, frame: pd.DataFrame, *, first_line: int = 2) -> pd.DataFrame:
    """``frame`` (its dates read, :func:`tuner.data.read_dates`) with each column the metadata
    describes held as its sdtype: a datetime column must be dates, a numerical one numbers
    (:class:`InputError` naming the column, the first other value and its line); numbers
    declared categorical, ordinal or boolean become category labels (their digits as text)."""
    out = {}
    for col, sdtype in declared.sdtypes.items():
        if col not in frame.columns or col in declared.fakes:
            continue
        values = frame[col]
        if sdtype == "datetime" and not pd.api.types.is_datetime64_any_dtype(values):
            present = values.dropna()
            shown = _first_bad(values, values.notna(), first_line) if len(present) else "none"
            raise InputError(
                f"the metadata file {declared.source!r} declares column {col!r} a datetime, but "
                f"its values do not parse as dates (first value {shown}): give its "
                "datetime_format in the metadata, or correct the values")
        if sdtype == "numerical" and not pd.api.types.is_numeric_dtype(values):
            parsed = pd.to_numeric(values, errors="coerce")
            bad = parsed.isna() & values.notna()
            if bad.any():
                raise InputError(
                    f"the metadata file {declared.source!r} declares column {col!r} numerical, "
                    f"but it holds {_first_bad(values, bad, first_line)}, not a number: correct "
                    "the value, make it empty (missing), or declare the column categorical")
            out[col] = parsed
        elif (sdtype in ("categorical", "ordinal", "boolean")
              and pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)):
            whole = values.dropna()
            as_text = values.astype("Int64") if bool((whole == whole.round()).all()) else values
            out[col] = as_text.astype("string").astype(object).where(values.notna(), None)
    return frame.assign(**out) if out else frame
