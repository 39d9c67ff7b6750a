"""The Python API and the report: tune, load from the folder alone, the released trial marked
in the table, the report and MLflow; the CLI is a thin layer over the same calls."""

from __future__ import annotations

import json
import shutil

import pytest
from mlflow.tracking import MlflowClient

import tuner
from tests.tuner.conftest import TINY_AUDIT_KEYS, write_config
from tuner.cli import main
from tuner.data import read_builtin

pytestmark = pytest.mark.slow


@pytest.fixture
def csv_study(tmp_path):
    read_builtin("builtin:fair").to_csv(tmp_path / "fair.csv", index=False)
    path = write_config(tmp_path, n_trials=3, synthesizers=("cart", "gaussian_copula"))
    path.write_text(path.read_text().replace('path = "builtin:fair"', 'path = "fair.csv"'))
    return path


def test_tune_then_load_from_the_folder_alone(csv_study, tmp_path, capsys):
    study = tuner.tune(csv_study)
    assert study.released_trial is not None
    frame = study.trials_frame()
    assert len(frame) == 3 and frame["released"].sum() == 1
    assert int(frame.loc[frame["released"], "number"].iloc[0]) == study.released_trial
    best = study.best_feasible()
    assert best is not None and best.number == study.released_trial

    release = study.release_folder
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["trial"] == study.released_trial
    html = (release / "report.html").read_text()
    assert "data:image/png;base64," in html and "Caveats" in html  # self-contained
    for part in ("SHA-256 of synthetic.csv", manifest["synthetic_sha256"], "Decision",
                 "exact copies", "distance to closest record", "DiSCO", "Utility"):
        assert part in html, part

    # the data file moved away: the table and the report still come from the folder alone
    shutil.move(tmp_path / "fair.csv", tmp_path / "elsewhere.csv")
    (release / "report.md").unlink()
    again = tuner.load(tmp_path / "out")
    assert again.released_trial == study.released_trial
    assert main(["report", str(tmp_path / "out"), "--write"]) == 0
    out = capsys.readouterr().out
    assert "<== released" in out and (release / "report.md").exists()
    # the table's c.* columns are said (issue 47 item 7), and the report made again from the
    # manifest alone gives each constraint's metric against its stored limit
    assert "c.NAME: constraint NAME's margin" in out
    rebuilt = (release / "report.md").read_text().split("## Decision", 1)[1].split("\n## ")[0]
    rows = {line.split("|")[1].strip(): line for line in rebuilt.splitlines()
            if line.startswith("| ") and line.count("|") > 3}
    for name, c in manifest["constraints"].items():
        assert c["metric"] in rows[name] and f"{c['limit']:.6g}" in rows[name], rows.get(name)
    # a folder holding only release/ (sent to a review board without the study's stores):
    # report rebuilds the same report from manifest.json alone (issue 47)
    alone = tmp_path / "board"
    shutil.copytree(release, alone / "release")
    (alone / "release" / "report.md").unlink()
    assert main(["report", str(alone), "--write"]) == 0
    said = capsys.readouterr().out
    assert "a release without its study" in said and "Summary for the review board" in said
    assert (alone / "release" / "report.md").read_text() == (release / "report.md").read_text()
    # re-creating the data needs them: a clear error, not a traceback
    assert main(["release", str(tmp_path / "out")]) == 2
    assert "fair.csv" in capsys.readouterr().err

    client = MlflowClient(tracking_uri=again.mlflow_uri)
    exp = client.get_experiment_by_name(again.name)
    assert exp.tags.get("mlflow.experimentKind") == "custom_model_development"
    active = [e.name for e in client.search_experiments()]
    assert active == [again.name]  # no empty "Default" beside the study's
    runs = client.search_runs([exp.experiment_id], "tags.released = 'true'")
    assert len(runs) == 1
    assert runs[0].data.tags["optuna_trial"] == str(study.released_trial)
    parent = client.search_runs([exp.experiment_id], "tags.role = 'invocation'")[0]
    arts = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {"risk_utility.png", "trials.json"} <= arts


def test_tune_takes_a_dict_and_reports_no_release(tmp_path):
    raw = {"data": {"path": "builtin:fair", "population_size": 100_000},
           "study": {"name": "d", "synthesizers": ["cart"], "n_trials": 1,
                     "output": str(tmp_path / "o")},
           # CART with leaves of one record copies training uniques, which "infeasible" refuses
           "space": {"cart": {"min_samples_leaf": [1, 1], "max_depth": [0]}},
           "risk": {"repeats": 5, "replicated_uniques": "infeasible"},
           "utility": {"metric": "hellinger"},
           "audit": dict(TINY_AUDIT_KEYS)}
    study = tuner.tune(raw)
    assert study.released_trial is None and study.release_folder is None
    assert len(study.trials_frame()) == 1
    with pytest.raises(tuner.api.NoFeasibleTrial, match="'unique_copies' failed in 1/1"):
        study.release()
