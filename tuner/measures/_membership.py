"""Membership disclosure by the partition method (El Emam, Mosquera & Fang 2022; design §3).

**The copy ceiling.** M can be blind whatever the number of members per attack set: with few
distinct key combinations, or a generous Hamming threshold, holdout records share the training
records' keys, and even a verbatim copy of the training data scores M <= 0.2
(``experiments/membership_validation``, finding 3: M = -0.002 to 0.091 for a copy with Adult's
six keys or at h = 2). Each trial therefore also reports ``m_copy_ceiling``, the M of the
training data themselves as the synthetic data (the most this attack can see; it depends on the
split, the quasi-identifiers, h and the bins only, so it is computed once per process and seeded
by the study's seed). When the ceiling is <= ``m_threshold``, M cannot bind: the trial's result
says so (``can_bind`` False, with the reason in ``warning``), as below 20 members per attack
set, and the gate's measures (copies, near copies, DCR) decide.

**The confidence interval** (design §3.2, issue 34). Every trial logs ``m_ci_low`` and
``m_ci_high``, the ``m_level`` (default 95 %) confidence interval of the M that the same attack
on the whole population would give; the attack-set spread (``m_spread_*``) keeps its own name.
``m_decision = "upper"`` adds the constraint ``m_upper``: ``m_ci_high <= m_threshold``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pandas as pd

import risk
from risk.params import OPEN_UNIT, Choices, Range
from tuner.measures._base import (
    Bound,
    Inputs,
    MeasureSpec,
    Option,
    Outcome,
    ReportRow,
)

NUMERIC_BINS = Option("numeric_bins", "int", 20,
                      "numeric columns with more distinct values are cut into this many bins",
                      valid=Range(1))


def _membership(inp: Inputs, synthetic: pd.DataFrame, seed: int, *,
                curve: bool) -> risk.MembershipResult:
    """M of ``synthetic``; ``curve``: F1 at every threshold too (the release's report), else
    distances only up to h (a hash join at h = 0; M, F1, precision, recall are the same)."""
    o = inp.options
    qis = list(inp.keys) if inp.keys else None
    return risk.membership_disclosure(
        inp.train, inp.holdout, synthetic, population_size=inp.population_size,
        keys=qis, hamming_threshold=o["hamming_threshold"], repeats=o["repeats"],
        numeric_bins=o["numeric_bins"], m_threshold=o["m_threshold"], random_state=seed,
        curve=curve, ci_level=o["m_level"],
    )


_CEILINGS: dict[tuple[Any, ...], float] = {}


def copy_ceiling(inp: Inputs) -> float:
    """M of a verbatim copy of the training data under the trial's attack (cached per split and
    options: the same for every trial of a study)."""
    o = inp.options
    key = (int(pd.util.hash_pandas_object(inp.train).sum()),
           int(pd.util.hash_pandas_object(inp.holdout).sum()), len(inp.train),
           len(inp.holdout), inp.population_size, inp.keys,
           o["hamming_threshold"], o["repeats"], o["numeric_bins"], inp.study_seed)
    if key not in _CEILINGS:
        _CEILINGS[key] = _membership(inp, inp.train, inp.study_seed, curve=False).m
    return _CEILINGS[key]


def _compute(inp: Inputs) -> Outcome:
    o = inp.options
    result = _membership(inp, inp.synthetic, inp.seed, curve=inp.release)
    ceiling = copy_ceiling(inp)
    if result.can_bind and ceiling <= result.m_threshold:
        result = dataclasses.replace(result, can_bind=False, warning=(
            f"a verbatim copy of the training data scores M = {ceiling:.3f} <= "
            f"{result.m_threshold} under this attack (quasi-identifiers, h = "
            f"{result.hamming_threshold}, {o['numeric_bins']} bins): holdout records share the "
            "training records' keys, so no synthetic data can push M past the threshold. "
            "More quasi-identifiers, more numeric_bins"
            + (" or a lower hamming_threshold" if result.hamming_threshold else "")
            + " would let M see copies."))
    return Outcome({"": result}, {"m_copy_ceiling": ceiling})


def _metrics(r: Any) -> dict[str, float]:
    return {"m": r.m, "m_ci_low": r.m_ci.low, "m_ci_high": r.m_ci.high,
            "m_spread_low": r.m_spread.low, "m_spread_high": r.m_spread.high,
            "f1": r.f1, "f_naive": r.f_naive, "precision": r.precision, "recall": r.recall,
            "m_expected_members": r.expected_members, "m_can_bind": float(r.can_bind)}


def _report(label: str, r: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    return [ReportRow(
        f"membership disclosure M (h = {r.hamming_threshold})",
        f"{r.m:.4f} ({r.m_ci.level:.0%} confidence interval [{r.m_ci.low:.4f}, "
        f"{r.m_ci.high:.4f}]; spread over {r.repeats} attack sets [{r.m_spread.low:.4f}, "
        f"{r.m_spread.high:.4f}])",
        f"<= {o['m_threshold']}"
        + (" (upper end of the interval too)" if o.get("m_decision") == "upper" else ""),
        f"An intruder holding a person's record and the release claims membership with F1 "
        f"{r.f1:.3f} against {r.f_naive:.3f} for calling everyone a member (t = "
        f"{r.sampling_fraction:.4f}, {r.expected_members:.1f} members expected per attack set "
        f"of {r.attack_size}); M < 0 means worse than that guess. {CI_MEANING}"
        + (f" {cannot_bind(r.warning)}" if not r.can_bind else ""))]


def cannot_bind(warning: str) -> str:
    """The one sentence every output (terminal, summary, report, the measure's row) says when
    M cannot bind: why (``warning``: the risk library's, which begins "M cannot bind: ", or the
    copy ceiling's) and what decides instead."""
    why = warning.removeprefix("M cannot bind: ").strip()
    return (f"M cannot bind here: {why[:1].upper()}{why[1:]} The release gate's measures "
            "(exact and near copies, distance to closest record, replicated uniques) decide.")


DECISIONS = ("estimate", "upper")
CI_MEANING = ("The confidence interval covers, in that share of releases, the M that the same "
              "attack on the whole population would give (members: the training records; "
              "non-members: the population's other people); the spread is how much single "
              "attack sets on the holdout vary, not a confidence interval.")




SPECS = (
    MeasureSpec(
        "membership",
        options=(
            Option("m_threshold", "float", 0.2,
                   "M <= m_threshold is a hard constraint and discounts the loss",
                   valid=OPEN_UNIT),
            Option("hamming_threshold", "int", 0,
                   "claim 'member' within this many differing quasi-identifiers",
                   valid=Range(0)),
            Option("m_decision", "str", "estimate",
                   "'estimate': feasible when M <= m_threshold; 'upper': also the upper end of "
                   "M's confidence interval (m_level) must be <= m_threshold",
                   valid=Choices(DECISIONS)),
            Option("m_level", "float", 0.95,
                   "confidence level of M's confidence interval (reported, and decided on under "
                   "m_decision = 'upper')", valid=OPEN_UNIT),
            Option("repeats", "int", 100, "attack sets drawn", valid=Range(1)),
            NUMERIC_BINS,
        ),
        enabled=lambda o: True,
        compute=_compute,
        metrics=_metrics,
        bounds=(Bound("m", "m", "m_threshold", interval=lambda r: r.m_ci),
                Bound("m_upper", "m_ci_high", "m_threshold", interval=lambda r: r.m_ci,
                      when=lambda o: o["m_decision"] == "upper")),
        report=_report,
    ),
)
