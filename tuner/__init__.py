"""Risk-aware tuning of SDV synthesisers with Optuna, tracked in MLflow.

The Python API (:mod:`tuner.api`): ``tuner.tune(config, *, output=None, trials=None,
workers=None)`` runs a study and returns a :class:`~tuner.api.TunedStudy`; ``tuner.load(folder)``
opens one from its output folder alone. Loaded on first use, so that ``import tuner.config``
stays light.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TunedStudy", "load", "tune"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from tuner import api

        return getattr(api, name)
    raise AttributeError(f"module 'tuner' has no attribute {name!r}")
