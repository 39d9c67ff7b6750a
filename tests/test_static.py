"""The code stays as the house checks it: ruff's rules and mypy's types (pyproject's settings).

Both ran by hand before; a change that broke them passed CI (10 mypy errors had piled up in
``tuner`` before anyone looked). mypy runs on a cold cache in a clean clone: about a minute on
2 cores, hence the slow mark.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["risk", "tuner"]


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", *PACKAGES, "experiments",
                           "tests"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.slow
def test_mypy_finds_nothing(tmp_path, monkeypatch):
    from mypy import api

    monkeypatch.chdir(ROOT)  # mypy reads the package names from the working folder
    stdout, stderr, code = api.run([*PACKAGES, "--cache-dir", str(tmp_path / "mypy"),
                                    "--config-file", str(ROOT / "pyproject.toml")])
    assert code == 0, stdout[-4000:] + stderr[-2000:]
