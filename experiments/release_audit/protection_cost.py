"""What value protection costs and buys (issue 45 item 2: "measured: the utility it costs on
Adult, and what M, copies and the audit say with and without it").

The demo's study (5,000 Adult records, its split under ``--public-seed``, its ``[risk]`` and
``[audit]`` settings) with ``[data] protect_k`` = 0 (off) and 10 (the default), side by side in
one run: for the Gaussian copula and CART at their default parameters, one trial's U
(SDMetrics' quality report, on the holdout), M, the exact-copy and DCR differences, and the
release audit's verdict (shared game, 20 targets x 100 shadow tables, at the release's
confidence), all on the same split; the sealed audit set is not read.

    python -m experiments.release_audit.protection_cost          # the committed table
    python -m experiments.release_audit.protection_cost --no-audit --families cart

``results/protection_cost.md`` holds the table.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import pandas as pd

import risk
from experiments.reporting import markdown_table
from tuner.api import load_config
from tuner.release import ReleasedFamily
from tuner.scoring import evaluate
from tuner.search import prepare

RESULTS = Path(__file__).resolve().parent / "results"
TABLE = RESULTS / "protection_cost.md"
FAMILIES = ("gaussian_copula", "cart")
SEED = 7  # the trial's seed, the same for every cell


def cell(family: str, k: int, audit: bool) -> dict[str, object]:
    cfg = load_config(None, public_seed=True, output=Path("/tmp/protection_cost"))
    cfg = dataclasses.replace(cfg, data=dataclasses.replace(cfg.data, protect_k=k))
    ctx = prepare(cfg)
    start = time.perf_counter()
    ev = evaluate(cfg, ctx.split, family, {}, seed=SEED)
    m = ev.metrics()
    row: dict[str, object] = {
        "family": family, "protect_k": k, "U": ev.utility, "M": ev.membership.m,
        "copies_difference": m.get("copies_difference", float("nan")),
        "dcr_excess": m.get("dcr_excess", float("nan")),
        "values_coded": sum(sum(c["changed"].values()) for c in ctx.protection.columns.values()),
        "feasible": ev.feasible}
    if audit:
        a = cfg.audit
        res = risk.membership_audit(
            ctx.split.train, ctx.split.holdout,
            ReleasedFamily(family, {}, "cpu", cfg.risk.replicated_uniques),
            targets=a.targets, shadows=a.shadows, shadow_size=min(a.shadow_size,
                                                                  len(ctx.split.holdout)),
            design="shared", n_jobs=2, random_state=SEED)
        verdict = res.verdict(tpr_limit=a.tpr_limit, alpha=a.alpha, confidence=a.confidence)
        row |= {"audit": "refused" if verdict.refused else "passed",
                "people_flagged": verdict.n_flagged, "pooled_upper": verdict.pooled_upper}
    row["seconds"] = time.perf_counter() - start
    print(row, flush=True)
    return row


def summarise(frame: pd.DataFrame) -> str:
    cols = [c for c in ("family", "protect_k", "values_coded", "U", "M", "copies_difference",
                        "dcr_excess", "feasible", "audit", "people_flagged", "pooled_upper")
            if c in frame]
    head = ("The demo's table and settings (`--public-seed` split, 2,500 training records), one "
            f"trial per cell at default parameters (seed {SEED}); audit: shared game, the "
            "demo's 20 targets x 100 shadow tables, at the release's confidence; values_coded: "
            "in the training, holdout and audit sets together. "
            "`python -m experiments.release_audit.protection_cost`\n\n")
    return head + markdown_table(frame[cols], floatfmt=".4f") + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument("--no-audit", action="store_true")
    args = parser.parse_args(argv)
    rows = [cell(f, k, not args.no_audit) for f in args.families for k in (0, 10)]
    text = summarise(pd.DataFrame(rows))
    if args.families == list(FAMILIES) and not args.no_audit:
        TABLE.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
