"""The gate against today's release audit (issue 44, item 8: the stale headline played again).

``run.py``'s table was played with the audit as it was before issues 32 and 44 (20 targets,
the per-target game for CART and the copula, a verdict on the pooled bound alone). This plays
the same release candidates (``run.candidate``: the same generators, seeds, split and gate)
against the audit ``risk-tuner`` plays today, at the ``[audit]`` defaults read from the config:
the design and its cost chosen by the tuner's own planner (:func:`tuner.release.plan`, one
pilot fit timed; a candidate whose audit would exceed ``audit.max_minutes`` is one the tuner
passes over, and is recorded so), the most vulnerable training records as targets, the
released table scored too, and the verdict of :meth:`risk.MembershipAuditResult.verdict`: the
pooled bound at the release's confidence or any person significantly exposed (Holm). The
product releases a candidate when the gate passes it on the holdout, the sealed audit set
passes it, and the verdict does not refuse it.

    python -m experiments.release_audit.today                    # Adult and Hu's ACS
    python -m experiments.release_audit.today --datasets adult   # Adult only
    python -m experiments.release_audit.today --quick            # a smoke size (minutes)
    python -m experiments.release_audit.today --summary-only     # results/today.md again

Rows are appended to ``results/audits_today.csv`` as they finish; a rerun skips those there.
The data of the candidates stay in ``--work`` (as for ``run.py``).
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import risk
from experiments.release_audit.run import (
    GENERATORS,
    _config,
    _done,
    arguments,
    candidate,
    dump_split,
    label_of,
)
from experiments.reporting import append_rows, markdown_table
from tuner._common.seeding import derive
from tuner.release import plan
from tuner.search import prepare

CSV_NAME = "audits_today.csv"
MD_NAME = "today.md"


def today_cell(ctx: Any, name: str, index: int, jobs: int, work: Path) -> dict[str, Any]:
    """Generator ``index`` of :data:`run.GENERATORS` judged by the gate, the sealed audit set and
    today's membership audit at the config's ``[audit]`` defaults."""
    family, params, _, _ = GENERATORS[index]
    seed = derive(2026, 13, index)
    ev, fam, judged, make_seconds = candidate(ctx, name, index, work)
    a = ctx.cfg.audit
    size = min(a.shadow_size, len(ctx.split.holdout))
    targets = a.targets  # the training tables here hold thousands: the tuner's cap never binds
    chosen = plan(ctx, fam, size, seed)
    row: dict[str, Any] = {
        "dataset": name, "generator": label_of(family, params), "family": family, **judged,
        "m": ev.membership.m if ev is not None else np.nan,
        "utility": ev.utility if ev is not None else np.nan, "make_seconds": make_seconds,
        "pilot_fit_seconds": chosen.pilot_seconds,
        # the design's estimate; where none fits, the cheapest design's
        "estimated_seconds": (chosen.seconds if chosen.design is not None
                              else min(chosen.estimates.values())),
        "max_minutes": a.max_minutes, "targets": targets, "shadows": a.shadows,
        "shadow_size": size, "confidence": a.confidence, "alpha": a.alpha,
        "tpr_limit": a.tpr_limit}
    if chosen.design is None:  # the tuner passes it over: no audit within audit.max_minutes
        return row | {"design": "", "audited": False, "audit_refused": np.nan,
                      "product_releases": False,
                      "why": f"audit over audit.max_minutes = {a.max_minutes:g}: "
                             f"{ {k: round(v) for k, v in chosen.estimates.items()} } s"}
    res = risk.membership_audit(ctx.split.train, ctx.split.holdout, fam, targets=targets,
                                shadows=a.shadows, shadow_size=size, design=chosen.design,
                                n_jobs=jobs, random_state=seed,
                                release=ev.synthetic if ev is not None else None)
    v = res.verdict(tpr_limit=a.tpr_limit, alpha=a.alpha, confidence=a.confidence)
    # the sealed set's verdict is a bool wherever the gate passed (NaN only where unusable)
    gate_ok = bool(judged["gate_passes"] and judged["audit_set_passes"])
    return row | {
        "design": chosen.design, "audited": True, "fits": res.n_fits,
        "audit_seconds": res.seconds, "tpr_1pct": res.tpr_at_1pct,
        "pooled_upper": v.pooled_upper, "pooled_refused": v.pooled_refused,
        "n_tested": v.n_tested, "n_flagged": v.n_flagged, "n_signalled": v.n_signalled,
        "max_auc": res.max_auc, "median_auc": float(np.nanmedian(res.target_auc)),
        "release_called": res.n_release_called, "release_expected": res.release_expected_called,
        "audit_refused": v.refused, "product_releases": gate_ok and not v.refused,
        "why": v.reason}


def _said(flag: Any, yes: str, no: str) -> str:
    if isinstance(flag, float) and np.isnan(flag):
        return "-"
    return yes if bool(flag) else no


def summarize(results: Path) -> str:
    """``results/today.md``: per dataset, every candidate's three verdicts, and the count the
    experiment is for: how often the gate passes a release today's audit refuses."""
    frame = pd.read_csv(results / CSV_NAME)
    first = frame.iloc[0]
    out = [f"Today's release audit at the `[audit]` defaults: the {int(first['targets'])} most "
           f"vulnerable training records x {int(first['shadows'])} shadow tables of "
           f"{int(first['shadow_size']):,} holdout records, the design chosen by the tuner's "
           f"planner within audit.max_minutes = {first['max_minutes']:g}; refused when the "
           f"pooled bound ({first['confidence']:.1%}, one-sided) exceeds audit.tpr_limit = "
           f"{first['tpr_limit']:g} or any person is significantly exposed (Holm, alpha "
           f"{first['alpha']:g}). `python -m experiments.release_audit.today`.", ""]
    for name, cells in frame.groupby("dataset", sort=False):
        rows = []
        for _, c in cells.iterrows():
            audited = bool(c["audited"])
            rows.append({
                "generator": c["generator"],
                "gate": _said(c["gate_passes"], "passes", "refuses"),
                "audit set": _said(c["audit_set_passes"], "passes", "refuses"),
                "design, fits": f"{c['design']}, {int(c['fits']):,}" if audited else "-",
                "pooled bound": f"{c['pooled_upper']:.3f}" if audited else "-",
                "people flagged": (f"{int(c['n_flagged'])} of {int(c['n_tested'])}"
                                   if audited else "-"),
                "release called (by chance)": (
                    f"{int(c['release_called'])} ({c['release_expected']:.1f})"
                    if audited and not pd.isna(c["release_called"]) else "-"),
                "max AUC": f"{c['max_auc']:.2f}" if audited else "-",
                "audit": (_said(c["audit_refused"], "**refuses**", "passes") if audited
                          else "cannot be audited in time"),
                "released": "yes" if c["product_releases"] else "no",
                "audit time (estimate)": (
                    f"{c['audit_seconds'] / 60:.1f} min ({c['estimated_seconds'] / 60:.1f})"
                    if audited else f"({c['estimated_seconds'] / 60:.0f} min)")})
        gate = cells["gate_passes"].astype(bool)
        audited = cells["audited"].astype(bool)
        refused = cells["audit_refused"].fillna(False).astype(bool)
        out += [f"### {name}", "", markdown_table(pd.DataFrame(rows)), "",
                f"The gate passed {int(gate.sum())} of {len(cells)} candidates; today's audit "
                f"refused {int((gate & refused).sum())} of those it passed and "
                f"{int((~gate & refused).sum())} of the {int((~gate).sum())} it refused; "
                f"{int((~audited).sum())} could not be audited within audit.max_minutes; "
                f"{int(cells['product_releases'].sum())} would be released.", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__.split("\n\n")[0])
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    args.results.mkdir(parents=True, exist_ok=True)
    audit = {"shadows": 16, "targets": 4} if args.quick else {}
    rows = 3000 if args.quick else args.rows
    if not args.summary_only:
        cells = args.results / CSV_NAME
        done = _done(cells, ["dataset", "generator"])
        for name in args.datasets:
            cfg = _config(name, args.work, rows)
            if audit:
                cfg = dataclasses.replace(cfg, audit=dataclasses.replace(cfg.audit, **audit))
            ctx = prepare(cfg)
            dump_split(ctx, name, args.work)
            for index, (family, params, _, _) in enumerate(GENERATORS):
                label = label_of(family, params)
                if (name, label) in done or (args.quick and family in ("mst", "tvae")):
                    continue
                print(f"[{time.strftime('%H:%M:%S')}] {name} {label}", flush=True)
                append_rows(cells, [today_cell(ctx, name, index, args.jobs, args.work)])
    text = summarize(args.results)
    (args.results / MD_NAME).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
