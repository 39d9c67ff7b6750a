"""SIGTERM ends a run as Ctrl-C does (issue 46): a line saying so, exit 143, every process the
run started ended, the study left resumable. `kill`, `timeout` and batch schedulers send it to
the tuner's process only; before, the audit's joblib workers and their resource tracker ran on
as orphans (parent 1)."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import optuna
import psutil
import pytest

from tests.cores import every_core
from tests.tuner.conftest import NO_AUDIT, write_config
from tuner._common import stopping
from tuner.search._budget import fail_dead_local_trials

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _start(path: Path, log: Path, *, all_cores: bool = False) -> subprocess.Popen:
    """The run, on this xdist worker's cores (or, ``all_cores``, on the session's)."""
    with log.open("w") as out, (every_core() if all_cores else contextlib.nullcontext()):
        # a file, not a pipe: orphans holding a pipe would hang the test
        return subprocess.Popen([sys.executable, "-m", "tuner", "run", str(path),
                                 "--no-progress"], stdout=out, stderr=subprocess.STDOUT,
                                cwd=ROOT)


def _wait_for(proc: subprocess.Popen, ready, log: Path, seconds: float = 300) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        if ready():
            return
        time.sleep(0.2)
    raise AssertionError(f"the run did not get there in {seconds} s (exit {proc.poll()}): "
                         f"{log.read_text()[-1500:]}")


def _children(proc: subprocess.Popen) -> list[str]:
    out = []
    for p in psutil.Process(proc.pid).children(recursive=True):
        try:
            out.append(" ".join(p.cmdline()))
        except psutil.Error:  # gone meanwhile
            pass
    return out


def _terminate_and_check(proc: subprocess.Popen, log: Path) -> list[str]:
    """SIGTERM to the run; its exit checked; the command lines of the processes it had
    started."""
    started = psutil.Process(proc.pid).children(recursive=True)
    assert started, "the run had started no process to end"
    commands = [" ".join(p.cmdline()) for p in started]
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the run went on 10 s after SIGTERM: "
                             f"{log.read_text()[-2000:]}") from None
    finally:
        time.sleep(0.5)
        left = [p for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        for p in left:  # never leave them burning the CI's cores
            p.kill()
    assert time.monotonic() - sent < 10
    assert rc == stopping.EXIT_TERMINATED, log.read_text()[-2000:]
    assert "stopped by SIGTERM" in log.read_text()
    assert not left, [p.pid for p in left]
    return commands


def test_sigterm_during_the_audit_ends_its_workers(tmp_path):
    audit = ('[audit]\ntargets = 20\nshadows = 100\nshadow_size = 500\ndesign = "per_target"\n'
             "jobs = 2\nmax_minutes = 600\n")
    path = write_config(tmp_path, synthesizers=("gaussian_copula",), n_trials=1, extra=audit)
    log = tmp_path / "run.log"
    # on every core: pinned to this xdist worker's one core (tests/cores.py), joblib counts one
    # core and the audit runs its fits in the tuner's own process, with no worker to end
    proc = _start(path, log, all_cores=True)
    _wait_for(proc, lambda: "audit: trial" in log.read_text(), log)
    # the audit's loky workers, which a SIGTERM used to leave running
    _wait_for(proc, lambda: sum("popen_loky" in c for c in _children(proc)) >= 2, log,
              seconds=120)
    _terminate_and_check(proc, log)


def test_sigterm_during_trials_ends_the_study_workers_and_leaves_it_resumable(tmp_path):
    path = write_config(tmp_path, synthesizers=("ctgan",), n_trials=4, workers=2,
                        extra=NO_AUDIT)
    path.write_text(path.read_text().replace(  # trials long enough to be stopped in one
        "[space.ctgan]\nepochs = [1, 2]", "[space.ctgan]\nepochs = [200, 300]"))
    log = tmp_path / "run.log"
    proc = _start(path, log)
    db = tmp_path / "out" / "study.db"

    def both_running() -> bool:
        try:
            with sqlite3.connect(db) as con:
                return con.execute("select count(*) from trials where state = 'RUNNING'"
                                   ).fetchone()[0] >= 2
        except sqlite3.Error:
            return False

    _wait_for(proc, both_running, log)
    _terminate_and_check(proc, log)
    # each worker cut its trial short itself, or (one that took over 5 s to go, on a loaded
    # machine, and was killed) the next run fails its trial first thing, as for any dead process
    study = optuna.load_study(study_name="t", storage=f"sqlite:///{db}")
    fail_dead_local_trials(study)
    states = [t.state.name for t in study.get_trials()]
    assert "RUNNING" not in states and "FAIL" in states, states


def test_two_studies_started_together_in_their_own_folders_both_release(tmp_path):
    # issue 46 saw both end in "BrokenPipeError ... nothing was released"; not reproduced here
    # (two demos and two Adult studies with audits, as root and as an unprivileged user): this
    # keeps the case covered
    procs = []
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        path = write_config(folder, synthesizers=("cart",), n_trials=2, name=name)
        procs.append((_start(path, folder / "run.log"), folder / "run.log"))
    for proc, log in procs:
        assert proc.wait(timeout=600) == 0, log.read_text()[-2000:]
        assert "release       :" in log.read_text()
