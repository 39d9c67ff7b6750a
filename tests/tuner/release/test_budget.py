"""One time budget for the whole job (`[study] budget_minutes`, tuner/release/_budget.py):
refused before any trial when it cannot hold one audit; otherwise the search keeps the audit's
time back and the job ends within it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tuner.conftest import write_config
from tuner import config
from tuner.release._budget import quickest
from tuner.search._context import prepare

ROOT = Path(__file__).resolve().parents[3]
# the budget's arithmetic, not the decision, is tested here: a limit of 0.2 lets 100 shadows
# be a valid game (risk.audit.minimum_shadows: 52 at 20 targets), a third of the default's cost
AUDIT = '[audit]\ntargets = 20\nshadows = 100\nshadow_size = 200\njobs = 1\ntpr_limit = 0.2\n'


def _run(path: Path) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tuner", "run", str(path), "--no-progress"],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    return done, time.monotonic() - start


def test_a_budget_must_be_positive(tmp_path):
    cfg = config.load(write_config(tmp_path))
    with pytest.raises(config.ConfigError, match="study.budget_minutes must be > 0 minutes, "
                                                 "got 0"):
        config.with_overrides(cfg, budget_minutes=0)


def test_the_quickest_settings_are_the_spaces_cheap_ends(tmp_path):
    ctx = prepare(config.load(write_config(tmp_path, synthesizers=("ctgan", "cart"))))
    fast = quickest(ctx, "ctgan")
    assert fast["epochs"] == 1 and fast["batch_size"] == 100  # the tiny space: [1, 2], [100]
    assert fast["generator_dim"] == "64x64"
    assert quickest(ctx, "cart")["min_samples_leaf"] == 1


@pytest.mark.slow
def test_a_budget_too_small_for_one_audit_is_refused_before_any_trial(tmp_path):
    path = write_config(tmp_path, synthesizers=("cart", "gaussian_copula"), extra=AUDIT)
    path.write_text(path.read_text().replace("output = \"out\"",
                                             "output = \"out\"\nbudget_minutes = 0.05"))
    done, _ = _run(path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "study.budget_minutes = 0.05 cannot hold one release audit: the cheapest would " \
           "take about" in done.stderr
    db = tmp_path / "out" / "study.db"
    if db.exists():
        with sqlite3.connect(db) as con:
            assert con.execute("select count(*) from trials").fetchone()[0] == 0


@pytest.mark.slow
def test_a_budgeted_job_stops_searching_in_time_for_its_audit(tmp_path):
    path = write_config(tmp_path, synthesizers=("cart",), n_trials=1000, extra=AUDIT)
    path.write_text(path.read_text().replace("output = \"out\"",
                                             "output = \"out\"\nbudget_minutes = 1.0"))
    done, took = _run(path)
    assert done.returncode in (0, 3), done.stderr[-2000:]  # released, or every candidate refused
    said = done.stdout + done.stderr
    assert "kept for the release audit of the best candidates: no more trials" in said
    # an audit ran, or the candidates tried (refused by the gate on the sealed audit set, or by
    # their audit) used the time left, which the release then says
    assert "audit: trial" in said or "ran out after" in said
    with sqlite3.connect(tmp_path / "out" / "study.db") as con:
        trials = con.execute("select count(*) from trials").fetchone()[0]
    assert 1 <= trials < 1000
    # 60 s of budget; the interpreter's start and the summary's figures come on top
    assert took < 60 + 30, (took, said[-3000:])
