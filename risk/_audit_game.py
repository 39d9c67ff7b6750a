"""The shadow game of :mod:`risk.audit`: which tables are fitted, the fits in parallel, and the
attacks' scores turned into the audit's figures."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.ensemble import RandomForestClassifier

from risk._audit_attacks import features
from risk._audit_stats import auc, clopper_pearson, epsilon_lower_bound, null_z, tpr_at_fpr
from risk._gower_coder import Coded, GowerCoder
from risk._validation import RiskInputError, column_kinds

ATTACK_NAMES = ("distance", "domias", "classifier")
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
    its fit and of its shuffle."""

    rows: np.ndarray
    members: tuple[int, ...]
    scored: tuple[int, ...]
    seed: int


def _balanced(rng: np.random.Generator, runs: int) -> np.ndarray:
    """A random 0/1 vector with exactly half ones."""
    labels = np.zeros(runs, dtype=bool)
    labels[rng.choice(runs, runs // 2, replace=False)] = True
    return labels


def plan_runs(plan: Plan, n_reference: int, seed: np.random.SeedSequence) -> list[Run]:
    """Every shadow run of the game, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    k, r = plan.n_targets, plan.shadows
    if plan.design == "per_target":
        inside = np.column_stack([_balanced(rng, r) for _ in range(k)])  # (r, k)
        return [Run(rows=rng.choice(n_reference, plan.size - int(inside[i, t]), replace=False),
                    members=(t,) if inside[i, t] else (), scored=(t,),
                    seed=int(rng.integers(2**31 - 1)))
                for t in range(k) for i in range(r)]
    inside = np.column_stack([_balanced(rng, r) for _ in range(k)])
    out = []
    for i in range(r):
        members = tuple(int(t) for t in np.flatnonzero(inside[i]))
        out.append(Run(rows=rng.choice(n_reference, plan.size - len(members), replace=False),
                       members=members, scored=tuple(range(k)),
                       seed=int(rng.integers(2**31 - 1))))
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
    results = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks())
    for done, (i, feats) in enumerate(results, start=1):
        out[i] = feats
        if progress:
            progress(done, len(runs))
    return [f for f in out if f is not None]


def _indexed(i: int, *args: Any) -> tuple[int, np.ndarray]:
    return i, _play_one(*args)


def _halves(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """True for the calibration half, stratified by label."""
    cal = np.zeros(labels.size, dtype=bool)
    for value in (False, True):
        idx = rng.permutation(np.flatnonzero(labels == value))
        cal[idx[: (idx.size + 1) // 2]] = True
    return cal


def _attack_scores(x: np.ndarray, y: np.ndarray, cal: np.ndarray, seed: int
                   ) -> dict[str, tuple[np.ndarray, np.ndarray] | None]:
    """Per attack, (calibration scores, test scores); the classifier's calibration scores are
    its out-of-bag predictions; ``None`` where an attack cannot run."""
    out: dict[str, tuple[np.ndarray, np.ndarray] | None] = {
        "distance": (-x[cal, 0], -x[~cal, 0]), "domias": (x[cal, 1], x[~cal, 1])}
    if min(y[cal].sum(), (~y[cal]).sum()) < 2:
        out["classifier"] = None
        return out
    forest = RandomForestClassifier(n_estimators=FOREST_TREES, oob_score=True,
                                    random_state=seed, n_jobs=1).fit(x[cal], y[cal])
    oob = np.nan_to_num(forest.oob_decision_function_[:, 1], nan=0.5)
    out["classifier"] = (oob, forest.predict_proba(x[~cal])[:, 1])
    return out


def score_targets(plan: Plan, runs: list[Run], feats: list[np.ndarray],
                  seed: np.random.SeedSequence) -> dict[str, Any]:
    """Per-target AUCs, the pooled TPR at 1 % and 10 % FPR and the epsilon lower bound."""
    rng = np.random.default_rng(seed)
    rows: list[list[np.ndarray]] = [[] for _ in range(plan.n_targets)]
    labels: list[list[bool]] = [[] for _ in range(plan.n_targets)]
    for run, f in zip(runs, feats, strict=True):
        for j, t in enumerate(run.scored):
            rows[t].append(f[j])
            labels[t].append(t in run.members)
    attack_auc: dict[str, list[float]] = {a: [] for a in ATTACK_NAMES}
    selected, pooled_scores, pooled_labels, skipped = [], [], [], 0
    for t in range(plan.n_targets):
        x, y = np.array(rows[t]), np.array(labels[t])
        cal = _halves(y, rng)
        scores = _attack_scores(x, y, cal, int(rng.integers(2**31 - 1)))
        best, best_cal = "distance", -math.inf
        for name in ATTACK_NAMES:
            pair = scores[name]
            if pair is None:
                attack_auc[name].append(math.nan)
                skipped += 1
                continue
            attack_auc[name].append(auc(pair[1], y[~cal]))
            a = auc(pair[0], y[cal])
            if math.isfinite(a) and a > best_cal:
                best, best_cal = name, a
        selected.append(best)
        pair = scores[best]
        assert pair is not None
        pooled_scores.append(null_z(pair[0], y[cal], pair[1]))
        pooled_labels.append(y[~cal])
    s, y_all = np.concatenate(pooled_scores), np.concatenate(pooled_labels)
    out: dict[str, Any] = {
        "target_auc": tuple(float(np.nanmax(v)) if np.isfinite(v).any() else math.nan
                            for v in zip(*attack_auc.values(), strict=True)),
        "attack_auc": {a: tuple(v) for a, v in attack_auc.items()},
        "selected_attack": tuple(selected), "classifier_skipped": skipped,
        "n_member_runs": int(y_all.sum()), "n_nonmember_runs": int((~y_all).sum()),
    }
    for level, tag in ((0.01, "1pct"), (0.1, "10pct")):
        tp, n_pos, fp, n_neg = tpr_at_fpr(s, y_all, level)
        out |= {f"tpr_at_{tag}": tp / n_pos, f"tpr_at_{tag}_interval": clopper_pearson(tp, n_pos),
                f"fpr_at_{tag}": fp / n_neg, f"fpr_at_{tag}_interval": clopper_pearson(fp, n_neg)}
        if tag == "1pct":
            out |= {"true_positives_1pct": tp, "false_positives_1pct": fp}
    out["epsilon_lower_bound"] = epsilon_lower_bound(out["tpr_at_1pct_interval"].low,
                                                     out["fpr_at_1pct_interval"].high)
    return out
