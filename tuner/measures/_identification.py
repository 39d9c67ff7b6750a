"""Identification risk of partially synthetic data (Reiter & Mitra 2009; Hu's lectures; design §6
and 11), and what the other measures mean when most columns are real.

References: J. P. Reiter, R. Mitra, "Estimating risks of identification disclosure in partially
synthetic data", Journal of Privacy and Confidentiality 1(1), 2009; J. Hu, Data
Confidentiality course (Vassar College, 2020), "Methods for Risk Evaluation 1 and 2".

The intruder (Reiter & Mitra's): knows, for every target, the true values of the *known*
variables (``[risk] identification_keys``; default the kept quasi-identifiers, i.e.
``[data] keys`` or every column, less the synthesised ones) and of every
synthesised variable, and matches them against the released rows. The targets are the
training records (row i of every released set is training record i); the m released sets
are scored each and averaged (``risk.identification_risk``). Constraints: the expected match
risk as a share of the targets (EMR / N <= ``emr_limit``: EMR grows with N, its share is what a
limit can hold across table sizes), the true match rate (<= ``tmr_limit``) and, if set, the
false match rate (>= ``fmr_floor``; with no unique match at all there is nothing for the
intruder to trust, and the constraint counts it as 1). Each trial also reports the same
measures for the training records released *unsynthesised* (what synthesis removed).

Matching: categories (integer-coded ones included) match exactly; ``identification_radius``
applies to the synthesised columns the tuner treats as continuous (more than 20 distinct
numbers, SDV's ``numerical``), strictly within the radius (absolute, or relative with
``identification_relative_radius``). A continuous synthesised column without a radius would
match no one exactly and make the risk look nil: :func:`data_problems` refuses that before any
trial runs.

**What M means here.** The partition method asks whether the release tells an intruder that a
person was in the training data. In partial synthesis the kept columns are the training
records' own values, row by row: being in the release *is* being in the training data, and
synthesis does not hide it (the sampling of the survey does). M is still computed (on every
quasi-identifier, synthesised ones included, over the m sets stacked: an intruder holding all
of them), and its report row says what it then means.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

import risk
from risk.params import Range
from tuner.measures._base import Bound, Inputs, MeasureSpec, Option, Outcome, ReportRow, fmt


def synthesized(options: Mapping[str, Any]) -> tuple[str, ...]:
    """The columns the study synthesises in partial mode; ``()`` under full synthesis.

    The study's ``[study] synthesize`` travels with the ``[risk]`` options
    (:attr:`tuner.config.RiskConfig.synthesized`), so that every measure sees the mode."""
    return tuple(getattr(options, "synthesized", ()) or ())


@dataclasses.dataclass(frozen=True)
class PartialInputs(Inputs):
    """A partial-synthesis trial's inputs: ``synthetic`` is the m sets stacked, ``sets`` each
    of them (row i = training record i), ``holdout_synthetic`` the holdout records' kept columns
    with synthesised columns drawn by the same fitted model (the train-versus-holdout
    comparisons of :mod:`tuner.measures._partial_gate`)."""

    sets: tuple[pd.DataFrame, ...] = ()
    holdout_synthetic: pd.DataFrame | None = None


@dataclasses.dataclass(frozen=True)
class TrialIdentification(risk.Result):
    """Identification risk of a trial's m released sets, and of the training records released
    unsynthesised (the same intruder, the same matching)."""

    release: risk.IdentificationResult
    unsynthesised: risk.IdentificationResult
    known_is_default: bool  # identification_keys unset: the kept quasi-identifiers


def known_columns(options: Mapping[str, Any], columns: Sequence[str],
                  keys: Sequence[str] | None) -> list[str]:
    """The intruder's known variables: ``identification_keys``, or the kept quasi-identifiers."""
    if options["identification_keys"]:
        return list(options["identification_keys"])
    synth = set(synthesized(options))
    return [c for c in (keys or columns) if c not in synth]


def radii(options: Mapping[str, Any], frame: pd.DataFrame) -> dict[str, float] | None:
    """``identification_radius`` for each continuous synthesised column (``None``: none)."""
    from tuner.data import sdtype  # SDV's metadata module: imported when a trial runs

    radius = options["identification_radius"]
    continuous = [c for c in synthesized(options) if sdtype(frame[c]) == "numerical"]
    if radius is None or not continuous:
        return None
    return {c: float(radius) for c in continuous}


def identification_options(options: Mapping[str, Any], train: pd.DataFrame,
                           keys: Sequence[str] | None) -> dict[str, Any]:
    """The keyword arguments of :func:`risk.identification_risk` a study's options give: the
    same intruder and matching for the release and for the sealed audit set
    (tuner.release._audit_set)."""
    return dict(keys=known_columns(options, list(train.columns), keys),
                synthesized=list(synthesized(options)), radius=radii(options, train),
                relative_radius=bool(options["identification_relative_radius"]),
                missing="category")


def _identification(inp: Inputs) -> Outcome:
    assert isinstance(inp, PartialInputs) and inp.sets
    o = inp.options
    kwargs = identification_options(o, inp.train, inp.keys)
    release = risk.identification_risk(inp.train, list(inp.sets), **kwargs)
    unsynthesised = risk.identification_risk(inp.train, inp.train, **kwargs)
    return Outcome({"": TrialIdentification(release, unsynthesised,
                                            not o["identification_keys"])})


def _metrics(r: Any) -> dict[str, float]:
    rel, raw = r.release, r.unsynthesised
    fmr = rel.false_match_rate
    return {"emr": rel.expected_match_risk, "emr_share": rel.expected_match_risk / rel.n_targets,
            "tmr": rel.true_match_rate, "fmr": fmr,
            "fmr_or_1": 1.0 if math.isnan(fmr) else fmr,  # no unique match: none to trust
            "unique_matches": rel.unique_matches, "identification_targets": float(rel.n_targets),
            "identification_sets": float(rel.n_sets),
            "emr_unsynthesised": raw.expected_match_risk, "tmr_unsynthesised": raw.true_match_rate}


def _per_set(values: Sequence[float]) -> str:
    return "" if len(values) < 2 else " (per set: " + ", ".join(fmt(v) for v in values) + ")"


def _report(label: str, r: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    rel, raw = r.release, r.unsynthesised
    n, sets = rel.n_targets, rel.n_sets
    known = ", ".join(rel.keys) + (" (default: the kept quasi-identifiers)"
                                    if r.known_is_default else "")
    who = (f"An intruder who knows {known} and the true {', '.join(rel.synthesized)} of each of "
           f"the {n} training records and matches them against the {sets} released set(s)")
    emr = [s.expected_match_risk for s in rel.per_set]
    return [
        ReportRow(
            "identification: expected match risk (Reiter & Mitra 2009)",
            f"{rel.expected_match_risk:.2f} of {n} (EMR / N = {rel.expected_match_risk / n:.4f})"
            + _per_set(emr),
            f"EMR / N <= {o['emr_limit']}",
            f"{who} identifies this many of them correctly on average (1/c for a target whose "
            f"own row is among its c matches). Released unsynthesised: "
            f"{raw.expected_match_risk:.2f} (EMR / N = {raw.expected_match_risk / n:.4f})."),
        ReportRow(
            "identification: true match rate",
            f"{rel.true_match_rate:.4f}" + _per_set([s.true_match_rate for s in rel.per_set]),
            f"<= {o['tmr_limit']}",
            f"Share of the {n} targets with exactly one matching row, their own: re-identified "
            f"for certain. Released unsynthesised: {raw.true_match_rate:.4f}."),
        ReportRow(
            "identification: false match rate",
            f"{fmt(rel.false_match_rate)} ({rel.unique_matches:.1f} unique matches)",
            "" if o["fmr_floor"] is None else f">= {o['fmr_floor']}",
            "Share of the unique matches that are someone else's row: the higher, the less an "
            "intruder can trust a unique match (undefined with none; counted as 1 by a limit)."),
        ReportRow(
            "membership disclosure M in partial synthesis", "see M above", "",
            f"Only {', '.join(rel.synthesized)} are synthesised; every other column of row i is "
            "training record i's own value. Being in the release is being in the training data, "
            "so M does not say whether membership is hidden (synthesis does not hide it; the "
            "survey's sampling does). It says how much better than calling everyone a member "
            "an intruder holding a person's whole record, synthesised values included, does by "
            "finding it in the release (the m sets stacked). Identification risk above is "
            "the measure of re-identification for partially synthetic data."),
    ]






def _checks(o: Mapping[str, Any]) -> list[str]:
    errors = []
    synth = synthesized(o)
    if not synth:
        given = [k for k in ("identification_keys", "identification_radius") if o[k]]
        if given:
            errors.append(f"risk.{given[0]} applies to partially synthetic data (row i of the "
                          "release is training record i); set study.synthesize to the columns "
                          "to synthesise")
        return errors
    both = sorted(set(o["identification_keys"]) & set(synth))
    if both:
        errors.append(f"risk.identification_keys names synthesised column(s) {both}; the "
                      "intruder's known variables are kept columns (the synthesised ones are "
                      "matched on their true values anyway)")
    for key in ("cap_targets", "inference_targets"):
        kept = [c for c in o[key] if c not in synth]
        if kept:
            errors.append(f"risk.{key} names kept column(s) {kept}: in partial synthesis they "
                          "are released as collected, so attribute disclosure of them measures "
                          f"the data, not the synthesis; name synthesised columns {list(synth)}")
    return errors


def data_problems(options: Mapping[str, Any], frame: pd.DataFrame,
                  keys: Sequence[str] | None) -> list[str]:
    """What the options cannot do with these data (empty when fine): checked before any trial."""
    synth = synthesized(options)
    if not synth or any(c not in frame.columns for c in synth):
        return []  # full synthesis, or unknown columns (said by tuner.config.check_data)
    errors = []
    if not known_columns(options, list(frame.columns), keys):
        errors.append("risk.identification_keys is unset and every quasi-identifier is "
                      "synthesised: name the intruder's known variables among the kept columns")
    from tuner.data import sdtype

    continuous = [c for c in synth if sdtype(frame[c]) == "numerical"]
    if not continuous and options["identification_radius"] is not None:
        errors.append(f"risk.identification_radius = {options['identification_radius']} is set, "
                      f"but no synthesised column is continuous (more than 20 distinct numbers) "
                      "to match within it: categories, integer codes included, match exactly")
    if continuous and options["identification_radius"] is None:
        errors.append(f"risk.identification_radius is unset, and the synthesised column(s) "
                      f"{continuous} are continuous: matched exactly, they would match no one "
                      "and identification risk would look nil. Give the radius within which "
                      "an intruder calls a value a match (absolute, or a share of the true "
                      "value with identification_relative_radius = true)")
    return errors


OPTIONS = (
    Option("identification_keys", "columns", (),
           "what the intruder knows of a target among the kept columns; default: data.keys "
           "less the synthesised columns"),
    Option("identification_radius", "float", None,
           "continuous synthesised values within this radius of the truth match (strictly)",
           valid=Range(0, closed="neither")),
    Option("identification_relative_radius", "bool", False,
           "the radius is a share of the true value (|x' - x| < r |x|)"),
    Option("emr_limit", "float", 0.01,
           "expected match risk as a share of the targets, EMR / N <= emr_limit",
           valid=Range(0, 1, note="a share of the targets; Hu's ACS synthesis: "
                                                "41.37 / 10,000 = 0.0041")),
    Option("tmr_limit", "float", 0.005, "true match rate <= tmr_limit",
           valid=Range(0, 1, note="a share of the targets; Hu's ACS synthesis: 0.0005")),
    Option("fmr_floor", "float", None,
           "false match rate >= fmr_floor (unset: logged, not a constraint)",
           valid=Range(0, 1, closed="right")),
)

SPECS = (
    MeasureSpec(
        "identification",
        options=OPTIONS,
        enabled=lambda o: bool(synthesized(o)),
        compute=_identification,
        metrics=_metrics,
        bounds=(Bound("emr", "emr_share", "emr_limit"), Bound("tmr", "tmr", "tmr_limit"),
                Bound("fmr", "fmr_or_1", "fmr_floor", sense="min")),
        report=_report,
        checks=_checks,
        reads_holdout=False,  # the training records and their own released rows only
    ),
)
