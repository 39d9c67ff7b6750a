"""Per-record membership audit that knows the generator: shadow games on the most exposed people.

Every other measure of this library averages over records and uses an intruder who does not
know how the synthetic data were made. This one plays the game of Stadler, Oprisanu & Troncoso
("Synthetic data - anonymisation groundhog day", USENIX Security 2022) on the records that
Meeus, Guepin, Cretu & de Montjoye ("Achilles' heels: vulnerable record identification in
synthetic data publication", ESORICS 2023) show to be the most exposed, and reports what
Carlini et al. ("Membership inference attacks from first principles", IEEE S&P 2022) ask of
such attacks: the true-positive rate at a low false-positive rate.

**What the intruder knows**: the generator and its parameters (``fit_sample``: any callable
that fits on a table and returns synthetic records), real records of the same population that
were not in training (``reference``: the auxiliary data, from which every shadow table is
drawn), and the target's whole record. It does not know the training data.

**Targets** (Meeus et al., section 4): the ``targets`` training records with the largest mean
Gower distance to their ``neighbours`` = 5 nearest other training records, on DCR's encoding
(:mod:`risk.dcr`: numeric columns scaled by the real records' range, others equal or not).

**The game.** For each target, ``shadows`` = R shadow tables of ``shadow_size`` records drawn
from the reference, the target inserted in exactly half of them (``design = "per_target"``:
R tables per target, ``targets x R`` fits, as Stadler et al. and Meeus et al. play it; or
``"shared"``: R tables in all, each target in half of them independently, as Carlini et al.'s
shadow models are trained: R fits, each scoring every target). Each table is fitted and sampled
by ``fit_sample`` with a fresh seed. Smaller shadow tables give each record more weight in its
model: 1,000 records (the size both papers use) is the default, or the whole reference when it
is smaller.

**Attacks**, each a score per shadow run (:mod:`risk._audit_attacks`): ``distance``, minus the
distance from the target to its closest synthetic record; ``domias``, the density ratio of
synthetic to reference data at the target (van Breugel et al., AISTATS 2023); ``classifier``, a
random forest trained on the calibration half of the target's runs over features of the
synthetic data around the target (both scores, shares of records within several radii, shares
matching the target on subsets of its columns: TAPAS' queries, Houssiau et al. 2022).

**Figures.** Each target's runs are split into a calibration half and a test half, by *fit*
(per target: each target's own runs, stratified by membership; shared: half of the fits
calibrate every target and the other half test every target, each target in exactly half of
the calibration tables and in each test table on a coin of its own), so that no fit is read on
both sides. On the calibration half alone, per
target: the attack with the highest AUC is chosen, its scores are standardised by the
non-member calibration scores (offline LiRA, so that one threshold means about one
false-positive rate for every target), and the threshold of each FPR level (1 % and 10 %) is
fixed on the calibration non-members' leave-one-out standardised scores pooled over the
targets (split conformal: a fresh null run exceeds it with probability at most the level).
On the test half alone: each target's AUC of its chosen attack (``target_auc``; the largest of
the three attacks' test AUCs is kept as ``best_attack_auc``, a diagnostic biased upwards), and
the pooled TPR and FPR at the fixed thresholds, with 95 % intervals over the test fits, valid
whatever the runs of one fit do together (:mod:`risk._audit_bound`: betting over the fits'
hit shares, Waudby-Smith & Ramdas 2024; Clopper-Pearson where each fit is one run), and the
empirical epsilon lower bound ``ln(TPR_lower / FPR_upper)`` at 1 % (Jagielski et al.
2020; delta = 0, :meth:`MembershipAuditResult.epsilon_at` for another) beside
``epsilon_ceiling``, the most these settings could show (every member run caught, none of the
others). :mod:`risk._audit_stats` has the formulas, measured by simulation
(``experiments/release_audit/calibration.py``); :func:`minimum_targets` gives the smallest game
whose modelled no-leak refusal rate (:func:`null_refusal_rate`) is within 2.5 %, and
:func:`minimum_shadows` the fewest shadows for a number of targets. **Per person**
(:mod:`risk._audit_person`): each target's exact randomisation p-value of being exposed, and
:meth:`MembershipAuditResult.verdict` refuses when the pooled bound fails or anyone is flagged
(Holm). No target's values are in the result: its label (who), scores and counts.

Cost: the fits (``targets x shadows`` or ``shadows``), run over ``n_jobs`` processes (joblib;
``fit_sample`` must then be picklable by cloudpickle, as a lambda or a function is); the
vulnerability scores are an exact k-nearest-neighbour search over the training records in
bounded blocks, quadratic in the records (above ``MAX_CANDIDATES`` the targets are sought
among a seeded sample of that many). Measured on all of Adult: block ``bench_audit`` of
``experiments/benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from risk._arguments import DESIGNS as DESIGNS
from risk._arguments import argument, takes
from risk._audit_attacks import RADII, column_subsets, default_bandwidth, features, log_density
from risk._audit_bound import fit_interval as fit_interval
from risk._audit_checks import SHADOW_SIZE as SHADOW_SIZE
from risk._audit_checks import check_options, check_release, resolve
from risk._audit_game import Plan, TestRuns, plan_runs, play, score_targets
from risk._audit_model import MAX_SHADOWS as MAX_SHADOWS
from risk._audit_model import NULL_REFUSAL_ALLOWANCE as NULL_REFUSAL_ALLOWANCE
from risk._audit_model import minimum_shadows as minimum_shadows
from risk._audit_model import minimum_targets as minimum_targets
from risk._audit_model import null_refusal_rate as null_refusal_rate
from risk._audit_release import scaled_rows
from risk._audit_stats import epsilon_lower_bound
from risk._audit_targets import MAX_CANDIDATES as MAX_CANDIDATES
from risk._audit_targets import targets_of
from risk._audit_verdict import ALPHA, TPR_LIMIT, AuditVerdict, decide
from risk._audit_verdict import pooled_upper_bound as pooled_upper_bound
from risk._gower_coder import fit_coder, nearest_mean_distance
from risk._result import Interval, Result
from risk._validation import (
    RiskInputError,
    resolve_seed,
)

ATTACKS = ("distance", "domias", "classifier")
FPR_LEVELS = (0.01, 0.1)

FitSample = Callable[[pd.DataFrame, int], pd.DataFrame]


@dataclasses.dataclass(frozen=True)
class MembershipAuditResult(Result):
    """Outcome of :func:`membership_audit` (see the module docstring).

    Per target, in order of vulnerability (most exposed first): ``vulnerability`` (mean Gower
    distance to its ``neighbours`` nearest training records), ``selected_attack`` (the attack
    with the best AUC on the target's calibration runs), ``target_auc`` (that attack's AUC on
    the test runs: the figure to read), ``attack_auc`` (each attack's test AUC; NaN where it
    could not run) and ``best_attack_auc`` (the largest of them: a diagnostic only, biased
    upwards by choosing after seeing the test runs). Pooled over the targets' test runs, at
    the thresholds fixed on the calibration runs (``threshold_1pct``, ``threshold_10pct``, in
    standardised units, from ``n_calibration_nulls`` calibration non-member runs):
    ``tpr_at_1pct``/``fpr_at_1pct`` and ``..._10pct`` with 95 % intervals over the test fits
    (:mod:`risk._audit_bound`), the counts behind them (``member_hits_by_fit``,
    ``member_runs_by_fit``: what :meth:`pooled_upper` reads), ``epsilon_lower_bound`` (at 1 %,
    for delta = 0; see :meth:`epsilon_at`) and ``epsilon_ceiling``, the largest bound these
    settings could have given. ``n_fits`` models were fitted; ``random_state`` is the seed used.

    Per person: ``target_labels`` (``train``'s index labels of the targets, in the order
    above: who they are, for the custodian only); ``signal_p_values``, each target's exact
    randomisation p-value of "nothing of this person reaches the output" from
    ``n_permutations`` permutations of its runs' labels; ``target_member_hits`` of its
    ``target_member_runs`` member test runs called members at the 1 % FPR threshold (its own
    TPR: how much it is exposed) (:mod:`risk._audit_person`).
    :meth:`verdict` turns them into a decision. With ``release`` given, the released table
    scored per target (:mod:`risk._audit_release`): ``release_z``, ``release_called`` (above
    the 1 % threshold), ``release_p_values``, ``release_log_lr``; ``n_release_called`` against
    ``release_expected_called`` by chance (empty and None without one).
    """

    n_targets: int
    n_shadows: int
    shadow_size: int
    design: str
    n_fits: int
    attacks: tuple[str, ...]
    vulnerability: tuple[float, ...]
    target_auc: tuple[float, ...]
    best_attack_auc: tuple[float, ...]
    attack_auc: dict[str, tuple[float, ...]]
    selected_attack: tuple[str, ...]
    tpr_at_1pct: float
    tpr_at_1pct_interval: Interval
    fpr_at_1pct: float
    fpr_at_1pct_interval: Interval
    tpr_at_10pct: float
    tpr_at_10pct_interval: Interval
    fpr_at_10pct: float
    fpr_at_10pct_interval: Interval
    threshold_1pct: float
    threshold_10pct: float
    epsilon_lower_bound: float
    epsilon_ceiling: float
    n_calibration_nulls: int
    true_positives_1pct: int
    false_positives_1pct: int
    member_hits_by_fit: tuple[float, ...]
    member_runs_by_fit: tuple[float, ...]
    n_member_runs: int
    n_nonmember_runs: int
    classifier_skipped: int
    target_labels: tuple[Any, ...]
    signal_p_values: tuple[float, ...]
    target_member_hits: tuple[int, ...]
    target_member_runs: tuple[int, ...]
    n_permutations: int
    n_train: int
    n_reference: int
    columns: tuple[str, ...]
    neighbours: int
    bandwidth: float
    radii: tuple[float, ...]
    n_subsets: int
    candidates: int
    seconds: float
    random_state: int
    release_z: tuple[float, ...] = ()
    release_called: tuple[bool, ...] = ()
    release_p_values: tuple[float, ...] = ()
    release_log_lr: tuple[float, ...] = ()
    n_release_called: int | None = None
    release_expected_called: float | None = None

    @property
    def max_auc(self) -> float:
        """The largest per-target AUC of the attack chosen on calibration."""
        finite = [a for a in self.target_auc if math.isfinite(a)]
        return max(finite) if finite else math.nan

    def pooled_upper(self, confidence: float = 0.95) -> float:
        """The pooled TPR's one-sided upper bound at 1 % FPR at ``confidence``, over this
        audit's test fits (:func:`pooled_upper_bound`, :mod:`risk._audit_bound`)."""
        return pooled_upper_bound(self.member_hits_by_fit, self.member_runs_by_fit,
                                  confidence=confidence)

    @takes("tpr_limit", "alpha", "confidence")
    def verdict(self, *, tpr_limit: float = TPR_LIMIT, alpha: float = ALPHA,
                confidence: float = 0.95) -> AuditVerdict:
        """Refused when the pooled TPR's one-sided upper bound at 1 % FPR (:meth:`pooled_upper`
        at ``confidence``, 95 % by default) exceeds ``tpr_limit`` **or** any target is
        significantly exposed beyond the same limit: Holm at family-wise level ``alpha`` over
        the targets' intersection-union p-values, the larger of ``signal_p_values`` and the
        binomial p-value of ``TPR_t <= tpr_limit`` (:mod:`risk._audit_person`). One of ``m``
        audits tried in turn until one passes holds its bound at ``1 - 0.05 / m`` (Bonferroni):
        a leaky generator passes one no more often than one audit at 95 % lets it."""
        return decide(self.signal_p_values, self.target_labels, self.pooled_upper(confidence),
                      target_member_hits=self.target_member_hits,
                      target_member_runs=self.target_member_runs, tpr_limit=tpr_limit,
                      alpha=alpha, confidence=confidence)

    def epsilon_at(self, delta: float) -> float:
        """The epsilon lower bound for an ``(epsilon, delta)`` claim: ``ln((TPR_lower - delta)
        / FPR_upper)`` at 1 % FPR (Kairouz et al. 2015; :mod:`risk._audit_stats`). The game is
        replace-one: a claim made for add/remove-one neighbours holds here as ``(2 epsilon,
        (1 + e^epsilon) delta)``."""
        return epsilon_lower_bound(self.tpr_at_1pct_interval.low,
                                   self.fpr_at_1pct_interval.high, delta)


@takes("neighbours")
def vulnerability(train: pd.DataFrame, *, reference: pd.DataFrame | None = None,
                  columns: Sequence[str] | None = None, neighbours: int = 5) -> pd.Series:
    """Meeus et al.'s vulnerability of every training record: its mean Gower distance (DCR's
    encoding; numeric ranges from ``train`` and ``reference`` together when given) to its
    ``neighbours`` nearest other training records. Larger is more exposed. Indexed as ``train``.
    """
    ref = train if reference is None else reference
    train, ref, cols, kinds = resolve(train, ref, columns)
    neighbours = int(argument(neighbours, "neighbours"))
    if len(train) <= neighbours:
        raise RiskInputError(f"`train` has {len(train)} record(s); the mean distance to the "
                             f"`neighbours` = {neighbours} nearest others needs more.")
    coder = fit_coder([train] if reference is None else [train, ref], cols, kinds)
    return pd.Series(nearest_mean_distance(coder.transform(train), neighbours),
                     index=train.index, name="vulnerability")


@takes("shadows", "shadow_size", "design", "neighbours")
def membership_audit(
    train: pd.DataFrame,
    reference: pd.DataFrame,
    fit_sample: FitSample,
    *,
    targets: int | Sequence[Any] = 20,
    shadows: int = 100,
    shadow_size: int | None = None,
    design: str = "per_target",
    columns: Sequence[str] | None = None,
    neighbours: int = 5,
    n_jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    random_state: int | None = None,
    release: pd.DataFrame | None = None,
) -> MembershipAuditResult:
    """Membership audit of ``fit_sample`` on the most vulnerable records of ``train``.

    Parameters
    ----------
    train:
        The real records the released synthetic data were made from; the targets are taken
        from them.
    reference:
        Real records of the same population that were not in training (the holdout): the
        intruder's auxiliary data, from which the shadow tables are drawn.
    fit_sample:
        ``fit_sample(table, seed) -> synthetic DataFrame``: fits the released generator (its
        family and tuned parameters) on ``table`` and samples from it, reproducibly for a seed.
    targets:
        How many of the most vulnerable training records to audit (K), or the labels of
        ``train``'s index of the records to audit (e.g. random ones, to compare).
    shadows:
        Shadow runs per target (R, even, >= 8): half with the target, half without.
    shadow_size:
        Records per shadow table; default ``min(1000, len(reference))``.
    design:
        ``"per_target"`` (R tables for each target: K R fits) or ``"shared"`` (R tables in all,
        each target in half of them: R fits).
    columns:
        Columns the attacks compare; default every column (then both frames must have the
        same columns).
    neighbours:
        k of the vulnerability score.
    n_jobs:
        Processes for the fits (joblib; -1: every core; more than the cores or the fits are
        not started).
    progress:
        Called as ``progress(done, total)`` with ``done = 0`` before the first fit and after
        each one.
    random_state:
        Seed of everything drawn (targets' ties aside, which are broken by position); the seed
        used is in the result.
    release:
        The synthetic table actually released (made from ``train``), scored too: where each
        target's score on it falls in its own shadow runs (:mod:`risk._audit_release`).
    """
    return _audit(train, reference, fit_sample, targets=targets, shadows=shadows,
                  shadow_size=shadow_size, design=design, columns=columns,
                  neighbours=neighbours, n_jobs=n_jobs, progress=progress,
                  random_state=random_state, release=release)[0]


def _audit(train: pd.DataFrame, reference: pd.DataFrame, fit_sample: FitSample, *,
           targets: int | Sequence[Any], shadows: int, shadow_size: int | None, design: str,
           columns: Sequence[str] | None, neighbours: int, n_jobs: int,
           progress: Callable[[int, int], None] | None, random_state: int | None,
           truth_shadows: int = 0, release: pd.DataFrame | None = None
           ) -> tuple[MembershipAuditResult, TestRuns]:
    """:func:`membership_audit`, and every test run's outcome. ``truth_shadows`` more shadow
    runs per target (drawn from a stream of their own, so the audit's figures are those of the
    same seed without them) are played as test runs that no figure reads: measured at the
    thresholds the calibration runs fixed, they give the rates the figures estimate
    (``experiments/release_audit/calibration.py``)."""
    start = time.perf_counter()
    train, reference, cols, kinds = resolve(train, reference, columns)
    neighbours, shadows, size = check_options(
        train, reference, fit_sample, neighbours=neighbours, shadows=shadows,
        shadow_size=shadow_size, design=design, n_jobs=n_jobs, progress=progress)
    released = check_release(release, cols, train)
    seed = resolve_seed(random_state)
    streams = np.random.SeedSequence(seed).spawn(7)
    coder = fit_coder([train, reference], cols, kinds)
    coded_train, coded_ref = coder.transform(train), coder.transform(reference)
    positions, scores, candidates = targets_of(train, coded_train, targets, neighbours,
                                             np.random.default_rng(streams[0]))
    if design == "shared" and size <= positions.size:
        raise RiskInputError(f"`shadow_size` must exceed `targets` in the shared design (a "
                             f"table may hold every target), got shadow_size={size}, "
                             f"targets={positions.size}.")
    rng = np.random.default_rng(streams[1])
    bandwidth = default_bandwidth(coded_ref, rng)
    coded_targets = coded_train.rows(positions)
    subsets = column_subsets(len(cols), rng)
    plan = Plan(design=design, n_targets=positions.size, shadows=shadows, size=size,
                subsets=tuple(subsets), bandwidth=bandwidth,
                log_reference=log_density(coded_targets, coded_ref, bandwidth))
    runs = plan_runs(plan, len(reference), streams[2])
    reported = len(runs)
    if truth_shadows:
        extra = plan_runs(dataclasses.replace(plan, shadows=truth_shadows), len(reference),
                          streams[4])
        runs += [dataclasses.replace(run, calibration=False) for run in extra]
    feats = play(plan, runs, fit_sample, train.iloc[positions][cols].reset_index(drop=True),
                 reference[cols].reset_index(drop=True), coder, coded_targets, n_jobs=n_jobs,
                 progress=progress)
    release_feats = None
    if released is not None:
        rows = scaled_rows(len(released), len(train), size, np.random.default_rng(streams[6]))
        release_feats = features(coded_targets, coder.transform(released.iloc[rows]),
                                 list(plan.subsets), plan.log_reference, plan.bandwidth)
    pooled, test = score_targets(plan, runs, feats, streams[3], reported=reported,
                                 person_seed=streams[5], released=release_feats)
    return MembershipAuditResult(
        n_targets=positions.size, n_shadows=shadows, shadow_size=size, design=design,
        n_fits=reported, attacks=ATTACKS,
        vulnerability=tuple(float(s) for s in scores),
        n_train=len(train), n_reference=len(reference), columns=tuple(cols),
        target_labels=tuple(train.index[positions].tolist()),
        neighbours=neighbours, bandwidth=bandwidth, radii=RADII, n_subsets=len(subsets),
        candidates=candidates, seconds=time.perf_counter() - start, random_state=seed,
        **pooled), test
