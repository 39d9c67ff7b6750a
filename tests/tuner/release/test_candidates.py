"""The next candidate after a membership audit's refusal (tuner/release/_candidates.py): not a
near twin of a refused trial, but another family or one ``audit.safer_by`` times safer."""

from __future__ import annotations

import types

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from tuner._common import attrs
from tuner.release._audit_verdict import MEMBERSHIP_REFUSAL
from tuner.release._candidates import (
    audit_order,
    audit_refused,
    candidates,
    next_candidate,
    passed_over,
    selection,
)
from tuner.release._refusals import explain_infeasible

FAMILIES = CategoricalDistribution(["cart", "ctgan", "gaussian_copula", "mst"])
SPACES = {"cart": ("cart.min_samples_leaf", IntDistribution(1, 200, log=True)),
          "ctgan": ("ctgan.epochs", IntDistribution(1, 300, log=True)),
          "mst": ("mst.epsilon", FloatDistribution(0.1, 10.0, log=True)),
          "gaussian_copula": ("gaussian_copula.default_distribution",
                              CategoricalDistribution(["norm", "beta"]))}


def _ctx(safer_by: float = 2.0) -> types.SimpleNamespace:
    return types.SimpleNamespace(cfg=types.SimpleNamespace(
        audit=types.SimpleNamespace(safer_by=safer_by)))


def _study(trials: list[tuple[str, object, float]], *, feasible: bool = True) -> optuna.Study:
    """A study of finished trials (family, privacy value, loss), in that order."""
    study = optuna.create_study()
    for name, value, loss in trials:
        param, dist = SPACES[name]
        study.add_trial(optuna.trial.create_trial(
            params={"synthesizer": name, param: value},
            distributions={"synthesizer": FAMILIES, param: dist},
            value=loss, constraints={"m": -0.1 if feasible else 0.1}))
    return study


def _refuse(study: optuna.Study, number: int, *, audited: bool = True,
            why: str = f"{MEMBERSHIP_REFUSAL}refused") -> None:
    """Record trial ``number`` refused at release, after its membership audit ran (or on the
    sealed audit set, before it), for ``why``."""
    study.set_user_attr(f"{attrs.REJECTED_PREFIX}{number}", why)
    if audited:
        study.set_user_attr(f"{attrs.AUDIT_PREFIX}{number}", {"membership": {"ran": True}})


def test_without_a_refusal_the_best_feasible_trial_is_next():
    study = _study([("cart", 13, -0.98), ("cart", 14, -0.97), ("ctgan", 50, -0.84)])
    assert passed_over(_ctx(), study) == {}
    assert next_candidate(_ctx(), study).number == 0


def test_a_refused_carts_near_twins_are_passed_over_for_twice_its_leaves():
    # issue 46's acceptance run: CART at 13 records a leaf refused, then 14 and 15 audited and
    # refused in turn; now the next CART is the best with 26 or more
    study = _study([("cart", 13, -0.98), ("cart", 14, -0.979), ("cart", 25, -0.978),
                    ("cart", 26, -0.977), ("cart", 72, -0.969)])
    _refuse(study, 0)
    skipped = passed_over(_ctx(), study)
    assert sorted(skipped) == [1, 2]
    assert "cart min_samples_leaf = 25, no safer than trial 0's 13 the membership audit " \
           "refused (audit.safer_by = 2 asks for at least 26)" == skipped[2]
    assert next_candidate(_ctx(), study).number == 3
    _refuse(study, 3)  # 26 refused: the next CART needs 52 leaves
    assert next_candidate(_ctx(), study).number == 4
    assert [t.number for t in candidates(_ctx(), study)] == [4]


def test_after_a_refusal_another_family_is_audited_before_a_safer_setting_of_it():
    # issue 46's second acceptance run: three CART candidates refused in turn while CTGAN and
    # TVAE were feasible; a refused family now waits until every other family's best is tried
    study = _study([("cart", 13, -0.98), ("cart", 72, -0.969), ("ctgan", 50, -0.84),
                    ("ctgan", 20, -0.80)])
    _refuse(study, 0)
    assert [t.number for t in candidates(_ctx(), study)] == [1, 2, 3]  # 72 >= 26: a candidate
    assert next_candidate(_ctx(), study).number == 2  # but CTGAN, not yet refused, comes first
    chosen = selection(_ctx(), study, study.trials[2])
    assert chosen["reason"].endswith(", taken first among the families the membership audit "
                                     "has not refused (cart refused: trial(s) 0)")
    _refuse(study, 2)  # both refused once: the best of what is left, CART at 72
    assert next_candidate(_ctx(), study).number == 1
    assert "taken first" not in selection(_ctx(), study, study.trials[1])["reason"]


def test_the_audit_order_the_budget_keeps_time_for_takes_each_refusal_in_turn():
    study = _study([("cart", 13, -0.98), ("cart", 14, -0.979), ("cart", 40, -0.97),
                    ("ctgan", 100, -0.84), ("ctgan", 80, -0.83), ("ctgan", 40, -0.82)])
    # cart 13; then CTGAN 100 (another family); then both refused: CART 40 (>= 26, before
    # CTGAN 40, the better loss), then CTGAN 40 (<= 50); twins 14 and 80 never
    assert [t.number for t in audit_order(_ctx(), study, 5)] == [0, 3, 2, 5]
    _refuse(study, 0)
    assert [t.number for t in audit_order(_ctx(), study, 2)] == [3, 2]
    assert [t.number for t in audit_order(_ctx(), study, 2)][0] == \
        next_candidate(_ctx(), study).number


def test_a_refusal_by_a_measure_scored_in_full_after_an_audit_that_passed_holds_none_back():
    # CI, stop 59: trial 1's audit passed, then its DCR scored in full failed; its smaller-leaf
    # twin was passed over as if the membership audit had refused it
    study = _study([("cart", 4, -0.98), ("cart", 21, -0.99)])
    _refuse(study, 1, why="its data, re-created (data fingerprints equal), fail 'dcr'")
    assert audit_refused(study) == []
    assert passed_over(_ctx(), study) == {}
    assert next_candidate(_ctx(), study).number == 0


def test_another_family_is_not_held_back_by_a_refusal():
    study = _study([("cart", 13, -0.98), ("cart", 14, -0.979), ("ctgan", 50, -0.9)])
    _refuse(study, 0)
    assert next_candidate(_ctx(), study).number == 2


@pytest.mark.parametrize(("family", "refused", "twin", "safer"), [
    ("ctgan", 100, 60, 50),      # fewer epochs: half of them
    ("mst", 4.0, 3.0, 2.0),      # a lower epsilon: half of it
])
def test_the_neural_and_dp_families_are_safer_downwards(family, refused, twin, safer):
    study = _study([(family, refused, -0.9), (family, twin, -0.89), (family, safer, -0.8)])
    _refuse(study, 0)
    assert list(passed_over(_ctx(), study)) == [1]
    assert next_candidate(_ctx(), study).number == 2


def test_a_family_without_a_privacy_setting_is_not_audited_again():
    study = _study([("gaussian_copula", "norm", -0.9), ("gaussian_copula", "beta", -0.89),
                    ("cart", 50, -0.5)])
    _refuse(study, 0)
    assert "no setting of gaussian_copula is known to be safer" in passed_over(_ctx(), study)[1]
    assert next_candidate(_ctx(), study).number == 2


def test_a_refusal_on_the_sealed_audit_set_holds_nothing_back():
    # refused before its membership audit ran: a constraint on records no trial saw, which says
    # nothing about the family's setting
    study = _study([("cart", 13, -0.98), ("cart", 14, -0.979)])
    _refuse(study, 0, audited=False)
    assert audit_refused(study) == []
    assert next_candidate(_ctx(), study).number == 1


def test_safer_by_one_audits_any_setting_as_safe_and_the_same_one_not():
    study = _study([("cart", 13, -0.98), ("cart", 13, -0.979), ("cart", 14, -0.97)])
    _refuse(study, 0)
    assert list(passed_over(_ctx(1.0), study)) == []  # 13 >= 13 x 1: "at least as safe"
    assert list(passed_over(_ctx(1.5), study)) == [1, 2]


def test_nothing_left_but_twins_is_said_with_what_to_change():
    study = _study([("cart", 13, -0.98), ("cart", 14, -0.979), ("cart", 15, -0.978)])
    _refuse(study, 0)
    ctx = _ctx()
    assert next_candidate(ctx, study) is None
    said = explain_infeasible(study, passed_over(ctx, study))
    assert "2 passed over as no safer than one the membership audit refused" in said
    assert "trial 1 passed over: cart min_samples_leaf = 14" in said
    assert "lower it to audit them" in said and "min_samples_leaf" in said


def test_a_pruned_trial_with_a_feasible_checkpoint_is_a_candidate_and_others_are_not():
    # pruning stops the spending on a trial, not what its checkpoints measured: a TVAE trial
    # pruned at 135 epochs with a feasible checkpoint at -0.91 (issue 46's benchmark, seed 0,
    # where it beat the one completed trial) is released before a completed one at -0.90
    from tuner.search import best_feasible, loss_of, releasable

    study = _study([("ctgan", 50, -0.90)])
    dist = {"synthesizer": FAMILIES, "ctgan.epochs": IntDistribution(1, 300, log=True)}
    kept = {attrs.DATA_SHA256: "ab" * 32, attrs.EPOCHS: 135,
            attrs.METRICS: {"loss": -0.91, "utility": 0.91}}
    for user_attrs, constraints in [
            (kept, {"m": -0.1}),                 # a candidate
            ({attrs.CURVE: [{"epochs": 5, "loss": -0.95, "feasible": False}]},
             {"m": 0.2}),                        # none of its checkpoints feasible
            ({attrs.CURVE: [{"epochs": 5, "loss": -0.97, "feasible": True,
                             "auditable": False}]}, {"m": -0.1})]:  # too long to audit
        study.add_trial(optuna.trial.create_trial(
            state=optuna.trial.TrialState.PRUNED, params={"synthesizer": "ctgan",
                                                          "ctgan.epochs": 300},
            distributions=dist, user_attrs=user_attrs, constraints=constraints,
            intermediate_values={5: -0.5}))
    assert [t.number for t in releasable(study)] == [0, 1]
    assert best_feasible(study).number == 1 and loss_of(study.trials[1]) == -0.91
    assert next_candidate(_ctx(), study).number == 1
    assert [t.number for t in audit_order(_ctx(), study, 3)] == [1, 0]
