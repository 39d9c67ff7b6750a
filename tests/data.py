"""The shared real datasets (../shared/data) for tests, skipping cleanly when absent.

Under ``.ci/run`` (``RISK_TUNER_REQUIRE_DATA=1``) an absent dataset fails the test instead: the
tests of published numbers must not pass CI by skipping.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from experiments import datasets

T = TypeVar("T")


REQUIRE = "RISK_TUNER_REQUIRE_DATA"  # "1": a missing shared dataset fails, never skips


def _missing(exc: datasets.DatasetMissing) -> None:
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{exc} ({REQUIRE}=1: the shared data are required here)", pytrace=False)
    pytest.skip(str(exc))


def require(relative: str) -> Path:
    """Path of a shared data file, or skip the calling test with the reason (fail under
    ``RISK_TUNER_REQUIRE_DATA=1``)."""
    try:
        return datasets.path_of(relative)
    except datasets.DatasetMissing as exc:
        _missing(exc)
        raise


def _or_skip(reader: Callable[[], T]) -> T:
    try:
        return reader()
    except datasets.DatasetMissing as exc:
        _missing(exc)
        raise


def load_acs():  # noqa: ANN201
    """Hu's ACS original and its three partially synthetic versions."""
    return _or_skip(datasets.read_acs_partial)


def load_acs_sample():  # noqa: ANN201
    """10,000 records of Hu's ACS sample (ten categorical columns)."""
    return _or_skip(datasets.read_acs_sample)


def load_ce():  # noqa: ANN201
    return _or_skip(datasets.read_ce)


def load_adult():  # noqa: ANN201
    """adult.data + adult.test: the 48,842 people."""
    return _or_skip(datasets.read_adult)
