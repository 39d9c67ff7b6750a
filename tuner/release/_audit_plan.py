"""The release audit's plan: the released family as the audit fits it, the timed pilot fit
and the design that fits in the audit's time (``audit.design``, ``audit.max_minutes``).

Apart from :mod:`tuner.release._audit` so that the job's time budget
(:mod:`tuner.release._budget`) estimates audits with the very formula the audit plans with.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from typing import Any

import joblib
import pandas as pd

from tuner.data import Codebook
from tuner.measures import remove_replicated_uniques
from tuner.search import Context
from tuner.synthesis import dp_as_released, synthesize

NEIGHBOURS = 5  # k of the vulnerability score (Meeus et al. 2023)


@dataclasses.dataclass(frozen=True)
class ReleasedFamily:
    """``fit_sample`` for :func:`risk.membership_audit`: the released family, its tuned
    parameters, one thread per fit, and the gate's removal of replicated uniques.

    ``sample_ratio``: synthetic records per training record, the release's
    (``study.sample_size / n_train``, 1 by default), so that a shadow table's synthetic data
    are as dense around its records as the release is around the training records."""

    name: str
    params: dict[str, Any]
    device: str
    policy: str
    sample_ratio: float = 1.0
    domain: Codebook | None = None  # the codebook, as the release's fit has it

    def __call__(self, table: pd.DataFrame, seed: int) -> pd.DataFrame:
        rows = max(1, round(len(table) * self.sample_ratio))
        with warnings.catch_warnings():  # SDV's, hundreds of times over
            warnings.simplefilter("ignore")
            out = synthesize(self.name, self.params, table, seed=seed, device=self.device,
                             threads=1, num_rows=rows, domain=self.domain).synthetic
        return remove_replicated_uniques(table, out, self.policy)[0]


@dataclasses.dataclass(frozen=True)
class Plan:
    """What will run: the design, the fits, the processes and the estimated seconds."""

    design: str | None  # None: nothing fits in max_minutes
    fits: int
    jobs: int
    seconds: float
    pilot_seconds: float
    estimates: dict[str, float]
    why: str = ""  # how the design was chosen (said in the terminal, the manifest, the report)


def _targets(ctx: Context) -> int:
    """``[audit] targets``, at most what the training records allow (each needs 5 others)."""
    return max(1, min(ctx.cfg.audit.targets, len(ctx.split.train) - NEIGHBOURS - 1))


def _jobs(ctx: Context) -> int:
    return ctx.cfg.audit.jobs or joblib.cpu_count()  # the cores this process may use


def plan(ctx: Context, family: ReleasedFamily, size: int, seed: int) -> Plan:
    """Time one pilot fit of a shadow-sized table and choose the design (module docstring).

    The timed fit follows an untimed one on another table with another seed, which pays what
    only a process's first fit of a family pays (imports, first calls), as the audit's hundreds
    of fits do not (a CART fit on 1,000 Adult records in a new process: 3.5 s, then 0.3 s;
    timed cold, the default audit would move from the per-target game to the shared one). Not
    the same table and seed twice: JAX (MST, AIM) compiles for the model's shapes (the cliques
    chosen, MST's merged values), which follow from the data and the noise, and reuses a
    compilation only for the same shapes, which audit fits seldom share (AIM on Fair: 4 s timed
    after a fit of the same table and seed, 11-22 s each in the audit that followed)."""
    a = ctx.cfg.audit
    other = (seed + 1) % 2**32  # seeds are 32-bit (tuner.search._context's derive)
    warm_up, table = (ctx.split.holdout.sample(size, random_state=s).reset_index(drop=True)
                      for s in (other, seed))
    family(warm_up, other)  # untimed
    start = time.perf_counter()
    family(table, seed)
    pilot = time.perf_counter() - start
    jobs = _jobs(ctx)
    k = _targets(ctx)
    estimates = estimate(ctx, pilot)
    budget = a.max_minutes * 60.0
    if a.design != "auto":  # the design asked for, within the budget like any other
        design: str | None = a.design if estimates[a.design] <= budget else None
        why = f"audit.design = {a.design!r}"
    else:
        design = next((d for d in ("per_target", "shared") if estimates[d] <= budget), None)
        why = ("audit.design = 'auto': the per-target game fits in audit.max_minutes"
               if design == "per_target" else
               f"audit.design = 'auto': the per-target game would take about "
               f"{_minutes(estimates['per_target'])}, more than {_limit(ctx)}, so the shared "
               "game (cheaper, weaker when the targets resemble each other) ran instead")
    fits = 0 if design is None else (k * a.shadows if design == "per_target" else a.shadows)
    seconds = math.nan if design is None else estimates[design]
    return Plan(design, fits, jobs, seconds, pilot, estimates, why)


def estimate(ctx: Context, pilot: float) -> dict[str, float]:
    """Seconds of each design's audit when one shadow fit takes ``pilot`` seconds: the fits
    over the processes (15 % for their overhead), plus what does not scale with them
    (choosing the targets, the attacks' features, starting the pool)."""
    a, n_train, k, jobs = ctx.cfg.audit, len(ctx.split.train), _targets(ctx), _jobs(ctx)
    fixed = 3.4e-8 * n_train ** 2 + 0.3 * k + (5.0 if jobs > 1 else 0.0)
    return {d: fixed + pilot * fits / min(jobs, fits) * 1.15 for d, fits in
            (("per_target", k * a.shadows), ("shared", a.shadows))}


def _limit(ctx: Context) -> str:
    """The audit's time limit, named (the job's budget holds it to what is left)."""
    held = " (what study.budget_minutes leaves)" if ctx.cfg.study.budget_minutes else ""
    return f"audit.max_minutes = {ctx.cfg.audit.max_minutes:.3g}{held}"


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def _sample_ratio(ctx: Context) -> float:
    """Synthetic records per training record in the release (``study.sample_size``)."""
    n_train = len(ctx.split.train)
    return (ctx.cfg.study.sample_size or n_train) / n_train


def _family(ctx: Context, name: str, params: dict[str, Any]) -> ReleasedFamily:
    cfg, domain = ctx.cfg, ctx.split.domain  # None in partial synthesis
    # a DP release is not filtered (its guarantee stands in for the gate's removal of copies)
    policy = ("none" if dp_as_released(name, domain, ctx.split.train)
              else cfg.risk.replicated_uniques)
    return ReleasedFamily(name, dict(params), cfg.study.device, policy, _sample_ratio(ctx),
                          domain)


def _size(ctx: Context) -> int:
    return min(ctx.cfg.audit.shadow_size, len(ctx.split.holdout))
