"""The config against the data it is run on: every column an option names must be one the
data keep, and the population must hold the table (checked once the data are read, before any
trial; options naming a declared direct identifier before the data are read at all)."""

from __future__ import annotations

from collections.abc import Sequence

from tuner import measures
from tuner.config._load import Config
from tuner.config._values import raise_all


def check_data(cfg: Config, columns: list[str], n_rows: int) -> None:
    """Raise :class:`ConfigError` listing every one of :func:`data_problems`."""
    raise_all(data_problems(cfg, columns, n_rows))


def named_columns(cfg: Config) -> dict[str, Sequence[str]]:
    """Every option naming columns of the data (but ``data.identifiers`` and ``data.dates``),
    with the columns it names."""
    d, u = cfg.data, cfg.utility
    return {"data.keys": list(d.keys or ()), "data.stratify": [d.stratify] if d.stratify else [],
            "data.keep_as_data": list(d.keep_as_data),
            "data.missing_codes": list(d.missing_codes or {}),
            "study.synthesize": list(cfg.study.synthesize or ()),
            **measures.column_options(cfg.risk), "utility.target": [u.target] if u.target else []}


def identifier_clashes(cfg: Config) -> list[str]:
    """Options naming a column that ``data.identifiers`` declares a direct identifier: such a
    column is never read (:func:`tuner.data.read_table`'s ``skip``), so no option can use it.
    Checked before the data are read."""
    dropped = set(cfg.data.identifiers)
    named = named_columns(cfg) | {"data.dates": list(cfg.data.dates or {})}
    return [f"{option} names column(s) {gone} that data.identifiers declares direct identifiers, "
            "which are never read: an intruder's key, a target or a date column must be a "
            "column the release keeps"
            for option, cols in named.items() if (gone := [c for c in cols if c in dropped])]


def data_problems(cfg: Config, columns: list[str], n_rows: int, *,
                  faked: frozenset[str] = frozenset()) -> list[str]:
    """Every way the config does not fit the data it was run on (``faked``: the columns SDV
    metadata declares fake, out of ``columns`` and said by :func:`tuner.data.conflicts`).

    Every column named in ``[data]``, ``[study]``, ``[risk]`` and ``[utility]`` must exist, the
    population must hold at least the table's records (the table is a sample of it, so
    ``n_train / N < 1``), and partial synthesis must keep some column. Checked once the data
    are read, before any trial is run, so that a misnamed column is one clear error rather than
    every trial failing.
    """
    d = cfg.data
    named = named_columns(cfg)
    errors = []
    if cfg.study.synthesize and set(columns) <= set(cfg.study.synthesize):
        errors.append(f"study.synthesize names every column {columns}; leave it out to "
                      "synthesise them all, or name the columns to synthesise")
    dropped = set(d.identifiers)
    for option, cols in named.items():
        if unknown := [c for c in cols if c not in columns and c not in dropped
                       and c not in faked]:
            errors.append(f"{option} names column(s) {unknown} that the data do not have; the "
                          f"data's columns are {columns}")
    qis = list(d.keys) if d.keys else columns
    h = cfg.risk.get("hamming_threshold", 0)
    if qis and h >= len(qis):
        errors.append(f"risk.hamming_threshold = {h} lets a record differ from the intruder's "
                      f"in all {len(qis)} quasi-identifier(s), so every record would match "
                      f"every other; it must be below {len(qis)}")
    if d.population_size < n_rows:
        errors.append(
            f"data.population_size = {d.population_size} is smaller than the {n_rows} records "
            "of the data, which are a sample of that population; give the size N of the "
            "population the data were drawn from")
    return errors
