"""The Optuna objective: ask a synthesiser and its parameters, evaluate, record, log.

Parameters are named ``synthesizer`` and ``NAME.PARAM`` (the space of family NAME, narrowed by
the config). Each trial is mirrored as an MLflow child run of the invocation's run; a trial
that raises is recorded with its reason (``fail_reason``) and its run marked FAILED.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import Trial

from tuner import evaluation, plots
from tuner.budget import claim_slot
from tuner.config import Config
from tuner.context import Context
from tuner.seeding import derive
from tuner.spaces import narrow
from tuner.tracking import Tracker


def suggest(trial: Trial, name: str, dist: BaseDistribution) -> Any:
    """Ask ``trial`` for a value of ``dist`` through Optuna's public suggest API."""
    if isinstance(dist, CategoricalDistribution):
        return trial.suggest_categorical(name, dist.choices)
    if isinstance(dist, IntDistribution):
        return trial.suggest_int(name, dist.low, dist.high, log=dist.log, step=dist.step)
    if isinstance(dist, FloatDistribution):
        return trial.suggest_float(name, dist.low, dist.high, log=dist.log, step=dist.step)
    raise TypeError(f"unsupported distribution {dist!r}")


def ask_params(trial: Trial, cfg: Config) -> tuple[str, dict[str, Any]]:
    """The synthesiser and its parameters for this trial (names are ``synth.param``)."""
    name = trial.suggest_categorical("synthesizer", cfg.study.synthesizers)
    space = narrow(str(name), cfg.spaces.get(str(name)))
    params = {p: suggest(trial, f"{name}.{p}", dist) for p, dist in space.items()}
    return str(name), params


def trial_params(trial: optuna.trial.FrozenTrial) -> tuple[str, dict[str, Any]]:
    """The synthesiser and its parameters, read back from a finished trial."""
    name = str(trial.params["synthesizer"])
    return name, {k.split(".", 1)[1]: v for k, v in trial.params.items()
                  if k.startswith(f"{name}.")}


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


class TrackedObjective:
    """Optuna objective: one evaluated trial, mirrored as a nested MLflow run."""

    def __init__(self, ctx: Context, tracker: Tracker, parent_run: str, threads: int,
                 budget: int) -> None:
        self.ctx, self.tracker, self.parent, self.threads = ctx, tracker, parent_run, threads
        self.budget = budget

    def __call__(self, trial: Trial) -> float:
        cfg = self.ctx.cfg
        if not claim_slot(trial.study, trial.number, self.budget):
            trial.study.stop()
            raise optuna.TrialPruned("surplus: the budget was used up by other workers")
        seed = derive(cfg.study.seed, 2, trial.number)
        trial.set_user_attr("pid", os.getpid())
        trial.set_user_attr("host", socket.gethostname())
        trial.set_user_attr("seed", seed)
        trial.set_user_attr("threads", self.threads)
        try:
            name, params = ask_params(trial, cfg)
        except Exception as exc:
            trial.set_user_attr("fail_reason", _reason(exc))
            raise
        run = self.tracker.start(f"trial-{trial.number:04d}-{name}", parent=self.parent,
                                 tags={"synthesizer": name, "optuna_trial": str(trial.number)})
        self.tracker.log(run, params={"synthesizer": name, "seed": seed,
                                      "threads": self.threads, **params})
        try:
            ev = evaluation.evaluate(cfg, self.ctx.split, name, params, seed=seed,
                                     threads=self.threads)
        except Exception as exc:
            reason = _reason(exc)
            trial.set_user_attr("fail_reason", reason)
            self.tracker.log(run, tags={"state": "FAIL", "feasible": False,
                                        "fail_reason": reason})
            self.tracker.end(run, "FAILED")
            raise
        for key, value in ev.constraints.items():
            trial.set_constraint(key, value)
        metrics = ev.metrics()
        trial.set_user_attr("metrics", metrics)
        trial.set_user_attr("mlflow_run_id", run)
        if ev.membership.warning:
            trial.set_user_attr("m_warning", ev.membership.warning)
        self.tracker.log(run, metrics=metrics, tags={"state": "COMPLETE", "feasible": ev.feasible})
        self.tracker.log_dict(run, "risk_results.json", ev.risk_results())
        m = ev.membership
        self.tracker.log_figure(run, "f1_curve.png", plots.f1_curve(
            m.f1_by_threshold, m.f_naive, m.hamming_threshold))
        self.tracker.end(run, "FINISHED")
        return ev.loss.loss
