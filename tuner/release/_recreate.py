"""The best feasible trial's data made again for its release, and checked (design §9).

Nothing was pickled: the data are drawn again from the trial's synthesiser, parameters, seed and
thread count, and scored again, every synthetic record where the trial scored a sample (DCR,
``MeasureSpec.sampled``). Then, in this order:

1. the data must be the trial's: the fingerprint it recorded (``data_sha256``; trials run before
   it was recorded: its U and M), else the export stops (:class:`NoFeasibleTrial`, "does not
   reproduce here"), feasible or not;
2. a constraint failed under the limit the trial ran with, by a measure the trial estimated on
   a sample, refuses the trial for good (:class:`ReleaseRejected`; the export goes on with the
   next best feasible trial);
3. any other failure means the ``[risk]`` limits changed since the trial ran: the export stops
   (:class:`NoFeasibleTrial`), nothing is refused.
"""

from __future__ import annotations

import math

import optuna

from tuner import measures
from tuner._common import attrs
from tuner._common.seeding import SeedPath
from tuner.errors import TunerError
from tuner.scoring import Evaluation, evaluate
from tuner.search import Context, trial_params


class NoFeasibleTrial(TunerError, RuntimeError):
    """No trial can be released; the message says why (which constraint failed how often, or
    why the best trial's re-created data cannot be)."""


class ReleaseRejected(TunerError, RuntimeError):
    """A feasible trial's very data fail, scored in full, a constraint the trial estimated on a
    sample, or its release audit: the trial is never released."""


class AuditOverBudget(ReleaseRejected):
    """A feasible trial's membership audit cannot run within ``audit.max_minutes``: it is passed
    over like a refused trial (nothing unaudited is released), until a larger
    ``max_minutes`` lets it be audited (:func:`tuner.release._export.export` revives it)."""

    def __init__(self, message: str, *, max_minutes: float) -> None:
        super().__init__(message)
        self.max_minutes = max_minutes


def recreate(ctx: Context, best: optuna.trial.FrozenTrial) -> Evaluation:
    """The trial's data made and scored again, checked as the module docstring says."""
    name, params = trial_params(best)
    ev = evaluate(ctx.cfg, ctx.split, name, params, seed=int(best.user_attrs[attrs.TRIAL_SEED]),
                  threads=int(best.user_attrs.get(attrs.THREADS, 1)), release=True,
                  noise_key=ctx.noise_key(SeedPath.TRIAL, best.number))
    same, evidence = _same_data(best, ev)
    if not same:
        raise NoFeasibleTrial(
            f"trial {best.number}'s re-created data are not the data it scored "
            f"({evidence} differ): the synthesiser does not reproduce here; nothing released")
    if ev.feasible:
        return ev
    now, limits = ev.metrics(), best.user_attrs.get(attrs.LIMITS, {})
    failed = {k: v for k, v in ev.constraints.items() if not v <= 0}  # NaN fails too
    detail = ", ".join(f"{k!r} (margin {v:+.4f}; when the trial ran: "
                       f"{best.constraints.get(k, math.nan):+.4f})" for k, v in failed.items())
    refusing = all(
        measures.sampled_constraint(k)
        and measures.margin_under(k, now, limits.get(k, math.nan)) > 0
        for k in failed)
    if not refusing:
        raise NoFeasibleTrial(
            f"trial {best.number}'s data, re-created ({evidence} equal), fail {detail} under "
            "the current [risk] limits: were they changed since the study ran? A study's "
            "trials are judged under the limits they ran with; run a new study (another "
            "study.name or --output) to apply new ones")
    raise ReleaseRejected(
        f"its data, re-created ({evidence} equal), fail {detail} with every synthetic record "
        "scored, under the limits the trial ran with (the trial scored a sample)")


def _same_data(best: optuna.trial.FrozenTrial, ev: Evaluation) -> tuple[bool, str]:
    """Whether ``ev`` scored the data ``best`` scored, and what says so: the trial's data
    fingerprint (every trial records it)."""
    return best.user_attrs.get(attrs.DATA_SHA256) == ev.data_sha256(), "data fingerprints"
