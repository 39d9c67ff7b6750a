"""Running a study: the Optuna search over the synthesisers, on one machine or many.

What every worker needs (:class:`Context`, :func:`prepare`), the stores (Optuna storage and
sampler and pruner, MLflow tracking), the budget and the trials (feasible, best, the Pareto
front), one trial (the objective; a neural one at its checkpoints), K workers with progress,
and what workers coordinate through (locks, worker slots, faults of the machine).
Modules: ``_context``, ``_secret``, ``_stored_split``, ``_tracking``, ``_budget``, ``_trials``,
``_pareto``, ``_storage``, ``_pruning`` (each family pruned against its own), ``_database``,
``_locks``, ``_objective``, ``_checkpointed``, ``_study``, ``_plots`` (the risk-utility map
and the history), ``_empty_store`` (a new MLflow store copied from an empty
one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner._common.lazy_exports import lazy_exports

# what this room offers, by the module that holds it ("module:name" where the name differs):
# imported when first used (PEP 562), so that importing the room costs nothing
_EXPORTS = {
    "Budget": "_budget",
    "Context": "_context",
    "SecretChanged": "_storage",
    "Tracker": "_tracking",
    "ask_params": "_objective",
    "best_feasible": "_trials",
    "claim_lock": "_locks",
    "claim_slot": "_budget",
    "encode_secret": "_secret:encode",
    "is_pareto": "_trials",
    "is_remote": "_tracking",
    "local_uri": "_tracking",
    "is_feasible": "_trials",
    "loss_of": "_trials",
    "open_storage": "_storage:storage",
    "open_study": "_storage",
    "pareto_choice": "_trials",
    "pid_alive": "_budget",
    "prepare": "_context",
    "record_secret": "_secret:record",
    "rejected": "_trials",
    "releasable": "_trials",
    "risk_utility_plot": "_plots:risk_utility",
    "run_study": "_study",
    "sampler": "_storage",
    "shown_url": "_database:shown",
    "trial_params": "_objective",
    "trials_frame": "_trials",
    "ui_command": "_tracking",
}

if TYPE_CHECKING:  # the exports' types, for mypy and editors (imported lazily at run time)
    from tuner.search._budget import Budget, claim_slot, pid_alive
    from tuner.search._context import Context, prepare
    from tuner.search._database import shown as shown_url
    from tuner.search._locks import claim_lock
    from tuner.search._objective import ask_params, trial_params
    from tuner.search._plots import risk_utility as risk_utility_plot
    from tuner.search._secret import encode as encode_secret
    from tuner.search._secret import record as record_secret
    from tuner.search._storage import SecretChanged, open_study, sampler
    from tuner.search._storage import storage as open_storage
    from tuner.search._study import run_study
    from tuner.search._tracking import Tracker, is_remote, local_uri, ui_command
    from tuner.search._trials import (
        best_feasible,
        is_feasible,
        is_pareto,
        loss_of,
        pareto_choice,
        rejected,
        releasable,
        trials_frame,
    )


__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
