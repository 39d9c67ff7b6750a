"""Benchmark of the release audit's default membership audit on Adult (design §13).

The product's target (issue 44): the default audit of a CART or Gaussian-copula release on
Adult finishes within 10 minutes on 2 cores. The audit is the one ``risk-tuner`` plays, at the
``[audit]`` defaults read from the config (today 40 targets x 300 shadow tables of 1,000 holdout
records, shared design), with the per-person test and the released table itself scored
(``release=``, a fit on the training records, as a trial's is). Adult's 48,842 people split as
the tuner splits them (train 0.5 / holdout 0.3 / audit 0.2: 24,421 training records whose
vulnerability is searched, 14,653 holdout records the shadow tables are drawn from). For each
generator: the tuner's own estimate before it starts (one pilot fit timed,
:func:`tuner.release._audit_plan.plan`) against the measured wall time, with the fits over 2
processes, as ``risk-tuner`` runs them, and the verdict at the defaults.

Run: ``python -m experiments.benchmarks.bench_audit [--output FILE]`` from the repository root
with ../shared/data present (about 10 minutes). Prints a Markdown report and writes it to its
block of ``experiments/benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
import warnings
from pathlib import Path

import risk
from experiments.datasets import read_adult
from experiments.reporting import write_section
from tuner.api import load_config
from tuner.release import ReleasedFamily, plan
from tuner.search import prepare

GENERATORS = (("cart", {"min_samples_leaf": 5}), ("gaussian_copula",
                                                  {"default_distribution": "norm"}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path,
                        default=Path(__file__).with_name("RESULTS.md"))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "adult.csv"
        read_adult().to_csv(data, index=False)
        cfg = load_config({"data": {"path": str(data), "population_size": 48842},
                           "study": {"output": str(Path(tmp) / "out")},
                           "audit": {"jobs": args.jobs}})
        ctx = prepare(cfg)
        a = cfg.audit
        size = min(a.shadow_size, len(ctx.split.holdout))
        rows = [f"## bench_audit: the default membership audit on Adult ({platform.node()}, "
                f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')})", "",
                f"{len(ctx.split.train):,} training records, {len(ctx.split.holdout):,} holdout "
                f"records; the [audit] defaults: {a.targets} targets x {a.shadows} shadow "
                f"tables of {size:,} records, design {a.design!r}, the released table scored "
                f"too; {args.jobs} processes; verdict at tpr_limit {a.tpr_limit:g}, alpha "
                f"{a.alpha:g}, the pooled bound at {a.confidence:.2%}.", "",
                "| release | design | estimate before it starts | measured | fits | "
                "one pilot fit | verdict |",
                "|---|---|---|---|---|---|---|"]
        for name, params in GENERATORS:
            family = ReleasedFamily(name, params, "cpu", "remove")
            chosen = plan(ctx, family, size, seed=1)
            if chosen.design is None:
                raise SystemExit(f"{name}: the default audit does not fit in "
                                 f"audit.max_minutes = {a.max_minutes}: {chosen.estimates}")
            release = family(ctx.split.train, 2)
            start = time.perf_counter()
            res = risk.membership_audit(ctx.split.train, ctx.split.holdout, family,
                                        targets=a.targets, shadows=a.shadows, shadow_size=size,
                                        design=chosen.design, n_jobs=args.jobs, random_state=1,
                                        release=release)
            wall = time.perf_counter() - start
            verdict = res.verdict(tpr_limit=a.tpr_limit, alpha=a.alpha,
                                  confidence=a.confidence)
            said = (f"{'refused' if verdict.refused else 'passed'}: pooled bound "
                    f"{verdict.pooled_upper:.3f}, {verdict.n_flagged} of {verdict.n_tested} "
                    f"flagged")
            rows.append(f"| {name} {params} | {chosen.design} | {chosen.seconds / 60:.1f} min | "
                        f"**{wall / 60:.1f} min** | {res.n_fits:,} | "
                        f"{chosen.pilot_seconds:.2f} s | {said} |")
            print(rows[-1], flush=True)
    text = "\n".join(rows)
    print(text)
    write_section(args.output, "bench_audit", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
