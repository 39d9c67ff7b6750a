"""Attribute disclosure: the CAP family (design §4), synthpop's ``disclosure()`` measures
(Raab, Nowok & Dibben 2024; design §9.1) and ML attribute inference (design §5).

The intruder knows ``attribute_keys`` of a person and reads a sensitive target off the release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import risk
from risk.disclosure import MEASURES as DISCLOSURE_MEASURES
from risk.params import Range
from tuner.measures._base import (
    DIFFERENCE_LIMIT,
    Bound,
    Inputs,
    MeasureSpec,
    Option,
    Outcome,
    ReportRow,
    fmt,
    num,
)

# synthpop's measures as logged per target: its 17 less the two denominators (record counts)
SYNTHPOP_MEASURES = tuple(m for m in DISCLOSURE_MEASURES if not m.endswith("_denom"))


def _cap(inp: Inputs) -> Outcome:
    o = inp.options
    return Outcome({
        t: risk.cap(inp.train, inp.synthetic, keys=list(o["attribute_keys"]), target=t,
                    holdout=inp.holdout, numeric_bins=o["numeric_bins"], missing="category")
        for t in o["cap_targets"]
    })


def _cap_metrics(c: Any) -> dict[str, float]:
    return {"cap_v1": c.cap_v1, "cap_v2": c.cap_v2, "cap_baseline": c.baseline,
            "cap_train": c.cap_train, "cap_difference": num(c.difference_v1)}


def _cap_report(label: str, c: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    return [ReportRow(
        f"CAP v1 of {label!r}: train - holdout",
        f"{fmt(c.difference_v1)} ({c.cap_v1:.4f} - {fmt(c.holdout_cap_v1)}; baseline "
        f"{c.baseline:.4f})",
        f"<= {o['cap_limit']}",
        f"How much more often an intruder who knows the keys reads {label!r} right off the "
        "release for people in the training data than for people not in it.")]


def _cap_checks(o: Mapping[str, Any]) -> list[str]:
    errors = []
    if (o["cap_targets"] or o["inference_targets"]) and not o["attribute_keys"]:
        errors.append("risk.attribute_keys must name the intruder's keys when targets are given")
    clash = sorted(set(o["attribute_keys"]) & (set(o["cap_targets"]) | set(o["inference_targets"])))
    if clash:
        errors.append(f"column(s) {clash} are both a key and a target in [risk]")
    return errors


def _disclosure(inp: Inputs) -> Outcome:
    keys = list(inp.options["attribute_keys"])
    return Outcome({t: risk.disclosure(inp.train, inp.synthetic, keys=keys, target=t)
                    for t in inp.options["cap_targets"]})


def _disclosure_metrics(d: Any) -> dict[str, float]:
    flat = d.to_dict()
    return {k: float(flat[k]) for k in SYNTHPOP_MEASURES}


def _disclosure_report(label: str, d: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    flat = d.to_dict()
    return [
        ReportRow(f"synthpop repU (keys {', '.join(d.keys)})", f"{flat['repU']:.2f} %", "",
                  "Records unique on the keys in the training data whose key is also unique in "
                  "the release (replicated uniques, in percent of the training records)."),
        ReportRow(f"synthpop DiSCO of {label!r}", f"{flat['DiSCO']:.2f} %",
                  "" if o["disco_limit"] is None else f"<= {o['disco_limit']} %",
                  f"Training records whose key shows one value of {label!r} in the release, and "
                  f"it is their own (disclosive in synthetic, correct in original); Dorig = "
                  f"{flat['Dorig']:.2f} % of them are disclosive in the original itself."),
        ReportRow(f"synthpop TCAP / DCAP of {label!r}",
                  f"{flat['TCAP']:.2f} % / {flat['DCAP']:.2f} %", "",
                  f"DiSCO among records whose key occurs in the release / mean CAP of the "
                  f"training records against the release (baseline {flat['baseCAPd']:.2f} %)."),
    ]


def _inference(inp: Inputs) -> Outcome:
    # seeded by the study's seed (ties between equidistant records): the attack trained on the
    # original is then the same for every trial and fitted once per process (risk.inference)
    o = inp.options
    keys = list(o["attribute_keys"])
    results: dict[str, risk.Result] = {}
    extra: dict[str, float] = {}
    for t in o["inference_targets"]:
        cols = [*keys, t]
        # k-NN cannot use missing keys/targets: those records are left out of the attack, and
        # how many is reported (metric inference_dropped_rows.TARGET), never silently
        complete = []
        for f in (inp.train, inp.synthetic, inp.holdout):
            missing = f[cols].isna().any(axis=1).to_numpy()
            complete.append(f[~missing] if missing.any() else f)
        extra[f"inference_dropped_rows.{t}"] = float(
            sum(len(f) - len(c) for f, c in zip((inp.train, inp.synthetic, inp.holdout),
                                                 complete, strict=True)))
        results[t] = risk.attribute_inference(
            complete[0], complete[1], keys=keys, target=t, holdout=complete[2],
            random_state=inp.study_seed)
    return Outcome(results, extra)


def _inference_metrics(r: Any) -> dict[str, float]:
    return {"inference_risk": r.risk, "inference_baseline": r.baseline,
            "inference_difference": num(r.difference)}


def _inference_report(label: str, r: Any, o: Mapping[str, Any]) -> list[ReportRow]:
    return [ReportRow(
        f"attribute inference of {label!r}: train - holdout",
        f"{fmt(r.difference)} ({r.risk:.4f} - {fmt(r.holdout_risk)}; model trained on the "
        f"training data {r.risk_train_model:.4f}; baseline {r.baseline:.4f})",
        f"<= {o['inference_limit']}",
        f"How much better a {r.estimator} trained on the release predicts {label!r} for "
        "training records than for records it never saw.")]




SPECS = (
    MeasureSpec(
        "cap",
        options=(
            Option("attribute_keys", "columns", (),
                   "what the intruder knows of a target, for CAP, DiSCO and inference"),
            Option("cap_targets", "columns", (), "sensitive columns read off the release"),
            Option("cap_limit", "float", 0.05, "CAP(train) - CAP(holdout) <= cap_limit",
                   valid=DIFFERENCE_LIMIT),
        ),
        enabled=lambda o: bool(o["cap_targets"]),
        compute=_cap,
        metrics=_cap_metrics,
        bounds=(Bound("cap", "cap_difference", "cap_limit",
                      interval=lambda c: c.difference_v1_interval),),
        report=_cap_report,
        checks=_cap_checks,
    ),
    MeasureSpec(
        "disclosure",
        options=(
            Option("disco_limit", "float", None,
                   "synthpop's DiSCO (percent) <= disco_limit; unset: logged, not a constraint",
                   valid=Range(0, 100, unit="percent")),
        ),
        enabled=lambda o: bool(o["cap_targets"]),
        compute=_disclosure,
        metrics=_disclosure_metrics,
        bounds=(Bound("disco", "DiSCO", "disco_limit"),),
        report=_disclosure_report,
        reads_holdout=False,  # synthpop's measures compare the release with train only
    ),
    MeasureSpec(
        "inference",
        options=(
            Option("inference_targets", "columns", (), "sensitive columns a k-NN predicts "
                   "from attribute_keys"),
            Option("inference_limit", "float", 0.05,
                   "inference risk(train) - (holdout) <= inference_limit",
                   valid=DIFFERENCE_LIMIT),
        ),
        enabled=lambda o: bool(o["inference_targets"]),
        compute=_inference,
        metrics=_inference_metrics,
        bounds=(Bound("inference", "inference_difference", "inference_limit",
                      interval=lambda r: r.difference_interval),),
        report=_inference_report,
    ),
)
