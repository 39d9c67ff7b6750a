"""Neural trials pruned against their own family (tuner/search/_pruning.py): a family that
learns slowly is not stopped for being behind another family at an early rung."""

from __future__ import annotations

import optuna
import pytest

from tuner.search._pruning import ByFamily, halving, hyperband

FAMILIES = optuna.distributions.CategoricalDistribution(["fast", "slow"])


def _report(study: optuna.Study, pruner: optuna.pruners.BasePruner, family: str,
            value: float) -> bool:
    """A trial of ``family`` reporting ``value`` at epoch 5; whether ``pruner`` stops it."""
    trial = study.ask({"synthesizer": FAMILIES})
    assert trial.params["synthesizer"] == family  # enqueued in this order
    trial.report(value, 5)
    frozen = study._storage.get_trial(trial._trial_id)
    stop = pruner.prune(study, frozen)
    study.tell(trial, state=optuna.trial.TrialState.PRUNED if stop else None,
               values=None if stop else [value])
    return stop


def _study(families: list[str]) -> optuna.Study:
    """A study whose sampler draws ``families`` in this order."""
    study = optuna.create_study()
    for name in families:
        study.enqueue_trial({"synthesizer": name})
    return study


@pytest.mark.parametrize("make", [
    lambda: optuna.pruners.SuccessiveHalvingPruner(min_resource=5, reduction_factor=3),
    lambda: halving(min_resource=5, reduction_factor=3),
])
def test_successive_halving_stops_the_slow_family_only_when_pooled(make):
    # three fast trials at -0.8 at epoch 5, then slow ones at -0.5: pooled, a slow trial is
    # in the worst two thirds at the rung and stopped; by family, its rung is its own
    study = _study(["fast"] * 3 + ["slow"] * 3)
    pruner = make()
    stops = [_report(study, pruner, f, v) for f, v in
             [("fast", -0.80), ("fast", -0.81), ("fast", -0.79),
              ("slow", -0.50), ("slow", -0.52), ("slow", -0.51)]]
    pooled = not isinstance(pruner, ByFamily)
    # with Optuna's own pruner the slow family is stopped at its first rung every time
    assert all(stops[3:]) if pooled else not stops[3]
    if not pooled:
        # within its own family the rule is Optuna's: -0.50 is the first, promoted; -0.52
        # beats it, promoted; -0.51 is not in the best third of the three, stopped
        assert stops[3:] == [False, False, True]


def test_hyperband_by_family_compares_a_trial_with_its_own_family():
    study = _study(["fast"] * 6 + ["slow"] * 6)
    pruner = hyperband(min_resource=5, max_resource=135, reduction_factor=3)
    reference = optuna.pruners.HyperbandPruner(min_resource=5, max_resource=135,
                                               reduction_factor=3)
    values = [("fast", -0.80 - i / 100) for i in range(6)] + \
             [("slow", -0.50 - i / 1000) for i in range(6)]
    ours = [_report(study, pruner, f, v) for f, v in values]
    pooled = _study(["fast"] * 6 + ["slow"] * 6)
    theirs = [_report(pooled, reference, f, v) for f, v in values]
    # each slow trial improves on the slow ones before it: never stopped against its own
    # family; pooled with the fast family, Hyperband stops slow trials
    assert not any(ours[6:]) and any(theirs[6:])
    assert ours[:6] == theirs[:6]  # the first family's decisions are Optuna's own
    assert set(pruner.pruners) == {"fast", "slow"}


@pytest.mark.parametrize("make", [
    lambda: halving(min_resource=5, reduction_factor=3, bootstrap_count=1),
    lambda: hyperband(min_resource=5, max_resource=5, reduction_factor=3, bootstrap_count=1),
])
def test_the_first_trial_of_each_family_at_a_rung_is_stopped_with_a_bootstrap(make):
    # bootstrap_count 1 ([study] pruner_bootstrap): the first trial of a family to reach the
    # rung has nothing to be compared with and is stopped, where without it it trains on; each
    # family's first is its own (the slow family's first comes after three fast ones)
    study = _study(["fast", "fast", "slow", "slow"])
    pruner = make()
    stops = [_report(study, pruner, f, v) for f, v in
             [("fast", -0.80), ("fast", -0.81), ("slow", -0.50), ("slow", -0.52)]]
    # one rung only (max_resource 5 for Hyperband): a trial past the bootstrap is compared
    assert stops == [True, False, True, False]
    fresh = _study(["fast"])
    assert not _report(fresh, halving(min_resource=5, reduction_factor=3), "fast", -0.80)
