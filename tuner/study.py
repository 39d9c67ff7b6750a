"""Running a study: K worker processes on one storage, a parent MLflow run, progress.

Storage defaults to ``sqlite:///OUT/study.db``; running the same command again resumes the study.
Several processes may work on one study (``workers = K`` or K invocations); the budget rules are
in :mod:`tuner.budget`, the stores in :mod:`tuner.storage`, one trial in :mod:`tuner.objective`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from typing import Any

import optuna
from optuna.trial import FrozenTrial

from tuner import plots
from tuner.budget import Budget, budget_used, fail_dead_local_trials
from tuner.config import Config
from tuner.context import Context, prepare
from tuner.objective import TrackedObjective
from tuner.quiet import quiet_libraries
from tuner.storage import open_stores
from tuner.tracking import Tracker
from tuner.trials import best_feasible, trials_frame


def threads_per_worker(workers: int) -> int:
    """torch threads of each worker: the cores shared out (recorded with every trial)."""
    return max(1, (os.cpu_count() or 1) // workers)


def _optimize(ctx: Context, worker: int, parent_run: str, budget: int,
              callbacks: list[Any] | None = None) -> None:
    tracker, study = open_stores(ctx, worker)
    remaining = budget - budget_used(study, in_flight=True)
    if remaining <= 0:
        return
    objective = TrackedObjective(ctx, tracker, parent_run,
                                 threads_per_worker(ctx.cfg.study.workers), budget)
    study.optimize(objective, n_trials=remaining, timeout=ctx.cfg.study.timeout,
                   catch=(Exception,), callbacks=[Budget(budget), *(callbacks or [])],
                   gc_after_trial=True)


def _worker_main(cfg: Config, worker: int, parent_run: str, budget: int) -> None:
    quiet_libraries()
    _optimize(prepare(cfg), worker, parent_run, budget)


def run_study(ctx: Context, *, progress: bool = True) -> optuna.Study:
    """Run (or resume) the study to its budget with ``workers`` processes; log the parent run."""
    cfg = ctx.cfg
    tracker, study = open_stores(ctx)  # creates both databases before any worker starts
    fixed = fail_dead_local_trials(study) + tracker.fail_orphans()
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
            bar = _Progress(cfg.study.n_trials, done, progress)
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
        tracker.log_figure(parent, "risk_utility.png",
                           plots.risk_utility(complete, threshold=cfg.risk.m_threshold))
        tracker.log_figure(parent, "optimization_history.png", plots.history(complete))
        tracker.log_table(parent, "trials.json", frame)
    best = best_feasible(study)
    tracker.log(parent, metrics={
        "trials_finished": len(frame), "trials_complete": len(complete),
        "trials_feasible": int(complete["feasible"].sum()) if len(complete) else 0,
        **({"best_feasible_loss": best.value} if best and best.value is not None else {}),
    })
    tracker.end(parent, status)


class _Progress:
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
