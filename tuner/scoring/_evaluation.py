"""One trial's data, scored (design §2): fit on train, sample, U, every risk, the loss.

The loss is the risk-utility loss of El Emam et al. (2022). The risks are the enabled measures
of :data:`tuner.measures.MEASURES`, each with its constraints (feasible when <= 0). Every
completed trial sets every constraint: Optuna counts a trial without constraints as feasible.

In partial synthesis (``[study] synthesize``, :mod:`tuner.synthesis._partial`) a trial draws m sets
whose
kept columns are the training records' own (checked here: a set that differs is unusable); U is
the mean of the sets' utilities, identification risk scores the m sets, and every other measure
sees them stacked (an intruder holding all of them). Nothing is removed from a partially
synthetic set (:mod:`tuner.measures._partial_gate` says why).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

import risk
from tuner import measures
from tuner.config import Config
from tuner.data import Split
from tuner.errors import TrialFailed
from tuner.measures import PartialInputs, removed_by_gate
from tuner.scoring import _categorical as categorical
from tuner.scoring import _utility as util
from tuner.synthesis import (
    PartialSynthesis,
    Synthesis,
    dp_as_released,
    kept_columns,
    synthesize,
    synthesize_checkpoints,
    synthesize_partial,
)


class UnusableSynthesis(TrialFailed, RuntimeError):
    """The synthesiser produced data that cannot be scored (empty, wrong columns, all missing,
    every record removed by the gate): the trial fails, the study goes on."""


@dataclasses.dataclass(frozen=True)
class Scored:
    """What :func:`score` and :func:`score_partial` measure of synthetic data: the part of an
    :class:`Evaluation` that does not depend on how the data were made."""

    utility: float
    loss: risk.RiskUtilityLoss
    outcomes: Mapping[str, measures.Outcome]  # measure name -> its results
    constraints: dict[str, float]
    utility_seconds: float
    risk_seconds: float
    synthetic: pd.DataFrame = dataclasses.field(repr=False)  # as scored (after the gate)
    # the synthetic data as sampled, before the gate removed anything (full synthesis): what
    # the release audit scores again against the sealed audit set
    sampled: pd.DataFrame | None = dataclasses.field(default=None, repr=False)
    # partial synthesis: the m released sets (synthetic is the first)
    sets: tuple[pd.DataFrame, ...] = dataclasses.field(default=(), repr=False)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Evaluation(Scored):
    """Everything measured for one set of synthetic data: what :class:`Scored` holds, and how
    the data were made."""

    synthesizer: str
    params: dict[str, Any]
    seed: int
    fit_seconds: float
    sample_seconds: float
    # partial synthesis: how the m released sets (Scored.sets) were drawn
    partial: Mapping[str, float] = dataclasses.field(default_factory=dict)
    # a DP family's noise key (tuner._common.seeding.noise_key): a refit of this model needs it too
    noise_key: int | None = dataclasses.field(default=None, repr=False)

    @classmethod
    def of(cls, scored: Scored, *, synthesizer: str, params: dict[str, Any], seed: int,
           fit_seconds: float, sample_seconds: float, partial: Mapping[str, float] | None = None,
           noise_key: int | None = None) -> Evaluation:
        """The evaluation of data made by ``synthesizer`` and measured as ``scored``."""
        return cls(**{f.name: getattr(scored, f.name) for f in dataclasses.fields(Scored)},
                   synthesizer=synthesizer, params=params, seed=seed, fit_seconds=fit_seconds,
                   sample_seconds=sample_seconds, partial=dict(partial or {}),
                   noise_key=noise_key)

    @property
    def feasible(self) -> bool:
        return all(v <= 0 for v in self.constraints.values())

    @property
    def membership(self) -> risk.MembershipResult:
        result = self.outcomes["membership"].results[""]
        assert isinstance(result, risk.MembershipResult)
        return result

    def data_sha256(self) -> str:
        """Fingerprint of the data this evaluation releases (every set in partial synthesis):
        a trial records it, and the release checks its re-created data against it."""
        return data_sha256(self.sets or (self.synthetic,))

    def results(self, measure: str) -> Mapping[str, risk.Result]:
        """The results of ``measure`` by label (empty when it was not enabled)."""
        outcome = self.outcomes.get(measure)
        return outcome.results if outcome else {}

    def metrics(self) -> dict[str, float]:
        """Flat metrics for MLflow and the manifest (no data values)."""
        out = {
            "utility": self.utility,
            "loss": self.loss.loss,
            "weight": self.loss.weight,
            "fit_seconds": self.fit_seconds,
            "sample_seconds": self.sample_seconds,
            "utility_seconds": self.utility_seconds,
            "risk_seconds": self.risk_seconds,
            **self.partial,
        }
        for name, outcome in self.outcomes.items():
            out |= measures.MEASURES[name].flat_metrics(outcome)
        out |= {f"constraint.{k}": v for k, v in self.constraints.items()}
        return out

    def risk_results(self) -> dict[str, Any]:
        """Full risk results as flat dicts (JSON artifact of the trial)."""
        return {
            **{name: {label: r.to_dict() for label, r in o.results.items()}
               for name, o in self.outcomes.items()},
            "loss": self.loss.to_dict(),
            "constraints": self.constraints,
        }


def data_sha256(frames: tuple[pd.DataFrame, ...]) -> str:
    """SHA-256 of frames' columns, dtypes and values in row order (pandas' row hashes)."""
    digest = hashlib.sha256()
    for frame in frames:
        digest.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
        digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


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


def utility_score(cfg: Config, split: Split, synthetic: pd.DataFrame, seed: int) -> float:
    """U of ``synthetic`` by the configured utility metric (design §7)."""
    metric = cfg.utility.metric
    if metric == "quality_report":
        return util.quality_report(split.train, synthetic)
    if metric == "hellinger":
        return util.hellinger(split.train, synthetic)
    assert cfg.utility.target is not None
    return util.efficacy(split.train, split.holdout, synthetic, target=cfg.utility.target,
                         seed=seed)


def score(cfg: Config, split: Split, synthetic: pd.DataFrame, *, seed: int,
          release: bool = False, family: str | None = None) -> Scored:
    """U, every enabled measure and the constraints, for one synthetic data set.

    The gate's policy on replicated uniques applies first (:mod:`tuner.measures._gate`): under
    ``"remove"`` the data scored, and released, are the data without them; not for a
    ``family`` DP over the codebook's domain (:func:`tuner.synthesis.dp_as_released`: a filter
    that reads the confidential table would void its guarantee; the copies are still
    measured)."""
    sampled = _check_usable(synthetic, split.train)
    start = time.perf_counter()
    # the measures (and the gate) get categorical copies of the text columns: same values
    train, holdout, coded_sampled = categorical.coded(split, sampled)
    # the one rule of what the gate removes (none unless the policy is "remove"), applied to
    # the data as made and to their coded copy alike
    private = family is not None and dp_as_released(family, split.domain, split.train)
    gone = removed_by_gate(train, coded_sampled, "none" if private else cfg.risk.replicated_uniques)
    removed = int(gone.sum())
    synthetic, coded_synthetic = ((sampled, coded_sampled) if not removed else
                                  (sampled.loc[~gone].reset_index(drop=True),
                                   coded_sampled.loc[~gone].reset_index(drop=True)))
    gate_seconds = time.perf_counter() - start
    if synthetic.empty:
        raise UnusableSynthesis(f"every synthetic record ({removed}) copies a record unique in "
                                "the training data; the gate removed them all")
    start = time.perf_counter()
    utility = float(np.clip(utility_score(cfg, split, synthetic, seed), 0.0, 1.0))
    utility_seconds = time.perf_counter() - start
    inputs = measures.Inputs(
        train=train, holdout=holdout, synthetic=coded_synthetic, options=cfg.risk,
        population_size=cfg.data.population_size, keys=cfg.data.keys,
        seed=seed, removed_rows=removed, sampled=coded_sampled, study_seed=cfg.study.seed,
        release=release)
    try:
        # the released data are the frames as made, not the measures' categorical copies
        measured = _measured(cfg, inputs, utility, utility_seconds, extra_seconds=gate_seconds)
        return dataclasses.replace(measured, synthetic=synthetic, sampled=sampled)
    except risk.RiskInputError as exc:
        # the training and holdout frames passed the checks before any trial: what a measure
        # refuses here is the synthesiser's output (said as the trial's failure, not as the
        # user's bad input)
        if not removed:
            raise UnusableSynthesis(f"the synthetic data cannot be scored: {exc}") from exc
        # what is left after the gate is too little for a measure: say why it is so little
        raise UnusableSynthesis(
            f"the gate removed {removed} of {len(sampled)} synthetic records (copies of "
            f"records unique in the training data); the {len(synthetic)} left cannot be "
            f"scored: {exc}") from exc


def score_partial(cfg: Config, split: Split, part: PartialSynthesis, *,
                  seed: int, release: bool = False) -> Scored:
    """U (mean over the m sets), every enabled measure and the constraints, for the m partially
    synthetic sets of one trial (see the module docstring)."""
    sets = tuple(_check_usable(s, split.train) for s in part.sets)
    kept = kept_columns(list(split.train.columns), cfg.study.synthesize or ())
    for k, one in enumerate(sets, start=1):
        if len(one) != len(split.train) or not one[kept].equals(split.train[kept]):
            raise UnusableSynthesis(f"partially synthetic set {k} does not carry the training "
                                    f"records' kept columns {kept} row by row")
    start = time.perf_counter()
    utility = float(np.mean([np.clip(utility_score(cfg, split, s, seed), 0.0, 1.0)
                             for s in sets]))
    utility_seconds = time.perf_counter() - start
    stacked = pd.concat(sets, ignore_index=True)
    inputs = PartialInputs(
        train=split.train, holdout=split.holdout, synthetic=stacked, options=cfg.risk,
        population_size=cfg.data.population_size, keys=cfg.data.keys,
        seed=seed, sampled=stacked, study_seed=cfg.study.seed, sets=sets,
        holdout_synthetic=part.holdout, release=release)
    return dataclasses.replace(_measured(cfg, inputs, utility, utility_seconds),
                               synthetic=sets[0], sets=sets)


def _measured(cfg: Config, inputs: measures.Inputs, utility: float,
              utility_seconds: float, *, extra_seconds: float = 0.0) -> Scored:
    """Every enabled measure of ``inputs``, the constraints and the loss (``risk_seconds``:
    theirs plus ``extra_seconds``, the gate's)."""
    start = time.perf_counter()
    outcomes: dict[str, measures.Outcome] = {}
    constraints: dict[str, float] = {}
    for spec in measures.enabled(cfg.risk):
        outcomes[spec.name] = spec.compute(inputs)
        constraints |= spec.constraints(outcomes[spec.name], cfg.risk)
    membership = outcomes["membership"].results[""]
    assert isinstance(membership, risk.MembershipResult)
    return Scored(
        utility=utility,
        loss=risk.risk_utility_loss(membership.m, utility, threshold=cfg.risk.m_threshold),
        outcomes=outcomes, constraints=constraints, utility_seconds=utility_seconds,
        risk_seconds=extra_seconds + time.perf_counter() - start, synthetic=inputs.synthetic,
    )


def evaluate(cfg: Config, split: Split, name: str, params: dict[str, Any], *, seed: int,
             threads: int = 1, release: bool = False,
             noise_key: int | None = None) -> Evaluation:
    """Fit ``name`` with ``params`` on the training split and score its synthetic data (in
    partial synthesis, its m partially synthetic sets). ``release``: the release's evaluation,
    which also computes what only its report shows (M's F1 at every Hamming threshold) and
    scores every synthetic record where a trial scores a sample (DCR, ``MeasureSpec.sampled``);
    every other constraint, and the loss, are the same numbers either way. ``noise_key``: a DP
    family's noise key (:func:`tuner._common.seeding.noise_key`), from the study's secret."""
    if cfg.study.synthesize:
        part = synthesize_partial(
            name, params, split.train, synthesize=cfg.study.synthesize, seed=seed,
            sets=cfg.study.synthetic_sets, holdout=split.holdout, device=cfg.study.device,
            threads=threads, noise_key=noise_key)
        scored = score_partial(cfg, split, part, seed=seed, release=release)
        return Evaluation.of(
            scored, synthesizer=name, params=dict(params), seed=seed,
            fit_seconds=part.fit_seconds, sample_seconds=part.sample_seconds,
            partial={"holdout_sample_seconds": part.holdout_seconds,
                     "rejection_draws": float(part.draws)}, noise_key=noise_key)
    synthesis = synthesize(name, params, split.train, seed=seed, device=cfg.study.device,
                           threads=threads, num_rows=cfg.study.sample_size, noise_key=noise_key,
                           domain=split.domain)
    scored = score(cfg, split, synthesis.synthetic, seed=seed, release=release, family=name)
    return Evaluation.of(scored, synthesizer=name, params=dict(params), seed=seed,
                         fit_seconds=synthesis.fit_seconds,
                         sample_seconds=synthesis.sample_seconds, noise_key=noise_key)


def evaluate_checkpoints(cfg: Config, split: Split, name: str, params: dict[str, Any], *,
                         seed: int, at: tuple[int, ...],
                         each: Callable[[int, Evaluation | UnusableSynthesis], None],
                         threads: int = 1, due: Callable[[], bool] | None = None) -> int:
    """Fit the neural family ``name`` for ``at[-1]`` epochs and score its records after each
    epoch count of ``at`` (full synthesis; :func:`tuner.synthesis.synthesize_checkpoints`):
    ``each(epochs, evaluation)`` gets the :class:`Evaluation` a plain fit of that many epochs
    would get (its ``params["epochs"]`` the count), or the :class:`UnusableSynthesis` that
    says why those records cannot be scored; ``due``: once true, one checkpoint out of turn
    (the job's time is up). Returns the checkpoints visited."""

    def scored(epochs: int, synthesis: Synthesis) -> None:
        try:
            out = score(cfg, split, synthesis.synthetic, seed=seed, family=name)
        except UnusableSynthesis as exc:
            each(epochs, exc)
            return
        each(epochs, Evaluation.of(out, synthesizer=name, params={**params, "epochs": epochs},
                                   seed=seed, fit_seconds=synthesis.fit_seconds,
                                   sample_seconds=synthesis.sample_seconds))

    return synthesize_checkpoints(name, params, split.train, seed=seed, at=at, each=scored,
                                  num_rows=cfg.study.sample_size, device=cfg.study.device,
                                  threads=threads, domain=split.domain, due=due)
