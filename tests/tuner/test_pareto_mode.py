"""Pareto mode end to end: config keys, the two-objective study, the release and its reason."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tuner
from tuner import cli, config
from tuner.api import load_config
from tuner.search._pareto import front_mask
from tuner.search._trials import PARETO_PICK_ATTR, is_feasible

from .conftest import write_config


def _raw(**study):
    return {"data": {"path": "builtin:fair", "population_size": 100000},
            "study": {"synthesizers": ["cart"], **study}}


def test_mode_and_pick_default_and_are_checked():
    cfg = load_config(_raw())
    assert (cfg.study.mode, cfg.study.pareto_pick) == ("single", "utility")
    cfg = load_config(_raw(mode="pareto", pareto_pick="risk"))
    assert (cfg.study.mode, cfg.study.pareto_pick) == ("pareto", "risk")
    with pytest.raises(config.ConfigError) as err:
        load_config(_raw(mode="front", pareto_pick="best"))
    text = str(err.value)
    assert "study.mode must be one of ('single', 'pareto'), got 'front'" in text
    assert "study.pareto_pick must be one of ('utility', 'loss', 'risk'), got 'best'" in text
    with pytest.raises(config.ConfigError, match="study.mode must be a string, got 2"):
        load_config(_raw(mode=2))


@pytest.mark.slow
def test_pareto_study_releases_the_picked_front_point(tmp_path, capsys):
    path = write_config(tmp_path, synthesizers=("cart", "gaussian_copula"), n_trials=5)
    study = tuner.tune(path, mode="pareto")
    optuna_study = study.optuna_study
    assert [d.name for d in optuna_study.directions] == ["MAXIMIZE", "MINIMIZE"]
    assert optuna_study.user_attrs[PARETO_PICK_ATTR] == "utility"

    # the front and the pick, recomputed from the stored trials
    feasible = [t for t in optuna_study.trials if t.values is not None and is_feasible(t)]
    assert feasible, "the tiny study should have feasible trials"
    u = np.array([t.values[0] for t in feasible])
    m = np.array([t.values[1] for t in feasible])
    for t in feasible:  # the objectives are the logged U and M
        assert t.values[0] == pytest.approx(t.user_attrs["metrics"]["utility"])
        assert t.values[1] == pytest.approx(t.user_attrs["metrics"]["m"])
    on = front_mask(u, m)
    front = sorted(t.number for t, f in zip(feasible, on, strict=True) if f)
    best = max((t for t, f in zip(feasible, on, strict=True) if f),
               key=lambda t: (t.values[0], -t.values[1], -t.number))
    assert study.released_trial == best.number

    manifest = json.loads((study.release_folder / "manifest.json").read_text())
    assert manifest["trial"] == best.number
    assert manifest["selection"]["mode"] == "pareto"
    assert manifest["selection"]["rule"] == "utility"
    assert manifest["selection"]["front"] == front
    assert f"trial {best.number}" in manifest["selection"]["reason"]
    assert (study.release_folder / "pareto_front.png").stat().st_size > 10_000
    report = (study.release_folder / "report.md").read_text()
    assert "## Why this trial" in report and "pareto_front.png" in report

    frame = study.trials_frame()
    assert sorted(frame.loc[frame["front"], "number"]) == front

    # the folder alone: report and release read the mode the run was given (--mode)
    assert cli.main(["report", str(tmp_path / "out")]) == 0
    assert "front" in capsys.readouterr().out
    again = tuner.load(tmp_path / "out")
    assert again.config().study.mode == "pareto"

    # resuming in the other mode is refused, and the folder's run file is left as it was
    run_file = (tmp_path / "out" / "run.json").read_text()
    with pytest.raises(ValueError, match="was run with study.mode = 'pareto'"):
        tuner.tune(path, trials=6)
    assert (tmp_path / "out" / "run.json").read_text() == run_file


@pytest.mark.slow
def test_single_mode_manifest_says_why(tmp_path):
    path = write_config(tmp_path, synthesizers=("cart",), n_trials=2)
    study = tuner.tune(path)
    selection = json.loads((study.release_folder / "manifest.json").read_text())["selection"]
    assert selection["mode"] == "single"
    assert selection["reason"].startswith(f"trial {study.released_trial} has the lowest loss")
    assert "front" not in study.trials_frame()


@pytest.mark.slow
def test_cli_flags_override_mode_and_synthesizers(tmp_path, capsys):
    path = write_config(tmp_path, synthesizers=("gaussian_copula",), n_trials=2)
    code = cli.main(["run", str(path), "--mode", "pareto", "--synthesizers", "cart",
                     "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "synthesisers cart," in out and "Pareto mode" in out
    study = tuner.load(tmp_path / "out")
    assert {t.params["synthesizer"] for t in study.optuna_study.trials} == {"cart"}
    assert cli.main(["run", str(path), "--mode", "both"]) == 2
    assert "invalid choice: 'both'" in capsys.readouterr().err
    assert cli.main(["run", str(path), "--synthesizers", "gan"]) == 2
    assert ("study.synthesizers must be one of ('gaussian_copula', 'cart', 'ctgan', "
            "'copulagan', 'tvae', 'mst', 'aim'), got ['gan']") in capsys.readouterr().err
