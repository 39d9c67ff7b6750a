"""What more targets cost in the shared game (issue 44: "raise the default K where the shared
design makes more targets nearly free, measured").

The shared game fits ``shadows`` tables whatever K is; what grows with K is the attack's
features (each target scored on every run), the per-person randomisation test (1,000 K
permutations of each target's runs) and the choice of targets. This plays
:func:`risk.membership_audit` on ``persons.py``'s Adult frames (3,000 training, 1,800
reference records; 100 shadow tables of 1,000) for each K of ``--targets``, side by side in
one run, with the Gaussian copula (a realistic near-null generator, on value-protected data)
and the data-blind generator, and reports seconds per audit, the verdict at the release's
confidence (``1 - 0.05 / 3``: ``[audit] attempts = 3``) and the model's no-leak refusal rate
at that confidence (:func:`risk.audit.null_refusal_rate`).

    python -m experiments.release_audit.targets_cost                       # the committed table
    python -m experiments.release_audit.targets_cost --targets 20 40 --seeds 1 --quick

``results/targets_cost.md`` holds the table.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

import risk
from experiments.release_audit.korn_graubard import clustered_interval
from experiments.release_audit.persons import SHADOW_SIZE, SHADOWS, Blind, Copula, _frames
from experiments.reporting import markdown_table

RESULTS = Path(__file__).resolve().parent / "results"
TABLE = RESULTS / "targets_cost.md"
CONFIDENCE = 1 - 0.05 / 3  # the release's, at the default [audit] attempts = 3


def run(targets: list[int], seeds: int, jobs: int, generators: list[str], *,
        shadows: tuple[int, ...] = (SHADOWS,)) -> pd.DataFrame:
    """One audit per generator, seed, R of ``shadows`` and K of ``targets``, each timed; the
    verdict at the release's confidence, with the Korn-Graubard bound (the audit's before
    issue 44 item 3) beside the bound over fits that decides."""
    rows = []
    for generator in generators:
        train, reference, pool = _frames(10 if generator == "gaussian_copula" else 0)
        fit_sample = Copula() if generator == "gaussian_copula" else Blind(pool)
        for seed in range(seeds):
            for r in shadows:
                for k in targets:
                    start = time.perf_counter()
                    res = risk.membership_audit(train, reference, fit_sample, targets=k,
                                                shadows=r, shadow_size=SHADOW_SIZE,
                                                design="shared", n_jobs=jobs, random_state=seed)
                    seconds = time.perf_counter() - start
                    verdict = res.verdict(confidence=CONFIDENCE)
                    before = clustered_interval(np.array(res.member_hits_by_fit),
                                                np.array(res.member_runs_by_fit),
                                                level=2 * CONFIDENCE - 1).high
                    rows.append({"generator": generator, "targets": k, "shadows": r,
                                 "seed": seed, "seconds": seconds, "refused": verdict.refused,
                                 "flagged": verdict.n_flagged,
                                 "pooled_upper": verdict.pooled_upper, "kg_upper": before,
                                 "tpr": res.tpr_at_1pct,
                                 "model_no_leak_refusal": risk.audit.null_refusal_rate(
                                     k, r, design="shared", confidence=CONFIDENCE)})
                    print(f"{generator:16} K={k:3} R={r:4} seed {seed}: {seconds:5.0f} s, "
                          f"refused={verdict.refused}, flagged={verdict.n_flagged}, TPR "
                          f"{res.tpr_at_1pct:.3f}, bound over fits {verdict.pooled_upper:.3f}"
                          f" (Korn-Graubard {before:.3f})", flush=True)
    return pd.DataFrame(rows)


def summarise(frame: pd.DataFrame) -> str:
    cell = frame.groupby(["generator", "targets"], sort=False).agg(
        audits=("seed", "size"), seconds=("seconds", "mean"), refused=("refused", "sum"),
        flagged=("flagged", "sum"), pooled_upper=("pooled_upper", "mean"),
        model=("model_no_leak_refusal", "first")).reset_index()
    cell["x the first K"] = cell["seconds"] / cell.groupby("generator")["seconds"].transform(
        "first")
    cell["model"] = cell["model"].map("{:.2%}".format)
    shown = cell.rename(columns={"targets": "K", "seconds": "seconds per audit",
                                 "flagged": "people flagged",
                                 "pooled_upper": "mean pooled upper bound",
                                 "model": "modelled no-leak refusal"})[[
        "generator", "K", "audits", "seconds per audit", "x the first K", "refused",
        "people flagged", "mean pooled upper bound", "modelled no-leak refusal"]]
    shadows = ", ".join(str(r) for r in sorted(frame["shadows"].unique())) \
        if "shadows" in frame else str(SHADOWS)
    head = (f"Shared game, {shadows} shadow tables of {SHADOW_SIZE:,} Adult records (3,000 "
            f"training, 1,800 reference); verdict at confidence {CONFIDENCE:.3f} (`[audit] "
            "attempts = 3`), tpr_limit 0.05, alpha 0.05; 2 processes on this machine's 2 cores; "
            "every K of a generator measured in the same run. "
            "`python -m experiments.release_audit.targets_cost`\n\n")
    return head + markdown_table(shown, floatfmt=".3f") + "\n"


def run_and_write(argv: list[str] | None, *, doc: str, table: Path,
                  summarise: Callable[[pd.DataFrame], str], targets: list[int],
                  shadows: list[int]) -> None:
    """The command line of this study and of ``shadows_cost.py``: play, summarise, write the
    table (not with ``--quick``, the blind generator only) and print it."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--targets", type=int, nargs="+", default=targets)
    parser.add_argument("--shadows", type=int, nargs="+", default=shadows)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="the blind generator only")
    args = parser.parse_args(argv)
    generators = ["blind"] if args.quick else ["gaussian_copula", "blind"]
    frame = run(args.targets, args.seeds, args.jobs, generators, shadows=tuple(args.shadows))
    text = summarise(frame)
    if not args.quick:
        table.write_text(text)
    print(text)


def main(argv: list[str] | None = None) -> None:
    run_and_write(argv, doc=__doc__ or "", table=TABLE, summarise=summarise,
                  targets=[20, 40, 60], shadows=[SHADOWS])


if __name__ == "__main__":
    main()
