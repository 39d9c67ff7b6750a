"""``risk-tuner`` against bad configurations and arguments: exit 2, one line, no traceback.

Every case runs the command in-process (``tuner.cli.main``) on a tiny CSV, with one thing
broken, and asserts that the command exits 2 before any trial runs, prints no traceback, and
says in one line what is wrong: the key or argument and the bad value. A few run the installed
command in a subprocess, as a user would. A study never starts: ``_optimize`` is replaced by a
function that fails the test, so a bad input that is accepted shows as a failure, not a run.
"""

from __future__ import annotations

import io
import json
import math
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
import pytest

from tests.tuner.conftest import TINY_AUDIT_KEYS
from tuner import cli

ROOT = Path(__file__).resolve().parents[2]
DELETE = object()  # a key removed from the base config
COLUMNS = ["rate_marriage", "age", "yrs_married", "children", "religious", "educ",
           "occupation", "occupation_husb", "affairs"]
N_ROWS = 200


def _base() -> dict:
    return {
        "data": {"path": "data.csv", "population_size": 100000, "train_fraction": 0.5},
        "study": {"name": "t", "synthesizers": ["gaussian_copula"], "n_trials": 1, "seed": 3,
                  "output": "out"},
        "risk": {"repeats": 5, "attribute_keys": ["age", "yrs_married"], "cap_targets": ["affairs"],
                 "inference_targets": ["affairs"]},
        "utility": {"metric": "hellinger"},
        "audit": dict(TINY_AUDIT_KEYS),
    }


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return ("-" if v < 0 else "") + ("inf" if math.isinf(v) else "nan")
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def to_toml(raw: dict) -> str:
    """A config mapping as TOML: top-level scalars first, then [section] and [space.NAME]."""
    lines = [f"{k} = {_value(v)}" for k, v in raw.items() if not isinstance(v, dict)]
    for section, table in raw.items():
        if not isinstance(table, dict):
            continue
        if section == "space" and all(isinstance(v, dict) for v in table.values()):
            for name, params in table.items():
                lines.append(f"[space.{json.dumps(name)}]")
                lines += [f"{json.dumps(k)} = {_value(v)}" for k, v in params.items()]
            continue
        lines.append(f"[{section}]")
        lines += [f"{json.dumps(k)} = {_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def _mutate(raw: dict, changes: dict) -> dict:
    for dotted, value in changes.items():
        *parents, key = dotted.split(".")
        table = raw
        for p in parents:
            table = table.setdefault(p, {})
        if value is DELETE:
            table.pop(key, None)
        else:
            table[key] = value
    return raw


@pytest.fixture(scope="module")
def csv_text() -> str:
    from tuner.data import read_builtin

    frame = read_builtin("builtin:fair")[COLUMNS].head(N_ROWS)
    return frame.to_csv(index=False)


@pytest.fixture
def folder(tmp_path, csv_text, monkeypatch):
    """A folder with a tiny CSV; no study may start in it."""
    (tmp_path / "data.csv").write_text(csv_text)

    def no_trials(*args, **kwargs):
        raise AssertionError("a study started: the bad input was accepted")

    monkeypatch.setattr("tuner.search._study._optimize", no_trials)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _write(folder: Path, changes: dict | None = None, text: str | None = None) -> Path:
    path = folder / "study.toml"
    path.write_text(text if text is not None else to_toml(_mutate(_base(), changes or {})))
    return path


def _check(capsys, argv: list[str], *culprits: str, lines: int = 1) -> str:
    """Run ``risk-tuner ARGV``; assert exit 2, no traceback, ``lines`` line(s) on stderr
    naming every one of ``culprits`` (case-insensitive); return that message."""
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, out[-2000:], err[-2000:])
    assert "Traceback" not in err + out, err
    said = [line for line in err.splitlines() if line.strip()]
    assert len(said) == lines, err
    assert said[0].startswith("error"), said
    for culprit in culprits:
        assert culprit.lower() in err.lower(), (culprit, err)
    return err


# one key of the base config changed: (id, changes, what the message must name)
CONFIG_CASES = [
    # [data]
    ("data-path-missing", {"data.path": "nope.csv"}, ["nope.csv", "does not exist"]),
    ("data-path-int", {"data.path": 5}, ["data.path", "5"]),
    ("data-path-list", {"data.path": ["a.csv"]}, ["data.path", "a.csv"]),
    ("data-path-no-suffix", {"data.path": "."}, ["data.path", "folder"]),
    ("data-path-builtin", {"data.path": "builtin:nope"}, ["builtin:nope"]),
    ("data-path-absent-key", {"data.path": DELETE}, ["[data]", "path"]),
    ("population-absent", {"data.population_size": DELETE}, ["population_size"]),
    ("population-one", {"data.population_size": 1}, ["data.population_size", "1"]),
    ("population-negative", {"data.population_size": -5}, ["data.population_size", "-5"]),
    ("population-string", {"data.population_size": "big"}, ["data.population_size", "big"]),
    ("population-float", {"data.population_size": 1.5}, ["data.population_size", "1.5"]),
    ("population-bool", {"data.population_size": True}, ["data.population_size", "True"]),
    ("population-beyond-earth", {"data.population_size": 10**11},
     ["data.population_size", "100,000,000,000", "more people than live on Earth"]),
    ("population-below-rows", {"data.population_size": 150},
     ["data.population_size", "150", str(N_ROWS)]),
    ("train-fraction-zero", {"data.train_fraction": 0}, ["data.train_fraction", "0"]),
    ("train-fraction-one", {"data.train_fraction": 1.0}, ["data.train_fraction", "1.0"]),
    ("train-fraction-big", {"data.train_fraction": 1.5}, ["data.train_fraction", "1.5"]),
    ("train-fraction-string", {"data.train_fraction": "half"}, ["data.train_fraction", "half"]),
    ("audit-fraction-leaves-no-holdout", {"data.audit_fraction": 0.5},
     ["data.audit_fraction", "0.5", "holdout"]),
    ("audit-fraction-negative", {"data.audit_fraction": -0.1}, ["data.audit_fraction", "-0.1"]),
    ("audit-fraction-string", {"data.audit_fraction": "a fifth"},
     ["data.audit_fraction", "a fifth"]),
    ("train-fraction-bool", {"data.train_fraction": True}, ["data.train_fraction", "True"]),
    ("train-fraction-nan", {"data.train_fraction": math.nan}, ["data.train_fraction", "nan"]),
    ("train-fraction-inf", {"data.train_fraction": math.inf}, ["data.train_fraction", "inf"]),
    ("quasi-identifiers-unknown", {"data.keys": ["age", "nope"]},
     ["data.keys", "nope"]),
    ("quasi-identifiers-string", {"data.keys": "age"},
     ["data.keys", "age"]),
    ("quasi-identifiers-ints", {"data.keys": [1, 2]},
     ["data.keys", "1"]),
    ("stratify-unknown", {"data.stratify": "nope"}, ["data.stratify", "nope"]),
    ("stratify-int", {"data.stratify": 3}, ["data.stratify", "3"]),
    ("identifiers-unknown", {"data.identifiers": ["patient_id"]},
     ["data.identifiers", "patient_id"]),
    ("dates-unknown", {"data.dates": {"nope": "%d/%m/%Y"}}, ["data.dates", "nope"]),
    ("dates-not-a-format", {"data.dates": {"age": "dd/mm/yyyy"}},
     ["data.dates", "dd/mm/yyyy", "strftime"]),
    ("dates-list", {"data.dates": ["age"]}, ["data.dates", "age"]),
    ("keep-as-data-unknown", {"data.keep_as_data": ["nope"]}, ["data.keep_as_data", "nope"]),
    ("missing-codes-unknown", {"data.missing_codes": {"nope": [-8]}},
     ["data.missing_codes", "nope"]),
    ("missing-codes-scalar", {"data.missing_codes": {"age": -8}}, ["data.missing_codes", "-8"]),
    ("missing-codes-empty", {"data.missing_codes": {"age": []}}, ["data.missing_codes"]),
    ("missing-codes-list", {"data.missing_codes": [-8]}, ["data.missing_codes", "-8"]),
    ("missing-values-string", {"data.missing_values": "?"}, ["data.missing_values", "?"]),
    ("columns-unknown", {"data.columns": ["age", "nope"]}, ["nope"]),
    ("header-names-wrong-length", {"data.header_names": ["a", "b"]},
     ["header_names", "2"]),
    ("population-note-int", {"data.population_note": 5}, ["data.population_note", "5"]),
    ("data-unknown-key", {"data.pth": "x.csv"}, ["[data]", "pth"]),
    ("data-absent", {"data": DELETE}, ["[data]"]),
    ("data-not-table", {"data": 5}, ["[data]", "5"]),
    # [study]
    ("name-empty", {"study.name": ""}, ["study.name", "''"]),
    ("name-blank", {"study.name": "   "}, ["study.name"]),
    ("name-int", {"study.name": 5}, ["study.name", "5"]),
    ("synthesizers-unknown", {"study.synthesizers": ["cart", "nope"]},
     ["study.synthesizers", "nope"]),
    ("synthesizers-empty", {"study.synthesizers": []}, ["study.synthesizers", "empty"]),
    ("synthesizers-string", {"study.synthesizers": "cart"}, ["study.synthesizers", "cart"]),
    ("n-trials-zero", {"study.n_trials": 0}, ["study.n_trials", "0"]),
    ("n-trials-negative", {"study.n_trials": -3}, ["study.n_trials", "-3"]),
    ("n-trials-float", {"study.n_trials": 2.5}, ["study.n_trials", "2.5"]),
    ("n-trials-string", {"study.n_trials": "10"}, ["study.n_trials", "10"]),
    ("workers-zero", {"study.workers": 0}, ["study.workers", "0"]),
    ("workers-string", {"study.workers": "2"}, ["study.workers", "2"]),
    ("seed-string", {"study.seed": "x"}, ["study.seed", "x"]),
    ("seed-negative", {"study.seed": -1}, ["study.seed", "-1"]),
    ("seed-float", {"study.seed": 1.5}, ["study.seed", "1.5"]),
    ("timeout-zero", {"study.timeout": 0}, ["study.timeout", "0"]),
    ("timeout-negative", {"study.timeout": -5}, ["study.timeout", "-5"]),
    ("timeout-string", {"study.timeout": "1h"}, ["study.timeout", "1h"]),
    ("device-unknown", {"study.device": "gpu"}, ["study.device", "gpu"]),
    ("sample-size-zero", {"study.sample_size": 0}, ["study.sample_size", "0"]),
    ("output-int", {"study.output": 5}, ["study.output", "5"]),
    ("output-is-file", {"study.output": "data.csv"}, ["study.output", "data.csv"]),
    ("output-under-file", {"study.output": "data.csv/out"}, ["study.output", "data.csv"]),
    ("storage-int", {"study.storage": 5}, ["study.storage", "5"]),
    ("storage-scheme", {"study.storage": "oracle://host/db"}, ["study.storage", "oracle"]),
    ("storage-unreachable", {"study.storage": "postgresql://tuner@127.0.0.1:9/optuna"},
     ["study.storage", "127.0.0.1:9"]),
    ("mlflow-uri-int", {"study.mlflow_uri": 5}, ["study.mlflow_uri", "5"]),
    ("mlflow-uri-refused", {"study.mlflow_uri": "http://127.0.0.1:9"},
     ["study.mlflow_uri", "http://127.0.0.1:9", "refused"]),
    ("mlflow-uri-no-host", {"study.mlflow_uri": "http://no-such-host.invalid:5000"},
     ["study.mlflow_uri", "no-such-host.invalid"]),
    ("mlflow-uri-scheme", {"study.mlflow_uri": "foo://bar"}, ["study.mlflow_uri", "foo://bar"]),
    ("study-unknown-key", {"study.trials": 3}, ["[study]", "trials"]),
    ("study-not-table", {"study": [1, 2]}, ["[study]", "[1, 2]"]),
    ("study-misspelt", {"study": DELETE, "stduy": {"name": "x"}}, ["stduy"]),
    # [risk]
    ("m-threshold-big", {"risk.m_threshold": 1.5}, ["risk.m_threshold", "1.5"]),
    ("m-threshold-string", {"risk.m_threshold": "low"}, ["risk.m_threshold", "low"]),
    ("m-threshold-nan", {"risk.m_threshold": math.nan}, ["risk.m_threshold", "nan"]),
    ("hamming-negative", {"risk.hamming_threshold": -1}, ["risk.hamming_threshold", "-1"]),
    ("hamming-not-below-qis", {"risk.hamming_threshold": 2,
                               "data.keys": ["age", "yrs_married"]},
     ["risk.hamming_threshold = 2", "below 2"]),
    ("cap-keys-twice", {"risk.attribute_keys": ["age", "age"]},
     ["risk.attribute_keys", "more than once"]),
    ("quasi-identifiers-twice", {"data.keys": ["age", "affairs", "age"]},
     ["data.keys", "more than once"]),
    ("synthesizers-twice", {"study.synthesizers": ["gaussian_copula", "gaussian_copula"]},
     ["study.synthesizers", "more than once"]),
    ("copy-limit-negative", {"risk.copy_limit": -0.01}, ["risk.copy_limit", "-0.01", "[0, 1]"]),
    ("dcr-limit-negative", {"risk.dcr_limit": -0.1}, ["risk.dcr_limit", "-0.1"]),
    ("cap-key-is-a-dropped-identifier", {"data.identifiers": ["age"]},
     ["risk.attribute_keys", "age", "data.identifiers"]),
    ("audit-targets-above-train", {"audit.targets": 5000}, ["audit.targets = 5000", "training"]),
    ("repeats-zero", {"risk.repeats": 0}, ["risk.repeats", "0"]),
    ("repeats-float", {"risk.repeats": 2.5}, ["risk.repeats", "2.5"]),
    ("numeric-bins-zero", {"risk.numeric_bins": 0}, ["risk.numeric_bins", "0"]),
    ("numeric-bins-negative", {"risk.numeric_bins": -3}, ["risk.numeric_bins", "-3"]),
    ("replicated-uniques-unknown", {"risk.replicated_uniques": "keep"},
     ["risk.replicated_uniques", "keep"]),
    ("m-decision-unknown", {"risk.m_decision": "lower"}, ["risk.m_decision", "lower"]),
    ("m-decision-number", {"risk.m_decision": 1}, ["risk.m_decision", "1"]),
    ("m-level-zero", {"risk.m_level": 0.0}, ["risk.m_level", "0.0"]),
    ("m-level-one", {"risk.m_level": 1.0}, ["risk.m_level", "1.0"]),
    ("m-level-big", {"risk.m_level": 95.0}, ["risk.m_level", "95.0"]),
    ("m-level-string", {"risk.m_level": "high"}, ["risk.m_level", "high"]),
    ("copy-limit-big", {"risk.copy_limit": 2}, ["risk.copy_limit", "2"]),
    ("near-copy-limit-negative", {"risk.near_copy_limit": -2},
     ["risk.near_copy_limit", "-2"]),
    ("dcr-limit-inf", {"risk.dcr_limit": math.inf}, ["risk.dcr_limit", "inf"]),
    ("cap-limit-string", {"risk.cap_limit": "x"}, ["risk.cap_limit", "x"]),
    ("disco-limit-string", {"risk.disco_limit": "x"}, ["risk.disco_limit", "x"]),
    ("inference-limit-big", {"risk.inference_limit": 3}, ["risk.inference_limit", "3"]),
    ("cap-keys-unknown", {"risk.attribute_keys": ["age", "nope"]}, ["risk.attribute_keys", "nope"]),
    ("cap-keys-string", {"risk.attribute_keys": "age"}, ["risk.attribute_keys", "age"]),
    ("cap-targets-unknown", {"risk.cap_targets": ["nope"]}, ["risk.cap_targets", "nope"]),
    ("cap-targets-without-keys", {"risk.attribute_keys": []}, ["risk.attribute_keys"]),
    ("inference-targets-unknown", {"risk.inference_targets": ["nope"]},
     ["risk.inference_targets", "nope"]),
    ("risk-unknown-key", {"risk.cap_limt": 0.1}, ["[risk]", "cap_limt"]),
    # [utility]
    ("utility-metric-unknown", {"utility.metric": "nope"}, ["utility.metric", "nope"]),
    ("utility-metric-int", {"utility.metric": 5}, ["utility.metric", "5"]),
    ("efficacy-without-target", {"utility.metric": "efficacy"}, ["utility.target"]),
    ("efficacy-target-unknown", {"utility.metric": "efficacy", "utility.target": "nope"},
     ["utility.target", "nope"]),
    ("utility-unknown-key", {"utility.metirc": "hellinger"}, ["[utility]", "metirc"]),
    # [space.NAME]
    ("space-unknown-synthesizer", {"space.nope.epochs": [1, 2]}, ["space.nope"]),
    ("space-unknown-parameter", {"space.ctgan.epoch": [1, 2]}, ["space.ctgan", "epoch"]),
    ("space-widened", {"space.ctgan.epochs": [1, 5000]}, ["ctgan", "epochs", "5000"]),
    ("space-below-range", {"space.ctgan.epochs": [0, 5]}, ["ctgan", "epochs", "0"]),
    ("space-reversed", {"space.ctgan.epochs": [10, 5]}, ["ctgan", "epochs", "10"]),
    ("space-string", {"space.ctgan.epochs": "x"}, ["ctgan", "epochs", "x"]),
    ("space-unknown-choice", {"space.gaussian_copula.default_distribution": ["nope"]},
     ["gaussian_copula", "default_distribution", "nope"]),
    ("space-batch-size-choice", {"space.ctgan.batch_size": [300]},
     ["ctgan", "batch_size", "300"]),
    ("space-not-table", {"space": 5}, ["[space"]),
    ("unknown-section", {"sapce": {"x": 1}}, ["sapce"]),
    # [audit]
    ("audit-shadows-odd", {"audit.shadows": 9}, ["audit.shadows", "9"]),
    ("audit-shadows-few", {"audit.shadows": 4}, ["audit.shadows", "4"]),
    ("audit-targets-zero", {"audit.targets": 0}, ["audit.targets", "0"]),
    ("audit-design-unknown", {"audit.design": "lira"}, ["audit.design", "lira"]),
    ("audit-tpr-limit-above-one", {"audit.tpr_limit": 1.5}, ["audit.tpr_limit", "1.5"]),
    ("audit-limit-unreachable", {"audit.tpr_limit": 0.05},
     ["audit.targets = 1 with audit.shadows = 8", "0.05", "leaks nothing", "the minimum is "
      "audit.shadows = 1410 with audit.targets = 1"]),
    ("audit-below-calibrated-minimum", {"audit.tpr_limit": 0.05, "audit.targets": 10,
                                        "audit.shadows": 60, "audit.design": "shared"},
     ["audit.targets = 10 with audit.shadows = 60", "refused too often", "the minimum is "
      "audit.shadows = 340 with audit.targets = 10 (shared)"]),
    ("audit-attempts-zero", {"audit.attempts": 0}, ["audit.attempts", "0"]),
    ("audit-jobs-negative", {"audit.jobs": -2}, ["audit.jobs", "-2"]),
    ("audit-minutes-zero", {"audit.max_minutes": 0}, ["audit.max_minutes", "0"]),
    ("audit-enabled-string", {"audit.enabled": "yes"}, ["audit.enabled", "yes"]),
    ("audit-unknown-key", {"audit.shadow": 10}, ["[audit]", "shadow"]),
    ("audit-backend-unknown", {"audit.backend": "ray"}, ["audit.backend", "ray", "dask"]),
    ("audit-scheduler-without-dask", {"audit.scheduler": "tcp://127.0.0.1:8786"},
     ["audit.scheduler", "tcp://127.0.0.1:8786", "local"]),
    ("audit-scheduler-no-scheme", {"audit.backend": "dask", "audit.scheduler": "host:8786"},
     ["audit.scheduler", "host:8786", "tcp://"]),
    # a port nobody listens on: said before any trial, naming the key
    ("audit-scheduler-unreachable", {"audit.backend": "dask",
                                     "audit.scheduler": "tcp://127.0.0.1:9"},
     ["audit.scheduler", "tcp://127.0.0.1:9", "no Dask scheduler with a worker answered"]),
]


# cases that wait for a network timeout: the full suite only
SLOW_CASES = {"audit-scheduler-unreachable"}


@pytest.mark.parametrize("changes,culprits", [
    pytest.param(*c[1:], id=c[0], marks=[pytest.mark.slow] if c[0] in SLOW_CASES else [])
    for c in CONFIG_CASES])
def test_a_bad_config_value_is_one_line_naming_it(folder, capsys, changes, culprits):
    path = _write(folder, changes)
    _check(capsys, ["run", str(path), "--no-progress"], *culprits)


def test_every_problem_of_a_file_is_said_at_once(folder, capsys):
    path = _write(folder, {"study.n_trials": 0, "risk.cap_limit": 5, "utility.metric": "x"})
    err = _check(capsys, ["run", str(path)], "3 problems", "study.n_trials", "risk.cap_limit",
                 "utility.metric", lines=4)
    assert err.count("\n  - ") == 3


# the file itself, or the command line (id, argv built from the folder, culprits)
def _raw(text):
    return lambda f: ["run", str(_write(f, text=text))]


ARG_CASES = [
    ("toml-syntax", _raw("[data\npath = 1\n"), ["study.toml", "TOML"]),
    ("toml-duplicate-key", _raw("[study]\nname = 'a'\nname = 'b'\n"),
     ["study.toml", "line 3"]),
    ("config-missing", lambda f: ["run", str(f / "nope.toml")], ["nope.toml", "does not exist"]),
    ("config-is-folder", lambda f: (f / "cfg.toml").mkdir() or ["run", str(f / "cfg.toml")],
     ["cfg.toml", "folder"]),
    ("config-not-utf8", lambda f: _file(f / "bin.toml", b"\xff\xfe\x00x = 1")
     + ["run", str(f / "bin.toml")], ["bin.toml", "utf-8"]),
    ("trials-zero", lambda f: ["run", str(_write(f)), "--trials", "0"], ["--trials", "0"]),
    ("trials-negative", lambda f: ["run", str(_write(f)), "--trials", "-2"], ["--trials", "-2"]),
    ("trials-word", lambda f: ["run", str(_write(f)), "--trials", "many"],
     ["--trials", "many"]),
    ("trials-float", lambda f: ["run", str(_write(f)), "--trials", "2.5"], ["--trials", "2.5"]),
    ("workers-zero", lambda f: ["run", str(_write(f)), "--workers", "0"], ["--workers", "0"]),
    ("workers-word", lambda f: ["run", str(_write(f)), "--workers", "x"], ["--workers", "x"]),
    ("output-is-file", lambda f: ["run", str(_write(f)), "--output", str(f / "data.csv")],
     ["--output", "data.csv"]),
    ("output-under-file", lambda f: ["run", str(_write(f)), "--output",
                                     str(f / "data.csv" / "o")], ["--output", "data.csv"]),
    ("output-empty", lambda f: ["run", str(_write(f)), "--output", ""], ["--output", "''"]),
    ("run-without-config", lambda f: ["run"], ["config"]),
    ("unknown-command", lambda f: ["runn", "x.toml"], ["runn"]),
    ("no-command", lambda f: [], ["command"]),
    ("unknown-option", lambda f: ["run", str(_write(f)), "--trails", "3"], ["--trails"]),
    ("demo-trials-zero", lambda f: ["demo", "--trials", "0"], ["--trials", "0"]),
    ("demo-workers-negative", lambda f: ["demo", "--workers", "-1"], ["--workers", "-1"]),
    ("demo-output-is-file", lambda f: ["demo", "--output", str(f / "data.csv")],
     ["--output", "data.csv"]),
    ("report-not-a-study", lambda f: ["report", str(f)], ["run.json", "output folder"]),
    ("report-missing-folder", lambda f: ["report", str(f / "nope")], ["nope"]),
    ("report-a-csv", lambda f: ["report", str(f / "data.csv")], ["data.csv"]),
    ("report-nothing", lambda f: ["report"], ["report", "--storage"]),
    ("report-storage-without-study", lambda f: ["report", "--storage",
                                                f"sqlite:///{f / 's.db'}"], ["--study"]),
    ("report-study-without-storage", lambda f: ["report", "--study", "t"], ["--storage"]),
    ("report-storage-no-study", lambda f: _empty_storage(f) + ["--study", "nope"],
     ["nope", "s.db"]),
    ("report-storage-missing-file", lambda f: ["report", "--storage",
                                               f"sqlite:///{f / 'none' / 'x.db'}",
                                               "--study", "t"], ["x.db"]),
    ("report-bad-run-json", lambda f: _bad_run_json(f, "{not json") + ["report", str(f)],
     ["run.json"]),
    ("report-run-json-list", lambda f: _bad_run_json(f, "[1, 2]") + ["report", str(f)],
     ["run.json"]),
    ("report-write-without-release", lambda f: _empty_study(f) + ["report", str(f), "--write"],
     ["release", "manifest.json"]),
    ("release-not-a-study", lambda f: ["release", str(f)], ["run.json", "output folder"]),
    ("release-missing-folder", lambda f: ["release", str(f / "nope")], ["nope"]),
    ("release-bad-config", lambda f: ["release", str(_write(f, {"study.n_trials": 0}))],
     ["study.n_trials", "0"]),
    ("report-config-never-run", lambda f: ["report", str(_write(f))],
     ["study.name", "'t'", "study.db"]),
    ("release-config-never-run", lambda f: ["release", str(_write(f))],
     ["study.name", "'t'", "study.db"]),
    ("data-suffix", lambda f: _file(f / "d.xlsx", b"x") + ["run", str(_write(
        f, {"data.path": "d.xlsx"}))], ["d.xlsx", "'.xlsx'"]),
    ("data-three-rows", lambda f: _file(f / "d.csv", b"a,b\n1,2\n3,4\n5,6\n") + ["run", str(
        _write(f, {"data.path": "d.csv", "risk": {}}))], ["train_fraction", "2 training"]),
]


def _file(path: Path, content: bytes) -> list[str]:
    path.write_bytes(content)
    return []


def _empty_storage(folder: Path) -> list[str]:
    url = f"sqlite:///{folder / 's.db'}"
    optuna.create_study(study_name="t", storage=url)
    return ["report", "--storage", url]


def _bad_run_json(folder: Path, text: str) -> list[str]:
    (folder / "run.json").write_text(text)
    return []


def _empty_study(folder: Path) -> list[str]:
    """An output folder with a study and no release (as `run` leaves it before a trial)."""
    (folder / "run.json").write_text(json.dumps({
        "config": None, "study": "t", "storage": f"sqlite:///{folder / 'study.db'}",
        "mlflow_uri": None, "overrides": {"output": str(folder), "n_trials": 1}}))
    optuna.create_study(study_name="t", storage=f"sqlite:///{folder / 'study.db'}")
    return []


@pytest.mark.parametrize("make,culprits", [c[1:] for c in ARG_CASES],
                         ids=[c[0] for c in ARG_CASES])
def test_a_bad_argument_or_file_is_one_line_naming_it(folder, capsys, make, culprits):
    _check(capsys, make(folder), *[c for c in culprits if c])


def test_data_changed_under_an_existing_study_names_the_data(folder, capsys):
    path = _write(folder)
    (folder / "out").mkdir()
    study = optuna.create_study(study_name="t",
                                storage=f"sqlite:///{folder / 'out' / 'study.db'}")
    study.set_user_attr("data_fingerprint", "0" * 64)  # as a study run on other data has
    study.set_user_attr("split", {"train_fraction": 0.5, "audit_fraction": 0.2,
                                  "stratify": None})  # as every 0.1.0 study records
    _check(capsys, ["run", str(path)], "data.path", "data.csv", "other data")


def test_a_study_that_records_no_split_is_refused_as_made_before_the_first_release(folder,
                                                                                  capsys):
    # issue 47 item 4: no released version made such a study; it was once read as a study
    # without an audit set
    path = _write(folder)
    (folder / "out").mkdir()
    study = optuna.create_study(study_name="t",
                                storage=f"sqlite:///{folder / 'out' / 'study.db'}")
    study.set_user_attr("data_fingerprint", "0" * 64)
    _check(capsys, ["run", str(path)], "study 't'", "records no split", "before 0.1.0",
           "study.name or --output")


def test_a_ragged_or_empty_csv_names_the_file(folder, capsys):
    (folder / "data.csv").write_text("a,b,c\n1,2,3\n4,5\n")
    _check(capsys, ["run", str(_write(folder))], "data.csv", "ragged", "2 fields")
    # the first bad line is named, counted as an editor counts them (blank lines included)
    (folder / "data.csv").write_text("a,b,c\n1,2,3\n\n4,5,6\n7,8\n1,2,3,4\n")
    _check(capsys, ["run", str(_write(folder))], "line 5 has 2 fields where line 1 has 3")
    # a quote left open at the end: pandas' parser error, said as bad input naming the file
    (folder / "data.csv").write_text('a,b,c\n4,5,6\n1,2,"3\n')
    _check(capsys, ["run", str(_write(folder))], "data.csv", "not valid CSV")
    (folder / "data.csv").write_text("")
    _check(capsys, ["run", str(_write(folder))], "data file", "data.csv", "empty")
    (folder / "data.csv").write_text(",".join(COLUMNS) + "\n")
    _check(capsys, ["run", str(_write(folder))], "data.csv")


def test_a_repeated_header_an_empty_column_or_inf_is_refused_before_any_trial(folder, capsys,
                                                                              csv_text):
    header, *rows = csv_text.splitlines()
    # pandas would rename the second 'age' to 'age.1' without a word
    (folder / "data.csv").write_text("\n".join([header.replace("yrs_married", "age"), *rows]))
    _check(capsys, ["run", str(_write(folder, {"risk.attribute_keys": ["age"]}))], "data.csv",
           "['age'] more than once in its header")
    frame = pd.read_csv(io.StringIO(csv_text))
    frame["educ"] = np.nan
    frame.to_csv(folder / "data.csv", index=False)
    _check(capsys, ["run", str(_write(folder))], "['educ']", "no value at all")
    frame = pd.read_csv(io.StringIO(csv_text)).astype({"yrs_married": float})
    frame.loc[6, "yrs_married"] = -np.inf
    frame.to_csv(folder / "data.csv", index=False)
    _check(capsys, ["run", str(_write(folder))], "'yrs_married'", "infinite",
           "record 7 (line 8")


def test_a_latin1_csv_names_the_file(folder, capsys):
    (folder / "data.csv").write_bytes("name,age\nJosé,3\n".encode("latin-1"))
    _check(capsys, ["run", str(_write(folder))], "data file", "data.csv", "utf-8")


def test_a_broken_parquet_file_names_the_file(folder, capsys):
    (folder / "data.parquet").write_bytes(b"PAR1 this is not parquet")
    cfg = _write(folder)
    cfg.write_text(cfg.read_text().replace("data.csv", "data.parquet"))
    _check(capsys, ["run", str(cfg)], "data file", "data.parquet", "not a readable Parquet")


def test_cuda_without_a_gpu_is_refused(folder, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device: device = 'cuda' is valid here")
    _check(capsys, ["run", str(_write(folder, {"study.device": "cuda"}))], "study.device",
           "cuda")


def test_a_server_that_never_answers_fails_within_seconds(folder, capsys):
    # accepts the connection and says nothing: without a time limit MLflow waits minutes
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    uri = f"http://127.0.0.1:{server.getsockname()[1]}"
    try:
        started = time.monotonic()
        _check(capsys, ["run", str(_write(folder, {"study.mlflow_uri": uri}))],
               "study.mlflow_uri", uri)
        assert time.monotonic() - started < 30
    finally:
        stop.set()
        thread.join()
        for s in held:
            s.close()
        server.close()


# the installed command, as a user runs it: the same answers from a real process
SUBPROCESS_CASES = [
    ("bad-value", {"study.n_trials": 0}, [], ["study.n_trials", "0"]),
    ("mlflow-refused", {"study.mlflow_uri": "http://127.0.0.1:9"}, [],
     ["study.mlflow_uri", "refused"]),
    ("bad-argument", {}, ["--workers", "none"], ["--workers", "none"]),
]


@pytest.mark.slow  # a fresh interpreter importing the tuner per case
@pytest.mark.parametrize("changes,extra,culprits", [c[1:] for c in SUBPROCESS_CASES],
                         ids=[c[0] for c in SUBPROCESS_CASES])
def test_the_command_in_a_process(tmp_path, csv_text, changes, extra, culprits):
    (tmp_path / "data.csv").write_text(csv_text)
    path = _write(tmp_path, changes)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tuner", "run", str(path), *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and said[0].startswith("error"), done.stderr
    for culprit in culprits:
        assert culprit.lower() in said[0].lower(), (culprit, said[0])
    assert time.monotonic() - started < 60
    assert not (tmp_path / "out" / "mlflow.db").exists()


def test_every_argument_of_every_command_says_what_it_is(capsys):
    # issue 47 item 7: `run`'s config had no help, and the top --help showed ``markup``
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    top = capsys.readouterr().out
    assert "``" not in top and top.count("risk-tuner: run a study") == 1
    commands = ("run", "demo", "report", "release", "dashboard")
    for command in commands:
        with pytest.raises(SystemExit):
            cli.main([command, "--help"])
        text = capsys.readouterr().out
        assert "``" not in text, command
        # argparse lists an argument without help as its bare name on a line of its own
        listed = text.split("positional arguments:", 1)[-1].splitlines()
        bare = [line.strip() for line in listed
                if line.startswith("  ") and not line.startswith("   ")
                and len(line.split()) == 1 and not line.strip().startswith("-")]
        assert not bare, (command, bare)
