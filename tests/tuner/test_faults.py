"""Faults lose nothing and leave nothing half done; the release is exactly the scored trial.

Real faults: a SIGKILL in the middle of an export, a folder that becomes read-only (a tmpfs
remounted read-only; root ignores permission bits, so chmod would prove nothing), a disk that
fills up while a trial runs (a tmpfs filled by another writer). Tests that
need ``mount`` skip with the reason where it is not allowed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

import tuner
from tests.data import unavailable
from tests.tuner.conftest import NO_AUDIT, write_config
from tuner.search._budget import interrupted_numbers

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _complete(folder: Path) -> bool:
    manifest = json.loads((folder / "manifest.json").read_text())
    return (_sha(folder / "synthetic.csv") == manifest["synthetic_sha256"]
            and (folder / "report.md").exists() and (folder / "report.html").exists())


def test_release_reproduces_a_neural_trial_bit_for_bit(tmp_path):
    # CTGAN at tiny epochs: the trial ran with the worker's thread count, the release re-made it
    # with the same recorded count; two releases give the same SHA-256 and the same numbers
    path = write_config(tmp_path, n_trials=1, synthesizers=("ctgan",))
    study = tuner.tune(path)
    assert study.released_trial == 0, study.trials_frame()
    folder = study.release_folder
    first = json.loads((folder / "manifest.json").read_text())
    trial = study.optuna_study.trials[0]
    assert first["threads"] == trial.user_attrs["threads"]
    for key in ("utility", "m", "copies_difference", "dcr_share_closer_to_train"):
        assert first["metrics"][key] == trial.user_attrs["metrics"][key], key
    study.release()
    second = json.loads((folder / "manifest.json").read_text())
    assert second["synthetic_sha256"] == first["synthetic_sha256"] == _sha(folder / "synthetic.csv")
    assert isinstance(second["trial"], int) and isinstance(second["split"]["n_train"], int)


def test_a_killed_export_leaves_release_absent_or_complete(tmp_path):
    # the audit is off: the staging and the move under test are the same without it (less its
    # figure), and each of the five exports would repeat its checks
    path = write_config(tmp_path, n_trials=1, synthesizers=("gaussian_copula",),
                        extra=NO_AUDIT)
    tuner.tune(path)
    out = tmp_path / "out"
    release = out / "release"
    assert _complete(release)
    cmd = [sys.executable, "-m", "tuner", "release", str(out)]
    killed_while_staging = 0
    for delay in (0.5, 3.0, 6.0):  # killed 0.05, 0.3 and 0.6 s into the staging
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if list(out.glob(".release.partial-*")):
                time.sleep(delay / 10)
                break
            time.sleep(0.05)
        staging = bool(list(out.glob(".release.partial-*")))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        else:  # it ended before the kill: then it must have released (not refused, not crashed)
            assert proc.returncode == 0, proc.stderr.read()[-2000:] if proc.stderr else ""
        proc.communicate()
        killed_while_staging += staging
        # whatever moment the kill hit, release/ is the old complete one or a new complete one
        assert _complete(release)
    assert killed_while_staging >= 1
    # and a killed release can simply be run again
    assert subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=600).returncode == 0
    assert _complete(release)


@contextlib.contextmanager
def _tmpfs(where: Path, size: str = "64m"):
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        unavailable(f"cannot mount a tmpfs here ({done.stderr.strip()}): fault test not run")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_read_only_output_is_one_clear_line_and_nothing_half_done(tmp_path):
    with _tmpfs(tmp_path / "disk") as disk:
        path = write_config(disk, n_trials=1, synthesizers=("gaussian_copula",),
                            extra=NO_AUDIT)
        # in another process, so that no database on the disk is held open by this one
        subprocess.run([sys.executable, "-m", "tuner", "run", str(path), "--no-progress"],
                       cwd=ROOT, check=True, capture_output=True, timeout=600)
        before = _sha(disk / "out" / "release" / "synthetic.csv")
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        for args in (["release", str(disk / "out")], ["run", str(path), "--trials", "2"]):
            done = subprocess.run([sys.executable, "-m", "tuner", *args], cwd=ROOT,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 1, args
            assert "Traceback" not in done.stderr, done.stderr[-2000:]
            assert "read-only" in done.stderr.lower(), done.stderr[-2000:]
            assert len(done.stderr.strip().splitlines()) <= 3, done.stderr
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
        assert _sha(disk / "out" / "release" / "synthetic.csv") == before  # untouched


def _ro_query(db: Path, sql: str, *args) -> list[tuple]:
    """Rows of ``sql`` on the SQLite file ``db``, opened read-only for this query only."""
    if not db.exists():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.OperationalError:  # tables not made yet
        return []
    finally:
        con.close()


def _fill(disk: Path) -> int:
    """Write a filler file on ``disk`` until it is full; return the bytes written."""
    written = 0
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        for chunk in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    written += os.write(fd, bytes(chunk))
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    finally:
        os.close(fd)
    return written


def _status(out: Path, run_id: str) -> list[tuple]:
    return _ro_query(out / "mlflow.db", "SELECT status FROM runs WHERE run_uuid = ?", run_id)


def _mid_trial(path: Path, out: Path, strike) -> tuple[tuple[str, str], str, str, int]:
    """Run the study of ``path`` in a process; while one of its trials is being evaluated
    (its MLflow run holds its parameters), stop the process, call ``strike(proc)`` and let it
    go on. Return that run (id, name), the process's stdout, stderr and exit code.

    A strike that the trial survives (it finished its run normally: CPython loses a
    KeyboardInterrupt raised inside C code that clears errors, as ``hasattr`` does) is made
    again on a later trial, as a user presses Ctrl-C again."""
    # Ctrl-C's default disposition in the child: pytest started in the background of a
    # non-interactive shell (`cmd &`, as a CI runner may) has SIGINT ignored, an ignored signal
    # is inherited, and the child's Python would never raise KeyboardInterrupt (every strike
    # "lost")
    proc = subprocess.Popen([sys.executable, "-m", "tuner", "run", str(path), "--no-progress"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        run = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if run is not None:
                if _status(out, run[0]) == [("FINISHED",)]:
                    run = None  # the strike was lost: the trial ended as if nothing happened
                time.sleep(0.05)
                continue
            found = _ro_query(out / "mlflow.db", "SELECT r.run_uuid, r.name FROM runs r "
                              "JOIN params p ON p.run_uuid = r.run_uuid AND p.key = "
                              "'synthesizer' WHERE r.status = 'RUNNING'")
            if found:
                os.kill(proc.pid, signal.SIGSTOP)  # hold it there, in the middle of the trial
                if _status(out, found[0][0]) == [("RUNNING",)]:
                    run = found[0]
                    strike(proc)
                os.kill(proc.pid, signal.SIGCONT)
            time.sleep(0.02)
        assert run is not None, "no trial was caught running"
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return run, stdout, stderr, proc.returncode


def _outcome(out: Path, run: tuple[str, str]) -> tuple[optuna.Study, int, dict[str, str]]:
    """The study, the number of the trial of ``run``, and every MLflow run's status."""
    study = optuna.load_study(study_name="t", storage=f"sqlite:///{out / 'study.db'}")
    status = dict(_ro_query(out / "mlflow.db", "SELECT run_uuid, status FROM runs"))
    return study, int(run[1].split("-")[1]), status


def test_ctrl_c_mid_trial_ends_the_trial_and_its_run(tmp_path):
    # a budget the strike never sees used up: on a loaded machine a Ctrl-C can be lost several
    # trials in a row (see _mid_trial), and the study must still be running for the next one
    # when the process ends before a strike is seen to land (a Ctrl-C arriving as a trial's
    # run is being finished ends the study between trials, with no trial cut short to check),
    # the scenario is played again on a fresh study, three times at most
    for attempt in range(3):
        folder = tmp_path / f"attempt{attempt}"
        folder.mkdir()
        path = write_config(folder, n_trials=40, synthesizers=("gaussian_copula",))
        out = folder / "out"
        try:
            run, stdout, stderr, code = _mid_trial(path, out,
                                                   lambda p: p.send_signal(signal.SIGINT))
            break
        except AssertionError as exc:
            if "no trial was caught running" not in str(exc) or attempt == 2:
                raise
    assert code == 130, (stdout[-2000:], stderr[-3000:])  # 128 + SIGINT, as shells say it
    assert "Traceback" not in stderr and "interrupted" in stderr, stderr[-3000:]
    assert len([line for line in stderr.splitlines() if line.strip()]) == 1, stderr
    study, number, status = _outcome(out, run)
    assert study.trials[number].state == TrialState.FAIL
    assert number in interrupted_numbers(study)  # cut short: the rerun completes the budget
    assert status[run[0]] == "KILLED" and "RUNNING" not in status.values(), status


def test_a_ctrl_c_while_a_trials_run_is_opened_still_ends_that_run(tmp_path, monkeypatch):
    # the window CI's strike once hit: the run exists and holds its parameters, but the
    # interruption comes before its id reaches the objective; the run must not stay RUNNING
    from tuner.search._tracking import Tracker

    logged = Tracker.log

    def log(self, run_id, **kwargs):
        logged(self, run_id, **kwargs)
        if "synthesizer" in (kwargs.get("params") or {}):
            raise KeyboardInterrupt

    monkeypatch.setattr(Tracker, "log", log)
    path = write_config(tmp_path, n_trials=2, synthesizers=("gaussian_copula",))
    with pytest.raises(KeyboardInterrupt):
        tuner.tune(path)
    status = dict(_ro_query(tmp_path / "out" / "mlflow.db",
                            "SELECT name, status FROM runs"))
    assert status and "RUNNING" not in status.values(), status
    trial = [name for name in status if name.startswith("trial-")]
    assert len(trial) == 1 and status[trial[0]] == "KILLED", status


def test_a_full_disk_mid_trial_fails_the_trial_and_its_run_in_one_line(tmp_path):
    # the disk fills (another program's filler) while a trial runs: the command says so in one
    # line and exits 1, and the trial is FAIL in Optuna and its MLflow run FAILED, not left
    # RUNNING until the next invocation
    with _tmpfs(tmp_path / "disk", size="24m") as disk:
        path = write_config(disk, n_trials=6, synthesizers=("gaussian_copula",))
        out = disk / "out"
        run, stdout, stderr, code = _mid_trial(path, out, lambda p: _fill(disk))
        assert code == 1, (stdout[-2000:], stderr[-3000:])
        assert "Traceback" not in stderr, stderr[-3000:]
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert len(lines) == 1, stderr
        assert "disk is full" in lines[0] or "no space left" in lines[0].lower(), lines[0]
        study, number, status = _outcome(out, run)
        trial = study.trials[number]
        assert trial.state == TrialState.FAIL, trial
        assert number in interrupted_numbers(study)
        reason = trial.user_attrs.get("fail_reason", "").lower()
        assert "full" in reason or "no space" in reason, trial.user_attrs
        assert status[run[0]] == "FAILED", status
        assert "RUNNING" not in status.values(), status  # the invocation's run too
