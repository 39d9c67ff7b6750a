"""Running a study: K worker processes on one storage, a parent MLflow run, progress.

Storage defaults to ``sqlite:///OUT/study.db``; running the same command again resumes the study.
Several processes may work on one study (``workers = K``, or K invocations on one host or on K
hosts sharing a PostgreSQL storage and an MLflow server); the budget rules are in
:mod:`tuner.search._budget`, the stores in :mod:`tuner.search._storage`, one trial in
:mod:`tuner.search._objective`.

A worker returns only when every trial of the budget has finished (or ``study.timeout`` has
passed): while other workers' trials run it waits, failing dead workers' trials when Optuna's
heartbeat says so (and their MLflow runs with them), and runs the trials they leave undone.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import socket
import time
from collections.abc import Callable
from typing import Any, Protocol

import joblib
import optuna
from optuna.trial import FrozenTrial

from tuner._common import stopping
from tuner._common.faults import Fault
from tuner._common.quiet import quiet_libraries
from tuner.config import UNBOUNDED, Config
from tuner.errors import TrialFailed
from tuner.search import _plots as plots
from tuner.search._budget import (
    Budget,
    budget_used,
    fail_dead_local_trials,
    fail_stale,
    interrupted_owners,
)
from tuner.search._context import Context, prepare
from tuner.search._objective import TrackedObjective
from tuner.search._storage import heartbeat_seconds, open_stores
from tuner.search._tracking import Tracker
from tuner.search._trials import best_feasible, is_pareto, loss_of, pareto_choice, trials_frame


class JobClock(Protocol):
    """The job's time budget as one worker process keeps to it
    (:class:`tuner.release.JobBudget`): called after each of the process's trials (it stops the
    search when the release audit needs the rest), ``search_until`` the monotonic time after
    which no trial starts, ``stop_for(ran)`` the one after which a neural trial that has run
    ``ran`` seconds stops after the epoch under way, ``unauditable`` why a neural fit is too
    long for its audit to fit in what each audit may take ("" where it is not)."""

    search_until: float

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None: ...

    def stop_for(self, ran: float) -> float: ...

    def unauditable(self, name: str, seconds: float, *, threads: int) -> str: ...


def threads_per_worker(workers: int) -> int:
    """torch threads of each worker: the cores this process may use shared out (recorded with
    every trial). joblib counts them: CPU affinity and a container's CPU quota, where
    ``os.cpu_count()`` counts the host's (64 torch threads on a container's 2 cores)."""
    return max(1, joblib.cpu_count() // workers)


def _reap(study: optuna.Study, tracker: Tracker) -> None:
    """Fail dead workers' trials (any host, by heartbeat) and then their MLflow runs."""
    fail_stale(study)
    me = (socket.gethostname(), str(os.getpid()))
    tracker.fail_runs_of(interrupted_owners(study) - {me},
                         "its worker stopped sending heartbeats (died?); marked FAILED")


def _optimize(ctx: Context, parent_run: str, budget: int, *,
              callbacks: list[Any] | None = None, clock: JobClock | None = None) -> None:
    tracker, study = open_stores(ctx, optimizing=True)
    objective = TrackedObjective(
        ctx, tracker, parent_run, threads_per_worker(ctx.cfg.study.workers), budget,
        stop_at=None if clock is None else clock.stop_for,
        unauditable=None if clock is None else clock.unauditable)
    callbacks = [*(callbacks or []), *([] if clock is None else [clock])]
    timeout = ctx.cfg.study.timeout
    deadline = None if timeout is None else time.monotonic() + timeout
    waits = ctx.storage_url.startswith(("sqlite", "postgres", "mysql"))  # heartbeat
    beat, grace = heartbeat_seconds()
    waiting_since = None
    while budget_used(study) < budget:
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            break
        if clock is not None and now >= clock.search_until:  # the job's budget keeps the rest
            break
        free = budget - budget_used(study, in_flight=True)
        if free > 0:
            waiting_since = None
            study.optimize(objective, n_trials=free,
                           timeout=None if deadline is None else deadline - now,
                           # a trial's own failure (its synthesiser, its data) is recorded
                           # and the study goes on; anything else (a bug) stops it
                           catch=(TrialFailed,),
                           callbacks=[Budget(budget), *callbacks],
                           # a trial leaves 0.03-0.07 MB of cyclic garbage for every family,
                           # and a forced full collection costs ~0.2 s (bench_trial's gc row):
                           # Python's own generational collector frees it soon enough
                           gc_after_trial=False)
            objective.raise_fault()  # a full disk: the trial was failed, the study stops
            continue
        if not waits:  # a journal file has no heartbeat: nothing would fail a dead trial
            break
        # the budget is taken, but other workers' trials still run: wait for them (polling
        # every second), and every heartbeat interval fail those whose worker died
        if waiting_since is None:
            waiting_since = last_reap = now
        elif now - last_reap >= beat:
            if now - waiting_since < beat * 1.5:
                print(f"waiting for trials of other workers (one whose worker died is failed "
                      f"after {grace} s without heartbeat, and run again)", flush=True)
            _reap(study, tracker)
            last_reap = now
        time.sleep(1.0)
    _reap(study, tracker)


def _worker_main(cfg: Config, parent_run: str, budget: int,
                 clock: Callable[[Context], JobClock] | None = None) -> None:
    """A helper worker: ``clock`` makes, from its own context, the job's time budget it keeps
    to as the invocation's process does (the same start, hence the same end)."""
    quiet_libraries()
    stopping.install()  # ended by the invocation (or a scheduler): its trial cut short cleanly
    try:
        ctx = prepare(cfg)
        _optimize(ctx, parent_run, budget, clock=None if clock is None else clock(ctx))
    except Fault as exc:  # one line, as the invocation's own process says it
        raise SystemExit(f"error in worker {os.getpid()}: {exc}") from None


def run_study(ctx: Context, *, progress: bool = True, clock: JobClock | None = None,
              helpers_clock: Callable[[Context], JobClock] | None = None) -> optuna.Study:
    """Run (or resume) the study to its budget with ``workers`` processes; log the parent run.
    ``clock``: the job's time budget (:mod:`tuner.release._budget`) as this process keeps to
    it; ``helpers_clock``: what makes it in each helper process from the helper's own context
    (picklable: the helpers are spawned)."""
    cfg = ctx.cfg
    tracker, study = open_stores(ctx)  # creates both databases before any worker starts
    fixed = fail_dead_local_trials(study) + tracker.fail_orphans()
    _reap(study, tracker)
    if fixed:
        print(f"marked {fixed} trial(s)/run(s) left running by a dead process as FAILED")
    parent = tracker.start(f"study-{time.strftime('%Y%m%d-%H%M%S')}",
                           tags={"role": "invocation"})
    tracker.log(parent, params={
        "synthesizers": ",".join(cfg.study.synthesizers), "n_trials": cfg.study.trial_budget,
        "seed": cfg.study.seed, "population_size": cfg.data.population_size,
        "train_fraction": cfg.data.train_fraction, "workers": cfg.study.workers,
        "utility_metric": cfg.utility.metric, "m_threshold": cfg.risk.m_threshold,
        "data_fingerprint": ctx.fingerprint[:16],
    })
    done = budget_used(study)
    status = "FINISHED"
    procs: list[Any] = []
    try:
        trials = cfg.study.trial_budget
        if done < trials:
            # no more processes than trials left: each starts one before it checks the budget
            workers = min(cfg.study.workers, trials - done)
            procs = [mp.get_context("spawn").Process(
                target=_worker_main, args=(cfg, parent, trials, helpers_clock), daemon=False)
                for w in range(1, workers)]
            for p in procs:
                p.start()
            bar = _Progress(None if trials == UNBOUNDED else trials, done, progress)
            _optimize(ctx, parent, trials, callbacks=[bar], clock=clock)
            for p in procs:
                p.join()
            bar.close()
    except BaseException as exc:  # noqa: BLE001 - only records the parent run's status; re-raised
        status = "KILLED" if isinstance(exc, KeyboardInterrupt) else "FAILED"
        if _end_workers(procs):  # killed ones left their trials RUNNING: failed now
            fail_dead_local_trials(study)
        raise
    finally:
        try:
            _finish_parent(tracker, parent, study, cfg, status)
        except Exception:  # noqa: BLE001 - a finished study re-raises; a stopped one keeps its own error
            if status == "FINISHED":
                raise
            with contextlib.suppress(Exception):  # the error that stopped the study is said
                tracker.end(parent, status)
    return study


def _end_workers(procs: list[Any], *, wait: float = 3.0) -> int:
    """End the worker processes still running (SIGTERM: each cuts its trial short as the
    invocation does), killed if they have not gone within ``wait`` seconds; return how many
    were killed. Ctrl-C on a terminal reaches them itself; a SIGTERM to the invocation
    (``kill``, a scheduler) does not, and they would run on as orphans."""
    alive = [p for p in procs if p.is_alive()]
    for p in alive:
        with contextlib.suppress(OSError):
            p.terminate()
    deadline = time.monotonic() + wait
    killed = 0
    for p in alive:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join()
            killed += 1
    return killed


def _finish_parent(tracker: Tracker, parent: str, study: optuna.Study, cfg: Config,
                   status: str) -> None:
    frame = trials_frame(study)
    complete = frame[frame["state"] == "COMPLETE"] if len(frame) else frame
    choice = pareto_choice(study) if is_pareto(study) else None
    front = tuple(t.number for t in choice[1]) if choice else ()
    best = best_feasible(study)
    if len(complete) and status != "KILLED":  # a stopped job stops: no figures drawn then
        tracker.log_figure(parent, "risk_utility.png", plots.risk_utility(
            complete, threshold=cfg.risk.m_threshold, front=front,
            released=best.number if best and is_pareto(study) else None))
        tracker.log_figure(parent, "optimization_history.png", plots.history(complete))
        tracker.log_table(parent, "trials.json", frame)
    tracker.log(parent, metrics={
        "trials_finished": len(frame), "trials_complete": len(complete),
        "trials_feasible": int(complete["feasible"].sum()) if len(complete) else 0,
        **({"best_feasible_loss": loss_of(best)} if best else {}),
        **({"pareto_front_size": len(front)} if is_pareto(study) else {}),
    })
    tracker.end(parent, status)


class _Progress:
    """tqdm bar of finished trials (all workers), best feasible loss and elapsed time (a count
    without a total where the job's time budget, not a trial count, ends the search)."""

    def __init__(self, total: int | None, done: int, enabled: bool) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, initial=done, desc="trials", unit="trial",
                        disable=not enabled, dynamic_ncols=True)

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        used = budget_used(study)
        self.bar.n = used if self.bar.total is None else min(self.bar.total, used)
        best = best_feasible(study)
        if best is None:
            self.bar.set_postfix_str("no feasible trial yet")
        elif is_pareto(study):  # the front point the pick rule would release now
            utility, m_value = best.values
            self.bar.set_postfix_str(f"pick: trial {best.number}, U {utility:.4f}, "
                                     f"M {m_value:.3f}")
        else:
            self.bar.set_postfix_str(f"best feasible loss {loss_of(best):.4f}")
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
