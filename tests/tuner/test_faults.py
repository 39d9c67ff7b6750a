"""Faults lose nothing and leave nothing half done; the release is exactly the scored trial.

Real faults: a SIGKILL in the middle of an export, a folder that becomes read-only (a tmpfs
remounted read-only; root ignores permission bits, so chmod would prove nothing). Tests that
need ``mount`` skip with the reason where it is not allowed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tuner
from tests.tuner.conftest import write_config

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
    path = write_config(tmp_path, n_trials=1, synthesizers=("gaussian_copula",))
    tuner.tune(path)
    out = tmp_path / "out"
    release = out / "release"
    assert _complete(release)
    cmd = [sys.executable, "-m", "tuner", "release", str(out)]
    killed_while_staging = 0
    for delay in (0.5, 2.0, 4.0, 6.0):
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if list(out.glob(".release.partial-*")):
                time.sleep(delay / 10)
                break
            time.sleep(0.05)
        staging = bool(list(out.glob(".release.partial-*")))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_while_staging += staging
        # whatever moment the kill hit, release/ is the old complete one or a new complete one
        assert _complete(release)
    assert killed_while_staging >= 1
    # and a killed release can simply be run again
    assert subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=600).returncode == 0
    assert _complete(release)


@contextlib.contextmanager
def _tmpfs(where: Path):
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}): fault test not run")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_read_only_output_is_one_clear_line_and_nothing_half_done(tmp_path):
    with _tmpfs(tmp_path / "disk") as disk:
        path = write_config(disk, n_trials=1, synthesizers=("gaussian_copula",))
        # in another process, so that no database on the disk is held open by this one
        subprocess.run([sys.executable, "-m", "tuner", "run", str(path), "--no-progress"],
                       cwd=ROOT, check=True, capture_output=True, timeout=600)
        before = _sha(disk / "out" / "release" / "synthetic.csv")
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        for args in (["release", str(disk / "out")], ["run", str(path), "--trials", "2"]):
            done = subprocess.run([sys.executable, "-m", "tuner", *args], cwd=ROOT,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode != 0, args
            assert "Traceback" not in done.stderr, done.stderr[-2000:]
            assert "read-only" in done.stderr.lower(), done.stderr[-2000:]
            assert len(done.stderr.strip().splitlines()) <= 3, done.stderr
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
        assert _sha(disk / "out" / "release" / "synthetic.csv") == before  # untouched
