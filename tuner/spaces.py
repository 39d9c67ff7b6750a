"""Search spaces as data: one mapping per synthesiser from parameter to Optuna distribution.

A config may *narrow* a space (``[space.ctgan] epochs = [5, 20]`` or a subset of choices), never
widen it. Values Optuna cannot store (tuples of layer widths) are choices of strings decoded by
:func:`decode`. CTGAN asserts ``batch_size % pac == 0``: every batch size offered is divisible by
every pac offered, so no trial can hit that assertion.
"""

from __future__ import annotations

from typing import Any

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

_LAYERS = ("64x64", "128x128", "256x256")
_PACS = (1, 2, 5, 10)
_BATCHES = (100, 200, 500)  # each divisible by every pac above

SPACES: dict[str, dict[str, BaseDistribution]] = {
    "gaussian_copula": {
        # gaussian_kde is orders of magnitude slower on tens of thousands of rows: left out
        "default_distribution": CategoricalDistribution(("norm", "beta", "truncnorm", "uniform")),
    },
    "cart": {
        "min_samples_leaf": IntDistribution(1, 200, log=True),
        "max_depth": CategoricalDistribution((0, 4, 8, 12, 20)),  # 0 = unlimited
        "visit_order": CategoricalDistribution(("original", "reversed", "random")),
        "smoothing": CategoricalDistribution((False, True)),
    },
    "ctgan": {
        "epochs": IntDistribution(1, 300, log=True),
        "batch_size": CategoricalDistribution(_BATCHES),
        "pac": CategoricalDistribution(_PACS),
        "generator_dim": CategoricalDistribution(_LAYERS),
        "discriminator_dim": CategoricalDistribution(_LAYERS),
        "generator_lr": FloatDistribution(5e-5, 1e-3, log=True),
        "discriminator_lr": FloatDistribution(5e-5, 1e-3, log=True),
        "embedding_dim": CategoricalDistribution((64, 128)),
    },
    "copulagan": {
        "epochs": IntDistribution(1, 300, log=True),
        "batch_size": CategoricalDistribution(_BATCHES),
        "pac": CategoricalDistribution(_PACS),
        "generator_dim": CategoricalDistribution(_LAYERS),
        "discriminator_dim": CategoricalDistribution(_LAYERS),
        "default_distribution": CategoricalDistribution(("norm", "beta", "truncnorm")),
    },
    "tvae": {
        "epochs": IntDistribution(1, 300, log=True),
        "batch_size": CategoricalDistribution(_BATCHES),
        "compress_dims": CategoricalDistribution(_LAYERS),
        "decompress_dims": CategoricalDistribution(_LAYERS),
        "embedding_dim": CategoricalDistribution((64, 128)),
        "l2scale": FloatDistribution(1e-6, 1e-3, log=True),
        "loss_factor": FloatDistribution(1.0, 4.0),
    },
}


def narrow(name: str, overrides: dict[str, Any] | None) -> dict[str, BaseDistribution]:
    """The space of ``name`` narrowed by ``overrides`` ({param: [low, high] or [choices]})."""
    space = dict(SPACES[name])
    for param, value in (overrides or {}).items():
        dist = space[param]
        where = f"space.{name}.{param}"
        if isinstance(dist, CategoricalDistribution):
            choices = value if isinstance(value, list) else [value]
            bad = [c for c in choices if c not in dist.choices]
            if bad or not choices:
                raise ValueError(
                    f"{where} may only narrow the choices {list(dist.choices)!r}, got {value!r}"
                )
            space[param] = CategoricalDistribution(tuple(choices))
        else:
            if not (isinstance(value, list) and len(value) == 2):
                raise ValueError(f"{where} must be [low, high], got {value!r}")
            low, high = value
            assert isinstance(dist, (IntDistribution, FloatDistribution))
            if not (dist.low <= low <= high <= dist.high):
                raise ValueError(
                    f"{where} must satisfy {dist.low} <= low <= high <= {dist.high} (narrowing "
                    f"only), but got (low={low}, high={high})"
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
