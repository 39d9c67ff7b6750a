"""Reading the custodian's table, the study's one seeded split, and SDV metadata from dtypes.

Metadata is built from dtypes rather than detected: SDV's detection stores exact category lists
and ranges of the real data (and may declare a unique column a primary key and anonymise it).
Ours holds only column names and sdtypes, so nothing of the data's values travels with it.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

import risk
from tuner.data._codebook import Codebook
from tuner.data._dates import whole_numbers
from tuner.data._identifiers import check_declared
from tuner.errors import ConfigError, InputError

if TYPE_CHECKING:  # SDV (5 s of imports) only where a synthesiser needs its metadata
    from sdv.metadata import Metadata

TABLE = "table"
CATEGORY_LIMIT = 20


@dataclasses.dataclass(frozen=True)
class Split:
    """The study's split (design §2 and 13), as positions into the real table: train, holdout
    and the sealed audit set (empty for a study made before audit sets existed). No trial reads
    ``audit``: only the release does. ``domain``: the codebook the synthesisers take their
    domain from (:mod:`tuner.data._codebook`)."""

    train: pd.DataFrame
    holdout: pd.DataFrame
    train_positions: np.ndarray
    holdout_positions: np.ndarray
    audit: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    audit_positions: np.ndarray = dataclasses.field(
        default_factory=lambda: np.zeros(0, dtype=np.int64))
    domain: Codebook | None = None  # the public domain ([data] codebook), if one is given

    @property
    def has_audit(self) -> bool:
        return len(self.audit_positions) > 0


BUILTIN = {
    "builtin:adult": "5,000 people of UCI Adult (Kohavi & Becker 1996, CC BY 4.0), shipped in "
                     "tuner/demo_data/adult_demo.csv.gz",
    "builtin:fair": "Fair's affairs survey, statsmodels.api.datasets.fair (6,366 women)",
}
DEMO_TABLE = "adult_demo.csv.gz"  # in tuner/demo_data/, made by experiments/demo_table/build.py


def read_builtin(name: str) -> pd.DataFrame:
    """An embedded table: ``builtin:adult`` (the demo's, installed with this package; a
    missing value is an empty field) or ``builtin:fair`` (from the statsmodels package)."""
    if name not in BUILTIN:
        raise InputError(f"unknown built-in dataset {name!r}; known: {sorted(BUILTIN)}")
    if name == "builtin:adult":
        from importlib import resources

        with resources.as_file(resources.files("tuner") / "demo_data" / DEMO_TABLE) as path:
            return pd.read_csv(path)
    from statsmodels.api import datasets

    return datasets.fair.load_pandas().data.copy()


def read_table(
    path: Path,
    columns: list[str] | None = None,
    *,
    header_names: list[str] | None = None,
    missing_values: list[str] | None = None,
    skip: Sequence[str] = (),
) -> pd.DataFrame:
    """Read a CSV or Parquet file; ``columns`` keeps a subset (an unknown name is an error).

    A CSV's first row is its header unless ``header_names`` names the columns of a file without
    one (as UCI's ``adult.data``). Spaces after a comma are ignored, and the strings in
    ``missing_values`` (e.g. ``"?"``) are read as missing, besides pandas' usual markers.

    ``skip``: the declared direct identifiers (``[data] identifiers``), never read from a file:
    they never enter memory, and a file's other columns are read without the copy that
    dropping them afterwards costs. A name the data lack is a :class:`ConfigError`. Likewise a
    file's columns outside ``columns`` are never read.

    A CSV column of whole numbers that holds a value with a leading zero (``02134``: a ZIP
    code, an ID number) is a code, not a quantity: it is kept as the text it is in the file (a
    number would drop the zero, and the release would print another code). Their names are in
    ``frame.attrs["codes_as_text"]``.
    """
    if str(path).startswith("builtin:"):
        frame = read_builtin(str(path))
        frame = frame[columns] if columns else frame
        check_declared(skip, list(map(str, frame.columns)))
        return frame.drop(columns=list(skip)) if skip else frame
    if not path.exists():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix in (".csv", ".data", ".test", ".txt"):
        try:
            names = _check_csv_shape(path, header_names)
            check_declared(skip, columns or names)
            wanted = _wanted(path, columns, names, skip)

            def read(**options: object) -> pd.DataFrame:
                return pd.read_csv(path, header=None if header_names else "infer",
                                   names=header_names, na_values=missing_values or None,
                                   skipinitialspace=True, **options)  # type: ignore[call-overload]

            frame = read(usecols=(lambda c: c in wanted) if wanted != set(names) else None)
            frame = _codes_as_text(frame, read)
        except UnicodeDecodeError as exc:
            raise InputError(f"data file {str(path)!r} is not UTF-8 text ({exc.reason} at byte "
                             f"{exc.start}); save it as UTF-8") from None
        except pd.errors.EmptyDataError:
            raise InputError(f"data file {str(path)!r} is empty: no header row, no "
                             "records") from None
        except pd.errors.ParserError as exc:  # an unclosed quote, a stray delimiter ...
            raise InputError(f"data file {str(path)!r} is not valid CSV: "
                             f"{str(exc).strip().splitlines()[0]}") from None
    elif suffix in (".parquet", ".pq"):
        try:
            names = _parquet_columns(path) if skip or columns is not None else []
            check_declared(skip, columns or names)
            wanted = _wanted(path, columns, names, skip)
            frame = pd.read_parquet(path, columns=[c for c in names if c in wanted] or None)
        except (ConfigError, InputError):  # ValueErrors too: said as themselves
            raise
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise InputError(f"data file {str(path)!r} is not a readable Parquet file: "
                             f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                             ) from None
    else:
        raise InputError(f"data file {str(path)!r} must be CSV (.csv, .data, .test, .txt) or "
                         f"Parquet (.parquet, .pq), got {suffix!r}")
    if columns is not None:
        frame = frame[[c for c in columns if c not in skip]]  # in the order data.columns gives
    if frame.empty:
        raise InputError(f"data file {str(path)!r} has no rows")
    return frame


def _wanted(path: Path, columns: list[str] | None, names: list[str],
            skip: Sequence[str]) -> set[str]:
    """The file's columns to read: ``columns`` (all ``names`` when None) but the skipped ones;
    a ``data.columns`` name the file lacks is refused before anything is read."""
    missing = [c for c in columns or [] if c not in skip and c not in names]
    if missing:
        raise InputError(f"data.columns names {missing!r}, not in {str(path)!r} (columns: "
                         f"{[c for c in names if c not in skip]!r})")
    return set(names if columns is None else columns) - set(skip)


def _codes_as_text(frame: pd.DataFrame, read: Callable[..., pd.DataFrame]) -> pd.DataFrame:
    """``frame`` with each column of whole numbers that holds a value with a leading zero as
    the file's text (``read(usecols=..., dtype=str)`` reads the columns of whole numbers again;
    a column with a fraction is a quantity, never a code)."""
    numeric = [c for c in frame.columns if pd.api.types.is_integer_dtype(frame[c])
               or (pd.api.types.is_float_dtype(frame[c]) and whole_numbers(frame[c]))]
    frame.attrs["codes_as_text"] = []
    if not numeric:
        return frame
    text = read(usecols=numeric, dtype=str)
    codes = {c: kept for c in numeric if (kept := _zero_led(text[c])) is not None}
    if codes:
        frame = frame.copy()
        for c, kept in codes.items():
            frame[c] = kept
        frame.attrs["codes_as_text"] = list(codes)
    return frame


def _zero_led(values: pd.Series) -> pd.Series | None:
    """A column's text, stripped, when a value is digits only with a leading zero (``02134``,
    ``007``; not ``0``, ``0.0`` or ``-01``); None otherwise. Vectorised (numpy.strings)."""
    present = values.notna().to_numpy()
    text = np.strings.strip(values.to_numpy(dtype=object)[present].astype(str))
    led = (np.strings.startswith(text, "0") & (np.strings.str_len(text) > 1)
           & np.strings.isdigit(text))
    if not led.any():
        return None
    out = np.full(len(values), np.nan, dtype=object)
    out[present] = text.astype(object)
    return pd.Series(out, index=values.index, name=values.name)


def _parquet_columns(path: Path) -> list[str]:
    """A Parquet file's column names, from its schema (no data read), without the columns
    pandas stores its index in (named or not)."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    index = {c for c in (schema.pandas_metadata or {}).get("index_columns", [])
             if isinstance(c, str)}
    return [c for c in schema.names if not c.startswith("__index_level_") and c not in index]


def frame_problems(frame: pd.DataFrame) -> list[str]:
    """What no trial can do anything with: a column with no value at all (nothing to learn or
    to match on), and infinite values in a numeric column (no distribution, distance or bin
    takes them); each named with where it is."""
    problems = []
    empty = [str(c) for c in frame.columns if frame[c].isna().all()]
    if empty:
        problems.append(f"data column(s) {empty} have no value at all (every record missing): "
                        "drop them (data.columns) or fill them")
    for col in frame.columns:
        values = frame[col]
        if pd.api.types.is_float_dtype(values):
            infinite = np.isinf(values.to_numpy(dtype=float, na_value=np.nan))
            if infinite.any():
                rows = np.flatnonzero(infinite)
                problems.append(
                    f"data column {str(col)!r} holds {rows.size} infinite value(s), first in "
                    f"record {rows[0] + 1} (line {rows[0] + 2} of a CSV with a header): no "
                    "distribution, distance or bin takes them; make them missing or finite")
    return problems


def _check_csv_shape(path: Path, header_names: list[str] | None) -> list[str]:
    """Refuse a CSV whose rows have different numbers of fields, or whose width differs from
    ``header_names``: pandas would otherwise fill short rows with missing values, or turn the
    surplus leading fields into an index, without a word. Returns the column names (the header
    row, or ``header_names``)."""
    header: list[str] = []
    widths: Counter[int] = Counter()
    first_width, first_bad = None, None  # the first row's width; (line, width) of the first other
    with path.open(newline="") as handle:
        reader = csv.reader(handle, skipinitialspace=True)
        for row in reader:
            if not row:
                continue
            widths[len(row)] += 1
            if first_width is None:
                first_width, header = len(row), row
                twice = sorted({c for c in row if row.count(c) > 1})
                if header_names is None and twice:  # pandas would rename one "a.1" unasked
                    raise InputError(f"data file {str(path)!r} names column(s) {twice} more "
                                     "than once in its header row; give each column its own "
                                     "name")
            elif first_bad is None and len(row) != first_width:
                first_bad = (reader.line_num, len(row))
    other = [d for d in (";", "\t", "|") if first_width == 1 and d in header[0]]
    if other and header_names is None:  # a semicolon- or tab-separated export, read as one column
        raise InputError(f"data file {str(path)!r} reads as one column named {header[0]!r}: it "
                         f"seems separated by {other[0]!r}, and the tuner reads comma-separated "
                         "CSV (save it with commas and a '.' decimal point, or as Parquet)")
    if first_bad is not None:
        shown = ", ".join(f"{n} row(s) with {w} fields" for w, n in sorted(widths.items()))
        raise InputError(f"data file {str(path)!r} is ragged: line {first_bad[0]} has "
                         f"{first_bad[1]} fields where line 1 has {first_width} ({shown}); "
                         "every row needs the same number of fields")
    if header_names is not None and widths and next(iter(widths)) != len(header_names):
        raise InputError(
            f"data.header_names names {len(header_names)} columns, but the rows of "
            f"{str(path)!r} have {next(iter(widths))} fields")
    if header_names is not None:
        return list(header_names)
    return [header[0].removeprefix("\ufeff"), *header[1:]] if header else header


def fingerprint(frame: pd.DataFrame) -> str:
    """SHA-256 of the table's content (order-sensitive): identifies data, reveals none."""
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    digest = hashlib.sha256(hashed.tobytes())
    digest.update(",".join(map(str, frame.columns)).encode())
    return digest.hexdigest()


def split(
    frame: pd.DataFrame, *, train_fraction: float, seed: int, stratify: str | None = None,
    audit_fraction: float = 0.0,
) -> Split:
    """One seeded split into train, holdout and audit, stratified on a column if asked.

    The training records are drawn first, exactly as without an audit set (so a study's
    training data do not depend on ``audit_fraction``); then ``audit_fraction`` of all the
    records (within each stratum) are drawn from the rest, and the holdout is what is left.
    """
    rng = np.random.default_rng(seed)
    n = len(frame)
    if stratify is None:
        groups = [np.arange(n)]
        order = rng.permutation(n)
        train_pos = np.sort(order[:int(round(train_fraction * n))])
    else:
        labels = frame[stratify].astype("string").fillna("<NA>").to_numpy()
        groups = [np.flatnonzero(labels == value) for value in np.unique(labels)]
        train_pos = np.sort(np.concatenate([
            rng.choice(g, size=int(round(train_fraction * g.size)), replace=False)
            for g in groups]))
    mask = np.zeros(n, dtype=bool)
    mask[train_pos] = True
    audit_pos = np.zeros(0, dtype=np.int64)
    if audit_fraction > 0:
        rest = [g[~mask[g]] for g in groups]
        audit_pos = np.sort(np.concatenate([
            rng.choice(r, size=min(r.size, int(round(audit_fraction * g.size))), replace=False)
            for g, r in zip(groups, rest, strict=True)]).astype(np.int64))
        mask[audit_pos] = True
    hold_pos = np.flatnonzero(~mask)
    if train_pos.size < 2 or hold_pos.size < 2:
        raise InputError(
            f"data.train_fraction={train_fraction} and data.audit_fraction={audit_fraction} "
            f"leave {train_pos.size} training and {hold_pos.size} holdout records of {n}; both "
            "need at least 2 (lower data.audit_fraction, 0 for no sealed audit set, or change "
            "data.train_fraction)"
        )
    return Split(
        train=frame.iloc[train_pos].reset_index(drop=True),
        holdout=frame.iloc[hold_pos].reset_index(drop=True),
        train_positions=train_pos,
        holdout_positions=hold_pos,
        audit=frame.iloc[audit_pos].reset_index(drop=True),
        audit_positions=audit_pos,
    )


def sdtype(series: pd.Series) -> str:
    """numerical, datetime, boolean or categorical (numbers with few values are categories)."""
    if pd.api.types.is_bool_dtype(series):
        return "boolean"
    kind = risk.column_kind(series)
    if kind == "numeric":
        return "numerical" if series.nunique() > CATEGORY_LIMIT else "categorical"
    return "datetime" if kind == "datetime" else "categorical"


def metadata_for(frame: pd.DataFrame) -> Metadata:
    """SDV metadata holding only column names and sdtypes (no values, no keys)."""
    from sdv.metadata import Metadata

    columns = {str(c): {"sdtype": sdtype(frame[c])} for c in frame.columns}
    return Metadata.load_from_dict({"tables": {TABLE: {"columns": columns}}})
