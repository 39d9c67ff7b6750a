"""The shared real datasets (../shared/data) for tests, skipping cleanly when absent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from experiments import datasets

T = TypeVar("T")


def require(relative: str) -> Path:
    """Path of a shared data file, or skip the calling test with the reason."""
    try:
        return datasets.path_of(relative)
    except datasets.DatasetMissing as exc:
        pytest.skip(str(exc))


def _or_skip(reader: Callable[[], T]) -> T:
    try:
        return reader()
    except datasets.DatasetMissing as exc:
        pytest.skip(str(exc))


def load_acs():  # noqa: ANN201
    """Hu's ACS original and its three partially synthetic versions."""
    return _or_skip(datasets.read_acs_partial)


def load_ce():  # noqa: ANN201
    return _or_skip(datasets.read_ce)


def load_adult():  # noqa: ANN201
    """adult.data + adult.test: the 48,842 people."""
    return _or_skip(datasets.read_adult)
