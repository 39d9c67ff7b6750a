"""The release's manifest (design §9): what the release is, how it was made and measured.

No data values: fingerprints, synthesiser, parameters, package versions, every metric and
interval, each constraint and whether it passed, and (partial synthesis) what was kept. No
seed either (design §9.2): the split, the fits and a DP mechanism's noise follow from the
study's secret, which only the custodian's ``seeds.json`` holds; the manifest says which kind
of randomness the study used.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import platform
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import optuna

from tuner._common import attrs
from tuner.scoring.evaluation import Evaluation
from tuner.search.context import Context
from tuner.synthesis.families import SYNTHESIZERS

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
             synthetic_sha256: str, report_data: dict[str, Any]) -> dict[str, Any]:
    """What the release is and how it was made and measured (no data values)."""
    cfg = ctx.cfg
    return {
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
        "constraints": {k: {"value": v, "passed": v <= 0} for k, v in ev.constraints.items()},
        "versions": versions(),
        "synthetic_file": "synthetic.csv",
        "report": report_data,
    } | ({"partial": partial_manifest(ev, ctx)} if cfg.study.synthesize else {})


PARTIAL_GATE_NOTE = (
    "partial synthesis: row i of each released set is training record i, its kept columns as "
    "collected; no row is removed (removing one would withdraw a real record's kept values and "
    "break the row correspondence), copies are measured on the intruder's columns against the "
    "holdout records given synthesised values by the same model, and distance to closest "
    "record does not apply (tuner/measures/partial_gate.py)")


def set_files(sets: int) -> list[str]:
    """The released files of ``sets`` partially synthetic sets (one: ``synthetic.csv``)."""
    return ["synthetic.csv", *(f"synthetic_{k}.csv" for k in range(2, sets + 1))]


def partial_manifest(ev: Evaluation, ctx: Context) -> dict[str, Any]:
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
