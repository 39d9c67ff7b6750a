"""Scoring one synthetic data set: U, every enabled measure, the constraints and the loss.

:func:`evaluate` fits a family on the training split and scores what it makes; :func:`score`
scores given data. U is SDMetrics' Quality Report (computed with arrays, the same numbers),
Hellinger or TSTR efficacy; the measures come from the registry in :mod:`tuner.measures`.
Modules: ``evaluation``, ``categorical``, ``utility``, ``quality``.
"""

from __future__ import annotations

import importlib
from typing import Any

# what this room offers, by the module that holds it ("module:name" where the name differs):
# imported when first used (PEP 562), so that importing the room costs nothing
_EXPORTS = {
    "coded_frames": "categorical:coded",
    "Evaluation": "evaluation",
    "UnusableSynthesis": "evaluation",
    "evaluate": "evaluation",
    "hellinger": "utility",
    "quality_report": "utility",
    "score": "evaluation",
    "utility_score": "evaluation",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module, _, attr = _EXPORTS[name].partition(":")
        return getattr(importlib.import_module(f"{__name__}.{module}"), attr or name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(_EXPORTS)
