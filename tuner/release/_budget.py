"""One time budget for the whole job (``[study] budget_minutes``): the trials and the release
audit.

The audit is most of a job's cost (hundreds of refits of the candidate), so the search keeps
its time back: after every trial the audit of the two best feasible candidates (the best, and
the next one a refusal would audit) is estimated from their own fit times, scaled to the
shadow tables' size (:func:`tuner.release._audit_plan.estimate`, the formula the audit's own plan
uses, each audit held to ``audit.max_minutes`` and a quarter of the budget: per target where
that fits, else shared), and no trial starts once the job's time left is less than that reserve
plus the longest trial so far; a neural trial past that point stops at its next checkpoint and
keeps its best one. At release each audit runs under that same limit or the time left,
whichever is less: a third candidate (two refused) may take the job past its budget by at most
that limit.
Before the first trial one fit of every searched family at its quickest settings is timed: when
even the cheapest audit of those would not fit in the budget, the job is refused at once
(exit 2), naming ``budget_minutes`` and the time. Only the invocation's own process keeps the
reserve; its ``workers - 1`` helper processes stop starting trials at the budget's end
(``[study] timeout``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import FrozenTrial

from tuner._common import attrs
from tuner._common.seeding import SeedPath
from tuner.config import ConfigError
from tuner.release._audit_plan import _family, _minutes, _size, estimate, plan
from tuner.search import Context, best_feasible, loss_of, releasable
from tuner.synthesis import narrow


def quickest(ctx: Context, name: str) -> dict[str, Any]:
    """``name``'s quickest settings within the config's space: the low end of every range
    (epochs, leaf sizes, epsilon), the first of every choice (the smallest networks), the
    largest batches (fewest steps an epoch)."""
    out: dict[str, Any] = {}
    for param, dist in narrow(name, ctx.cfg.spaces.get(name)).items():
        if isinstance(dist, CategoricalDistribution):
            choices = dist.choices
            out[param] = (max(int(c) for c in choices if c is not None) if param == "batch_size"
                          else choices[0])
        elif isinstance(dist, IntDistribution | FloatDistribution):
            out[param] = dist.low
    return out


def _designs(ctx: Context) -> tuple[str, ...]:
    a = ctx.cfg.audit
    return ("per_target", "shared") if a.design == "auto" else (a.design,)


def check_fits(ctx: Context) -> None:
    """Refuse a budget that cannot hold one audit (see the module docstring); says what the
    probe found either way."""
    budget = ctx.cfg.study.budget_minutes
    if budget is None or not ctx.cfg.audit.enabled or ctx.cfg.study.synthesize:
        return
    start = time.perf_counter()
    cheapest = math.inf
    which = ""
    for name in ctx.cfg.study.synthesizers:
        chosen = plan(ctx, _family(ctx, name, quickest(ctx, name)), _size(ctx),
                      ctx.derive(SeedPath.AUDIT, 0))
        seconds = min(chosen.estimates[d] for d in _designs(ctx))
        if seconds < cheapest:
            cheapest, which = seconds, f"{name} (one fit {chosen.pilot_seconds:.2f} s)"
    print(f"budget: {budget:g} min for trials and audit; the cheapest audit would take about "
          f"{_minutes(cheapest)}, by {which} at its quickest settings (probed in "
          f"{time.perf_counter() - start:.0f} s)", flush=True)
    if cheapest > budget * 60.0:
        raise ConfigError(
            f"study.budget_minutes = {budget:g} cannot hold one release audit: the cheapest "
            f"would take about {_minutes(cheapest)} ({which}, {ctx.cfg.audit.shadows} shadow "
            f"fits of {_size(ctx):,} records at its quickest settings); raise budget_minutes, "
            "or use fewer audit.shadows, a smaller audit.shadow_size or more cores "
            "(audit.jobs)")


def audit_seconds(ctx: Context, trial: FrozenTrial, *, limit: float) -> float:
    """The audit of ``trial`` estimated from its own fit on the training records, scaled to a
    shadow table, in the design the audit would choose within ``limit`` seconds (with
    ``audit.design = "auto"``: per target where that fits, else shared); infinite where none
    fits (the release passes it over)."""
    fit = float(trial.user_attrs.get(attrs.METRICS, {}).get("fit_seconds", 0.0))
    pilot = fit * _size(ctx) / max(1, len(ctx.split.train))
    estimates = estimate(ctx, pilot)
    fitting = [estimates[d] for d in _designs(ctx) if estimates[d] <= limit]
    return fitting[0] if fitting else math.inf


@dataclasses.dataclass
class JobBudget:
    """The job's clock: started when the job was, ``seconds`` long."""

    ctx: Context
    seconds: float
    started: float = dataclasses.field(default_factory=time.monotonic)
    search_until: float = math.inf  # monotonic time after which no trial starts or goes on
    longest_trial: float = 0.0
    said: bool = False

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def reserve(self, study: optuna.Study) -> float:
        """Seconds kept back for the audits of the best two feasible candidates whose audit
        fits in :meth:`per_audit` (those the release would audit: the best, and the next
        one a refusal of the best would audit); none without an audit."""
        if not self.ctx.cfg.audit.enabled or self.ctx.cfg.study.synthesize:
            return 0.0
        # not a trial refused at release in an earlier invocation: it will not be audited again
        feasible = sorted(releasable(study), key=loss_of)
        best = best_feasible(study)  # Pareto mode: the front point the release would take
        ranked = ([best] if best else []) + [t for t in feasible if best is None
                                             or t.number != best.number]
        costs = (audit_seconds(self.ctx, t, limit=self.per_audit()) for t in ranked)
        return sum([c for c in costs if math.isfinite(c)][:2])

    def per_audit(self) -> float:
        """Seconds one audit may take: audit.max_minutes, at most a quarter of the budget (the
        per-target design where it fits in that, else the shared one), so that the best
        candidate's audit and a refusal's fit in what the search keeps back."""
        return min(self.ctx.cfg.audit.max_minutes * 60.0, self.seconds / 4)

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Optuna callback after each trial: stop the search when the audit needs the rest."""
        if trial.datetime_start and trial.datetime_complete:
            took = (trial.datetime_complete - trial.datetime_start).total_seconds()
            self.longest_trial = max(self.longest_trial, took)
        keep = self.reserve(study)
        self.search_until = self.started + self.seconds - keep - self.longest_trial
        if time.monotonic() >= self.search_until:
            if not self.said:
                print(f"budget: {max(0.0, self.left()) / 60:.1f} min left, about "
                      f"{_minutes(keep)} kept for the release audit of the best candidates: "
                      "no more trials", flush=True)
                self.said = True
            study.stop()

    def audit_minutes(self) -> float:
        """What each audit may take at release: :meth:`per_audit`, or the time left."""
        return max(0.0, min(self.per_audit(), self.left()) / 60.0)
