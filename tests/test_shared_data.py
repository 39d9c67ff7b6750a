"""An absent shared dataset skips a test on a developer's machine and fails it under .ci/run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("required", "code", "said"), [
    ("", 0, "1 skipped"), ("1", 1, "1 failed")], ids=["developer", "ci"])
@pytest.mark.slow
def test_absent_shared_data_skips_unless_required(tmp_path, required, code, said):
    probe = tmp_path / "test_probe.py"
    probe.write_text("from tests.data import require\n\n"
                     "def test_probe():\n    require('no_such_dataset/none.csv')\n")
    env = {**os.environ, "RISK_TUNER_REQUIRE_DATA": required, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(probe)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stdout[-2000:]
    assert said in done.stdout.strip().splitlines()[-1]
    if required:
        assert "no_such_dataset" in done.stdout and "RISK_TUNER_REQUIRE_DATA=1" in done.stdout


def test_ci_requires_the_shared_data():
    text = (ROOT / ".ci" / "run").read_text()
    assert "export RISK_TUNER_REQUIRE_DATA=1" in text
    assert text.index("RISK_TUNER_REQUIRE_DATA=1") < text.index("python -m pytest")
