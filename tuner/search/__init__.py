"""Running a study: the Optuna search over the synthesisers, on one machine or many.

What every worker needs (:class:`Context`, :func:`prepare`), the stores (Optuna storage and
sampler, MLflow tracking), the budget and the trials (feasible, best, the Pareto front), one
trial (the objective), K workers with progress, and what workers coordinate through (locks,
worker slots, faults of the machine).
Modules: ``context``, ``secret``, ``stored_split``, ``tracking``, ``budget``, ``trials``,
``pareto``, ``storage``, ``database``, ``locks``, ``objective``, ``study``, ``_plots`` (the
risk-utility map and the history), ``_empty_store`` (a new MLflow store copied from an empty
one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner._common.lazy_exports import lazy_exports

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
    "risk_utility_plot": "_plots:risk_utility",
    "run_study": "study",
    "sampler": "storage",
    "trial_params": "objective",
    "ui_command": "tracking",
}

if TYPE_CHECKING:  # the exports' types, for mypy and editors (imported lazily at run time)
    from tuner.search._plots import risk_utility as risk_utility_plot
    from tuner.search.budget import Budget, claim_slot
    from tuner.search.context import Context, prepare
    from tuner.search.objective import ask_params, trial_params
    from tuner.search.storage import open_study, sampler
    from tuner.search.storage import storage as open_storage
    from tuner.search.study import run_study
    from tuner.search.tracking import Tracker, ui_command
    from tuner.search.trials import best_feasible


__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
