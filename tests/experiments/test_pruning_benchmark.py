"""The checkpoints-and-pruning benchmark (experiments/tuner_benchmark/pruning.py) at smoke
size: both arms run on the shared Adult data and the table says what each tried."""

from __future__ import annotations

import pytest

from experiments.tuner_benchmark import pruning
from tests.data import load_adult

pytestmark = pytest.mark.slow


def test_both_arms_run_and_are_tabled(tmp_path):
    load_adult()  # skipped cleanly without ../shared/data (failed under .ci/run)
    frame = pruning.main(["--rows", "400", "--budget", "12", "--seeds", "0", "--max-epochs", "6",
                          "--work", str(tmp_path / "work"), "--results", str(tmp_path / "res")])
    assert set(frame.arm) == {"full", "pruned"}
    assert (frame.tried >= 1).all()
    table = (tmp_path / "res" / "pruning.md").read_text()
    assert "| full" in table and "| pruned" in table and "configurations tried" in table
