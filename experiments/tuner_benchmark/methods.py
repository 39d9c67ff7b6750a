"""The methods, each run on one (dataset, seed) and returned as one row per trial.

* ``defaults``: every synthesiser of the study at its own defaults (SDV's, or our CART's), one
  fit each, seeded as the tuner seeds trial k; no budget (a user runs them to the end).
* ``random``: Optuna's ``RandomSampler`` over the same space, the same objective (the
  risk-utility loss) and the same constraints as the product, on the tuner's own building
  blocks (``ask_params``, ``evaluate``, ``derive``), in memory and without MLflow.
* ``tpe``: the same with the product's own sampler (``tuner.search.sampler``: TPE with
  constraints): the product's search without its SQLite storage and MLflow tracking, so that
  ``tpe`` against ``random`` is the sampler's effect and ``ours`` against ``tpe`` the cost of
  the product's bookkeeping per trial.
* ``ours``: the product itself, ``tuner.tune(config)`` with ``study.timeout`` = the budget:
  TPE with constraints (``tuner.search.sampler``), SQLite storage and MLflow tracking.
* ``additive``: CLOVER's kind of objective (Optuna over several generators minimising the
  *sum* of a utility loss and a privacy loss, no hard constraint): TPE seeded and set up as the
  product's (``tuner.search.sampler``), minimising ``(1 - U) + a max(M, 0) + b copies``,
  ``copies`` the share of synthetic records equal to a training record (CLOVER's
  ``ratio_match_synthreal_train``); the constraints are computed and judged afterwards only.
* ``utility``: pysdg's ``BayesianOptimizationRoutine`` (CHEO-EHIL's pysdg: Optuna's TPE
  maximising one user-given score per generator, no constraint, the best parameters refitted
  for the release): TPE seeded as the product's, maximising U alone over the same families;
  its release is its trial of highest U (not refitted: the same data its score saw), the
  constraints judged afterwards. pysdg itself has no distribution on the package index here.

Every method fits with one torch thread. The product gives its worker ``usable cores //
workers`` threads (``tuner.search._study.threads_per_worker``: 2 here); with another job on the 2
cores
that made a 10-epoch CTGAN fit on 2,500 Adult records take 206 s instead of 6.9 s with one
thread, and a 30-epoch TVAE fit 141 s instead of 3.3 s (measured while building this
benchmark), so for ``ours`` the harness replaces that function for the duration of the call
(:func:`torch_threads`): no file of the tuner is changed.

The random, tpe, additive and utility samplers get the seed the product's sampler gets
(``derive(seed, SeedPath.SAMPLER, 0)``), and trial k the seed the product's trial k gets: TPE's
first trials are drawn by a ``RandomSampler`` with that seed, so every search starts from the
same points (common random numbers) and part where TPE's model takes over.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import optuna
import pandas as pd
from optuna.trial import FrozenTrial, Trial, TrialState

import tuner
from tuner._common.seeding import SeedPath, derive
from tuner.api import load_config
from tuner.config import Config
from tuner.scoring import Evaluation, evaluate
from tuner.search import Context, ask_params, prepare, trial_params
from tuner.search import sampler as product_sampler

THREADS = 1  # torch threads of every fit (see the module docstring)


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """The product's workers fit with ``n`` torch threads inside the block."""
    import tuner.search._study

    old = tuner.search._study.threads_per_worker
    tuner.search._study.threads_per_worker = lambda workers: n
    try:
        yield
    finally:
        tuner.search._study.threads_per_worker = old


def is_feasible(constraints: dict[str, float]) -> bool:
    """The product's rule: some constraints, every one <= 0 (NaN or inf fails)."""
    return bool(constraints) and all(float(v) <= 0 for v in constraints.values())


def additive_loss(ev: Evaluation, *, m_weight: float, copy_weight: float) -> float:
    metrics = ev.metrics()
    return ((1.0 - ev.utility) + m_weight * max(float(metrics["m"]), 0.0)
            + copy_weight * float(metrics["copies_train_share"]))


def _row(method: str, number: int, state: str, start: float, end: float,
         synthesizer: str | None, params: dict[str, Any], trial_seed: int | None,
         metrics: dict[str, float], constraints: dict[str, float], objective: float,
         fail_reason: str) -> dict[str, Any]:
    work = sum(float(metrics.get(k, math.nan)) for k in
               ("fit_seconds", "sample_seconds", "utility_seconds", "risk_seconds"))
    return {
        "method": method, "trial": number, "state": state, "synthesizer": synthesizer,
        "params": json.dumps(params, sort_keys=True, default=str), "trial_seed": trial_seed,
        "start": start, "elapsed": end, "trial_seconds": end - start, "work_seconds": work,
        "utility": metrics.get("utility", math.nan), "m": metrics.get("m", math.nan),
        "copies_train_share": metrics.get("copies_train_share", math.nan),
        "loss": metrics.get("loss", math.nan), "objective": objective,
        **{f"c.{k}": float(v) for k, v in constraints.items()},
        "feasible": state == "COMPLETE" and is_feasible(constraints),
        "fail_reason": fail_reason,
    }


def frozen_rows(method: str, trials: list[FrozenTrial],
                constraints_of: Callable[[FrozenTrial], dict[str, float]]) -> list[dict]:
    """Rows of finished Optuna trials, times in seconds from the first trial's start."""
    done = [t for t in trials if t.state in (TrialState.COMPLETE, TrialState.FAIL)
            and t.datetime_start and t.datetime_complete]
    if not done:
        return []
    t0 = min(t.datetime_start for t in done)
    rows = []
    for t in sorted(done, key=lambda t: t.number):
        name, params = trial_params(t) if "synthesizer" in t.params else (None, {})
        complete = t.state == TrialState.COMPLETE
        rows.append(_row(
            method, t.number, t.state.name, (t.datetime_start - t0).total_seconds(),
            (t.datetime_complete - t0).total_seconds(), name, params, t.user_attrs.get("seed"),
            t.user_attrs.get("metrics", {}), constraints_of(t) if complete else {},
            _objective_value(t) if complete else math.nan,
            t.user_attrs.get("fail_reason", "")))
    return rows


def _objective_value(t: FrozenTrial) -> float:
    """The value a single-objective search minimised; a Pareto-mode trial's loss (logged)."""
    if t.values is not None and len(t.values) == 1:
        return float(t.values[0])
    return float(t.user_attrs.get("metrics", {}).get("loss", math.nan))


def run_defaults(cfg: Config, ctx: Context) -> tuple[list[dict], dict[int, pd.DataFrame]]:
    """One fit of every synthesiser at its defaults; the rows and each one's synthetic data."""
    rows, data, clock = [], {}, 0.0
    for k, name in enumerate(cfg.study.synthesizers):
        seed = derive(cfg.study.seed, SeedPath.TRIAL, k)
        start = time.perf_counter()
        try:
            ev = evaluate(cfg, ctx.split, name, {}, seed=seed, threads=THREADS)
        except Exception as exc:  # a default that fails is a result too
            took = time.perf_counter() - start
            rows.append(_row("defaults", k, "FAIL", clock, clock + took, name, {}, seed, {}, {},
                             math.nan, f"{type(exc).__name__}: {exc}"[:2000]))
            clock += took
            continue
        took = time.perf_counter() - start
        rows.append(_row("defaults", k, "COMPLETE", clock, clock + took, name, {}, seed,
                         ev.metrics(), ev.constraints, math.nan, ""))
        data[k] = ev.synthetic
        clock += took
    return rows, data


def _objective(ctx: Context, kind: str, weights: dict[str, float]) -> Callable[[Trial], float]:
    cfg = ctx.cfg

    def objective(trial: Trial) -> float:
        # as tuner.search._objective seeds trial k
        seed = derive(cfg.study.seed, SeedPath.TRIAL, trial.number)
        trial.set_user_attr("seed", seed)
        name, params = ask_params(trial, cfg)
        try:
            ev = evaluate(cfg, ctx.split, name, params, seed=seed, threads=THREADS)
        except Exception as exc:
            trial.set_user_attr("fail_reason", f"{type(exc).__name__}: {exc}"[:2000])
            raise
        trial.set_user_attr("metrics", ev.metrics())
        if kind in ("random", "tpe"):  # constraints as the product sets them
            for key, value in ev.constraints.items():
                trial.set_constraint(key, value)
            return ev.loss.loss
        trial.set_user_attr("constraints", ev.constraints)  # judged afterwards, never searched
        return additive_loss(ev, **weights)

    return objective


def run_search(cfg: Config, ctx: Context, kind: str, budget: float,
               weights: dict[str, float] | None = None) -> list[dict]:
    """``random``, ``tpe``, ``additive`` or ``utility`` for ``budget`` seconds (Optuna's
    timeout: the trial running when it passes is finished, as in the product)."""
    if kind == "random":
        sampler: optuna.samplers.BaseSampler = optuna.samplers.RandomSampler(
            seed=derive(cfg.study.seed, SeedPath.SAMPLER, 0))
    elif kind in ("tpe", "additive", "utility"):
        sampler = product_sampler(cfg, 0)  # the product's TPE, seeded as its first worker
    else:
        raise ValueError(
            f"kind must be 'random', 'tpe', 'additive' or 'utility', got {kind!r}")
    if kind == "utility":  # 1 - U: the additive loss with no privacy term
        weights = {"m_weight": 0.0, "copy_weight": 0.0}
    study = optuna.create_study(sampler=sampler, direction="minimize")
    study.optimize(_objective(ctx, kind, weights or {"m_weight": 1.0, "copy_weight": 1.0}),
                   timeout=budget, catch=(Exception,), gc_after_trial=False)
    if kind in ("random", "tpe"):
        return frozen_rows(kind, study.trials, lambda t: dict(t.constraints))
    return frozen_rows(kind, study.trials, lambda t: dict(t.user_attrs.get("constraints", {})))


def run_ours(raw: dict[str, Any], *, method: str = "ours") -> tuple[list[dict], str]:
    """The product: ``tuner.tune`` on the config dict (``study.timeout`` is the budget); with
    ``method="pareto"`` in Pareto mode (``study.mode = "pareto"``: maximise U, minimise M,
    constraints enforced; the release is the most useful feasible front point). Its
    release export runs after the clock; if it raises, the study's trials are read back with
    ``tuner.load`` and the error is returned as a note (the benchmark re-creates the chosen
    trial's data itself)."""
    if method not in ("ours", "pareto"):
        raise ValueError(f"method must be 'ours' or 'pareto', got {method!r}")
    if method == "pareto":
        raw = {**raw, "study": {**raw["study"], "mode": "pareto"}}
    note = ""
    try:
        with torch_threads(THREADS):
            study = tuner.tune(raw, progress=False)
    except Exception as exc:
        study = tuner.load(raw["study"]["output"])
        if not study.optuna_study.trials:
            raise
        note = f"tuner.tune raised after the study ran: {type(exc).__name__}: {exc}"[:500]
    rows = frozen_rows(method, study.optuna_study.get_trials(deepcopy=False),
                       lambda t: dict(t.constraints))
    return rows, note


def context(raw: dict[str, Any], output: Path) -> Context:
    """The tuner's context (config, data, the seed's split) for the harness's methods."""
    return prepare(load_config({**raw, "study": {**raw["study"], "output": str(output)}}))
