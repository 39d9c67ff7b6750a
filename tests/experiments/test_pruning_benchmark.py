"""The checkpoints-and-pruning benchmark (experiments/tuner_benchmark/pruning.py) at smoke
size: both arms run on the shared Adult data and the table says what each tried."""

from __future__ import annotations

import optuna
import pytest

from experiments.tuner_benchmark import pruning
from tests.data import load_adult

pytestmark = pytest.mark.slow


def test_both_arms_run_and_are_tabled(tmp_path):
    load_adult()  # skipped cleanly without ../shared/data (failed under .ci/run)
    frame = pruning.main(["--rows", "400", "--budget", "12", "--seeds", "0", "--max-epochs", "6",
                          "--work", str(tmp_path / "work"), "--results", str(tmp_path / "res"),
                          "--arms", *pruning.ARMS])
    assert set(frame.arm) == {"full", "pruned", "hyperband", "halving"} == set(pruning.ARMS)
    assert (frame.tried >= 1).all()
    table = (tmp_path / "res" / "pruning.md").read_text()
    assert all(f"| {arm}" in table for arm in pruning.ARMS) and "configurations tried" in table
    assert "pruned (halving) better in" in table and "hyperband (hyperband) better in" in table
    # the product's defaults: every pruned-arm trial may train the top of the range (6 here)
    study = optuna.load_study(study_name=None, storage="sqlite:///" + str(
        tmp_path / "work" / "seed-0-pruned" / "study.db"))
    assert {t.params[f"{t.params['synthesizer']}.epochs"] for t in study.trials} == {6}


def test_one_arm_run_again_keeps_the_others_row(tmp_path):
    # a change to pruning alone: the pruned arm again, the full arm's row read from the table
    load_adult()
    res = tmp_path / "res"
    res.mkdir()
    (res / "pruning.csv").write_text("seed,arm,tried,complete,pruned,best_loss,best_family,"
                                     "seconds\n0,full,56,56,0,-0.92,tvae,1126.2\n"
                                     "0,pruned,120,47,73,-0.86,ctgan,1210.5\n"
                                     "1,full,9,9,0,-0.9,tvae,1.0\n")
    frame = pruning.main(["--rows", "400", "--budget", "12", "--seeds", "0", "--max-epochs", "6",
                          "--work", str(tmp_path / "work"), "--results", str(res),
                          "--arms", "pruned"])
    assert list(frame.arm) == ["full", "pruned"] and list(frame.seed) == [0, 0]
    assert frame.loc[frame.arm == "full", "tried"].item() == 56  # kept
    assert frame.loc[frame.arm == "pruned", "tried"].item() != 120  # run again, 12 s
