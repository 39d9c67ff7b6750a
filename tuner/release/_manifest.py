"""The release's manifest (design §9): what the release is, how it was made and measured.

No data values: fingerprints, synthesiser, parameters, package versions, every metric and
interval, each constraint and whether it passed, and (partial synthesis) what was kept. No
seed either (design §9.2): the split, the fits and a DP mechanism's noise follow from the
study's secret, which only the custodian's ``seeds.json`` holds; the manifest says which kind
of randomness the study used.

:class:`Manifest` is its shape, shared by the writers (:func:`manifest`, the export's additions
in :mod:`tuner.release._export`, the audit entry of :mod:`tuner.release._audit`) and the readers
(:mod:`tuner.release._summary`, :mod:`tuner.release._report`, :mod:`tuner.release._report_audit`,
``tuner.load(...).manifest()``, ``risk-tuner report``), so that mypy refuses a key written on one
side and read under another name on the other. The file stays JSON: :func:`read_manifest`
reads it. 0.1.0 is the first release: no older manifest is read, so a key is ``NotRequired``
only where this version writes it for some releases and not others (``partial``, a Pareto
study's ``front``, a DP family's ``claimed_*``, the Quality Report's ``utility``, a constraint
no measure declares).
"""

# no ``from __future__ import annotations``: with it, Python 3.11 cannot tell a NotRequired key
# from a required one at run time (``Manifest.__required_keys__``, which the tests compare)
import datetime
import hashlib
import json
import platform
from collections.abc import Mapping
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import (
    Any,
    NotRequired,
    TypedDict,
    cast,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

import optuna

from tuner import measures
from tuner._common import attrs
from tuner.errors import InputError
from tuner.release import _domain as domain
from tuner.scoring import Evaluation
from tuner.search import Context
from tuner.synthesis import SYNTHESIZERS

SPLIT_FILE = "split.json"
SECRET_NOTE = ("the split, every fit and a DP mechanism's noise are keyed with the study's "
               "128-bit secret, held by the custodian only (seeds.json beside split.json): "
               "nothing released lets anyone rebuild who was in the training data")
PUBLIC_NOTE = ("PUBLIC SEED (study.public_seed = true, or a study made before secrets): the "
               "split and every fit follow from study.seed alone, so whoever knows or guesses "
               "it rebuilds who was in the training data with the data file; for tests and "
               "demonstrations on public data, not for a release of confidential data")
PACKAGES = ("risk-tuner", "sdv", "sdmetrics", "optuna", "mlflow", "torch", "scikit-learn",
            "pandas", "numpy")


class Randomness(TypedDict):
    """Which randomness the study used (no seed: design §9.2).

    ``secret``: whether the split and the fits were keyed with the custodian's secret (false:
    the public ``study.seed`` alone decides them); ``note``: what that means, in words."""

    secret: bool
    note: str


class DataInfo(TypedDict):
    """The data the study read, by fingerprint (never a value).

    ``population_size``: N, the people the table was drawn from (M's t = n_train / N)."""

    fingerprint_sha256: str
    rows: int
    columns: list[str]
    population_size: int
    population_note: str


class SplitInfo(TypedDict):
    """How the records were split (which ones: ``rows_file``, custodian-only).

    ``audit_fraction``, ``n_audit``: the sealed audit set (0 without one)."""

    train_fraction: float
    stratify: str | None
    audit_fraction: float
    n_train: int
    n_holdout: int
    n_audit: int
    rows_file: str


class Gate(TypedDict):
    """The release gate (tuner/measures/_gate.py).

    ``replicated_uniques``: the policy, ``remove`` or ``infeasible``; ``removed_records``:
    synthetic records equal to a training-unique record, removed before scoring."""

    replicated_uniques: str
    removed_records: int
    released_records: int
    note: str


class Constraint(TypedDict):
    """One constraint of the study, as :func:`tuner.measures.constraint_record` makes it: the
    ``metric`` it bounds, its measured ``value``, the ``limit`` in force (set by the ``[risk]``
    option ``limit_key``, None for a fixed limit), the ``sense`` (``"max"``: value <= limit),
    the ``margin`` (passed when <= 0) and ``passed``."""

    metric: NotRequired[str]
    value: NotRequired[float]
    limit: NotRequired[float]
    limit_key: NotRequired[str | None]
    sense: NotRequired[str]
    margin: float
    passed: bool


class ReportData(TypedDict):
    """What the report needs beyond the rest of the manifest (it is made again from it alone).

    ``rows``: one dict per reported number (measure, value, limit, meaning);
    ``figures``: title -> file name beside the manifest; ``utility``: the Quality Report's
    breakdown (scores only)."""

    rows: list[dict[str, str]]
    trials_run: int
    trials_feasible: int
    trials_refused: int
    utility: NotRequired[dict[str, Any]]
    figures: dict[str, str]


class Selection(TypedDict):
    """Why this trial is the release: the study's ``mode`` (``single`` or ``pareto``), its
    ``rule``, the ``reason`` in words, ``front`` (Pareto mode: the feasible front's trial
    numbers), ``refused`` (trial number -> why it was refused at release) and ``passed_over``
    (trial number -> why it was not audited: no safer than one the membership audit refused)."""

    mode: str
    rule: str
    reason: str
    front: NotRequired[list[int]]
    refused: dict[str, str]
    passed_over: dict[str, str]


class Partial(TypedDict):
    """A partially synthetic release (design §11): what was kept and what synthesised.

    ``sets``: the number of released sets (``files``); ``conditioning``: how the family draws
    the synthesised columns given the kept ones; ``identification``: the identification risk's
    figures (null without them); ``sha256``: file -> SHA-256, added by the export."""

    synthesized: list[str]
    kept: list[str]
    sets: int
    files: list[str]
    conditioning: str
    rejection_draws: int
    identification: dict[str, Any] | None
    note: str
    sha256: NotRequired[dict[str, str]]


class Audit(TypedDict):
    """The release audit's entry (:func:`tuner.release._audit.release_audit`, less the
    custodian-only figures).

    ``verdict``: ``passed`` or ``not audited``; ``summary``: its sentence, starting with the
    verdict; ``audit_set``: the gate on the sealed audit set; ``membership``: the membership
    audit's figures (``ran`` false: ``why``); ``winners_curse``: per constraint, audit value
    minus holdout value; ``claimed_*``: a DP family's claimed epsilon, its neighbours, and what
    it guarantees in the audit's replace-one game."""

    verdict: str
    summary: str
    tpr_limit: float
    audit_set: dict[str, Any]
    membership: dict[str, Any]
    winners_curse: dict[str, float]
    intruder: dict[str, Any]
    claimed_epsilon: NotRequired[float]
    claimed_neighbours: NotRequired[str]
    claimed_epsilon_in_game: NotRequired[float]


class Manifest(TypedDict):
    """``manifest.json``. The free mappings: ``params`` (the synthesiser's), ``config`` (the
    ``[risk]`` options, ``utility_metric`` and ``keys``), ``metrics`` (the flat metrics),
    ``membership`` (M's figures), ``versions`` (package -> version).

    ``synthetic_sha256``, ``config_sha256``: of ``synthetic.csv`` and of the resolved config;
    ``trial``: the released trial's number; ``threads``: the thread count its data were made
    with; ``constraints``: name -> its margin and whether it passed; ``partial``: only for a
    partially synthetic release; ``fakes``: the fake columns and how each was made (empty
    without any); ``released_columns``: ``synthetic.csv``'s columns, fakes included."""

    created_utc: str
    synthetic_sha256: str
    config_sha256: str
    study: str
    trial: int
    synthesizer: str
    params: dict[str, Any]
    randomness: Randomness
    threads: int
    device: str
    data: DataInfo
    split: SplitInfo
    config: dict[str, Any]
    gate: Gate
    metrics: dict[str, float]
    membership: dict[str, Any]
    constraints: dict[str, Constraint]
    versions: dict[str, str]
    synthetic_file: str
    report: ReportData
    partial: NotRequired[Partial]
    selection: Selection
    audit: Audit
    fakes: dict[str, Any]
    released_columns: list[str]
    metadata_file: str
    protection: dict[str, Any]
    domain: dict[str, Any]


READ_NEEDS = ("study", "trial", "synthesizer")  # what every reader needs of a manifest


def _lacking(content: Mapping[str, Any], shape: Any, where: str = "") -> list[str]:
    """The keys of TypedDict ``shape`` that ``content`` lacks or holds as no object where one
    is due, dotted (``gate.note``), nested ones and ``dict[str, TypedDict]`` included."""
    out: list[str] = []
    for key, kind in get_type_hints(shape).items():
        if key not in content:
            out += [f"{where}{key}"] if key in shape.__required_keys__ else []
            continue
        value, inner = content[key], get_args(kind)
        if is_typeddict(kind) or (get_origin(kind) is dict and is_typeddict(inner[-1])):
            if not isinstance(value, Mapping):
                out.append(f"{where}{key} (not an object)")
            elif is_typeddict(kind):
                out += _lacking(value, kind, f"{where}{key}.")
            else:
                for name, item in value.items():
                    out += (_lacking(item, inner[-1], f"{where}{key}.{name}.") if isinstance(
                        item, Mapping) else [f"{where}{key}.{name} (not an object)"])
    return out


def checked(content: object, where: str = "", *, whole: bool = True) -> Manifest:
    """``content`` as a :class:`Manifest`, or an :class:`InputError` (``where``: the file)
    when it is not a JSON object, lacks what every reader needs (:data:`READ_NEEDS`), or lacks
    any key :class:`Manifest` requires (every release this version makes has them all: 0.1.0
    is the first, so no reader makes do without one)."""
    said = f"{where}: " if where else ""
    if not isinstance(content, Mapping):
        raise InputError(f"{said}not a release manifest: a JSON {type(content).__name__}, "
                         "not an object")
    for key in READ_NEEDS:
        if key not in content:
            raise InputError(f"{said}not a release manifest: it has no {key!r} (keys: "
                             f"{sorted(content)})")
    if whole and (lacking := _lacking(content, Manifest)):
        raise InputError(f"{said}not a whole release manifest: it lacks {', '.join(lacking[:8])}"
                         + (f" and {len(lacking) - 8} more" if len(lacking) > 8 else "")
                         + " (every release of this version holds them: was it edited?)")
    return cast(Manifest, content)


def read_manifest(path: Path, *, whole: bool = True) -> Manifest:
    """``manifest.json`` at ``path``, an :class:`InputError` naming it when it is not one
    (:func:`checked`; ``whole=False``: only :data:`READ_NEEDS`)."""
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a release manifest: not JSON ({exc})") from exc
    return checked(content, str(path), whole=whole)


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def config_hash(ctx: Context) -> str:
    """SHA-256 of the configuration as resolved (file, overrides and defaults)."""
    cfg = ctx.cfg
    text = json.dumps({"data": cfg.data.__dict__, "study": cfg.study.__dict__,
                       "risk": dict(cfg.risk), "utility": cfg.utility.__dict__,
                       "spaces": cfg.spaces}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def manifest(ev: Evaluation, ctx: Context, best: optuna.trial.FrozenTrial,
             synthetic_sha256: str, report_data: ReportData, *, selection: Selection,
             audit: Audit, fakes: dict[str, Any], released_columns: list[str]) -> Manifest:
    """What the release is and how it was made and measured (no data values); the export
    gives what it decided: why this trial, its audit, the fake columns, the columns released."""
    cfg = ctx.cfg
    out: Manifest = {
        "selection": selection, "audit": audit, "fakes": fakes,
        "released_columns": released_columns, "metadata_file": "metadata.json",
        "created_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "synthetic_sha256": synthetic_sha256, "config_sha256": config_hash(ctx),
        "study": cfg.study.name, "trial": best.number, "synthesizer": ev.synthesizer,
        "params": ev.params,
        "randomness": {"secret": ctx.secret is not None,
                       "note": SECRET_NOTE if ctx.secret is not None else PUBLIC_NOTE},
        "threads": int(best.user_attrs.get(attrs.THREADS, 1)), "device": cfg.study.device,
        "data": {"fingerprint_sha256": ctx.fingerprint, "rows": len(ctx.frame),
                 "columns": list(map(str, ctx.frame.columns)),
                 "population_size": cfg.data.population_size,
                 "population_note": cfg.data.population_note},
        "split": {"train_fraction": cfg.data.train_fraction, "stratify": cfg.data.stratify,
                  "audit_fraction": cfg.data.audit_fraction if ctx.split.has_audit else 0.0,
                  "n_train": len(ctx.split.train), "n_holdout": len(ctx.split.holdout),
                  "n_audit": len(ctx.split.audit_positions),
                  "rows_file": f"../{SPLIT_FILE} (confidential: never share it)"},
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in cfg.risk.items()}
        | {"utility_metric": cfg.utility.metric,
           "keys": list(cfg.data.keys or ctx.frame.columns)},
        "gate": {
            "replicated_uniques": cfg.risk.replicated_uniques,
            "removed_records": int(ev.metrics().get("replicated_uniques_removed", 0)),
            "released_records": len(ev.synthetic),
            "note": PARTIAL_GATE_NOTE if cfg.study.synthesize else
                    "synthetic records equal on every column to a record unique in the "
                    "training data are removed before scoring and release ('remove'), or make "
                    "the trial infeasible ('infeasible'); copies and distances are measured on "
                    "the data as sampled",
        },
        "metrics": ev.metrics(),
        "membership": ev.membership.to_dict(),
        "constraints": {k: cast(Constraint, measures.constraint_record(k, v, ev.metrics(),
                                                                       cfg.risk))
                        for k, v in ev.constraints.items()},
        "versions": versions(),
        "synthetic_file": "synthetic.csv",
        "report": report_data,
        "protection": ctx.protection.record(),
        "domain": domain.record(ctx, ev.synthesizer, ev.params),
    }
    if cfg.study.synthesize:
        out["partial"] = partial_manifest(ev, ctx)
    return out


PARTIAL_GATE_NOTE = (
    "partial synthesis: row i of each released set is training record i, its kept columns as "
    "collected; no row is removed (removing one would withdraw a real record's kept values and "
    "break the row correspondence), copies are measured on the intruder's columns against the "
    "holdout records given synthesised values by the same model, and distance to closest "
    "record does not apply (tuner/measures/_partial_gate.py)")


def set_files(sets: int) -> list[str]:
    """The released files of ``sets`` partially synthetic sets (one: ``synthetic.csv``)."""
    return ["synthetic.csv", *(f"synthetic_{k}.csv" for k in range(2, sets + 1))]


def partial_manifest(ev: Evaluation, ctx: Context) -> Partial:
    """What the manifest says of a partially synthetic release (no data values)."""
    cfg = ctx.cfg
    ident = ev.results("identification").get("")
    synthesized = list(cfg.study.synthesize or ())
    return {
        "synthesized": synthesized,
        "kept": [c for c in map(str, ctx.frame.columns) if c not in synthesized],
        "sets": len(ev.sets), "files": set_files(len(ev.sets)),
        "conditioning": SYNTHESIZERS[ev.synthesizer].conditioning,
        "rejection_draws": int(ev.partial.get("rejection_draws", 0)),
        "identification": ident.to_dict() if ident is not None else None,
        "note": "row i of every released set is training record i: the kept columns are its "
                "values as collected (real data, released on purpose), the synthesised ones "
                "are drawn given them; a row whose synthesised values equal the record's is "
                "that real record. Identification risk (Reiter & Mitra 2009) measures what an "
                "intruder matching on the known and synthesised variables can do with that.",
    }
