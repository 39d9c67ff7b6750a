"""Direct identifiers: dropped before anything else, and undeclared ones refused, all at once
(design §9.1; issue 33).

A direct identifier (a name, a social security or passport number, an address, a record
number) identifies a person by itself; synthesising it copies or invents identifiers, and no
risk measure on the other columns can see that. Declared identifiers (``[data] identifiers``)
are removed from the table before the split. Every other column is judged before any trial:

* by its name (:data:`NAME_RULES`: names, surname, maiden, SSN / NI / social security,
  passport, licence, email, phone, address, street, record / patient / customer id, ...);
* by its content, on a sample of :data:`SAMPLE` records spread over the table so that the check
  stays fast on a big one (:func:`content_reason`: SSN- or NI-shaped values, emails, phone
  numbers, long letter-digit codes unique or nearly so, free text);
* by uniqueness on the whole table: a non-float column unique for every record, a text column
  unique for at least 95 % of them (:data:`NEARLY_UNIQUE`);
* personal names by content whatever the header (a given and a family name of Faker's lists
  of :data:`NAME_LOCALES`), payment card numbers and IBANs (their checksums), street
  addresses.

Every column found is named in one message (:func:`refusal`), with the choices: drop it
(``[data] identifiers``), release fake values in its place (declare it PII in SDV metadata,
``[data] metadata``: :mod:`tuner.data._metadata`; such columns have left the table before
this check) or keep it as data (``[data] keep_as_data``). A number column unique for at
least 95 % of the records is warned about. Float columns are measurements (an income, a weight)
whose values are naturally all distinct, so they are judged by name only. Precise geographic
coordinates and full dates of birth are not direct identifiers but strong quasi-identifiers
(Sweeney 2000: date of birth, sex and ZIP code single out most Americans): a warning names
them with what to do (:func:`quasi_warnings`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from tuner.data._content import content_reason, judged
from tuner.errors import ConfigError

NEARLY_UNIQUE = 0.95
MIN_RECORDS = 50  # below this, any column with many levels is unique by chance
SAMPLE = 2_000  # records judged by content: a share of 0.9 is then known within +-0.02
MIN_DISTINCT = 10  # a column found by name needs this many values (a yes/no "has_email" is not)

# (what the name says, pattern on the name's lower-case words joined by "_"); checked on the
# words so that "LAST" and "last_name" match and "last_visit" does not
NAME_RULES: tuple[tuple[str, str], ...] = (
    ("a person's name", r"(first|last|given|middle|maiden|family|full|sur|fore|nick|patient|"
                        r"customer|client|person|member|mother|father)?_?name|surname|forename|"
                        r"first|last|given|maiden|middle|initials"),
    ("a social security or national insurance number",
     r"ssn|sin|nino|tin|(.*_)?(social_?security|national_?insurance)(_.*)?|"
     r"(ni|nhs)_?(number|no)|nhs|tax_?id"),
    ("a passport number", r"(.*_)?passports?\d*(_.*)?"),
    ("a driving licence number", r"(.*_)?licen[cs]es?(_.*)?|drivers?(_.*)?"),
    ("an email address", r"(.*_)?e_?mail\d*(_.*)?"),
    ("a phone number", r"(.*_)?(phone|telephone|mobile|fax|tel)\d*(_.*)?"),
    ("an address", r"(.*_)?(address|addr|street)\d*(_.*)?"),
    ("a record identifier", r"id|uuid|guid|mrn|(.*_)?(record|patient|customer|client|person|"
                            r"member|subject|participant|account|case|user|employee|student)_?"
                            r"(id|number|no|num|code)"),
)
_NAMES = [(said, re.compile(pattern)) for said, pattern in NAME_RULES]

def words(name: str) -> str:
    """A column name as lower-case words joined by "_" ("firstName", "FIRST NAME" and
    "first-name" all give "first_name")."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name))
    return "_".join(w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w)


def name_reason(name: str) -> str | None:
    """What a column's name says it holds, when that is a direct identifier."""
    said = words(name)
    return next((what for what, rule in _NAMES if rule.fullmatch(said)), None)


def sample_of(frame: pd.DataFrame, size: int = SAMPLE) -> pd.DataFrame:
    """Every k-th record, at most ``size`` of them: spread over the table (a file sorted by
    date or region is judged on all of it) and the same every time."""
    step = max(1, -(-len(frame) // size))
    return frame.iloc[::step]


def findings(frame: pd.DataFrame, *, exempt: tuple[str, ...] = (),
             shares: dict[str, float] | None = None) -> dict[str, list[str]]:
    """Every column of ``frame`` (but ``exempt``) found as a direct identifier, with why:
    by name, by content on :func:`sample_of`, and unique for every record of the table (from
    ``shares``, :func:`unique_shares`, counted here when not given; a column found already is
    not counted on the whole table)."""
    found = _looked_at(frame, exempt=exempt)
    if len(frame) >= MIN_RECORDS:
        if shares is None:
            shares = unique_shares(frame, columns=[c for c in map(str, frame.columns)
                                                   if c not in found and c not in exempt])
        found |= _unique_everywhere(shares, exempt=exempt, text=_text_columns(frame))
    return found


def _unique_everywhere(shares: dict[str, float], *, exempt: tuple[str, ...],
                       text: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """Columns unique for every record, and ``text`` columns unique for at least
    :data:`NEARLY_UNIQUE` of them (a text value nearly nobody shares is a name, a note or a
    code of one person, not a category)."""
    out = {}
    for name, share in shares.items():
        if name in exempt:
            continue
        if share >= 1.0:
            out[name] = ["takes a different value in every record"]
        elif name in text and share >= NEARLY_UNIQUE:
            out[name] = [f"text unique for {share:.1%} of the records"]
    return out


def _text_columns(frame: pd.DataFrame) -> frozenset[str]:
    return frozenset(str(c) for c in frame.columns
                     if pd.api.types.is_object_dtype(frame[c])
                     or pd.api.types.is_string_dtype(frame[c]))


def _looked_at(frame: pd.DataFrame, *, exempt: tuple[str, ...]) -> dict[str, list[str]]:
    """The columns found by name or by content on :func:`sample_of` (cheap: no full count)."""
    sample = sample_of(frame)
    found: dict[str, list[str]] = {}
    for col in frame.columns:
        name = str(col)
        if name in exempt:
            continue
        why = []
        if (said := name_reason(name)) is not None \
                and not pd.api.types.is_datetime64_any_dtype(sample[col]):
            values = sample[col]  # how many distinct: only for a name that says one
            if values.nunique() >= min(MIN_DISTINCT, max(2, values.count() // 2)):
                why.append(f"named like {said}")
        if (shape := content_reason(sample[col])) is not None:
            why.append(f"holds {shape}")
        if why:
            found[name] = why
    return found


def unique_shares(frame: pd.DataFrame, *,
                  columns: list[str] | None = None) -> dict[str, float]:
    """Share of distinct non-missing values among the records, per judged column. Counted on
    the whole table only where the sample is at least :data:`NEARLY_UNIQUE` unique; elsewhere
    the sample's distinct values over the records stand for it (a lower bound, below
    :data:`NEARLY_UNIQUE` as the table's share is: fewer records, fewer repeats). ``columns``:
    those judged (default: every one)."""
    n = len(frame)
    if not n:
        return {}
    sample = sample_of(frame)
    out = {}
    for col in frame.columns if columns is None else columns:
        if not judged(frame[col]):
            continue
        if sample[col].nunique(dropna=True) / len(sample) < NEARLY_UNIQUE:
            out[str(col)] = sample[col].nunique(dropna=True) / n
            continue
        out[str(col)] = frame[col].nunique(dropna=True) / n
    return out


# the choices one message offers, each a line
CHOICES: tuple[str, ...] = (
    "drop it: [data] identifiers = {listed!r} (the release has no such column)",
    "release fake values in its place (never a real one): declare the column PII in SDV "
    "metadata, e.g. {{\"sdtype\": \"ssn\"}}, {{\"sdtype\": \"first_name\"}} or "
    "{{\"sdtype\": \"id\", \"regex_format\": \"...\"}}, and name the file in [data] metadata",
    "keep it as data, synthesised like any other column, if it is not a direct identifier (a "
    "measurement, a code of a category): [data] keep_as_data = [...] naming it",
)


def refusal(found: dict[str, list[str]]) -> str:
    """One message naming every column of ``found`` with why, and the choices."""
    listed = sorted(found)
    lines = [f"{len(listed)} column(s) look like direct identifiers, which would be "
             "synthesised and released (nothing runs until each is declared):"]
    lines += [f"  - {name!r}: {'; '.join(found[name])}" for name in listed]
    lines.append("For each, choose:")
    lines += [f"  * {choice.format(listed=listed)}" for choice in CHOICES]
    return "\n".join(lines)


def _named(frame: pd.DataFrame, pattern: str) -> list[tuple[str, pd.Series]]:
    """The columns whose words (:func:`words`) match ``pattern``, with their values."""
    return [(str(c), frame[c].dropna()) for c in frame.columns
            if re.fullmatch(pattern, words(str(c)))]


def _coordinates(frame: pd.DataFrame) -> list[str]:
    """Float columns named as latitudes or longitudes whose values carry 4 or more decimals
    (11 m or finer)."""
    named = _named(frame, r"(.*_)?(lat|latitude|lon|lng|long|longitude)(_.*)?")
    scaled = {c: v.to_numpy(dtype=float) * 1e3 for c, v in named
              if pd.api.types.is_float_dtype(v) and len(v)}
    return [c for c, x in scaled.items() if np.mean(np.abs(x - np.round(x)) > 1e-6) >= 0.5]


def _birth_dates(frame: pd.DataFrame) -> list[str]:
    """Date columns named as a date of birth that hold the day (not all on the 1st)."""
    named = _named(frame, r"(.*_)?(birth|dob|born|birthdate|birthday|bdate)(_.*)?")
    return [c for c, v in named
            if pd.api.types.is_datetime64_any_dtype(v) and bool((v.dt.day != 1).any())]


# (which columns, what they hold, how to coarsen them) for :func:`quasi_warnings`
_QUASI = ((_coordinates, "precise geographic coordinates (4 or more decimals: a house)",
           "2 decimals is about 1 km"),
          (_birth_dates, "full dates of birth (with sex and a ZIP code they single out most "
                         "people)", "year, or month and year"))


def quasi_warnings(frame: pd.DataFrame, *, keys: Sequence[str] | None = None) -> list[str]:
    """Warnings naming precise coordinates and full dates of birth not among ``keys``, judged
    on :func:`sample_of` (a warning, not a refusal)."""
    known = set(keys or ())
    sample = sample_of(frame)
    found = [([c for c in which(sample) if c not in known], held, coarser)
             for which, held, coarser in _QUASI]
    return [f"column(s) {columns} hold {held}: strong quasi-identifiers. Coarsen them "
            f"({coarser}) or drop them, or declare them among [data] keys so that M's intruder "
            "matches on them" for columns, held, coarser in found if columns]


def check_declared(identifiers: Sequence[str], names: Sequence[str]) -> None:
    """:class:`ConfigError` when ``[data] identifiers`` names a column the data (``names``)
    lack, or every column: whether they are dropped from a table or never read from a file."""
    unknown = [c for c in identifiers if c not in names]
    if unknown:
        raise ConfigError(f"data.identifiers names column(s) {unknown} that the data do not "
                          f"have; the data's columns are {list(names)}")
    if identifiers and not set(names) - set(identifiers):
        raise ConfigError("data.identifiers names every column: nothing is left to synthesise")


def drop_identifiers(frame: pd.DataFrame, *, identifiers: Sequence[str],
                     keep_as_data: Sequence[str], keys: Sequence[str] | None,
                     not_pii: Sequence[str] = ()) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` without the declared ``identifiers`` (``[data] identifiers``), and warnings
    (nearly unique columns, strong quasi-identifiers not among the ``keys``). ``not_pii``:
    columns SDV metadata declares ``"pii": false``, kept as data like ``keep_as_data``
    (columns it declares PII have left ``frame`` already).

    :class:`ConfigError` naming every undeclared column found by :func:`findings` (columns in
    ``keep_as_data`` are not judged)."""
    declared = list(identifiers)
    check_declared(declared, list(map(str, frame.columns)))
    rest = frame.drop(columns=declared) if declared else frame  # drop copies every column
    kept = tuple(keep_as_data) + tuple(not_pii)
    # uniqueness counted once on the whole table, for the refusal and the warnings, and only
    # for the columns neither found by a look nor kept (a found one is refused anyway)
    looked = _looked_at(rest, exempt=kept)
    shares = unique_shares(rest, columns=[c for c in map(str, rest.columns)
                                          if c not in looked and c not in kept]) \
        if len(rest) >= MIN_RECORDS else {}
    text = _text_columns(rest)
    found = looked | _unique_everywhere(shares, exempt=kept, text=text)
    if found:
        raise ConfigError(refusal(found))
    warnings = quasi_warnings(rest, keys=keys)
    warnings += [f"column {c!r} is unique for {s:.1%} of the records: if it identifies people, "
                 f"declare it in [data] identifiers" for c, s in shares.items()
                 if NEARLY_UNIQUE <= s < 1.0 and c not in kept and c not in text]
    return rest, warnings
