"""Base class of every result object: frozen, and flattenable for MLflow and JSON."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy import stats


@dataclasses.dataclass(frozen=True)
class Interval:
    """A two-sided interval ``[low, high]`` at confidence ``level``, and how it was made."""

    low: float
    high: float
    level: float
    method: str


def _flatten(prefix: str, value: Any, out: dict[str, float | str]) -> None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            key = f"{prefix}_{field.name}" if prefix else field.name
            _flatten(key, getattr(value, field.name), out)
    elif value is None:
        out[prefix] = "none"
    elif isinstance(value, (bool, np.bool_)):
        out[prefix] = float(value)
    elif isinstance(value, (int, float, np.integer, np.floating)):
        out[prefix] = float(value)
    elif isinstance(value, str):
        out[prefix] = value
    elif isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}_{k}", v, out)
    elif isinstance(value, (tuple, list)):
        if all(isinstance(v, str) for v in value):
            out[prefix] = ",".join(value)
        else:
            for i, v in enumerate(value):
                _flatten(f"{prefix}_{i}", v, out)
    else:
        out[prefix] = str(value)


@dataclasses.dataclass(frozen=True)
class Result:
    """Mixin of every risk result: ``to_dict`` gives a flat ``{name: float | str}`` mapping.

    Nested results and intervals are flattened with ``_``-joined names (``m_spread_low``),
    sequences of numbers get their index (``f1_by_threshold_2``), sequences of strings are
    joined with commas, and ``None`` becomes the string ``"none"``. The mapping can be passed
    to ``mlflow.log_metrics`` (after keeping the floats) or ``json.dumps`` (NaN aside).
    """

    def to_dict(self) -> dict[str, float | str]:
        out: dict[str, float | str] = {}
        _flatten("", self, out)
        return out

    def metrics(self) -> dict[str, float]:
        """The finite float entries of :meth:`to_dict` (what a metrics logger accepts)."""
        return {
            k: v
            for k, v in self.to_dict().items()
            if isinstance(v, float) and math.isfinite(v)
        }


def percentile_interval(values: np.ndarray, level: float = 0.95) -> Interval:
    """Percentile interval of repeated estimates (used over the repeats of a resampling)."""
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(values, [alpha, 1.0 - alpha])
    return Interval(float(low), float(high), level, "percentile over repeats")


def safe_ratio(num: np.ndarray | float, den: np.ndarray | float) -> np.ndarray:
    """``num / den`` elementwise, and 0 where ``den == 0`` (the convention of design §3, step 5)."""
    num_a = np.asarray(num, dtype=float)
    den_a = np.asarray(den, dtype=float)
    out = np.zeros(np.broadcast(num_a, den_a).shape)
    np.divide(num_a, den_a, out=out, where=den_a != 0)
    return out


def welch_interval(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> Interval | None:
    """Normal-approximation interval of ``mean(a) - mean(b)`` for independent samples, with
    Welch's standard error ``sqrt(var(a) / n_a + var(b) / n_b)``; ``None`` when a sample has
    fewer than two values (no variance to estimate)."""
    if min(a.size, b.size) < 2:
        return None
    z = float(stats.norm.ppf(0.5 + level / 2.0))
    diff = float(np.mean(a) - np.mean(b))
    half = z * math.sqrt(float(np.var(a, ddof=1)) / a.size + float(np.var(b, ddof=1)) / b.size)
    return Interval(diff - half, diff + half, level, "normal approximation, Welch's standard error")


def newcombe_interval(p1: float, n1: int, p2: float, n2: int, level: float = 0.95) -> Interval:
    """Interval of ``p1 - p2`` for two independent proportions: Newcombe's (1998) hybrid score
    method 10, from the two Wilson score intervals."""
    z = float(stats.norm.ppf(0.5 + level / 2.0))

    def wilson(p: float, n: int) -> tuple[float, float]:
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return centre - half, centre + half

    (l1, u1), (l2, u2) = wilson(p1, n1), wilson(p2, n2)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return Interval(low, high, level, "Newcombe hybrid score (method 10)")
