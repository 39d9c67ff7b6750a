"""Neural trials scored at checkpoints (tuner/search/_checkpointed.py): the best feasible
checkpoint is the candidate and what the release re-creates, training stops after `patience`
checkpoints over a risk limit, the pruner prunes, MLflow holds the curve."""

from __future__ import annotations

import json
import math
import time
import types

import optuna
import pytest
from mlflow.tracking import MlflowClient
from optuna.trial import TrialState

from tests.tuner.conftest import NO_AUDIT, write_config
from tuner import config
from tuner._common import attrs
from tuner.release._export import export
from tuner.search._checkpointed import Checkpoints, checkpointed, checkpoints_of
from tuner.search._context import prepare
from tuner.search._objective import ask_params
from tuner.search._pruning import ByFamily
from tuner.search._storage import pruner
from tuner.search._study import run_study
from tuner.search._trials import has_candidate, is_feasible, loss_of, trials_frame
from tuner.synthesis import StopTraining, narrow


class _Tracker:
    def __init__(self):
        self.logged = []

    def log(self, run, *, step=0, metrics=None, **kwargs):
        self.logged.append((step, metrics))


def _ev(loss, feasible, epochs):
    return types.SimpleNamespace(loss=types.SimpleNamespace(loss=loss), feasible=feasible,
                                 utility=-loss, membership=types.SimpleNamespace(m=0.1),
                                 fit_seconds=float(epochs), sample_seconds=0.0,
                                 params={"epochs": epochs}, constraints={})


def _policy(tmp_path, epochs=45, **study):
    cfg = config.load(write_config(tmp_path, synthesizers=("tvae",), extra=NO_AUDIT))
    cfg = config.with_overrides(cfg, **study)
    study = optuna.create_study()
    study.enqueue_trial({"synthesizer": "tvae", "tvae.epochs": epochs})
    trial = study.ask()
    trial.suggest_categorical("synthesizer", ["tvae"])
    trial.suggest_int("tvae.epochs", 1, 300)
    return Checkpoints(trial, cfg, _Tracker(), "run"), trial


def test_the_candidate_is_the_best_feasible_checkpoint_not_the_last(tmp_path):
    policy, trial = _policy(tmp_path)
    policy(5, _ev(-0.50, True, 5))
    policy(15, _ev(-0.70, True, 15))
    policy(45, _ev(-0.80, False, 45))  # better loss, but over a risk limit
    assert policy.chosen().params == {"epochs": 15}
    assert [p["epochs"] for p in trial.user_attrs[attrs.CURVE]] == [5, 15, 45]
    # what Optuna was told at each rung: the loss the trial would return if it stopped there
    assert trial.storage.get_trial(trial._trial_id).intermediate_values == {
        5: -0.50, 15: -0.70, 45: -0.70}
    assert [step for step, _ in policy.tracker.logged] == [5, 15, 45]


class _Always(optuna.pruners.BasePruner):
    def prune(self, study, trial):
        return True


def test_a_pruned_trial_carries_the_constraints_of_the_checkpoint_it_reported(tmp_path):
    # else TPE reads a trial pruned over a limit as a feasible one with that loss
    policy, trial = _policy(tmp_path)
    trial.study.pruner = _Always()
    over = _ev(-0.40, False, 5)
    over.constraints = {"copies": 0.2, "m": -0.1}
    with pytest.raises(optuna.TrialPruned):
        policy(5, over)
    assert trial.storage.get_trial(trial._trial_id).constraints == {"copies": 0.2, "m": -0.1}


def test_unusable_records_when_the_time_is_up_stop_training_there(tmp_path):
    from tuner.scoring import UnusableSynthesis

    policy, trial = _policy(tmp_path, epochs=135)
    policy.stop_at = lambda ran: 0.0
    with pytest.raises(StopTraining, match="the job's time left is the release's"):
        policy(7, UnusableSynthesis("the gate removed every record"))


def test_training_stops_after_patience_checkpoints_over_a_limit(tmp_path):
    policy, trial = _policy(tmp_path, epochs=300)
    policy(5, _ev(-0.40, False, 5))
    policy(15, _ev(-0.50, True, 15))
    policy(45, _ev(-0.60, False, 45))
    with pytest.raises(StopTraining, match="2 checkpoint"):
        policy(135, _ev(-0.65, False, 135))
    assert policy.chosen().params == {"epochs": 15}
    assert policy.stopped.startswith("stopped at epoch 135")


def test_a_spent_time_budget_stops_training_at_the_checkpoint_it_makes(tmp_path):
    policy, trial = _policy(tmp_path, epochs=45)
    policy.stop_at = lambda ran: 0.0  # the search's end has passed
    with pytest.raises(StopTraining, match="the job's time left is the release's"):
        policy(5, _ev(-0.40, True, 5))
    assert policy.chosen().params == {"epochs": 5}
    policy(45, _ev(-0.50, True, 45))  # the last epoch: nothing left to stop


def test_the_time_a_trial_has_run_moves_its_stop(tmp_path):
    policy, trial = _policy(tmp_path, epochs=45)
    asked = []
    policy.began = time.monotonic() - 30.0  # the trial has run 30 s
    policy.stop_at = lambda ran: asked.append(ran) or time.monotonic() + 60.0 - ran
    policy(5, _ev(-0.40, True, 5))  # 30 s to go: trains on
    assert asked and asked[-1] >= 30.0
    policy.began -= 40.0  # 70 s: its own re-creation no longer fits
    with pytest.raises(StopTraining, match="the job's time left is the release's"):
        policy(15, _ev(-0.50, True, 15))
    assert policy.chosen().params == {"epochs": 15}


def _too_long_after(seconds):
    return lambda fit: "" if fit <= seconds else f"its audit would take longer ({fit:g} s)"


def test_training_stops_where_a_longer_fit_could_not_be_audited(tmp_path):
    # under a job's budget a candidate must be auditable: the best checkpoint before the fit
    # grew too long is the candidate, and training goes no further
    policy, trial = _policy(tmp_path, epochs=135)
    policy.unauditable = _too_long_after(20.0)
    policy(5, _ev(-0.40, True, 5))
    policy(15, _ev(-0.50, True, 15))
    with pytest.raises(StopTraining, match="a fit this long could not be audited"):
        policy(45, _ev(-0.80, True, 45))  # better and feasible, but its fit took 45 s
    assert policy.chosen().params == {"epochs": 15}
    assert [p["auditable"] for p in trial.user_attrs[attrs.CURVE]] == [True, True, False]
    assert trial.storage.get_trial(trial._trial_id).intermediate_values == {
        5: -0.40, 15: -0.50, 45: -0.50}


def test_a_trial_whose_first_fit_is_too_long_to_audit_is_pruned(tmp_path):
    policy, trial = _policy(tmp_path, epochs=45)
    policy.unauditable = _too_long_after(1.0)
    with pytest.raises(optuna.TrialPruned, match="short enough to audit"):
        policy(5, _ev(-0.40, True, 5))
    assert policy.stopped == "pruned at epoch 5"


def test_nothing_feasible_yet_reports_the_checkpoints_own_loss_and_keeps_the_last(tmp_path):
    # an under-trained network fails a limit and meets it later: reported as the worst loss,
    # such trials were pruned at their first checkpoint (issue 46's pruning benchmark)
    policy, trial = _policy(tmp_path, epochs=45)
    policy(5, _ev(-0.40, False, 5))
    assert policy.chosen().params == {"epochs": 5}
    policy(15, _ev(-0.60, True, 15))
    policy(45, _ev(-0.70, False, 45))  # once one is feasible, the best feasible is reported
    assert trial.storage.get_trial(trial._trial_id).intermediate_values == {
        5: -0.40, 15: -0.60, 45: -0.60}
    assert policy.chosen().params == {"epochs": 15}


def test_which_trials_are_checkpointed_and_at_what_epochs(tmp_path):
    cfg = config.load(write_config(tmp_path, synthesizers=("tvae", "cart")))
    assert checkpointed(cfg, "tvae") and not checkpointed(cfg, "cart")
    assert not checkpointed(config.with_overrides(cfg, checkpoints=False), "tvae")
    assert checkpoints_of(cfg, {"epochs": 100}) == (5, 15, 45, 100)
    made = pruner(cfg)  # the defaults: successive halving, the first at a rung pruned there
    assert isinstance(made, ByFamily)
    assert isinstance(made.make(), optuna.pruners.SuccessiveHalvingPruner)
    assert made.make()._bootstrap_count == 1
    band = pruner(config.with_overrides(cfg, pruner="hyperband", pruner_bootstrap=0))
    assert isinstance(band, ByFamily) and isinstance(band.make(), optuna.pruners.HyperbandPruner)
    assert band.make()._bootstrap_count == 0  # Optuna's default: the first trial trains on
    boot = pruner(config.with_overrides(cfg, pruner_bootstrap=2))
    assert boot.make()._bootstrap_count == 2
    for study in ({"pruner": "none"}, {"mode": "pareto"}, {"checkpoints": False}):
        assert isinstance(pruner(config.with_overrides(cfg, **study)), optuna.pruners.NopPruner)
    with pytest.raises(config.ConfigError, match="study.pruner_bootstrap must be >= 0"):
        config.with_overrides(cfg, pruner_bootstrap=-1)
    with pytest.raises(config.ConfigError, match="study.pruner must be one of .*'asha'"):
        config.with_overrides(cfg, pruner="asha")
    with pytest.raises(config.ConfigError, match="study.patience must be >= 1 checkpoint, got 0"):
        config.with_overrides(cfg, patience=0)


def test_under_a_pruner_the_epochs_are_its_resource_not_drawn(tmp_path):
    # drawn, trials that draw few epochs complete before the first rung and TPE learns to
    # draw few (issue 46's benchmark); as the resource, every trial may train the range's top
    cfg = config.load(write_config(tmp_path, synthesizers=("tvae",)))
    top = narrow("tvae", cfg.spaces.get("tvae"))["epochs"].high  # 2 in the tests' config

    def drawn(cfg: config.Config) -> set[int]:
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
        return {ask_params(study.ask(), cfg)[1]["epochs"] for _ in range(8)}

    assert drawn(cfg) == {top}
    for other in ({"epochs_drawn": True}, {"pruner": "none"}, {"checkpoints": False}):
        assert len(drawn(config.with_overrides(cfg, **other))) > 1, other


@pytest.mark.slow
def test_a_study_of_checkpointed_trials_releases_the_checkpoint_it_scored(tmp_path):
    path = write_config(tmp_path, synthesizers=("tvae",), n_trials=6, public_seed=True,
                        extra=NO_AUDIT)
    tvae = "[space.tvae]\nepochs = [1, 2]"  # the tiny space, widened to have rungs
    path.write_text(path.read_text().replace(tvae, "[space.tvae]\nepochs = [3, 12]"))
    cfg = config.with_overrides(config.load(path), first_checkpoint=1, pruner="halving")
    ctx = prepare(cfg)
    study = run_study(ctx, progress=False)
    trials = study.get_trials(deepcopy=False)
    assert len(trials) == 6
    done = [t for t in trials if t.state == TrialState.COMPLETE]
    for t in done:
        epochs = t.params["tvae.epochs"]
        steps = sorted(t.intermediate_values)
        assert steps[-1] <= epochs and steps[0] == 1
        assert t.user_attrs[attrs.EPOCHS] in steps
        assert [p["epochs"] for p in t.user_attrs[attrs.CURVE]] == steps
    pruned = [t for t in trials if t.state == TrialState.PRUNED]
    assert pruned, "successive halving at reduction 3 pruned none of 6 trials"
    client = MlflowClient(tracking_uri=f"sqlite:///{cfg.study.output / 'mlflow.db'}")
    exp = client.get_experiment_by_name(cfg.study.name)
    runs = {r.data.tags.get("optuna_trial"): r for r in
            client.search_runs([exp.experiment_id], max_results=100)}
    assert runs[str(pruned[0].number)].data.tags["state"] == "PRUNED"
    # the trials table shows a pruned trial's best feasible checkpoint, not Optuna's last
    # reported value (0, the worst, where none was feasible): blank then
    table = trials_frame(study).set_index("number")
    for t in pruned:  # a feasible checkpoint kept is a candidate (no budget: all auditable)
        points = [p for p in t.user_attrs[attrs.CURVE] if p["feasible"]]
        assert has_candidate(t) == bool(points), t.number
        if points:
            best = min(points, key=lambda p: p["loss"])
            assert t.user_attrs[attrs.EPOCHS] == best["epochs"]
            assert loss_of(t) == best["loss"] and is_feasible(t)
        feasible = [p["loss"] for p in t.user_attrs[attrs.CURVE] if p["feasible"]]
        shown = table.loc[t.number, "loss"]
        assert (shown == min(feasible)) if feasible else math.isnan(shown), (t.number, shown)
    export(ctx, study)
    manifest = json.loads((cfg.study.output / "release" / "manifest.json").read_text())
    released = study.trials[manifest["trial"]]
    # the release was re-created by a plain fit of the checkpoint's epochs, and its data
    # fingerprint matched the trial's (export refuses otherwise)
    assert manifest["params"]["epochs"] == released.user_attrs[attrs.EPOCHS]
    history = client.get_metric_history(released.user_attrs[attrs.MLFLOW_RUN_ID],
                                        "checkpoint.loss")
    assert sorted(m.step for m in history) == sorted(released.intermediate_values)
    # the report shows every checkpointed trial's curve, pruned ones included (issue 46)
    folder = cfg.study.output / "release"
    assert (folder / "learning_curves.png").stat().st_size > 10_000
    assert manifest["report"]["figures"][
        "Learning curves of the neural trials: the loss at each checkpoint"] == \
        "learning_curves.png"
    assert "learning_curves.png" in (folder / "report.md").read_text()


def test_the_learning_curves_hold_every_checkpointed_trial_and_mark_the_release(tmp_path):
    from tuner.release import _plots as plots

    study = optuna.create_study()
    for number, (state, points) in enumerate([
            (TrialState.COMPLETE, [(5, -0.5, True), (15, -0.7, True), (45, -0.6, False)]),
            (TrialState.PRUNED, [(5, -0.3, False)]),
            (TrialState.COMPLETE, [])]):  # no checkpoints (a CART trial): not drawn
        attrs_ = {attrs.CURVE: [{"epochs": e, "loss": lo, "feasible": f, "utility": -lo,
                                 "m": 0.1, "fit_seconds": 1.0} for e, lo, f in points]}
        if number == 0:
            attrs_[attrs.EPOCHS] = 15
        study.add_trial(optuna.trial.create_trial(
            state=state, value=-0.7 if state == TrialState.COMPLETE else None,
            params={"synthesizer": "tvae"},
            distributions={"synthesizer": optuna.distributions.CategoricalDistribution(
                ["tvae"])}, user_attrs=attrs_))
    curves = plots.curves_of(study.get_trials(deepcopy=False), released=0)
    assert [(c["number"], c["state"], c["released"], c["epochs"]) for c in curves] == [
        (0, "COMPLETE", True, 15), (1, "PRUNED", False, None)]
    fig = plots.learning_curves(curves)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "released: trial 0 at 15 epochs" in labels and "pruned or stopped" in labels
    plots.save_figure(fig, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 10_000
