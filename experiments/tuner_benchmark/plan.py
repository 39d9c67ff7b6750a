"""The benchmark's plan, read from ``benchmark.toml``: datasets, seeds, budget, methods, and the
tuner config each (dataset, seed, method) runs with."""

from __future__ import annotations

import copy
import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd

from experiments import datasets
from experiments.tuner_benchmark.holdout import Target

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "benchmark.toml"
METHODS = ("defaults", "random", "tpe", "ours", "additive", "pareto", "utility")
SUBSAMPLE_SEED = 2026  # the custodian's table drawn from each dataset: the same for every seed
N_TRIALS = 100_000  # the search methods stop on the clock (study.timeout), not on a count


@dataclasses.dataclass(frozen=True)
class Dataset:
    name: str
    reader: str
    rows: int
    population_size: int
    target: Target
    risk: dict[str, Any]
    budget: float | None = None  # seconds per search method; None: the plan's

    def read(self) -> pd.DataFrame:
        """The custodian's table: ``rows`` records drawn from the shared dataset (all when it
        has no more), in a fixed order."""
        frame = getattr(datasets, self.reader)()
        if self.rows < len(frame):
            frame = frame.sample(n=self.rows, random_state=SUBSAMPLE_SEED)
        return frame.reset_index(drop=True)


@dataclasses.dataclass(frozen=True)
class Plan:
    datasets: tuple[Dataset, ...]
    seeds: tuple[int, ...]
    budget: float
    methods: tuple[str, ...]
    additive_m_weight: float
    additive_copy_weight: float
    tuner: dict[str, Any]  # [study], [risk], [utility], [space.*] shared by every config

    def __post_init__(self) -> None:
        bad = sorted(set(self.methods) - set(METHODS))
        if bad:
            raise ValueError(f"unknown method(s) {bad}; known: {list(METHODS)}")
        if self.budget <= 0:
            raise ValueError(f"`budget > 0` must hold, got budget={self.budget}")
        if not self.seeds or any(s < 0 for s in self.seeds):
            raise ValueError(f"seeds must be one or more integers >= 0, got {self.seeds}")

    def budget_of(self, dataset: Dataset) -> float:
        return dataset.budget if dataset.budget is not None else self.budget

    def budgets(self) -> dict[str, float]:
        return {d.name: self.budget_of(d) for d in self.datasets}

    def tuner_config(self, dataset: Dataset, data_path: Path, seed: int,
                     output: Path) -> dict[str, Any]:
        """The tuner config (a dict shaped like the TOML) of one (dataset, seed, method)."""
        raw = copy.deepcopy(self.tuner)
        # the benchmark's committed results predate the release audit: they keep its 50/50
        # split and its releases (the audit is studied in experiments/release_audit)
        raw["data"] = {"path": str(data_path), "population_size": dataset.population_size,
                       "audit_fraction": 0.0}
        raw["audit"] = {"enabled": False}
        # public seeds: a benchmark on public data is reproducible from its seed (design §9.2)
        raw["study"] = {**raw.get("study", {}), "name": f"{dataset.name}-{seed}", "seed": seed,
                        "public_seed": True,
                        "n_trials": N_TRIALS, "timeout": self.budget_of(dataset),
                        "output": str(output)}
        raw["risk"] = {**raw.get("risk", {}), **dataset.risk}
        return raw


def _dataset(name: str, table: dict[str, Any]) -> Dataset:
    known = {"reader", "rows", "population_size", "target", "positive", "above_median", "risk",
             "budget_seconds"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ValueError(f"unknown key(s) {unknown} in [datasets.{name}]; valid: {sorted(known)}")
    if not hasattr(datasets, table["reader"]):
        raise ValueError(f"datasets.{name}.reader = {table['reader']!r} is not a reader of "
                         "experiments/datasets.py")
    target = Target(table["target"], table.get("positive"), bool(table.get("above_median")))
    budget = table.get("budget_seconds")
    return Dataset(name, table["reader"], int(table["rows"]), int(table["population_size"]),
                   target, dict(table.get("risk", {})),
                   None if budget is None else float(budget))


def load(path: Path = CONFIG, **overrides: Any) -> Plan:
    """The plan of ``path``; ``overrides`` (datasets, seeds, budget, methods, rows, spaces,
    synthesizers) replace its values, for the command line and the smoke test."""
    raw = tomllib.loads(path.read_text())
    bench = raw["benchmark"]
    sets = tuple(_dataset(n, t) for n, t in raw["datasets"].items())
    if overrides.get("datasets"):
        unknown = sorted(set(overrides["datasets"]) - {d.name for d in sets})
        if unknown:
            raise ValueError(f"unknown dataset(s) {unknown}; known: {[d.name for d in sets]}")
        sets = tuple(d for d in sets if d.name in overrides["datasets"])
    if overrides.get("rows"):
        sets = tuple(dataclasses.replace(d, rows=min(d.rows, overrides["rows"])) for d in sets)
    if overrides.get("budget"):  # one budget for every dataset
        sets = tuple(dataclasses.replace(d, budget=None) for d in sets)
    tuner = {k: raw[k] for k in ("study", "risk", "utility", "space") if k in raw}
    if overrides.get("synthesizers"):
        tuner["study"] = {**tuner.get("study", {}), "synthesizers": list(overrides["synthesizers"])}
    if overrides.get("spaces"):
        tuner["space"] = {**tuner.get("space", {}), **overrides["spaces"]}
    return Plan(
        datasets=sets,
        seeds=tuple(overrides.get("seeds") or bench["seeds"]),
        budget=float(overrides.get("budget") or bench["budget_seconds"]),
        methods=tuple(overrides.get("methods") or bench["methods"]),
        additive_m_weight=float(bench["additive_m_weight"]),
        additive_copy_weight=float(bench["additive_copy_weight"]),
        tuner=tuner,
    )
