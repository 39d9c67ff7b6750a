"""Search spaces: narrowing a family's space (never widening it) and decoding stored values.

The spaces themselves are data in :data:`tuner.synthesis._families.SYNTHESIZERS`.
"""

from __future__ import annotations

from typing import Any

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from tuner.errors import InputError
from tuner.synthesis._families import SYNTHESIZERS


def narrow(name: str, overrides: dict[str, Any] | None) -> dict[str, BaseDistribution]:
    """The space of ``name`` narrowed by ``overrides`` ({param: [low, high] or [choices]})."""
    space = dict(SYNTHESIZERS[name].space)
    for param, value in (overrides or {}).items():
        dist = space[param]
        where = f"space.{name}.{param}"
        if isinstance(dist, CategoricalDistribution):
            choices = value if isinstance(value, list) else [value]
            bad = [c for c in choices if c not in dist.choices]
            if bad or not choices:
                raise InputError(
                    f"{where} may only narrow the choices {list(dist.choices)!r}, got {value!r}"
                )
            space[param] = CategoricalDistribution(tuple(choices))
        else:
            if not (isinstance(value, list) and len(value) == 2):
                raise InputError(f"{where} must be [low, high], got {value!r}")
            low, high = value
            assert isinstance(dist, (IntDistribution, FloatDistribution))
            if not (dist.low <= low <= high <= dist.high):
                raise InputError(
                    f"{where} must satisfy {dist.low} <= low <= high <= {dist.high} (narrowing "
                    f"only), got (low={low}, high={high})"
                )
            if isinstance(dist, IntDistribution):
                space[param] = IntDistribution(int(low), int(high), log=dist.log)
            else:
                space[param] = FloatDistribution(float(low), float(high), log=dist.log)
    return space


def decode(params: dict[str, Any]) -> dict[str, Any]:
    """Turn stored values into constructor arguments ("256x256" -> (256, 256); depth 0 -> None)."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, str) and "x" in value and value.replace("x", "").isdigit():
            out[key] = tuple(int(v) for v in value.split("x"))
        elif key == "max_depth" and value == 0:
            out[key] = None
        else:
            out[key] = value
    return out
