"""The Optuna study: storage, resumption, workers, progress, and a tracked trial.

Storage defaults to ``sqlite:///OUT/study.db``; running the same command again resumes the study.
The budget ``n_trials`` counts every trial that ran to an end (complete, pruned, or failed by its
synthesiser), across invocations and workers; a trial cut short by a killed process is marked
FAILED with ``interrupted = True`` at the next start and does not use the budget, so the rerun
still completes the number of trials asked for. Several processes may work on one study
(``workers = K`` or K invocations): before a worker starts a trial it counts the trials other
workers have in flight, so K workers do not overshoot the budget. Optuna's heartbeat fails the
trials of dead processes on other hosts after its grace period.
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing as mp
import os
import socket
import time
from pathlib import Path
from typing import Any

import optuna
import pandas as pd
from filelock import FileLock
from optuna.storages.journal import JournalFileBackend
from optuna.trial import FrozenTrial, TrialState

from tuner import plots
from tuner.config import Config, check_data
from tuner.data import Split, fingerprint, read_table, split
from tuner.objective import ask_params, evaluate
from tuner.seeding import derive
from tuner.tracking import Tracker, default_uri, pid_alive

FINISHED = (TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED)
INTERRUPTED = "interrupted"  # user attribute of a trial whose process died during it


@dataclasses.dataclass(frozen=True)
class Context:
    """What every worker needs, rebuilt identically in each process from the config."""

    cfg: Config
    frame: pd.DataFrame
    split: Split
    storage_url: str
    mlflow_uri: str
    fingerprint: str  # SHA-256 of the table, computed once

    @property
    def output(self) -> Path:
        return self.cfg.study.output


def prepare(cfg: Config, frame: pd.DataFrame | None = None) -> Context:
    """Read the data and make the study's one seeded split."""
    out = cfg.study.output
    out.mkdir(parents=True, exist_ok=True)
    if frame is None:
        cols = list(cfg.data.columns) if cfg.data.columns else None
        d = cfg.data
        frame = read_table(d.path, cols,
                           header_names=list(d.header_names) if d.header_names else None,
                           missing_values=list(d.missing_values))
    check_data(cfg, list(map(str, frame.columns)), len(frame))
    sp = split(frame, train_fraction=cfg.data.train_fraction, seed=derive(cfg.study.seed, 0),
               stratify=cfg.data.stratify)
    storage = cfg.study.storage or f"sqlite:///{(out / 'study.db').resolve()}"
    return Context(cfg, frame, sp, storage, cfg.study.mlflow_uri or default_uri(out),
                   fingerprint(frame))


def _storage(url: str) -> optuna.storages.BaseStorage:
    if url.startswith(("sqlite", "postgresql", "mysql")):
        return optuna.storages.RDBStorage(url, heartbeat_interval=10, grace_period=60,
                                          engine_kwargs={"connect_args": {"timeout": 60}}
                                          if url.startswith("sqlite") else {})
    return optuna.storages.JournalStorage(JournalFileBackend(url))


def _sampler(cfg: Config, worker: int) -> optuna.samplers.BaseSampler:
    # Optuna 5's TPE reads the constraints each trial sets (constraints_func is deprecated)
    return optuna.samplers.TPESampler(
        seed=derive(cfg.study.seed, 1, worker),
        n_startup_trials=min(10, cfg.study.n_trials), multivariate=True, group=True,
    )


def open_study(ctx: Context, worker: int = 0) -> optuna.Study:
    study = optuna.create_study(
        study_name=ctx.cfg.study.name, storage=_storage(ctx.storage_url),
        sampler=_sampler(ctx.cfg, worker), direction="minimize", load_if_exists=True,
    )
    fp = ctx.fingerprint
    known = study.user_attrs.get("data_fingerprint")
    if known is None:
        study.set_user_attr("data_fingerprint", fp)
        study.set_user_attr("seed", ctx.cfg.study.seed)
        study.set_user_attr("n_train", len(ctx.split.train))
    elif known != fp:
        raise RuntimeError(
            f"study {ctx.cfg.study.name!r} in {ctx.storage_url} was run on other data "
            f"(fingerprint {known[:12]}..., now {fp[:12]}...); use another study.name or output"
        )
    return study


def fail_orphan_trials(study: optuna.Study) -> int:
    """Mark RUNNING trials whose process on this host is gone as FAILED."""
    host = socket.gethostname()
    fixed = 0
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        pid = t.user_attrs.get("pid")
        if t.user_attrs.get("host") == host and pid and not pid_alive(int(pid)):
            study._storage.set_trial_user_attr(t._trial_id, "fail_reason",
                                               "process died (killed?) during the trial")
            study._storage.set_trial_user_attr(t._trial_id, INTERRUPTED, True)
            study._storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
            fixed += 1
    return fixed


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


class TrackedObjective:
    """Optuna objective: one evaluated trial, mirrored as a nested MLflow run."""

    def __init__(self, ctx: Context, tracker: Tracker, parent_run: str, threads: int) -> None:
        self.ctx, self.tracker, self.parent, self.threads = ctx, tracker, parent_run, threads

    def __call__(self, trial: optuna.Trial) -> float:
        cfg = self.ctx.cfg
        seed = derive(cfg.study.seed, 2, trial.number)
        trial.set_user_attr("pid", os.getpid())
        trial.set_user_attr("host", socket.gethostname())
        trial.set_user_attr("seed", seed)
        try:
            name, params = ask_params(trial, cfg)
        except Exception as exc:
            trial.set_user_attr("fail_reason", _reason(exc))
            raise
        run = self.tracker.start(f"trial-{trial.number:04d}-{name}", parent=self.parent,
                                 tags={"synthesizer": name, "optuna_trial": str(trial.number)})
        self.tracker.log(run, params={"synthesizer": name, "seed": seed, **params})
        try:
            ev = evaluate(cfg, self.ctx.split, name, params, seed=seed, threads=self.threads)
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
        self.tracker.log(run, metrics=metrics,
                         tags={"state": "COMPLETE", "feasible": ev.feasible})
        self.tracker.log_json(run, "risk_results.json", ev.risk_results())
        m = ev.membership
        self.tracker.log_plot(run, "f1_curve.png", lambda path: plots.f1_curve(
            m.f1_by_threshold, m.f_naive, m.hamming_threshold, path))
        self.tracker.end(run, "FINISHED")
        return ev.loss.loss


def budget_used(study: optuna.Study, *, in_flight: bool = False) -> int:
    """Trials that count against ``n_trials``: finished ones (interrupted ones excepted) and,
    with ``in_flight``, those running now in any worker."""
    states = (*FINISHED, TrialState.RUNNING) if in_flight else FINISHED
    return sum(not t.user_attrs.get(INTERRUPTED)
               for t in study.get_trials(deepcopy=False, states=states))


class _Budget:
    """Stop a worker once finished plus in-flight trials (of every worker) reach the budget.

    Optuna's ``MaxTrialsCallback`` counts finished trials only, so K workers overshoot by up
    to K - 1 trials started while the others' last ones were still running.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        if budget_used(study, in_flight=True) >= self.budget:
            study.stop()


def best_feasible(study: optuna.Study) -> FrozenTrial | None:
    feasible = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
                if t.constraints and all(v <= 0 for v in t.constraints.values())]
    return min(feasible, key=lambda t: math.inf if t.value is None else t.value) if feasible \
        else None


def _threads(workers: int) -> int:
    return max(1, (os.cpu_count() or 1) // workers)


def open_stores(ctx: Context, worker: int = 0) -> tuple[Tracker, optuna.Study]:
    """The MLflow tracker and the Optuna study, created if new, one process at a time.

    Several invocations started at once on a new output folder would otherwise race to create
    the SQLite databases (MLflow's schema migration then fails with "duplicate column"), so
    creation is serialised by a lock file in the output folder.
    """
    with FileLock(str(ctx.output / ".stores.lock"), timeout=600):
        tracker = Tracker(ctx.mlflow_uri, ctx.cfg.study.name, ctx.output)
        return tracker, open_study(ctx, worker)


def _optimize(ctx: Context, worker: int, parent_run: str, budget: int,
              callbacks: list[Any] | None = None) -> None:
    tracker, study = open_stores(ctx, worker)
    remaining = budget - budget_used(study, in_flight=True)
    if remaining <= 0:
        return
    objective = TrackedObjective(ctx, tracker, parent_run, _threads(ctx.cfg.study.workers))
    study.optimize(objective, n_trials=remaining, timeout=ctx.cfg.study.timeout,
                   catch=(Exception,), callbacks=[_Budget(budget), *(callbacks or [])],
                   gc_after_trial=True)


def _worker_main(cfg: Config, worker: int, parent_run: str, budget: int) -> None:
    from tuner.cli import quiet_libraries

    quiet_libraries()
    _optimize(prepare(cfg), worker, parent_run, budget)


def trials_frame(study: optuna.Study) -> pd.DataFrame:
    """One row per finished trial: synthesiser, U, M, constraints, loss, state."""
    rows = []
    for t in study.get_trials(deepcopy=False, states=FINISHED):
        m = t.user_attrs.get("metrics", {})
        rows.append({
            "number": t.number, "state": t.state.name,
            "synthesizer": t.params.get("synthesizer"),
            "utility": m.get("utility", math.nan), "m": m.get("m", math.nan),
            "loss": t.value if t.value is not None else math.nan,
            "feasible": bool(t.constraints) and all(v <= 0 for v in t.constraints.values()),
            **{f"c.{k}": v for k, v in t.constraints.items()},
            "seconds": (t.datetime_complete - t.datetime_start).total_seconds()
            if t.datetime_complete and t.datetime_start else math.nan,
            "fail_reason": t.user_attrs.get("fail_reason", ""),
        })
    return pd.DataFrame(rows)


def run_study(ctx: Context, *, progress: bool = True) -> optuna.Study:
    """Run (or resume) the study to its budget with ``workers`` processes; log the parent run."""
    cfg = ctx.cfg
    tracker, study = open_stores(ctx)  # creates both databases before any worker starts
    fixed = fail_orphan_trials(study) + tracker.fail_orphans()
    if fixed:
        print(f"marked {fixed} trial(s)/run(s) left running by a dead process as FAILED")
    parent = tracker.start(f"study-{time.strftime('%Y%m%d-%H%M%S')}",
                           tags={"role": "invocation"})
    tracker.log(parent, params={
        "synthesizers": ",".join(cfg.study.synthesizers), "n_trials": cfg.study.n_trials,
        "seed": cfg.study.seed, "population_size": cfg.data.population_size,
        "train_fraction": cfg.data.train_fraction, "workers": cfg.study.workers,
        "utility_metric": cfg.utility.metric, "m_threshold": cfg.risk.m_threshold,
        "data_fingerprint": ctx.fingerprint[:16],
    })
    done = budget_used(study)
    status = "FINISHED"
    try:
        if done < cfg.study.n_trials:
            # no more processes than trials left: each starts one before it checks the budget
            workers = min(cfg.study.workers, cfg.study.n_trials - done)
            procs = [mp.get_context("spawn").Process(
                target=_worker_main, args=(cfg, w, parent, cfg.study.n_trials), daemon=False)
                for w in range(1, workers)]
            for p in procs:
                p.start()
            bar = _progress(cfg.study.n_trials, done, progress)
            _optimize(ctx, 0, parent, cfg.study.n_trials, callbacks=[bar])
            for p in procs:
                p.join()
            bar.close()
    except BaseException:
        status = "KILLED"
        raise
    finally:
        _finish_parent(tracker, parent, study, cfg, status)
    return study


def _finish_parent(tracker: Tracker, parent: str, study: optuna.Study, cfg: Config,
                   status: str) -> None:
    frame = trials_frame(study)
    complete = frame[frame["state"] == "COMPLETE"] if len(frame) else frame
    if len(complete):
        tracker.log_plot(parent, "risk_utility.png", lambda path: plots.risk_utility(
            complete, path, threshold=cfg.risk.m_threshold))
        tracker.log_plot(parent, "optimization_history.png",
                         lambda path: plots.history(complete, path))
    best = best_feasible(study)
    tracker.log(parent, metrics={
        "trials_finished": len(frame), "trials_complete": len(complete),
        "trials_feasible": int(complete["feasible"].sum()) if len(complete) else 0,
        **({"best_feasible_loss": best.value} if best and best.value is not None else {}),
    })
    tracker.end(parent, status)


class _progress:
    """tqdm bar of finished trials (all workers), best feasible loss and elapsed time."""

    def __init__(self, total: int, done: int, enabled: bool) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, initial=done, desc="trials", unit="trial",
                        disable=not enabled, dynamic_ncols=True)

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self.bar.n = min(self.bar.total, budget_used(study))
        best = best_feasible(study)
        self.bar.set_postfix_str(
            f"best feasible loss {best.value:.4f}" if best and best.value is not None
            else "no feasible trial yet")
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
