"""The release gate beside M (design §9.1): exact copies, replicated uniques, distance to the
closest record.

M by the partition method cannot see copies when key combinations or members per attack set
are few, so every trial also measures what a review board checks first: how many synthetic
records equal a training record (against the holdout's chance level), whether any equals a
record *unique* in train, and whether synthetic records sit closer to the training records
than to real records the generator never saw.

Replicated uniques (``risk.replicated_uniques(..., synthetic_unique_only=False)``: every
synthetic record equal on all released columns to a train-unique record) never reach a release
under the defaults. ``replicated_uniques = "remove"`` (default) removes them from each trial's
synthetic data *before* it is scored, as synthpop's ``sdc(rm.replicated.uniques = TRUE)`` does,
so the scored data are the released data and the count removed is logged and put in the
manifest; ``"infeasible"`` keeps the data as sampled and makes any such trial infeasible.

Copies and distances judge the *generator*, so they are measured on the synthetic data as
sampled, before the removal: a generator that reproduces its training data is infeasible even
when removing its copies of unique records would leave only copies of common ones (on Hu's ACS,
a verbatim copy of the training data has 7.1 % more exact copies of train than of holdout; after
the removal the excess would vanish, since the records left are combinations shared by several
people).

Near copies: a copy with one numeric value nudged is no exact copy. ``near_copies`` counts
copies on every column with the numeric ones binned as M bins them (``numeric_bins``, bins
fitted on the real records), train share minus holdout share, limited by ``near_copy_limit``
(default 0.05, the copies limit). In ``experiments/membership_validation`` (finding 5) a
generator copying 10 % of its records with one value nudged passed M, exact copies and DCR in
all 25 trials; this measure was 0.089-0.100 for every one of them and <= 0.001 for SDV's Gaussian
copula, CTGAN and CopulaGAN.

In partial synthesis (``[study] synthesize``) the kept columns are real, row by row, and these
four measures are replaced by :mod:`tuner.measures._partial_gate`, which says what applies and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

import risk
from risk.params import Choices
from tuner.measures._base import (
    DIFFERENCE_LIMIT,
    Bound,
    Inputs,
    MeasureSpec,
    Option,
    Outcome,
    ReportRow,
    num,
)
from tuner.measures._identification import synthesized

UNIQUES_POLICIES = ("remove", "infeasible")


def removed_by_gate(train: pd.DataFrame, synthetic: pd.DataFrame, policy: str) -> np.ndarray:
    """Which synthetic records (by position) the gate removes: none unless ``policy`` is
    ``"remove"``, then every copy of a record unique in ``train``."""
    if policy != "remove":
        return np.zeros(len(synthetic), dtype=bool)
    return np.asarray(risk.replicated_uniques(train, synthetic, synthetic_unique_only=False))


def remove_replicated_uniques(train: pd.DataFrame, synthetic: pd.DataFrame,
                              policy: str) -> tuple[pd.DataFrame, int]:
    """The synthetic data the gate lets through, and how many records it removed."""
    if policy != "remove":
        return synthetic, 0
    mask = removed_by_gate(train, synthetic, policy)
    return synthetic.loc[~mask].reset_index(drop=True), int(mask.sum())


def _copies(inp: Inputs) -> Outcome:
    result = risk.exact_copies(inp.train, inp.as_sampled, holdout=inp.holdout)
    return Outcome({"": result}, {"replicated_uniques_removed": float(inp.removed_rows)})


def _copies_metrics(r: Any) -> dict[str, float]:
    return {"copies_train_share": r.train_share, "copies_holdout_share": num(r.holdout_share),
            "copies_difference": num(r.difference),
            "train_unique_copies": float(r.train_unique_copies),
            "replicated_uniques": float(r.replicated_uniques)}


def _copies_report(label: str, r: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    return [
        ReportRow("exact copies of training records: train - holdout share",
                  f"{num(r.difference):+.4f} ({r.train_share:.4f} - {num(r.holdout_share):.4f};"
                  f" {r.train_copies} of {r.n_synthetic} records)",
                  f"<= {o['copy_limit']}",
                  "Synthetic records equal on every released column to a training record, "
                  "beyond the share equal to a real record the generator never saw (chance)."),
        ReportRow("copies of records unique in the training data, as sampled",
                  f"{r.train_unique_copies}",
                  "removed before release" if o["replicated_uniques"] == "remove" else "0",
                  "A synthetic record equal to the only training record with its values "
                  "reproduces a real person; none is released."),
    ]


DCR_SAMPLE = 5_000  # synthetic records a trial's DCR looks at (Wilson 95 %: about +-0.014)


def _near_copies(inp: Inputs) -> Outcome:
    result = risk.exact_copies(inp.train, inp.as_sampled, holdout=inp.holdout,
                               numeric_bins=inp.options["numeric_bins"])
    return Outcome({"": result})


def _near_metrics(r: Any) -> dict[str, float]:
    return {"near_copies_train_share": r.train_share,
            "near_copies_holdout_share": num(r.holdout_share),
            "near_copies_difference": num(r.difference),
            "near_copies_binned_columns": float(len(r.binned_columns))}


def _near_report(label: str, r: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    binned = ", ".join(r.binned_columns) or "none (every column compared exactly)"
    return [ReportRow(
        "near copies (numeric columns binned): train - holdout share",
        f"{num(r.difference):+.4f} ({r.train_share:.4f} - {num(r.holdout_share):.4f})",
        f"<= {o['near_copy_limit']}",
        f"Synthetic records equal to a training record once numeric values are cut into "
        f"{r.numeric_bins} bins ({binned}), beyond chance: catches copies with a value "
        "nudged, which no exact check sees.")]


def _dcr(inp: Inputs) -> Outcome:
    # a trial: exact nearest neighbours of a seeded sample of the synthetic records, the share
    # an estimate with its interval at a quarter of the cost on 20,000 rows (the bench_trial
    # block of experiments/benchmarks/RESULTS.md); the release: every record, and a trial whose
    # data fail then is refused (tuner.release._recreate.ReleaseRejected) and the next best one
    # tried
    result = risk.distance_to_closest_record(
        inp.train, inp.as_sampled, holdout=inp.holdout,
        max_synthetic=None if inp.release else DCR_SAMPLE, random_state=inp.seed)
    return Outcome({"": result})


def _dcr_metrics(r: Any) -> dict[str, float]:
    return {"dcr_share_closer_to_train": r.share_closer_to_train, "dcr_baseline": r.baseline,
            "dcr_excess": r.excess, "dcr_ci_low": r.interval.low, "dcr_ci_high": r.interval.high}


def _excess_interval(r: Any) -> risk.Interval:
    """The share's Wilson interval, less the baseline (a constant given the split)."""
    i = r.interval
    return risk.Interval(i.low - r.baseline, i.high - r.baseline, i.level, i.method)


def _dcr_on_scale(other: Any, seen: Any) -> tuple[float, risk.Interval]:
    """DCR's excess against another reference set (the sealed audit set), on the scale of the
    one the trials saw. A release of which a share q is drawn to training records and the rest
    is like fresh records has excess q (1 - b), b = n_train / (n_train + n_reference): the same
    leak shows a smaller excess against fewer reference records (1,200 audit records against
    1,800 holdout records under the default split: 0.286 q instead of 0.375 q). So the
    excess is multiplied by (1 - b_seen) / (1 - b_other) (checked in
    ``experiments/release_audit/README.md``: with copies of 10 % and 20 % of the training
    records the raw shift is -0.008 and -0.017, the rescaled one +0.002)."""
    factor = (1.0 - seen.baseline) / (1.0 - other.baseline)
    i = _excess_interval(other)
    return other.excess * factor, risk.Interval(i.low * factor, i.high * factor, i.level,
                                               f"{i.method}, rescaled")


def _dcr_report(label: str, r: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    return [ReportRow(
        "distance to closest record: share closer to train",
        f"{r.share_closer_to_train:.4f} [{r.interval.low:.4f}, {r.interval.high:.4f}] "
        f"(expected {r.baseline:.4f} for a generator that never saw them; "
        f"{r.n_evaluated:,} of {r.n_synthetic:,} records)",
        f"excess <= {o['dcr_limit']}",
        "Share of synthetic records nearer (Gower distance) to a training record than to any "
        "holdout record, a tie counting the expected value; near 1 when the generator "
        "reproduces its training data.")]


def _unique_copies(inp: Inputs) -> Outcome:
    result = risk.exact_copies(inp.train, inp.synthetic)
    return Outcome({"": result})


def _unique_metrics(r: Any) -> dict[str, float]:
    return {"released_unique_copies": float(r.train_unique_copies)}




SPECS = (
    MeasureSpec(
        "copies",
        options=(
            Option("replicated_uniques", "str", "remove",
                   "'remove' synthetic copies of train-unique records before scoring, or make "
                   "the trial 'infeasible'", valid=Choices(UNIQUES_POLICIES)),
            Option("copy_limit", "float", 0.05,
                   "exact-copy share of train - that of holdout <= copy_limit",
                   valid=DIFFERENCE_LIMIT),
        ),
        enabled=lambda o: not synthesized(o),
        compute=_copies,
        metrics=_copies_metrics,
        bounds=(Bound("copies", "copies_difference", "copy_limit",
                      interval=lambda r: r.difference_interval),),
        report=_copies_report,
    ),
    MeasureSpec(
        # under "infeasible" the released data are the sampled data: any copy of a
        # train-unique record fails the trial (under "remove" there is none left to count)
        "unique_copies",
        options=(),
        enabled=lambda o: o["replicated_uniques"] == "infeasible" and not synthesized(o),
        compute=_unique_copies,
        metrics=_unique_metrics,
        bounds=(Bound("unique_copies", "released_unique_copies", 0.0),),
        reads_holdout=False,
    ),
    MeasureSpec(
        "near_copies",
        options=(
            Option("near_copy_limit", "float", 0.05,
                   "share of synthetic records equal to a train record with numeric columns "
                   "binned (numeric_bins), minus that of holdout, <= near_copy_limit",
                   valid=DIFFERENCE_LIMIT),
        ),
        enabled=lambda o: not synthesized(o),
        compute=_near_copies,
        metrics=_near_metrics,
        bounds=(Bound("near_copies", "near_copies_difference", "near_copy_limit",
                      interval=lambda r: r.difference_interval),),
        report=_near_report,
    ),
    MeasureSpec(
        "dcr",
        options=(
            Option("dcr_limit", "float", 0.1,
                   "share of synthetic records closer to train than holdout, minus its "
                   "expected value, <= dcr_limit", valid=DIFFERENCE_LIMIT),
        ),
        enabled=lambda o: not synthesized(o),
        compute=_dcr,
        metrics=_dcr_metrics,
        bounds=(Bound("dcr", "dcr_excess", "dcr_limit", interval=_excess_interval,
                      rescale=_dcr_on_scale),),
        report=_dcr_report,
        sampled=True,  # DCR_SAMPLE records per trial, every record at release
    ),
)
