"""What every worker of a study needs, rebuilt identically in each process from the config."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from tuner._common.seeding import SeedPath, derive, noise_key, split_seed
from tuner.config import (
    Config,
    ConfigError,
    data_problems,
    identifier_clashes,
    named_columns,
    raise_all,
)
from tuner.data import (
    Codebook,
    Declared,
    Protection,
    Split,
    ambiguous_dates,
    conflicts,
    drop_identifiers,
    fingerprint,
    follow,
    frame_problems,
    key_problems,
    merged_formats,
    missing_columns,
    protect,
    read_codebook,
    read_dates,
    read_metadata,
    read_table,
    split,
)
from tuner.measures import identification_data_problems
from tuner.search import _secret as study_secret
from tuner.search._stored_split import no_split, recorded_split
from tuner.search._tracking import local_uri
from tuner.synthesis import SYNTHESIZERS, conditioning_problem


@dataclasses.dataclass(frozen=True)
class Context:
    """The config, the data, the study's one split, and where the stores are."""

    cfg: Config
    frame: pd.DataFrame
    split: Split
    storage_url: str
    mlflow_uri: str
    fingerprint: str  # SHA-256 of the table, computed once
    # the release format of each date column (tuner.data): the input's, e.g. "%d/%m/%Y"
    date_formats: dict[str, str] = dataclasses.field(default_factory=dict)
    # SDV metadata ([data] metadata, tuner.data): the columns released as fake values, their
    # real values (every record: only to check that no fake equals one; never in a trial) and
    # the input's column order
    declared: Declared | None = None
    pii: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame, repr=False)
    order: tuple[str, ...] = ()
    # CSV columns of whole numbers read as text for their leading zeros (tuner.data)
    codes_as_text: tuple[str, ...] = ()
    progress: bool = True  # progress bars on long work (the release audit); --no-progress: off
    # the job's end (time.monotonic(); study.budget_minutes, tuner.release._budget): the release
    # tries no further candidate after it
    deadline: float | None = None
    # the study's secret (tuner.search._secret); None: public seeds. Never in a repr/traceback
    secret: int | None = dataclasses.field(default=None, repr=False)
    # what value protection coded before any fit (tuner.data.protect; names and counts only)
    protection: Protection = dataclasses.field(default_factory=lambda: Protection(0, {}))

    @property
    def output(self) -> Path:
        return self.cfg.study.output

    def derive(self, what: SeedPath, *path: int) -> int:
        """The study's 32-bit seed of the component ``what`` (at ``path`` within it, e.g. a
        trial's number), keyed with its secret."""
        return derive(self.cfg.study.seed, what, *path, secret=self.secret)

    def noise_key(self, what: SeedPath, *path: int) -> int | None:
        """The 128-bit noise key of a DP mechanism fitted by ``what`` at ``path`` (None:
        public seeds)."""
        return noise_key(self.cfg.study.seed, what, *path, secret=self.secret)

    def split_record(self) -> dict[str, Any]:
        """How the data were split, as the study records it (:mod:`tuner.search._stored_split`)."""
        d = self.cfg.data
        return {"train_fraction": d.train_fraction, "stratify": d.stratify,
                "audit_fraction": d.audit_fraction if self.split.has_audit else 0.0}


def apply_missing_codes(frame: pd.DataFrame,
                        codes: dict[str, tuple[object, ...]] | None) -> pd.DataFrame:
    """Values that code "not applicable" or "refused" (SD2011's -8) read as missing, so that
    they are neither synthesised as numbers nor matched as values."""
    if not codes:
        return frame
    unknown = [c for c in codes if c not in frame.columns]
    if unknown:
        raise ConfigError(f"data.missing_codes names column(s) {unknown} that the data do not "
                          f"have; the data's columns are {list(map(str, frame.columns))}")
    out = frame.copy()
    for col, values in codes.items():
        hit = out[col].isin(values)
        if out[col].dtype == object:  # a code column kept as text (02134): -8 matches "-8"
            hit |= out[col].isin([str(v) for v in values])
        out[col] = out[col].mask(hit)
    return out


def partial_problems(cfg: Config, frame: pd.DataFrame) -> list[str]:
    """What partial synthesis (``study.synthesize``) cannot do with these data: a family that
    conditions by rejection with a continuous kept column, identification risk without known
    variables or a radius for continuous synthesised columns (before any trial)."""
    if not cfg.study.synthesize:
        return []
    problems = [p for name in cfg.study.synthesizers
                if (p := conditioning_problem(name, frame, cfg.study.synthesize))]
    return problems + identification_data_problems(cfg.risk, frame, cfg.data.keys)


def prepare(cfg: Config, frame: pd.DataFrame | None = None) -> Context:
    """Read the data and its SDV metadata (``[data] metadata``: the columns released as fake
    values leave the table first), its dates as dates, drop the declared identifiers (refusing
    undeclared ones, all at once), check the config against the data and make the study's one
    seeded split."""
    raise_all(identifier_clashes(cfg))  # an option naming a column that is never read
    frame, skipped, codes = _read(cfg, frame)
    order = tuple(map(str, frame.columns))
    first_line = 1 if cfg.data.header_names else 2
    declared, pii, frame = _metadata(cfg, frame, [*order, *skipped])
    frame, date_formats = _dates(cfg, apply_missing_codes(frame, cfg.data.missing_codes),
                                 declared, first_line)
    frame = _without_identifiers(cfg, frame, declared, skipped=bool(skipped))
    codes = _codes_as_text(frame, codes)
    codebook = read_codebook(cfg.data.codebook) if cfg.data.codebook is not None else None
    raise_all(_problems(cfg, frame, codebook, faked=frozenset(pii.columns)))
    storage, fp, secret, sp, protection = _split(cfg, frame, codebook)
    return Context(cfg, frame, sp, storage, cfg.study.mlflow_uri or local_uri(cfg.study.output),
                   fp, date_formats=date_formats, secret=secret, declared=declared, pii=pii,
                   order=order, codes_as_text=codes, protection=protection)


def _read(cfg: Config, frame: pd.DataFrame | None
          ) -> tuple[pd.DataFrame, list[str], tuple[str, ...]]:
    """The table (read from ``[data] path`` unless given), the declared identifiers never read
    from the file, and the columns read as codes (numbers with a leading zero)."""
    if frame is not None:
        return frame, [], ()
    d = cfg.data
    skipped = list(d.identifiers)
    frame = read_table(d.path, list(d.columns) if d.columns else None,
                       header_names=list(d.header_names) if d.header_names else None,
                       missing_values=list(d.missing_values), skip=skipped)
    return frame, skipped, tuple(frame.attrs.get("codes_as_text", ()))


def _metadata(cfg: Config, frame: pd.DataFrame, columns: list[str]
              ) -> tuple[Declared | None, pd.DataFrame, pd.DataFrame]:
    """``[data] metadata`` read and checked first (it says what the columns are), and the
    columns it declares fake out of the table: (metadata, the fake columns, the table)."""
    if cfg.data.metadata is None:
        return None, pd.DataFrame(index=frame.index), frame
    declared = read_metadata(cfg.data.metadata)
    named = named_columns(cfg) | {"data.identifiers": list(cfg.data.identifiers),
                                  "data.dates": list(cfg.data.dates or {})}
    raise_all(missing_columns(declared, columns) + conflicts(declared, named))
    pii, frame = frame[list(declared.fakes)], frame.drop(columns=list(declared.fakes))
    raise_all(key_problems(declared, pii, len(frame)))
    return declared, pii, frame


def _dates(cfg: Config, frame: pd.DataFrame, declared: Declared | None, first_line: int
           ) -> tuple[pd.DataFrame, dict[str, str]]:
    """The date columns read as dates (the config's formats, the metadata's, or detected),
    a day-first reading that month first would also fit said, and the metadata's sdtypes
    followed."""
    dates = cfg.data.dates if declared is None else merged_formats(declared, cfg.data.dates)
    frame, date_formats = read_dates(frame, dates, first_line=first_line)
    for col, swapped in ambiguous_dates(frame, date_formats, declared=dates):
        print(f"note: column {col!r} is read day first ({date_formats[col]!r}), but every day in "
              f"it is 12 or less, so month first ({swapped!r}) reads it too: if its dates are "
              f"month first, declare [data] dates = {{{col} = \"{swapped}\"}}")
    if declared is not None:
        frame = follow(declared, frame, first_line=first_line)
    return frame, date_formats


def _without_identifiers(cfg: Config, frame: pd.DataFrame, declared: Declared | None, *,
                         skipped: bool) -> pd.DataFrame:
    """The table without its direct identifiers: the declared ones (unless never read), and
    undeclared ones found by name, content or uniqueness refused (or warned of)."""
    d = cfg.data
    frame, warnings = drop_identifiers(frame, identifiers=() if skipped else d.identifiers,
                                       keep_as_data=d.keep_as_data, keys=d.keys,
                                       not_pii=declared.not_pii if declared else ())
    for warning in warnings:
        print(f"warning: {warning}")
    return frame


def _codes_as_text(frame: pd.DataFrame, codes: tuple[str, ...]) -> tuple[str, ...]:
    """The columns of codes still text in the table, said once: not those the metadata
    declares numerical (numbers again) or datetime, nor fakes and identifiers (they left)."""
    codes = tuple(c for c in codes if c in frame.columns
                  and not pd.api.types.is_numeric_dtype(frame[c])
                  and not pd.api.types.is_datetime64_any_dtype(frame[c]))
    if codes:
        print(f"note: data column(s) {list(codes)} hold numbers written with a leading zero (as "
              "02134): read as codes, the text in the file, so the release writes them so")
    return codes


def _problems(cfg: Config, frame: pd.DataFrame, codebook: Codebook | None, *,
              faked: frozenset[str]) -> list[str]:
    """Every way the config, its families and its codebook do not fit the table, before any
    trial (partial synthesis's own problems once the others are settled)."""
    problems = frame_problems(frame) + data_problems(cfg, list(map(str, frame.columns)),
                                                     len(frame), faked=faked)
    # a family whose optional dependencies are missing (mst, aim: the `dp` extra), before any
    # trial rather than as every trial's failure (not at parse: `report DIR` needs no extra)
    problems += [why for name in cfg.study.synthesizers
                 if name in SYNTHESIZERS and (why := SYNTHESIZERS[name].missing())]
    problems += (codebook.problems(frame) if codebook else []) + dp_domain_problems(cfg, frame,
                                                                                   codebook)
    return problems or partial_problems(cfg, frame)


def _split(cfg: Config, frame: pd.DataFrame, codebook: Codebook | None
           ) -> tuple[str, str, int | None, Split, Protection]:
    """The study's storage, the data's fingerprint, the study's secret and its one seeded
    split, value-protected: the output folder is made only now, so that a run refused before
    leaves no empty folder behind."""
    out = cfg.study.output
    out.mkdir(parents=True, exist_ok=True)
    storage = cfg.study.storage or f"sqlite:///{(out / 'study.db').resolve()}"
    recorded = recorded_split(storage, cfg.study.name)
    if recorded is not None and "train_fraction" not in recorded:
        raise ConfigError(no_split(cfg.study.name, storage))
    fp = fingerprint(frame)
    secret, note = study_secret.resolve(cfg, recorded, fp)
    if note:
        print(f"note: {note}")
    sp = split(frame, train_fraction=cfg.data.train_fraction,
               seed=split_seed(cfg.study.seed, secret), stratify=cfg.data.stratify,
               audit_fraction=cfg.data.audit_fraction)
    # partial synthesis releases real kept columns: no family takes a domain there
    sp, protection = _protected(cfg, dataclasses.replace(
        sp, domain=None if cfg.study.synthesize else codebook))
    audit = cfg.audit
    if audit.enabled and sp.has_audit and audit.targets > len(sp.train):
        raise ConfigError(f"audit.targets = {audit.targets} is more than the {len(sp.train)} "
                          "training records; attack at most that many (the default is 20)")
    return storage, fp, secret, sp, protection


def _protected(cfg: Config, sp: Split) -> tuple[Split, Protection]:
    """The split with value protection applied (:mod:`tuner.data._protect`): full synthesis
    only (partial synthesis releases each record's kept columns as they are)."""
    if cfg.study.synthesize or cfg.data.protect_k <= 0:
        return sp, Protection(0, {})
    frames = {"train": sp.train, "holdout": sp.holdout, "audit": sp.audit}
    coded, protection = protect(frames, cfg.data.protect_k,
                                public=sp.domain.declared if sp.domain else frozenset())
    return dataclasses.replace(sp, train=coded["train"], holdout=coded["holdout"],
                               audit=coded["audit"]), protection


def dp_domain_problems(cfg: Config, frame: pd.DataFrame, codebook: Codebook | None) -> list[str]:
    """A differentially private family (mst, aim) searched over a domain read from the data:
    refused unless ``[data] dp_domain = "data"`` accepts it (:mod:`tuner.synthesis._dp`: the
    bins and categories would leak what they are, and the release would not be DP)."""
    private = [n for n in cfg.study.synthesizers if n in SYNTHESIZERS and SYNTHESIZERS[n].private]
    # partial synthesis releases real kept columns: not DP whatever the domain (it says so)
    if not private or cfg.data.dp_domain == "data" or cfg.study.synthesize:
        return []
    uncovered = codebook.uncovered(frame) if codebook else list(map(str, frame.columns))
    if not uncovered:
        return []
    said = (f"[data] codebook ({codebook.source}) leaves {len(uncovered)} column(s) out: "
            f"{uncovered[:8]}{' ...' if len(uncovered) > 8 else ''}" if codebook else
            "no [data] codebook is given")
    return [f"synthesiser(s) {private} are differentially private only over a public domain, "
            f"but {said}. Give every column's categories or range (or \"public\") in a "
            "codebook (docs/usage.md, \"The codebook\"), or accept a domain read from the data "
            "with [data] dp_domain = \"data\" (the release is then not DP)"]
