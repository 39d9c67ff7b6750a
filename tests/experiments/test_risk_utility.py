"""The risk-utility experiment at smoke size: every family, both datasets, outputs' shape."""

from __future__ import annotations

import pandas as pd
import pytest

from experiments.risk_utility import compare
from tests.data import require


def test_plan_rejects_bad_values():
    with pytest.raises(ValueError, match="unknown dataset"):
        compare.Plan(datasets=("adult", "census"))
    with pytest.raises(ValueError, match="unknown synthesiser"):
        compare.Plan(families=("cart", "gan9000"))
    with pytest.raises(ValueError, match="trials >= 1"):
        compare.Plan(trials=0)


def test_family_config_restricts_to_one_family(tmp_path):
    require("adult_uci/adult.data")
    base = compare.tuner_config.load(compare.DATASETS["adult"])
    cfg = compare.family_config(base, "adult", "ctgan", compare.Plan(trials=3, smoke=True),
                                tmp_path)
    assert cfg.study.synthesizers == ("ctgan",) and cfg.study.name == "adult-ctgan"
    assert cfg.study.n_trials == 3 and cfg.study.output == tmp_path / "adult"
    assert cfg.spaces["ctgan"]["epochs"] == [1, 1]
    assert cfg.data.population_size == 48842  # the config's N, stated and justified there


@pytest.mark.slow
def test_smoke_run_of_every_family_on_both_datasets(tmp_path):
    require("adult_uci/adult.data")
    require("hu_acs/ACSdata.csv")
    runs, results = tmp_path / "runs", tmp_path / "results"
    rc = compare.main(["--smoke", "--rows", "800", "--trials", "1", "--runs", str(runs),
                       "--results", str(results), "--no-progress"])
    assert rc == 0
    for dataset in ("adult", "acs"):
        trials = pd.read_csv(results / f"{dataset}_trials.csv")
        assert sorted(trials["synthesizer"]) == sorted(compare.FAMILIES)
        assert set(trials["state"]) <= {"COMPLETE", "FAIL"}
        done = trials[trials["state"] == "COMPLETE"]
        assert len(done) >= 4, trials[["synthesizer", "state", "fail_reason"]]
        assert done["utility"].between(0, 1).all() and (done["m"] <= 1).all()
        assert (done["risk_seconds"] > 0).all() and (done["wall_seconds"] > 0).all()
        assert (results / f"{dataset}_risk_utility.png").stat().st_size > 0
    best = pd.read_csv(results / "best_feasible.csv")
    assert len(best) == 2 * len(compare.FAMILIES)
    assert {"U", "M", "CAP difference", "inference risk", "fit s"} <= set(best.columns)
    feasible = best.dropna(subset=["U"])
    assert (feasible["M"] <= 0.2).all()
    timing = pd.read_csv(results / "timing.csv")
    assert timing["risk share"].between(0, 1).all()
    header = (results / "timing.md").read_text().splitlines()[0]
    assert [c.strip() for c in header.strip("|").split("|")][:2] == ["dataset", "synthesiser"]
    # the studies are resumable tuner folders: rerunning adds no trial
    assert compare.main(["--smoke", "--rows", "800", "--trials", "1", "--datasets", "acs",
                         "--families", "cart", "--runs", str(runs), "--results",
                         str(tmp_path / "again"), "--no-progress"]) == 0
    assert len(pd.read_csv(tmp_path / "again" / "acs_trials.csv")) == 1
