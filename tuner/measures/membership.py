"""Membership disclosure by the partition method (El Emam, Mosquera & Fang 2022; DESIGN 3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import risk
from tuner.measures.base import (
    Bound,
    Inputs,
    MeasureSpec,
    Option,
    Outcome,
    ReportRow,
    at_least,
    open_unit,
)

NUMERIC_BINS = Option("numeric_bins", "int", 20,
                      "numeric columns with more distinct values are cut into this many bins",
                      at_least("numeric_bins", 1))


def _compute(inp: Inputs) -> Outcome:
    o = inp.options
    qis = list(inp.quasi_identifiers) if inp.quasi_identifiers else None
    result = risk.membership_disclosure(
        inp.train, inp.holdout, inp.synthetic, population_size=inp.population_size,
        quasi_identifiers=qis, hamming_threshold=o["hamming_threshold"], repeats=o["repeats"],
        numeric_bins=o["numeric_bins"], m_threshold=o["m_threshold"], random_state=inp.seed,
    )
    return Outcome({"": result})


def _metrics(r: Any) -> dict[str, float]:
    return {"m": r.m, "m_spread_low": r.m_spread.low, "m_spread_high": r.m_spread.high,
            "f1": r.f1, "f_naive": r.f_naive, "precision": r.precision, "recall": r.recall,
            "m_expected_members": r.expected_members, "m_can_bind": float(r.can_bind)}


def _report(label: str, r: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    return [ReportRow(
        f"membership disclosure M (h = {r.hamming_threshold})",
        f"{r.m:.4f} (spread over {r.repeats} attack sets [{r.m_spread.low:.4f}, "
        f"{r.m_spread.high:.4f}])",
        f"<= {o['m_threshold']}",
        f"An intruder holding a person's record and the release claims membership with F1 "
        f"{r.f1:.3f} against {r.f_naive:.3f} for calling everyone a member (t = "
        f"{r.sampling_fraction:.4f}, {r.expected_members:.1f} members expected per attack set "
        f"of {r.attack_size}); M < 0 means worse than that guess."
        + (f" CANNOT BIND: {r.warning}" if not r.can_bind else ""))]


SPECS = (
    MeasureSpec(
        "membership",
        options=(
            Option("m_threshold", "float", 0.2,
                   "M <= m_threshold is a hard constraint and discounts the loss",
                   open_unit("m_threshold")),
            Option("hamming_threshold", "int", 0,
                   "claim 'member' within this many differing quasi-identifiers",
                   at_least("hamming_threshold", 0)),
            Option("repeats", "int", 100, "attack sets drawn", at_least("repeats", 1)),
            NUMERIC_BINS,
        ),
        enabled=lambda o: True,
        compute=_compute,
        metrics=_metrics,
        bounds=(Bound("m", "m", "m_threshold"),),
        report=_report,
    ),
)
