"""Pruning neural trials against trials of their own family (``[study] pruner``).

Successive halving and Hyperband (Li et al., "Hyperband", JMLR 18, 2018) stop a trial at a rung
when its value there is not in the best ``1 / reduction_factor`` of the values other trials had
at that rung: a sound rule where the values at a rung predict the ranking at the end. Across
families they do not: on 10,000 Adult records (issue 46's benchmark, seed 0) TVAE's loss at 5
epochs was -0.46 to -0.53 whatever it reached later (-0.92 at 273 epochs, the study's best),
while CTGAN's was already better there, so Optuna's pruners, which compare every trial of a
study, stopped 12 of 13 TVAE trials that reached a rung at epoch 5; TPE then read their pruned
values and drew CTGAN 95 times against TVAE 25, and the pruned search's best loss was -0.863
against -0.922 for full-fidelity trials.

:class:`ByFamily` gives each family its own pruner, which sees the study's trials of that family
only (``synthesizer``, the first parameter every trial draws): TVAE's rungs compete with TVAE's.
Optuna's pruners read ``get_trials``, ``direction`` and the storage from the study they are
given (``SuccessiveHalvingPruner.prune``); Hyperband builds each bracket's view on the study it
is given, which :class:`_Hyperband` then narrows to the family.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

FAMILY = "synthesizer"


class _FamilyView:
    """``study`` seen by a pruner of one family: its trials of ``family`` only; everything else
    (direction, storage, name) the study's own."""

    def __init__(self, study: Any, family: str) -> None:
        self.study = study
        self.family = family

    def get_trials(self, deepcopy: bool = True,
                   states: Container[TrialState] | None = None) -> list[FrozenTrial]:
        return [t for t in self.study.get_trials(deepcopy=deepcopy, states=states)
                if t.params.get(FAMILY) == self.family]

    @property
    def trials(self) -> list[FrozenTrial]:
        return self.get_trials()

    def __getattr__(self, name: str) -> Any:  # direction, _storage, study_name, stop ...
        return getattr(self.study, name)


class _Hyperband(optuna.pruners.HyperbandPruner):
    """Optuna's Hyperband whose brackets are narrowed to the family of the view it is given
    (its bracket views read the storage itself, past any view)."""

    def _create_bracket_study(self, study: Any, bracket_id: int) -> Any:
        if isinstance(study, _FamilyView):
            bracket = super()._create_bracket_study(study.study, bracket_id)
            return _FamilyView(bracket, study.family)
        return super()._create_bracket_study(study, bracket_id)


class ByFamily(optuna.pruners.BasePruner):
    """One pruner per family (made by ``make`` when the family's first trial reports), each
    comparing a trial with the trials of its own family only."""

    def __init__(self, make: Callable[[], optuna.pruners.BasePruner]) -> None:
        self.make = make
        self.pruners: dict[str, optuna.pruners.BasePruner] = {}

    def prune(self, study: optuna.Study, trial: FrozenTrial) -> bool:
        family = str(trial.params.get(FAMILY))
        if family not in self.pruners:
            self.pruners[family] = self.make()
        view: Any = _FamilyView(study, family)
        return self.pruners[family].prune(view, trial)


def hyperband(**options: Any) -> ByFamily:
    """Hyperband per family, with Optuna's ``HyperbandPruner`` options."""
    return ByFamily(lambda: _Hyperband(**options))


def halving(**options: Any) -> ByFamily:
    """Successive halving per family, with Optuna's ``SuccessiveHalvingPruner`` options."""
    return ByFamily(lambda: optuna.pruners.SuccessiveHalvingPruner(**options))
