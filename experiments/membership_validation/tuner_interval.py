"""The confidence-interval columns of the validation in the tuner's setting (issue #34): M's
interval for each row, whether it covers each truth, and the rescore of stored rows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

import risk
from experiments.membership_validation.tuner_truth import Truth, risk_options
from risk.membership import f1_from_rates, interval_from_rates

ACCEPTABLE_M = risk.ACCEPTABLE_M  # 0.2
INTERVAL_COLUMNS = ("m_ci_low", "m_ci_high", "m_ci_level", "ci_covers", "ci_covers_limit",
                    "f1_ci_low", "f1_ci_high", "upper_decision_agrees", "member_match_rate",
                    "holdout_match_rate", "effective_holdout", "true_member_rate",
                    "true_nonmember_rate", "m_true_limit")
def interval_columns(est: risk.MembershipResult | None, truth: Truth | None, h: int,
                     t: float) -> dict[str, Any]:
    """The trial's confidence interval of M (design §3.2) against the truth: its ends, whether it
    covers the true M, the decision on its upper end, and the matched shares behind both (the
    truth's ``m_true_limit`` is the F1(r, f) limit of its own shares: the truth without its
    attack-set noise)."""
    if est is None or truth is None:
        return dict.fromkeys(INTERVAL_COLUMNS, np.nan)
    m_true = float(risk.relative_f1(float(truth.f1[h]), t))
    limit = float(risk.relative_f1(float(f1_from_rates(truth.member_rate[h],
                                                       truth.nonmember_rate[h], t)), t))
    return {
        "m_ci_low": est.m_ci.low, "m_ci_high": est.m_ci.high, "m_ci_level": est.m_ci.level,
        "ci_covers": bool(est.m_ci.low <= m_true <= est.m_ci.high),
        "ci_covers_limit": bool(est.m_ci.low <= limit <= est.m_ci.high),
        "f1_ci_low": est.f1_ci.low, "f1_ci_high": est.f1_ci.high,
        "upper_decision_agrees": (est.m_ci.high <= ACCEPTABLE_M) == (m_true <= ACCEPTABLE_M),
        "member_match_rate": est.member_match_rate,
        "holdout_match_rate": est.holdout_match_rate,
        "effective_holdout": est.effective_holdout,
        "true_member_rate": float(truth.member_rate[h]),
        "true_nonmember_rate": float(truth.nonmember_rate[h]),
        "m_true_limit": limit,
    }


def rescore(frame: pd.DataFrame) -> pd.DataFrame:
    """The interval columns of ``frame`` recomputed with the current library from the stored
    shares, sizes and trial seeds (:func:`risk._membership_interval.interval_from_rates`, what
    ``membership_disclosure`` itself calls: the same numbers as a fresh run), coverage flags
    and the upper-end decision with them. For a change of the interval alone: the distances,
    fits and truths are not recomputed."""
    out = frame.copy()
    ok = out["m_ci_low"].notna() & out["member_match_rate"].notna()
    repeats = risk_options(0)["repeats"]  # the trial's R (the tuner's default)
    for i in out.index[ok]:
        row = out.loc[i]
        t = row["n_train"] / row["population_size"]
        low, high = interval_from_rates(
            float(row["member_match_rate"]), float(row["holdout_match_rate"]),
            n_train=int(row["n_train"]), n_holdout=int(row["n_holdout"]),
            population_size=int(row["population_size"]), sampling_fraction=t,
            repeats=repeats, level=float(row["m_ci_level"]), seed=int(row["trial_seed"]))
        m_low, m_high = (float(risk.relative_f1(v, t)) for v in (low, high))
        out.loc[i, ["f1_ci_low", "f1_ci_high", "m_ci_low", "m_ci_high"]] = [
            low, high, m_low, m_high]
        out.loc[i, "ci_covers"] = bool(m_low <= row["m_true"] <= m_high)
        out.loc[i, "ci_covers_limit"] = bool(m_low <= row["m_true_limit"] <= m_high)
        out.loc[i, "ci_covers_trial_bins"] = bool(m_low <= row["m_true_trial_bins"] <= m_high)
        out.loc[i, "upper_decision_agrees"] = ((m_high <= ACCEPTABLE_M)
                                               == (row["m_true"] <= ACCEPTABLE_M))
    return out


def same_bins_columns(est: risk.MembershipResult | None, truth: Truth | None, h: int,
                      t: float) -> dict[str, Any]:
    """The true M of the trial's own attack (its bin edges: :func:`true_attack` with
    ``trial_bins``), and whether the interval covers it."""
    if est is None or truth is None:
        return dict.fromkeys(("m_true_trial_bins", "ci_covers_trial_bins",
                              "true_nonmember_rate_trial_bins"), np.nan)
    m = float(risk.relative_f1(float(truth.f1[h]), t))
    return {"m_true_trial_bins": m,
            "ci_covers_trial_bins": bool(est.m_ci.low <= m <= est.m_ci.high),
            "true_nonmember_rate_trial_bins": float(truth.nonmember_rate[h])}
