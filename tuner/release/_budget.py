"""One time budget for the whole job (``[study] budget_minutes``): the trials and the release
audit.

The audit is most of a job's cost (hundreds of refits of the candidate), so the search keeps
its time back: after every trial the audit of the first two candidates the release would take
(the best, and the next one a refusal would audit: of another family where one is feasible,
:mod:`tuner.release._candidates`) is estimated from their own fit times, scaled to the
shadow tables' size (:func:`tuner.release._audit_plan.estimate`, the formula the audit's own plan
uses, each audit held to ``audit.max_minutes`` and a quarter of the budget: per target where
that fits, else shared), and no trial starts once the job's time left is less than that reserve
plus the longest a trial has run past such a point (a full-fidelity trial's whole time, a
checkpointed one's epoch and scoring): a neural trial past it stops after its epoch under way
and keeps its best one. At release each audit runs under that same limit or the time left,
whichever is less: a third candidate (two refused) may take the job past its budget by at most
that limit.
Before the first trial one fit of every searched family at its quickest settings is timed: when
even the cheapest audit of those would not fit in what each audit may take, the job is refused
at once (exit 2), naming ``budget_minutes`` and the time; those timed fits are also the floor of
the reserve's estimates, and each candidate's re-creation and full scoring at release (about
what its trial took, or for a checkpointed trial its candidate checkpoint's fit and one scoring)
is kept back beside its audit; without an audit, the best candidate's re-creation alone. Each of
the invocation's ``workers - 1`` helper processes keeps the same clock (:class:`HelperClock`:
the job's start and the timed floors, the longest overrun being the study's), so its trials
stop, and its neural ones after their epoch under way, as the invocation's do; workers started
apart (other invocations, other hosts) stop starting trials at their own budget's end.
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
from tuner.release._candidates import audit_order, next_candidate
from tuner.search import Context
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


def _audited(ctx: Context) -> bool:
    """Whether the release runs the membership audit (never under partial synthesis)."""
    return ctx.cfg.audit.enabled and not ctx.cfg.study.synthesize


def _designs(ctx: Context) -> tuple[str, ...]:
    a = ctx.cfg.audit
    return ("per_target", "shared") if a.design == "auto" else (a.design,)


def check_fits(ctx: Context, *, limit: float) -> dict[str, float]:
    """Refuse a budget that cannot hold one audit within ``limit`` seconds, what each audit is
    held to (:meth:`JobBudget.per_audit`); says what the probe found either way. Returns each
    family's timed shadow fit at its quickest settings: no fit of that family at the shadow
    tables' size is quicker, so the reserve's estimates never fall below it (a fit's fixed
    costs do not shrink with the table, as the trials' scaled fit times would have them)."""
    budget = ctx.cfg.study.budget_minutes
    if budget is None or not _audited(ctx):
        return {}
    start = time.perf_counter()
    cheapest = math.inf
    which = ""
    floor: dict[str, float] = {}
    for name in ctx.cfg.study.synthesizers:
        chosen = plan(ctx, _family(ctx, name, quickest(ctx, name)), _size(ctx),
                      ctx.derive(SeedPath.AUDIT, 0))
        floor[name] = chosen.pilot_seconds
        seconds = min(chosen.estimates[d] for d in _designs(ctx))
        if seconds < cheapest:
            cheapest, which = seconds, f"{name} (one fit {chosen.pilot_seconds:.2f} s)"
    print(f"budget: {budget:g} min for trials and audit; the cheapest audit would take about "
          f"{_minutes(cheapest)}, by {which} at its quickest settings (probed in "
          f"{time.perf_counter() - start:.0f} s); each audit may take {_minutes(limit)}",
          flush=True)
    if cheapest > limit:
        raise ConfigError(
            f"study.budget_minutes = {budget:g} cannot hold one release audit: the cheapest "
            f"would take about {_minutes(cheapest)} ({which}, {ctx.cfg.audit.shadows} shadow "
            f"fits of {_size(ctx):,} records at its quickest settings), and each audit may "
            f"take {_minutes(limit)} (a quarter of the budget, so that a refusal's audit fits "
            f"too; at most audit.max_minutes = {ctx.cfg.audit.max_minutes:g}); raise "
            "budget_minutes, or use fewer audit.shadows, a smaller audit.shadow_size or more "
            "cores (audit.jobs)")
    return floor


THREADS_EXPONENT = 0.5
"""A trial's fit on ``threads`` threads is taken to be ``threads ** 0.5`` times quicker than
the audit's one-thread shadow fits (measured in issue 46's third acceptance run: TVAE at 243
epochs, 14.6 s on 2,000 records and 2 threads in its trial, 9.96 s fit and sampled on 1,000
records and 1 thread at release: 0.68 of the trial's time where the rows alone say 0.5)."""


def shadow_fit(ctx: Context, seconds: float, *, threads: int, floor: float = 0.0) -> float:
    """One shadow fit (one thread, a shadow table's records), from a trial's fit and sampling
    of ``seconds`` on the training records with ``threads`` threads; never below ``floor``
    (its family's quickest shadow fit, timed by :func:`check_fits`)."""
    rows = _size(ctx) / max(1, len(ctx.split.train))
    return max(floor, seconds * rows * max(1, threads) ** THREADS_EXPONENT)


def _designed(ctx: Context, pilot: float, limit: float) -> float:
    """The audit in the design it would run in within ``limit`` seconds (with ``audit.design
    = "auto"``: per target where that fits, else shared); infinite where none fits."""
    estimates = estimate(ctx, pilot)
    fitting = [estimates[d] for d in _designs(ctx) if estimates[d] <= limit]
    return fitting[0] if fitting else math.inf


def audit_seconds(ctx: Context, trial: FrozenTrial, *, limit: float,
                  floor: float = 0.0) -> float:
    """The audit of ``trial`` estimated from its own fit and sampling on the training records
    (:func:`shadow_fit`), in the design the audit would choose within ``limit`` seconds;
    infinite where none fits (the release passes it over)."""
    metrics = trial.user_attrs.get(attrs.METRICS, {})
    seconds = float(metrics.get("fit_seconds", 0.0)) + float(metrics.get("sample_seconds", 0.0))
    pilot = shadow_fit(ctx, seconds, threads=int(trial.user_attrs.get(attrs.THREADS, 1)),
                       floor=floor)
    return _designed(ctx, pilot, limit)


@dataclasses.dataclass
class JobBudget:
    """The job's clock: started when the job was, ``seconds`` long."""

    ctx: Context
    seconds: float
    started: float = dataclasses.field(default_factory=time.monotonic)
    # monotonic time after which no trial starts or goes on: the budget's end until one ends
    search_until: float = dataclasses.field(init=False)
    longest_trial: float = 0.0
    said: bool = False
    # each family's quickest shadow fit (check_fits): what no audit's fits fall below
    pilot_floor: dict[str, float] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.search_until = self.started + self.seconds

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def stop_for(self, ran: float) -> float:
        """Monotonic time after which a checkpointed trial that has run ``ran`` seconds stops
        after the epoch under way: the search's end, or sooner where what is left of the job
        would not re-create its candidate should it become the release's (the re-creation fits
        its candidate checkpoint's epochs: at most what the trial has run). The reserve counts
        the candidates so far only; a trial that outgrew it and became the best took the
        pruning benchmark's studies 58 and 90 s past their 480 s (issue 46, seed 1)."""
        return min(self.search_until, self.started + self.seconds - ran)

    def reserve(self, study: optuna.Study) -> float:
        """Seconds kept back for the best two feasible candidates whose audit fits in
        :meth:`per_audit` (those the release would audit: the best, and the next one a refusal
        of the best would audit): each one's audit, and its re-creation and full scoring on the
        sealed audit set (:func:`_recreation`). Without an audit, the re-creation of the one
        candidate the release takes (the pruning benchmark's studies, audit off, ended 50 to
        75 s past their 480 s re-creating their best trial: issue 46)."""
        if not _audited(self.ctx):
            best = next_candidate(self.ctx, study)
            return 0.0 if best is None else _recreation(best)
        # in the order the release takes them, each refused in turn (another family first),
        # never a trial refused before nor one no safer than a refused one
        ranked = audit_order(self.ctx, study, self.ctx.cfg.audit.attempts)
        costs = (audit_seconds(self.ctx, t, limit=self.per_audit(),
                               floor=self.pilot_floor.get(str(t.params.get("synthesizer")), 0.0))
                 + _recreation(t) for t in ranked)
        return sum([c for c in costs if math.isfinite(c)][:2])

    def unauditable(self, name: str, seconds: float, *, threads: int) -> str:
        """Why a fit of ``name`` taking ``seconds`` on the training records with ``threads``
        threads could not be audited in :meth:`per_audit` ("" where it could): a neural trial
        stops training there (:mod:`tuner.search._checkpointed`). Always "" without an audit."""
        if not _audited(self.ctx):
            return ""
        pilot = shadow_fit(self.ctx, seconds, threads=threads,
                           floor=self.pilot_floor.get(name, 0.0))
        if math.isfinite(_designed(self.ctx, pilot, self.per_audit())):
            return ""
        quickest = min(estimate(self.ctx, pilot)[d] for d in _designs(self.ctx))
        return (f"its audit would take about {_minutes(quickest)}, one shadow fit about "
                f"{pilot:.1f} s, where each audit may take {_minutes(self.per_audit())} of "
                "study.budget_minutes")

    def for_helpers(self) -> HelperClock:
        """What each helper worker makes this budget again from (the job's start: a
        monotonic time every process of this host shares)."""
        return HelperClock(self.seconds, self.started, dict(self.pilot_floor))

    def per_audit(self) -> float:
        """Seconds one audit may take: audit.max_minutes, at most a quarter of the budget (the
        per-target design where it fits in that, else the shared one), so that the best
        candidate's audit and a refusal's fit in what the search keeps back."""
        return min(self.ctx.cfg.audit.max_minutes * 60.0, self.seconds / 4)

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Optuna callback after each trial: stop the search when the audit needs the rest."""
        # the study's longest run past a stop, whichever worker ran it (helpers keep the same
        # clock): a full-fidelity trial's whole time, a checkpointed one's epoch and scoring
        self.longest_trial = max([self.longest_trial, *(
            _overrun(t) for t in study.get_trials(deepcopy=False, states=(
                optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)))])
        keep = self.reserve(study)
        self.search_until = self.started + self.seconds - keep - self.longest_trial
        if time.monotonic() >= self.search_until:
            if not self.said:
                what = ("audit of the best candidates" if _audited(self.ctx)
                        else "of the best candidate")
                print(f"budget: {max(0.0, self.left()) / 60:.1f} min left, about "
                      f"{_minutes(keep)} kept for the release {what}: no more trials", flush=True)
                self.said = True
            study.stop()

    def audit_minutes(self) -> float:
        """What each audit may take at release: :meth:`per_audit`, or the time left."""
        return max(0.0, min(self.per_audit(), self.left()) / 60.0)


def _overrun(trial: FrozenTrial) -> float:
    """Seconds a trial like ``trial`` may run on once the search's end has passed: a
    full-fidelity one its whole time; one scored at checkpoints (it has a learning curve) an
    epoch and a checkpoint's scoring, for it stops after the epoch under way
    (:meth:`tuner.search._checkpointed.Checkpoints.time_is_up`). Holding a whole neural trial
    back left 0.7 to 2.4 of the pruning benchmark's 8 minutes unused (issue 46)."""
    took, last, scoring = _checkpointed(trial)
    if last is None:
        return took
    return float(last["fit_seconds"]) / max(1, int(last["epochs"])) + scoring


def _recreation(trial: FrozenTrial) -> float:
    """Seconds the release takes to re-create ``trial``'s candidate and score it: a
    full-fidelity trial's whole time; for one scored at checkpoints, the fit and sampling of its
    candidate checkpoint (a plain fit of that many epochs) and a checkpoint's scoring, not the
    epochs it trained past it."""
    took, last, scoring = _checkpointed(trial)
    if last is None:
        return took
    metrics = trial.user_attrs.get(attrs.METRICS, {})
    fit = float(metrics.get("fit_seconds", 0.0)) + float(metrics.get("sample_seconds", 0.0))
    return min(took, fit + scoring)


def _checkpointed(trial: FrozenTrial) -> tuple[float, dict[str, Any] | None, float]:
    """A finished trial's seconds, its last scored checkpoint (None: a full-fidelity trial, or
    none scored) and a checkpoint's scoring: what it spent outside training, over its
    checkpoints."""
    took, curve = _took(trial), trial.user_attrs.get(attrs.CURVE) or []
    scored = [p for p in curve if "fit_seconds" in p]
    if not scored:
        return took, None, 0.0
    return took, scored[-1], max(0.0, took - float(scored[-1]["fit_seconds"])) / len(curve)


def _took(trial: FrozenTrial) -> float:
    """Seconds a finished trial took (0 where Optuna has not both times)."""
    if trial.datetime_start and trial.datetime_complete:
        return (trial.datetime_complete - trial.datetime_start).total_seconds()
    return 0.0


@dataclasses.dataclass(frozen=True)
class HelperClock:
    """A :class:`JobBudget` as a spawned helper worker makes it again from its own context
    (:func:`tuner.search._study.run_study`'s ``helpers_clock``): the same length, start and
    quickest shadow fits, so that it stops searching in time for the audit as the invocation
    does; the invocation alone says so."""

    seconds: float
    started: float
    pilot_floor: dict[str, float]

    def __call__(self, ctx: Context) -> JobBudget:
        return JobBudget(ctx, self.seconds, started=self.started,
                         pilot_floor=dict(self.pilot_floor), said=True)
