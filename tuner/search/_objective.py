"""The Optuna objective: ask a synthesiser and its parameters, evaluate, record, log.

Parameters are named ``synthesizer`` and ``NAME.PARAM`` (the space of family NAME, narrowed by
the config). Each trial is mirrored as an MLflow child run of the invocation's run; a trial
that raises is recorded with its reason (``fail_reason``) and its run marked FAILED. Only the
trial's own failure (:class:`tuner.errors.TrialFailed`) lets the study go on; a fault of the
machine (a full disk) and any other exception (a bug: its traceback is on the run too) stop it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import sys
import traceback
from collections.abc import Callable
from typing import Any

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import Trial
from tqdm import tqdm

from tuner import measures, scoring
from tuner._common import attrs
from tuner._common.faults import Fault, fault_of, free_reserve
from tuner._common.seeding import SeedPath
from tuner._common.stopping import Terminated
from tuner.config import Config
from tuner.errors import TrialFailed
from tuner.scoring import Evaluation
from tuner.search._budget import INTERRUPTED_PREFIX, claim_slot
from tuner.search._checkpointed import (
    Checkpoints,
    Unauditable,
    checkpointed,
    checkpoints_of,
    epochs_as_resource,
)
from tuner.search._context import Context
from tuner.search._tracking import Tracker
from tuner.search._trials import DATA_SHA256_ATTR
from tuner.synthesis import narrow

TRACEBACK_CHARS = 7000  # the end of a bug's traceback on its trial's run (MLflow: 8,000 a tag)


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
    if epochs_as_resource(cfg, str(name)):  # the pruner's resource, not drawn
        top = int(space["epochs"].high)  # type: ignore[attr-defined]
        space["epochs"] = IntDistribution(top, top)
    params = {p: suggest(trial, f"{name}.{p}", dist) for p, dist in space.items()}
    return str(name), params


def trial_params(trial: optuna.trial.FrozenTrial) -> tuple[str, dict[str, Any]]:
    """The synthesiser and the parameters of the data a finished trial scored: a neural
    trial's ``epochs`` are those of its scored checkpoint (:mod:`tuner.search._checkpointed`),
    which a plain fit re-creates."""
    name = str(trial.params["synthesizer"])
    params = {k.split(".", 1)[1]: v for k, v in trial.params.items()
              if k.startswith(f"{name}.")}
    if attrs.EPOCHS in trial.user_attrs:
        params["epochs"] = int(trial.user_attrs[attrs.EPOCHS])
    return name, params


def _cut_short(trial: Trial, why: str) -> None:
    """Record ``trial`` as cut short (a fault, Ctrl-C): it does not use the budget, so the
    next run completes ``n_trials`` (as for a killed process, :mod:`tuner.search._budget`)."""
    trial.study.set_user_attr(f"{INTERRUPTED_PREFIX}{trial.number}", why)


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


class TrackedObjective:
    """Optuna objective: one evaluated trial, mirrored as a nested MLflow run.

    A trial that raises is recorded (``fail_reason``, its run FAILED) and the study goes on;
    a fault of the machine (:func:`tuner._common.faults.fault_of`: a full disk, a read-only folder)
    stops it: the trial and its run are marked failed all the same (the disk reserve freed to
    make room), the objective stops the study and :meth:`raise_fault` raises it once
    ``optimize`` has returned.
    """

    def __init__(self, ctx: Context, tracker: Tracker, parent_run: str, threads: int,
                 budget: int, *, stop_at: Callable[[float], float] | None = None,
                 unauditable: Unauditable | None = None) -> None:
        self.ctx, self.tracker, self.parent, self.threads = ctx, tracker, parent_run, threads
        self.budget, self.stop_at, self.unauditable = budget, stop_at, unauditable
        self.fault: Fault | None = None

    def __call__(self, trial: Trial) -> float | tuple[float, float]:
        if not claim_slot(trial.study, trial.number, self.budget):
            trial.study.stop()
            raise optuna.TrialPruned("surplus: the budget was used up by other workers")
        run: str | None = None
        try:
            run, name, params = self._start(trial)
            return self._evaluate(trial, run, name, params)
        except optuna.TrialPruned as exc:  # Optuna records it PRUNED; its run says so too
            if run is not None:
                kept = DATA_SHA256_ATTR in trial.user_attrs  # a feasible checkpoint kept
                self.tracker.log(run, tags={"state": "PRUNED", "feasible": kept,
                                            "pruned": str(exc)})
                self.tracker.end(run, "FINISHED")
            raise
        except Exception as exc:  # noqa: BLE001 - records the trial's MLflow run as failed, re-raises
            self._failed(trial, run, exc)
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: Optuna fails the trial, and
            # its run is ended too
            why = "stopped by SIGTERM" if isinstance(exc, Terminated) else "interrupted (Ctrl-C)"
            with contextlib.suppress(Exception):
                _cut_short(trial, why)
            for opened in self._runs_of(trial, run):
                with contextlib.suppress(Exception):
                    self.tracker.end(opened, "KILLED")
            raise

    def _runs_of(self, trial: Trial, run: str | None) -> list[str]:
        """The run of ``trial``; when the interruption came while it was being opened (the id
        never reached the caller), the runs this process opened for the trial and left open."""
        if run is not None:
            return [run]
        with contextlib.suppress(Exception):
            return self.tracker.open_runs_of_trial(trial.number)
        return []

    def _start(self, trial: Trial) -> tuple[str, str, dict[str, Any]]:
        """Record who runs the trial, ask its parameters and open its MLflow run."""
        seed = self.ctx.derive(SeedPath.TRIAL, trial.number)
        trial.set_user_attr(attrs.PID, os.getpid())
        trial.set_user_attr(attrs.HOST, socket.gethostname())
        trial.set_user_attr(attrs.TRIAL_SEED, seed)
        trial.set_user_attr(attrs.THREADS, self.threads)
        name, params = ask_params(trial, self.ctx.cfg)
        run = self.tracker.start(f"trial-{trial.number:04d}-{name}", parent=self.parent,
                                 tags={"synthesizer": name, "optuna_trial": str(trial.number)})
        self.tracker.log(run, params={"synthesizer": name, "seed": seed,
                                      "threads": self.threads, **params})
        return run, name, params

    def _evaluate(self, trial: Trial, run: str, name: str,
                  params: dict[str, Any]) -> float | tuple[float, float]:
        seed = int(trial.user_attrs[attrs.TRIAL_SEED])  # derived once, in _start
        cfg = self.ctx.cfg
        if checkpointed(cfg, name):
            too_long = (None if self.unauditable is None else functools.partial(
                self.unauditable, name, threads=self.threads))
            policy = Checkpoints(trial, cfg, self.tracker, run, stop_at=self.stop_at,
                                 unauditable=too_long)
            try:
                scoring.evaluate_checkpoints(cfg, self.ctx.split, name, params, seed=seed,
                                             at=checkpoints_of(cfg, params), each=policy,
                                             threads=self.threads, due=policy.time_is_up)
            except optuna.TrialPruned:
                # pruned, its best feasible checkpoint stays a candidate (has_candidate):
                # Optuna keeps it PRUNED, the release may still re-create it
                if policy.best is not None:
                    self._record(trial, run, policy.best, stopped=policy.stopped)
                raise
            ev = policy.chosen()
            self._record(trial, run, ev, stopped=policy.stopped)
        else:
            ev = scoring.evaluate(cfg, self.ctx.split, name, params, seed=seed,
                                  threads=self.threads,
                                  noise_key=self.ctx.noise_key(SeedPath.TRIAL, trial.number))
            self._record(trial, run, ev)
        self.tracker.log(run, tags={"state": "COMPLETE", "feasible": ev.feasible})
        self.tracker.end(run, "FINISHED")
        if self.ctx.cfg.study.mode == "pareto":  # maximise U, minimise M (tuner.search._pareto)
            return ev.utility, ev.membership.m
        return ev.loss.loss

    def _record(self, trial: Trial, run: str, ev: Evaluation, *, stopped: str | None = None
                ) -> None:
        """What the release reads of the trial's candidate ``ev`` (its constraints, metrics,
        limits, data fingerprint; a checkpoint's epochs and why training stopped), on the trial
        and its MLflow run."""
        cfg = self.ctx.cfg
        if stopped is not None:
            trial.set_user_attr(attrs.EPOCHS, int(ev.params["epochs"]))
            trial.set_user_attr(attrs.STOPPED, stopped)
        for key, value in ev.constraints.items():
            trial.set_constraint(key, value)
        metrics = ev.metrics()
        trial.set_user_attr(attrs.METRICS, metrics)
        trial.set_user_attr(attrs.LIMITS, measures.limits_of(ev.constraints, cfg.risk))
        trial.set_user_attr(DATA_SHA256_ATTR, ev.data_sha256())  # what the release re-creates
        trial.set_user_attr(attrs.MLFLOW_RUN_ID, run)
        if ev.membership.warning:
            trial.set_user_attr(attrs.M_WARNING, ev.membership.warning)
        # the adversary's F1 by Hamming threshold as a stepped metric, not a rendered figure
        # (0.26 s of a trial's 0.46 s of bookkeeping; the release draws it)
        self.tracker.log(run, metrics=metrics, series={"f1_by_h": ev.membership.f1_by_threshold})
        self.tracker.log_dict(run, "risk_results.json", ev.risk_results())

    def _failed(self, trial: Trial, run: str | None, exc: Exception) -> None:
        """Record why ``trial`` failed and end its run FAILED; on a fault, stop the study.

        A :class:`tuner.errors.TrialFailed` (the trial's own failure, which the study absorbs)
        is said in one line; anything else (a bug) stops the study: said in one line too, the
        error is raised (the command prints its traceback) and the run gets the traceback (tag
        ``fail_traceback``)."""
        fault = fault_of(exc)
        reason = _reason(exc)
        tags: dict[str, Any] = {}
        if isinstance(exc, TrialFailed):
            name = trial.params.get("synthesizer", "?")
            tqdm.write(f"trial {trial.number} ({name}) failed: {exc}", file=sys.stderr)
        elif fault is None:
            text = "".join(traceback.format_exception(exc))
            tags["fail_traceback"] = text[-TRACEBACK_CHARS:]
            name = trial.params.get("synthesizer", "?")
            tqdm.write(f"trial {trial.number} ({name}, parameters {trial.params}) raised "
                       f"{type(exc).__name__}, a bug, not a refusal: the study stops (the "
                       "traceback is on the trial's MLflow run too, tag fail_traceback)",
                       file=sys.stderr)
        if fault is not None:
            free_reserve(self.ctx.output)
            self.fault = Fault(f"{fault}; trial {trial.number} was stopped and marked failed")
            trial.study.stop()
            reason = f"stopped by a fault of the machine ({fault}): {reason}"[:2000]
            with contextlib.suppress(Exception):  # cut short: it does not use the budget
                _cut_short(trial, reason)
        with contextlib.suppress(Exception):  # on a fault this may fail too: Optuna still tells
            trial.set_user_attr(attrs.FAIL_REASON, reason)
        for opened in self._runs_of(trial, run):
            with contextlib.suppress(Exception):
                self.tracker.log(opened, tags={"state": "FAIL", "feasible": False,
                                               "fail_reason": reason, **tags})
            with contextlib.suppress(Exception):
                self.tracker.end(opened, "FAILED")

    def raise_fault(self) -> None:
        """Raise the fault that stopped the study, if one did."""
        if self.fault is not None:
            raise self.fault
