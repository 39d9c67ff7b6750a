"""The release gate in partial synthesis (design §9.1 and 11): which checks apply when the kept
columns are real, and how.

What an intruder does with a partially synthetic release: the kept columns of row i *are*
training record i's, so there is nothing to learn from finding a real record's kept values
in it (they were published on purpose). The disclosure is in the synthesised columns: a row
whose synthesised values are its own record's true ones, found through the variables the
intruder knows. So the gate's copy checks are restricted to the intruder's columns, the known
variables and the synthesised ones (``identification_keys`` + ``synthesize``), and compared
like for like:

* **Exact copies** (constraint ``copies``, limit ``copy_limit``): the share of released rows
  that copy their own training record on those columns (every synthesised value equal to the
  record's; the known ones are equal by construction), minus the same share for the *holdout's
  counterpart*: the holdout records' kept columns with synthesised columns drawn by the same
  fitted model. A model that has not memorised its training records reproduces a record's
  values no more often for a training record than for one it never saw, so the difference is
  0 in expectation and grows as the model copies (on Hu's ACS, CART with ``min_samples_leaf =
  1`` against 50: ``experiments/partial_synthesis``). The usual comparison (released rows equal
  to *any* training record against any holdout record) is reported too, on the intruder's
  columns, but it is not the constraint: every released row carries its own record's known
  values, so a row is more likely to equal some training record than some holdout record
  wherever the known values are rare, even for a model that draws from the population's own
  conditional distribution (``tests/tuner/synthesis/test_partial.py`` builds such a case).
* **Near copies** (``near_copies``, ``near_copy_limit``): the same with the numeric columns
  that have more than ``numeric_bins`` distinct real values compared on that many equal-width
  bins of the real (train and holdout) values, as M bins them.
* **Replicated uniques** are counted on the same columns but never removed, whatever
  ``replicated_uniques`` says: removing row i would withdraw a real record's kept values from
  the release and break the row correspondence that identification risk rests on. A released
  row equal to the only training record with its known and synthesised values is what the
  true match rate counts (a unique match that is right), and that is the constraint.
* **Distance to the closest record** is not computed: every released row differs from its own
  training record in the synthesised columns only, so it is closer to train than to holdout by
  construction; what DCR asks (does the model reproduce its training records?) is what the
  copy checks above ask directly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

import risk
from tuner.measures._base import Bound, Inputs, MeasureSpec, Outcome, ReportRow, num
from tuner.measures._identification import PartialInputs, known_columns, synthesized


@dataclasses.dataclass(frozen=True)
class PartialCopiesResult(risk.Result):
    """Own-record copies on the synthesised columns (release against train, the holdout's
    counterpart against holdout), and copies of any record on the intruder's columns."""

    columns: tuple[str, ...]  # the intruder's columns: known, then synthesised
    train_share: float  # released rows whose synthesised values all equal their own record's
    holdout_share: float  # the same for the holdout's counterpart
    difference: float
    numeric_bins: int | None
    binned_columns: tuple[str, ...]
    any_train_share: float  # released rows equal on `columns` to some training record
    any_holdout_share: float  # counterpart rows equal on `columns` to some holdout record
    train_unique_copies: int  # released rows equal on `columns` to a record unique in train


def _binned(real: pd.DataFrame, frames: list[pd.DataFrame], cols: list[str],
            bins: int | None) -> tuple[list[pd.DataFrame], list[str]]:
    """``frames`` with each numeric column of more than ``bins`` distinct real values cut into
    ``bins`` equal-width bins of the real values (outside values in the end bins)."""
    if bins is None:
        return frames, []
    wide = [c for c in cols if pd.api.types.is_numeric_dtype(real[c])
            and not pd.api.types.is_bool_dtype(real[c]) and real[c].nunique() > bins]
    out = [f.copy() for f in frames]
    for c in wide:
        edges = np.linspace(real[c].min(), real[c].max(), bins + 1)[1:-1]
        for f in out:
            f[c] = f[c].where(f[c].isna(), np.digitize(f[c].astype(float), edges))
    return out, wide


def _own_share(truth: pd.DataFrame, sets: list[pd.DataFrame]) -> float:
    """Share of rows (over every set) equal to row i of ``truth`` on all its columns (missing
    equals missing)."""
    truth = truth.reset_index(drop=True)
    same = [((s.reset_index(drop=True) == truth) | (s.reset_index(drop=True).isna()
                                                   & truth.isna())).all(axis=1).to_numpy()
            for s in sets]
    return float(np.mean(np.concatenate(same)))


def _copies(inp: Inputs, bins: int | None) -> PartialCopiesResult:
    assert isinstance(inp, PartialInputs) and inp.holdout_synthetic is not None
    o = inp.options
    synth = list(synthesized(o))
    cols = [*known_columns(o, list(inp.train.columns), inp.keys), *synth]
    real = pd.concat([inp.train[synth], inp.holdout[synth]], ignore_index=True)
    (train, *sets), binned = _binned(real, [inp.train[synth], *(s[synth] for s in inp.sets)],
                                     synth, bins)
    (holdout, counterpart), _ = _binned(real, [inp.holdout[synth],
                                               inp.holdout_synthetic[synth]], synth, bins)
    own_train, own_holdout = _own_share(train, sets), _own_share(holdout, [counterpart])
    release = risk.exact_copies(inp.train, inp.synthetic, columns=cols, numeric_bins=bins)
    other = risk.exact_copies(inp.holdout, inp.holdout_synthetic, columns=cols,
                              numeric_bins=bins)
    return PartialCopiesResult(
        columns=tuple(cols), train_share=own_train, holdout_share=own_holdout,
        difference=own_train - own_holdout, numeric_bins=bins, binned_columns=tuple(binned),
        any_train_share=release.train_share, any_holdout_share=other.train_share,
        train_unique_copies=release.train_unique_copies)


def _exact(inp: Inputs) -> Outcome:
    return Outcome({"": _copies(inp, None)}, {"replicated_uniques_removed": 0.0})


def _near(inp: Inputs) -> Outcome:
    return Outcome({"": _copies(inp, inp.options["numeric_bins"])})


def _exact_metrics(r: Any) -> dict[str, float]:
    return {"copies_train_share": r.train_share, "copies_holdout_share": r.holdout_share,
            "copies_difference": r.difference, "copies_any_train_share": r.any_train_share,
            "copies_any_holdout_share": r.any_holdout_share,
            "train_unique_copies": float(r.train_unique_copies)}


def _near_metrics(r: Any) -> dict[str, float]:
    return {"near_copies_train_share": r.train_share,
            "near_copies_holdout_share": r.holdout_share,
            "near_copies_difference": r.difference,
            "near_copies_binned_columns": float(len(r.binned_columns))}


def _exact_report(label: str, r: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    cols = ", ".join(r.columns)
    return [
        ReportRow("copies of the row's own record (synthesised values): train - holdout "
                  "counterpart",
                  f"{num(r.difference):+.4f} ({r.train_share:.4f} - {r.holdout_share:.4f})",
                  f"<= {o['copy_limit']}",
                  "Released rows whose synthesised values all equal their own training "
                  "record's, against holdout records given synthesised values by the same "
                  "model: 0 for a model that has not memorised its training records. Equal on "
                  f"{cols} to any training record: {r.any_train_share:.4f} (holdout "
                  f"counterpart to any holdout record: {r.any_holdout_share:.4f})."),
        ReportRow("the gate in partial synthesis", f"{r.train_unique_copies} rows", "",
                  f"Released rows equal on {cols} to a record unique in the training data. "
                  "They are not removed (row i is record i: removing it would withdraw a real "
                  "record's kept values and break identification risk's row correspondence); "
                  "a right unique match is what the true match rate counts. Distance to "
                  "closest record is not computed: the kept columns put every row next to its "
                  "own record by construction."),
    ]


def _near_report(label: str, r: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    binned = ", ".join(r.binned_columns) or "none: every column compared exactly"
    return [ReportRow(
        "near copies of the row's own record: train - holdout counterpart",
        f"{num(r.difference):+.4f} ({r.train_share:.4f} - {r.holdout_share:.4f})",
        f"<= {o['near_copy_limit']}",
        f"As the copies above, numeric columns cut into {r.numeric_bins} bins ({binned}).")]


SPECS = (
    MeasureSpec("partial_copies", options=(), enabled=lambda o: bool(synthesized(o)),
                compute=_exact, metrics=_exact_metrics,
                bounds=(Bound("copies", "copies_difference", "copy_limit"),),
                report=_exact_report),
    MeasureSpec("partial_near_copies", options=(), enabled=lambda o: bool(synthesized(o)),
                compute=_near, metrics=_near_metrics,
                bounds=(Bound("near_copies", "near_copies_difference", "near_copy_limit"),),
                report=_near_report),
)
