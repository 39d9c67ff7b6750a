"""The shadow game of :mod:`risk.audit`: which tables are fitted, the fits in parallel, and the
attacks' scores turned into the audit's figures."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, cpu_count, delayed
from sklearn.ensemble import RandomForestClassifier

from risk._audit_attacks import features
from risk._audit_bound import fit_interval
from risk._audit_person import permutations, randomisation_p
from risk._audit_release import release_figures
from risk._audit_stats import (
    auc,
    calibrated_threshold,
    epsilon_ceiling,
    epsilon_lower_bound,
    loo_null_z,
    null_z,
)
from risk._gower_coder import Coded, GowerCoder
from risk._validation import RiskInputError, column_kinds

ATTACK_NAMES = ("distance", "domias", "classifier")
FPR_LEVELS = (0.01, 0.1)
FOREST_TREES = 100


@dataclasses.dataclass(frozen=True)
class Plan:
    """The game's settings (see :func:`risk.audit.membership_audit`)."""

    design: str
    n_targets: int
    shadows: int
    size: int
    subsets: tuple[np.ndarray, ...]
    bandwidth: float
    log_reference: np.ndarray  # per target: log density of the reference data at it


@dataclasses.dataclass(frozen=True)
class Run:
    """One shadow table: reference rows, the targets inserted, the targets scored, the seed of
    its fit and of its shuffle, and whether its runs calibrate (else they are tested)."""

    rows: np.ndarray
    members: tuple[int, ...]
    scored: tuple[int, ...]
    seed: int
    calibration: bool = True


def _balanced(rng: np.random.Generator, runs: int) -> np.ndarray:
    """A random 0/1 vector with exactly ``runs // 2`` ones."""
    labels = np.zeros(runs, dtype=bool)
    labels[rng.choice(runs, runs // 2, replace=False)] = True
    return labels


def _halves(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """True for the calibration half, stratified by label (the odd one to calibration)."""
    cal = np.zeros(labels.size, dtype=bool)
    for value in (False, True):
        idx = rng.permutation(np.flatnonzero(labels == value))
        cal[idx[: (idx.size + 1) // 2]] = True
    return cal


def plan_runs(plan: Plan, n_reference: int, seed: np.random.SeedSequence) -> list[Run]:
    """Every shadow run of the game, drawn from ``seed``. Calibration and test are split by
    *fit*: per target, each target's runs, stratified by membership; shared, half of the fits
    calibrate every target and the others test every target, each target in exactly half of
    the calibration fits' tables and, in each test fit, on a coin of its own (so that the test
    fits are independent and alike), and no fit is read on both sides (its runs are
    dependent)."""
    rng = np.random.default_rng(seed)
    k, r = plan.n_targets, plan.shadows
    if plan.design == "per_target":
        inside = np.column_stack([_balanced(rng, r) for _ in range(k)])  # (r, k)
        cal = np.column_stack([_halves(inside[:, t], rng) for t in range(k)])
        return [Run(rows=rng.choice(n_reference, plan.size - int(inside[i, t]), replace=False),
                    members=(t,) if inside[i, t] else (), scored=(t,),
                    seed=int(rng.integers(2**31 - 1)), calibration=bool(cal[i, t]))
                for t in range(k) for i in range(r)]
    fit_cal = np.zeros(r, dtype=bool)
    fit_cal[: (r + 1) // 2] = True
    inside = np.zeros((r, k), dtype=bool)
    inside[fit_cal] = np.column_stack([_balanced(rng, int(fit_cal.sum())) for _ in range(k)])
    # the test fits independent and alike, as the bound over fits needs (risk._audit_bound):
    # each holds each target with probability one half, on its own coin
    inside[~fit_cal] = rng.random((int((~fit_cal).sum()), k)) < 0.5
    out = []
    for i in range(r):
        members = tuple(int(t) for t in np.flatnonzero(inside[i]))
        out.append(Run(rows=rng.choice(n_reference, plan.size - len(members), replace=False),
                       members=members, scored=tuple(range(k)),
                       seed=int(rng.integers(2**31 - 1)), calibration=bool(fit_cal[i])))
    return out


def _table(run: Run, reference: pd.DataFrame, targets: pd.DataFrame) -> pd.DataFrame:
    """The run's shadow table, rows shuffled (so that no target sits at a known position)."""
    parts = [reference.iloc[run.rows], targets.iloc[list(run.members)]]
    # a part with no rows is left out: pandas would otherwise warn that it may one day change
    # the joint dtypes because of it (an all-missing column among the targets, say)
    table = pd.concat([part for part in parts if len(part)] or parts[:1], ignore_index=True)
    order = np.random.default_rng(run.seed).permutation(len(table))
    return table.iloc[order].reset_index(drop=True)


def _play_one(fit_sample: Callable[[pd.DataFrame, int], pd.DataFrame], table: pd.DataFrame,
              seed: int, coder: GowerCoder, targets: Coded, plan: Plan,
              log_reference: np.ndarray) -> np.ndarray:
    synthetic = fit_sample(table, seed)
    if not isinstance(synthetic, pd.DataFrame) or synthetic.empty:
        raise RiskInputError(f"`fit_sample` must return a non-empty DataFrame, but returned "
                             f"{type(synthetic).__name__} {getattr(synthetic, 'shape', '')}.")
    lacking = [c for c in coder.columns if c not in synthetic.columns]
    if lacking:
        raise RiskInputError(f"`fit_sample` returned data that lacks the audited column(s) "
                             f"{lacking}.")
    # the same checks as every measure's: kinds of dtype, types of values, finite numbers
    column_kinds({"train": table, "synthetic": synthetic}, list(coder.columns))
    coded = coder.transform(synthetic)
    return features(targets, coded, list(plan.subsets), log_reference, plan.bandwidth)


def play(plan: Plan, runs: list[Run], fit_sample: Callable[[pd.DataFrame, int], pd.DataFrame],
         targets: pd.DataFrame, reference: pd.DataFrame, coder: GowerCoder,
         coded_targets: Coded, *, n_jobs: int,
         progress: Callable[[int, int], None] | None) -> list[np.ndarray]:
    """Fit and score every run (``n_jobs`` processes); the features of each run's scored
    targets, in run order."""
    def tasks() -> Iterator[Any]:
        for i, run in enumerate(runs):
            scored = list(run.scored)
            yield delayed(_indexed)(i, fit_sample, _table(run, reference, targets), run.seed,
                                    coder, coded_targets.rows(np.array(scored)), plan,
                                    plan.log_reference[scored])

    out: list[np.ndarray | None] = [None] * len(runs)
    if progress:
        progress(0, len(runs))
    # more processes than cores or fits never help (and 10**30 of them overflowed joblib)
    # (the cores this process may use: joblib counts CPU affinity and a container's quota)
    workers = n_jobs if n_jobs == -1 else max(1, min(n_jobs, len(runs), cpu_count()))
    results = Parallel(n_jobs=workers, return_as="generator_unordered")(tasks())
    for done, (i, feats) in enumerate(results, start=1):
        out[i] = feats
        if progress:
            progress(done, len(runs))
    return [f for f in out if f is not None]


def _indexed(i: int, *args: Any) -> tuple[int, np.ndarray]:
    return i, _play_one(*args)


Scores = tuple[np.ndarray, np.ndarray, np.ndarray]


def _attack_scores(x: np.ndarray, y: np.ndarray, cal: np.ndarray, seed: int,
                   extra: np.ndarray) -> dict[str, Scores | None]:
    """Per attack, (calibration scores, test scores, scores of the ``extra`` feature rows: the
    released table's, none without one); the classifier's calibration scores are its
    out-of-bag predictions; ``None`` where an attack cannot run."""
    out: dict[str, Scores | None] = {
        "distance": (-x[cal, 0], -x[~cal, 0], -extra[:, 0]),
        "domias": (x[cal, 1], x[~cal, 1], extra[:, 1])}
    if min(y[cal].sum(), (~y[cal]).sum()) < 2:
        out["classifier"] = None
        return out
    forest = RandomForestClassifier(n_estimators=FOREST_TREES, oob_score=True,
                                    random_state=seed, n_jobs=1).fit(x[cal], y[cal])
    oob = np.nan_to_num(forest.oob_decision_function_[:, 1], nan=0.5)
    released = forest.predict_proba(extra)[:, 1] if len(extra) else np.empty(0)
    out["classifier"] = (oob, forest.predict_proba(x[~cal])[:, 1], released)
    return out


@dataclasses.dataclass(frozen=True)
class TestRuns:
    """Every test run's outcome, for the pooled figures and for measuring them: its target,
    its fit (position in the runs) and that fit's seed, whether the target was in it, its
    standardised score."""

    target: np.ndarray
    fit: np.ndarray
    fit_seed: np.ndarray
    member: np.ndarray
    z: np.ndarray
    thresholds: dict[float, float]  # per FPR level, fixed on the calibration runs

    def called(self, level: float) -> np.ndarray:
        """Runs called members at the threshold of ``level``."""
        return self.z > self.thresholds[level]

    def rates(self, level: float, keep: np.ndarray | None = None) -> dict[str, Any]:
        """TPR and FPR at ``level`` over the runs ``keep`` (all by default), with their
        intervals over test fits (:mod:`risk._audit_bound`), and the counts behind them."""
        keep = np.ones(self.z.size, dtype=bool) if keep is None else keep
        called = self.called(level)
        out: dict[str, Any] = {}
        for name, side in (("tpr", self.member), ("fpr", ~self.member)):
            use = keep & side
            fits, inverse = np.unique(self.fit[use], return_inverse=True)
            hits = np.bincount(inverse, weights=called[use], minlength=fits.size)
            trials = np.bincount(inverse, minlength=fits.size).astype(float)
            out[name] = float(hits.sum() / max(trials.sum(), 1.0))
            out[f"{name}_interval"] = fit_interval(hits, trials)
            out[f"{name}_counts"] = (int(hits.sum()), int(trials.sum()))
            out[f"{name}_trials"] = trials
            out[f"{name}_hits"] = hits
        return out


def _per_target(plan: Plan, runs: list[Run], feats: list[np.ndarray]
                ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per target: its runs' features, membership, calibration flag and fit index."""
    rows: list[list[np.ndarray]] = [[] for _ in range(plan.n_targets)]
    meta: list[list[tuple[bool, bool, int]]] = [[] for _ in range(plan.n_targets)]
    for i, (run, f) in enumerate(zip(runs, feats, strict=True)):
        for j, t in enumerate(run.scored):
            rows[t].append(f[j])
            meta[t].append((t in run.members, run.calibration, i))
    out = []
    for t in range(plan.n_targets):
        m = np.array(meta[t], dtype=np.int64).reshape(-1, 3)
        out.append((np.array(rows[t]), m[:, 0].astype(bool), m[:, 1].astype(bool), m[:, 2]))
    return out


def _person_p(x: np.ndarray, y: np.ndarray, cal: np.ndarray, rep: np.ndarray,
              classifier: Scores | None, b: int,
              rng: np.random.Generator) -> float:
    """One target's exact randomisation p-value (:mod:`risk._audit_person`): the attacks that
    learn nothing from the labels on every reported run, permuted within the halves; the
    classifier on its test runs; Bonferroni over the two."""
    untrained = randomisation_p([-x[rep, 0], x[rep, 1]], y[rep], cal[rep], b, rng)
    if classifier is None:
        return untrained
    shown = rep[~cal]
    test = classifier[1][shown]
    trained = randomisation_p([test], y[~cal][shown], np.zeros(test.size, dtype=np.int8), b,
                              rng)
    return min(1.0, 2.0 * min(untrained, trained))


def score_targets(plan: Plan, runs: list[Run], feats: list[np.ndarray],
                  seed: np.random.SeedSequence, *, reported: int | None = None,
                  person_seed: np.random.SeedSequence | None = None,
                  released: np.ndarray | None = None) -> tuple[dict[str, Any], TestRuns]:
    """Per-target AUCs, the pooled TPR at 1 % and 10 % FPR and the epsilon lower bound, with
    every test run's outcome. Per target, the attack with the best calibration AUC is chosen
    and its scores standardised by the calibration non-members (offline LiRA); the threshold
    of each FPR level is fixed on the calibration non-members' leave-one-out standardised
    scores, pooled over targets, and hits are counted on the test runs only
    (:mod:`risk._audit_stats`). Runs from position ``reported`` on are test runs that no
    figure reads (kept in the returned runs, to measure the figures against). Each target's
    exact p-value of "nothing of this person reaches the output" (:mod:`risk._audit_person`)
    draws its permutations from ``person_seed`` (a stream of its own: the other figures are
    those of the same ``seed`` without it); its member test runs and their hits at the 1 % FPR
    threshold say how much it is exposed. ``released``: the targets' features on the released
    table (one row each), scored by each target's chosen attack (:mod:`risk._audit_release`)."""
    rng = np.random.default_rng(seed)
    person_rng = np.random.default_rng(person_seed)
    b = permutations(plan.n_targets)
    reported = len(runs) if reported is None else reported
    attack_auc: dict[str, list[float]] = {a: [] for a in ATTACK_NAMES}
    selected, chosen_auc, skipped = [], [], 0
    nulls, tested, p_values = [], [], []
    release_z = []
    for t, (x, y, cal, fit) in enumerate(_per_target(plan, runs, feats)):
        extra = released[t:t + 1] if released is not None else np.empty((0, x.shape[1]))
        scores = _attack_scores(x, y, cal, int(rng.integers(2**31 - 1)), extra)
        shown = fit[~cal] < reported
        best, best_cal = "distance", -math.inf
        for name in ATTACK_NAMES:
            pair = scores[name]
            if pair is None:
                attack_auc[name].append(math.nan)
                skipped += 1
                continue
            attack_auc[name].append(auc(pair[1][shown], y[~cal][shown]))
            a = auc(pair[0], y[cal])
            if math.isfinite(a) and a > best_cal:
                best, best_cal = name, a
        p_values.append(_person_p(x, y, cal, fit < reported, scores["classifier"], b,
                                  person_rng))
        selected.append(best)
        chosen_auc.append(attack_auc[best][-1])
        pair = scores[best]
        assert pair is not None
        nulls.append(loo_null_z(pair[0], y[cal]))
        release_z.append(null_z(pair[0], y[cal], pair[2]))
        tested.append((np.full((~cal).sum(), t), fit[~cal], y[~cal],
                       null_z(pair[0], y[cal], pair[1])))
    null = np.concatenate(nulls)
    target, fit, member, z = (np.concatenate(parts) for parts in zip(*tested, strict=True))
    test = TestRuns(target=target, fit=fit, fit_seed=np.array([runs[i].seed for i in fit]),
                    member=member, z=z,
                    thresholds={level: calibrated_threshold(null, level)
                                for level in FPR_LEVELS})
    kept = test.fit < reported
    # per person: its member test runs, and how many the 1 % threshold calls members
    use = kept & member
    called = test.called(0.01)[use]
    person_runs = np.bincount(target[use], minlength=plan.n_targets)
    person_hits = np.bincount(target[use], weights=called, minlength=plan.n_targets)
    member = member[kept]
    out: dict[str, Any] = {
        "target_auc": tuple(float(a) for a in chosen_auc),
        "best_attack_auc": tuple(float(np.nanmax(v)) if np.isfinite(v).any() else math.nan
                                 for v in zip(*attack_auc.values(), strict=True)),
        "attack_auc": {a: tuple(v) for a, v in attack_auc.items()},
        "selected_attack": tuple(selected), "classifier_skipped": skipped,
        "n_member_runs": int(member.sum()), "n_nonmember_runs": int((~member).sum()),
        "n_calibration_nulls": int(null.size),
        "signal_p_values": tuple(p_values), "n_permutations": b,
        "target_member_hits": tuple(int(h) for h in person_hits),
        "target_member_runs": tuple(int(n) for n in person_runs),
    }
    for level, tag in ((0.01, "1pct"), (0.1, "10pct")):
        r = test.rates(level, kept)
        out |= {f"tpr_at_{tag}": r["tpr"], f"tpr_at_{tag}_interval": r["tpr_interval"],
                f"fpr_at_{tag}": r["fpr"], f"fpr_at_{tag}_interval": r["fpr_interval"],
                f"threshold_{tag}": test.thresholds[level]}
        if tag == "1pct":
            out |= {"true_positives_1pct": r["tpr_counts"][0],
                    "false_positives_1pct": r["fpr_counts"][0],
                    # by test fit: what the pooled bound at another confidence is made of
                    "member_hits_by_fit": tuple(float(h) for h in r["tpr_hits"]),
                    "member_runs_by_fit": tuple(float(n) for n in r["tpr_trials"]),
                    "epsilon_ceiling": epsilon_ceiling(r["tpr_trials"], r["fpr_trials"])}
    if released is not None:
        out |= release_figures(np.concatenate(release_z), test.thresholds[0.01],
                               target=test.target[kept], member=test.member[kept],
                               z=test.z[kept])
    out["epsilon_lower_bound"] = epsilon_lower_bound(out["tpr_at_1pct_interval"].low,
                                                     out["fpr_at_1pct_interval"].high)
    return out, test
