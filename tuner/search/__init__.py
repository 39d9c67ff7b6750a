"""Running a study: the Optuna search over the synthesisers, on one machine or many.

What every worker needs (:class:`Context`, :func:`prepare`), the stores (Optuna storage and
sampler, MLflow tracking), the budget and the trials (feasible, best, the Pareto front), one
trial (the objective), K workers with progress, and what workers coordinate through (locks,
worker slots, faults of the machine).
Modules: ``context``, ``secret``, ``stored_split``, ``tracking``, ``budget``, ``trials``,
``pareto``, ``storage``, ``database``, ``faults``, ``locks``, ``objective``, ``study``.
"""

from __future__ import annotations

from tuner.lazy_exports import lazy_exports

# what this room offers, by the module that holds it ("module:name" where the name differs):
# imported when first used (PEP 562), so that importing the room costs nothing
_EXPORTS = {
    "Budget": "budget",
    "Context": "context",
    "Tracker": "tracking",
    "ask_params": "objective",
    "best_feasible": "trials",
    "claim_slot": "budget",
    "open_storage": "storage:storage",
    "open_study": "storage",
    "prepare": "context",
    "run_study": "study",
    "sampler": "storage",
    "trial_params": "objective",
    "ui_command": "tracking",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
