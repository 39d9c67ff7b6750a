"""The trial budget, and trials cut short by a dead process.

The budget ``n_trials`` counts every trial that ran to an end (complete, pruned, or failed by
its synthesiser), across invocations and workers. A trial cut short by a dead process does not
use the budget, so a rerun still completes the number of trials asked for. Such a trial is
failed by Optuna's heartbeat (RDB storages: ``heartbeat_interval``, ``grace_period``), which calls
:func:`record_interrupted`, or, for a process of this host that is gone, at once by
:func:`fail_dead_local_trials`. Either way the trial's number is recorded as a study attribute
``interrupted.N`` (a finished trial's own attributes cannot be changed any more).

Optuna's ``MaxTrialsCallback(states=...)`` counts trials by state only; it cannot leave out
the interrupted ones, which are FAIL like a synthesiser's failure. :class:`Budget` is that
callback plus this one rule.

The budget is exact with any number of workers: trial numbers are handed out by the storage
one at a time, so they order all trials of all workers. A trial whose number comes after
``n_trials`` counted trials (finished or running, interrupted ones excepted) is *surplus*: it
starts no synthesiser, is recorded as ``surplus.N`` (like ``interrupted.N``, it does not count)
and stops its worker. Two workers finishing at the same instant can both start one more trial;
at most one of them gets a budget slot.

Optuna fails a stale trial only when a worker starts a new one; so a worker that finds the budget
taken while trials of other workers still run waits, calling :func:`fail_stale` every heartbeat
interval, until every counted trial has finished (a dead worker's slot then goes to a new trial).
"""

from __future__ import annotations

import os
import socket
import warnings
from pathlib import Path

import optuna
from optuna.trial import FrozenTrial, TrialState

from tuner._common import attrs

FINISHED = (TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED)
INTERRUPTED_PREFIX = attrs.INTERRUPTED_PREFIX
SURPLUS_PREFIX = attrs.SURPLUS_PREFIX


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host. A zombie is dead: a killed worker whose
    parent is gone waits to be reaped (by a container's PID 1, perhaps never) and still
    answers signal 0, which left its trial RUNNING (seen under a loaded CI run)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # Linux: the state is the field after the command's closing parenthesis
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def _numbers(study: optuna.Study, prefix: str) -> set[int]:
    return {int(k[len(prefix):]) for k in study.user_attrs if k.startswith(prefix)}


def interrupted_numbers(study: optuna.Study) -> set[int]:
    """Numbers of the trials that a dead process cut short."""
    return _numbers(study, INTERRUPTED_PREFIX)


def uncounted_numbers(study: optuna.Study) -> set[int]:
    """Trials that do not use the budget: cut short by a dead process, or surplus."""
    return _numbers(study, INTERRUPTED_PREFIX) | _numbers(study, SURPLUS_PREFIX)


def claim_slot(study: optuna.Study, number: int, budget: int) -> bool:
    """Whether trial ``number`` gets a budget slot; if not, record it as surplus."""
    skip = uncounted_numbers(study)
    earlier = sum(t.number < number and t.number not in skip
                  for t in study.get_trials(deepcopy=False, states=(*FINISHED,
                                                                    TrialState.RUNNING)))
    if earlier < budget:
        return True
    study.set_user_attr(f"{SURPLUS_PREFIX}{number}", f"budget of {budget} trials already taken")
    return False


def record_interrupted(study: optuna.Study, trial: FrozenTrial,
                       reason: str = "no heartbeat: its process died (killed?)") -> None:
    """Optuna's ``heartbeat_stale_trial_callback``: remember that ``trial`` was cut short."""
    study.set_user_attr(f"{INTERRUPTED_PREFIX}{trial.number}", reason)


def fail_dead_local_trials(study: optuna.Study) -> int:
    """Fail the RUNNING trials whose process on this host is gone (no need to wait for the
    heartbeat's grace period); return how many."""
    host = socket.gethostname()
    fixed = 0
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        pid = t.user_attrs.get(attrs.PID)
        if t.user_attrs.get(attrs.HOST) == host and pid and not pid_alive(int(pid)):
            record_interrupted(study, t, "process died (killed?) during the trial")
            study.tell(t.number, state=TrialState.FAIL, skip_if_finished=True)
            fixed += 1
    return fixed


def fail_stale(study: optuna.Study) -> None:
    """Fail the trials of dead workers now: any host's whose heartbeat is older than the grace
    period (Optuna's own check, which calls :func:`record_interrupted`), and this host's whose
    process is gone."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)
    fail_dead_local_trials(study)


def interrupted_owners(study: optuna.Study) -> set[tuple[str, str]]:
    """``(host, pid)`` of the processes whose trials were cut short (they are dead or hung)."""
    cut = interrupted_numbers(study)
    if not cut:
        return set()
    return {(str(t.user_attrs[attrs.HOST]), str(t.user_attrs[attrs.PID]))
            for t in study.get_trials(deepcopy=False, states=(TrialState.FAIL,))
            if t.number in cut and attrs.HOST in t.user_attrs and attrs.PID in t.user_attrs}


def budget_used(study: optuna.Study, *, in_flight: bool = False) -> int:
    """Trials that count against ``n_trials``: finished ones (interrupted ones excepted) and,
    with ``in_flight``, those running now in any worker."""
    states = (*FINISHED, TrialState.RUNNING) if in_flight else FINISHED
    cut = uncounted_numbers(study)
    return sum(t.number not in cut for t in study.get_trials(deepcopy=False, states=states))


class Budget:
    """Stop a worker once finished plus in-flight trials (of every worker) reach the budget.

    In-flight trials count so that K workers do not each start one more trial while the
    others' last ones are still running.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        if budget_used(study, in_flight=True) >= self.budget:
            study.stop()
