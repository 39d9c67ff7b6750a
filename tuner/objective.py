"""One trial (DESIGN section 2): build, fit on train, sample, score U and the risks, loss.

The loss is the risk-utility loss of El Emam et al. (2022); the constraints, each feasible when
<= 0, are ``M - m_threshold`` and, per configured target, the CAP difference between training and
holdout records minus ``cap_limit`` and the inference-risk difference minus ``inference_limit``
(the disclosure that membership adds, DESIGN 4 and 5). Every completed trial sets every
constraint: Optuna counts a trial without constraints as feasible.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
import pandas as pd
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import Trial

import risk
from tuner import utility as util
from tuner.config import Config
from tuner.data import Split
from tuner.spaces import narrow
from tuner.synthesizers import synthesize


class UnusableSynthesis(RuntimeError):
    """The synthesiser produced data that cannot be scored (empty, wrong columns, all missing)."""


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """Everything measured for one set of synthetic data."""

    synthesizer: str
    params: dict[str, Any]
    seed: int
    utility: float
    loss: risk.RiskUtilityLoss
    membership: risk.MembershipResult
    caps: dict[str, risk.CAPResult]
    inference: dict[str, risk.InferenceResult]
    constraints: dict[str, float]
    dropped_rows: dict[str, float]
    fit_seconds: float
    sample_seconds: float
    utility_seconds: float
    risk_seconds: float
    synthetic: pd.DataFrame = dataclasses.field(repr=False)

    @property
    def feasible(self) -> bool:
        return all(v <= 0 for v in self.constraints.values())

    def metrics(self) -> dict[str, float]:
        """Flat metrics for MLflow and the manifest (no data values)."""
        m = self.membership
        out = {
            "utility": self.utility,
            "loss": self.loss.loss,
            "weight": self.loss.weight,
            "m": m.m,
            "m_ci_low": m.m_interval.low,
            "m_ci_high": m.m_interval.high,
            "f1": m.f1,
            "f_naive": m.f_naive,
            "precision": m.precision,
            "recall": m.recall,
            "fit_seconds": self.fit_seconds,
            "sample_seconds": self.sample_seconds,
            "utility_seconds": self.utility_seconds,
            "risk_seconds": self.risk_seconds,
        }
        for target, c in self.caps.items():
            out |= {
                f"cap_v1.{target}": c.cap_v1,
                f"cap_v2.{target}": c.cap_v2,
                f"cap_baseline.{target}": c.baseline,
                f"cap_original.{target}": c.cap_original,
                f"cap_difference.{target}": float(c.difference_v1 or 0.0),
            }
        for target, r in self.inference.items():
            out |= {
                f"inference_risk.{target}": r.risk,
                f"inference_baseline.{target}": r.baseline,
                f"inference_difference.{target}": float(r.difference or 0.0),
            }
        out |= {f"inference_dropped_rows.{t}": n for t, n in self.dropped_rows.items()}
        out |= {f"constraint.{k}": v for k, v in self.constraints.items()}
        return out

    def risk_results(self) -> dict[str, Any]:
        """Full risk results as flat dicts (JSON artifact of the trial)."""
        return {
            "membership": self.membership.to_dict(),
            "loss": self.loss.to_dict(),
            "cap": {t: c.to_dict() for t, c in self.caps.items()},
            "inference": {t: r.to_dict() for t, r in self.inference.items()},
            "constraints": self.constraints,
        }


def _check_usable(synthetic: pd.DataFrame, train: pd.DataFrame) -> pd.DataFrame:
    if synthetic.empty:
        raise UnusableSynthesis("the synthesiser returned no rows")
    missing = [c for c in train.columns if c not in synthetic.columns]
    if missing:
        raise UnusableSynthesis(f"synthetic data lack column(s) {missing}")
    synthetic = synthetic[list(train.columns)]
    empty = [c for c in synthetic.columns if synthetic[c].isna().all() and train[c].notna().any()]
    if empty:
        raise UnusableSynthesis(f"synthetic column(s) {empty} are entirely missing")
    return synthetic


def score(cfg: Config, split: Split, synthetic: pd.DataFrame, *, seed: int) -> dict[str, Any]:
    """U, M, CAP and inference results, and the constraints, for one synthetic data set."""
    r = cfg.risk
    synthetic = _check_usable(synthetic, split.train)
    metric = cfg.utility.metric
    start = time.perf_counter()
    if metric == "quality_report":
        utility = util.quality_report(split.train, synthetic)
    elif metric == "hellinger":
        utility = util.hellinger(split.train, synthetic)
    else:
        assert cfg.utility.target is not None
        utility = util.efficacy(split.train, split.holdout, synthetic,
                                target=cfg.utility.target, seed=seed)
    utility_seconds = time.perf_counter() - start
    start = time.perf_counter()
    qis = list(cfg.data.quasi_identifiers) if cfg.data.quasi_identifiers else None
    membership = risk.membership_disclosure(
        split.train, split.holdout, synthetic,
        population_size=cfg.data.population_size, quasi_identifiers=qis,
        hamming_threshold=r.hamming_threshold, repeats=r.repeats,
        numeric_bins=r.numeric_bins, random_state=seed,
    )
    keys = list(r.cap_keys)
    caps = {
        t: risk.cap(split.train, synthetic, keys=keys, target=t, holdout=split.holdout,
                    numeric_bins=r.numeric_bins, missing="category")
        for t in r.cap_targets
    }
    inference = {}
    dropped: dict[str, float] = {}
    for t in r.inference_targets:
        cols = [*keys, t]
        # k-NN cannot use missing keys/targets: those records are left out of the attack,
        # and how many is reported (metric inference_dropped_rows.TARGET), never silently
        dropped[t] = float(sum(int(f[cols].isna().any(axis=1).sum())
                               for f in (split.train, synthetic, split.holdout)))
        inference[t] = risk.attribute_inference(
            split.train.dropna(subset=cols), synthetic.dropna(subset=cols),
            keys=keys, target=t, holdout=split.holdout.dropna(subset=cols), random_state=seed,
        )
    constraints = {"m": membership.m - r.m_threshold}
    constraints |= {f"cap.{t}": float(c.difference_v1 or 0.0) - r.cap_limit
                    for t, c in caps.items()}
    constraints |= {f"inference.{t}": float(i.difference or 0.0) - r.inference_limit
                    for t, i in inference.items()}
    return dict(
        utility=float(np.clip(utility, 0.0, 1.0)),
        loss=risk.risk_utility_loss(membership.m, float(np.clip(utility, 0.0, 1.0)),
                                    threshold=r.m_threshold),
        membership=membership, caps=caps, inference=inference, constraints=constraints,
        dropped_rows=dropped, utility_seconds=utility_seconds,
        risk_seconds=time.perf_counter() - start, synthetic=synthetic,
    )


def evaluate(cfg: Config, split: Split, name: str, params: dict[str, Any], *, seed: int,
             threads: int = 1) -> Evaluation:
    """Fit ``name`` with ``params`` on the training split and score its synthetic data."""
    synthesis = synthesize(name, params, split.train, seed=seed, device=cfg.study.device,
                           threads=threads, num_rows=cfg.study.sample_size)
    scored = score(cfg, split, synthesis.synthetic, seed=seed)
    return Evaluation(
        synthesizer=name, params=dict(params), seed=seed,
        fit_seconds=synthesis.fit_seconds, sample_seconds=synthesis.sample_seconds, **scored,
    )


def suggest(trial: Trial, name: str, dist: BaseDistribution) -> Any:
    """Ask ``trial`` for a value of ``dist`` through Optuna's public suggest API."""
    if isinstance(dist, CategoricalDistribution):
        return trial.suggest_categorical(name, dist.choices)
    if isinstance(dist, IntDistribution):
        return trial.suggest_int(name, dist.low, dist.high, log=dist.log, step=dist.step)
    if isinstance(dist, FloatDistribution):
        return trial.suggest_float(name, dist.low, dist.high, log=dist.log, step=dist.step)
    raise TypeError(f"unsupported distribution {dist!r}")


def ask_params(trial: Trial, cfg: Config) -> tuple[str, dict[str, Any]]:
    """The synthesiser and its parameters for this trial (names are ``synth.param``)."""
    name = trial.suggest_categorical("synthesizer", cfg.study.synthesizers)
    space = narrow(name, cfg.spaces.get(name))
    params = {p: suggest(trial, f"{name}.{p}", dist) for p, dist in space.items()}
    return str(name), params
