"""What a Python user expects of the distribution: a licence, type information, a version."""

from __future__ import annotations

import glob
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_the_installed_distributions():
    done = subprocess.run([sys.executable, "-m", "tuner", "--version"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"risk-tuner {version('risk-tuner')}"


@pytest.mark.slow
def test_the_wheel_carries_the_licence_and_both_packages_type_markers(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q",
                    "-w", str(tmp_path)], check=True, capture_output=True, timeout=600)
    (wheel,) = glob.glob(str(tmp_path / "*.whl"))
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert {"risk/py.typed", "tuner/py.typed"} <= names
    assert any(n.endswith("licenses/LICENSE") for n in names)
    assert "License-Expression: MIT" in metadata
    # the risk library installs without the tuner's cap on pandas (SDV's, in the tuner extra)
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist: pandas")]
    assert "Requires-Dist: pandas>=2.1" in requires
    assert all("<3" not in r or 'extra == "tuner"' in r for r in requires)


def test_help_lists_every_exit_status_of_the_usage_table(capsys):
    import re

    from tuner.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    shown = set(re.findall(r"^  (\d+) ", capsys.readouterr().out.split("exit status:")[1], re.M))
    table = (ROOT / "docs" / "usage.md").read_text()
    documented = set(re.findall(r"^\| (\d+) \|", table, re.M))
    assert shown == documented == {"0", "1", "2", "3", "130", "143"}
