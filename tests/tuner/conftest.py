"""Helpers for tuner tests: tiny configs on the embedded Fair data."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from tuner import config

TINY_SPACES = """
[space.ctgan]
epochs = [1, 2]
batch_size = [100]
[space.tvae]
epochs = [1, 2]
batch_size = [100]
[space.copulagan]
epochs = [1, 2]
batch_size = [100]
[space.mst]
epsilon = [0.1, 0.3]
bins = [8]
[space.aim]
epsilon = [0.1, 0.3]
bins = [8]
"""


# the release audit, as small as it runs (8 fits of 60-record tables, in-process): a test
# release runs it unless the test turns it off (NO_AUDIT); tpr_limit = 1 never refuses
# (tests/tuner/release/test_audit.py tests refusals)
TINY_AUDIT_KEYS = {"targets": 1, "shadows": 8, "shadow_size": 60, "jobs": 1, "tpr_limit": 1.0}
# a study without the release audit, where a test is of something else
NO_AUDIT = "[audit]\nenabled = false\nrequired = false\n"
TINY_AUDIT = "\n[audit]\n" + "".join(f"{k} = {v}\n" for k, v in TINY_AUDIT_KEYS.items())


def write_config(folder: Path, *, synthesizers=("cart", "gaussian_copula"), n_trials=3,
                 extra_risk: str = "", extra: str = "", workers: int = 1,
                 name: str = "t", public_seed: bool = False) -> Path:
    text = textwrap.dedent(f"""
    [data]
    path = "builtin:fair"
    population_size = 100000
    train_fraction = 0.5

    [study]
    name = "{name}"
    synthesizers = {list(synthesizers)!r}
    n_trials = {n_trials}
    seed = 7
    public_seed = {str(public_seed).lower()}
    workers = {workers}
    output = "out"

    [risk]
    repeats = 20
    attribute_keys = ["age", "yrs_married", "children", "religious"]
    cap_targets = ["affairs"]
    inference_targets = ["affairs"]
    {extra_risk}

    [utility]
    metric = "hellinger"
    """).replace("'", '"') + TINY_SPACES + (TINY_AUDIT if "[audit]" not in extra else "") + extra
    path = folder / "study.toml"
    path.write_text(text)
    return path


def assert_no_real_records(output: Path, frame: pd.DataFrame, *, released: Path) -> None:
    """No record of Fair's ``frame`` in any file under ``output`` but ``released`` (the released
    synthetic data themselves): whole records, and the long values of ``affairs`` (Fair's
    0.1111111 and the like) as whole numbers; a float such as 1/9 = 0.1111111111 in a store is a
    coincidence, not a record."""
    rows = [",".join(map(repr, r)) for r in frame.itertuples(index=False)]
    rows += [",".join(map(str, r)) for r in frame.itertuples(index=False)]
    long_values = sorted({repr(v) for v in frame["affairs"] if len(repr(v)) >= 8})
    values = re.compile("|".join(rf"(?<![0-9.]){re.escape(v)}(?![0-9])" for v in long_values))
    for path in output.rglob("*"):
        if not path.is_file() or path == released:
            continue
        content = path.read_bytes().decode("latin-1")
        leaked = [s for s in rows if s in content] + values.findall(content)
        assert not leaked, (path, leaked[:3])


@pytest.fixture
def tiny_config(tmp_path):
    def make(**kwargs):
        return config.load(write_config(tmp_path, **kwargs))

    return make
