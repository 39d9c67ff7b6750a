"""The shared real datasets (../shared/data) for tests, skipping cleanly when absent; and
:func:`unavailable` for the infrastructure some tests need (PostgreSQL, a tmpfs, an extra).

Under ``.ci/run`` (``RISK_TUNER_REQUIRE_DATA=1``) an absent dataset, or missing infrastructure
that CI installs, fails the test instead: the tests of published numbers, of many machines on
PostgreSQL and of a full disk must not pass CI by skipping.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from experiments import datasets

T = TypeVar("T")


REQUIRE = "RISK_TUNER_REQUIRE_DATA"  # "1": a missing dataset or infrastructure fails, never skips


def unavailable(reason: str) -> None:
    """Skip the calling test (or module) for ``reason``; under ``RISK_TUNER_REQUIRE_DATA=1``
    (CI, where everything is installed) fail it instead."""
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{reason} ({REQUIRE}=1: required here)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def _missing(exc: datasets.DatasetMissing) -> None:
    unavailable(str(exc))


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
