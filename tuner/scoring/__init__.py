"""Scoring one synthetic data set: U, every enabled measure, the constraints and the loss.

:func:`evaluate` fits a family on the training split and scores what it makes; :func:`score`
scores given data; :func:`evaluate_checkpoints` scores a neural fit every few epochs.
U is SDMetrics' Quality Report (computed with arrays, the same numbers), Hellinger or TSTR
efficacy; the measures come from the registry in :mod:`tuner.measures`.
Modules: ``_evaluation``, ``_categorical``, ``_utility``, ``_quality``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner._common.lazy_exports import lazy_exports

# what this room offers, by the module that holds it ("module:name" where the name differs):
# imported when first used (PEP 562), so that importing the room costs nothing
_EXPORTS = {
    "Evaluation": "_evaluation",
    "Scored": "_evaluation",
    "UnusableSynthesis": "_evaluation",
    "coded_frames": "_categorical:coded",
    "data_sha256": "_evaluation",
    "evaluate": "_evaluation",
    "evaluate_checkpoints": "_evaluation",
    "hellinger": "_utility",
    "quality_breakdown": "_utility",
    "quality_report": "_utility",
    "score": "_evaluation",
    "score_partial": "_evaluation",
    "utility_score": "_evaluation",
}

if TYPE_CHECKING:  # the exports' types, for mypy and editors (imported lazily at run time)
    from tuner.scoring._categorical import coded as coded_frames
    from tuner.scoring._evaluation import (
        Evaluation,
        Scored,
        UnusableSynthesis,
        data_sha256,
        evaluate,
        evaluate_checkpoints,
        score,
        score_partial,
        utility_score,
    )
    from tuner.scoring._utility import hellinger, quality_breakdown, quality_report


__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
