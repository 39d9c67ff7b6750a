"""Where a trial's time goes: fit, sample, utility and every risk measure, per synthesiser.

A trial on 20,000 Adult training rows (holdout: 20,000 other Adult people; N = 48,842) with
every default constraint of the study switched on (M, exact copies, DCR, CAP and synthpop's
measures, k-NN attribute inference on ``income`` from six keys). Each measure is timed on its
own (median of ``--repeats`` runs on the same synthetic data), so the shares are measured side
by side in one run. Run from the repository root with ../shared/data present:

    python -m experiments.benchmarks.bench_trial [--synthesizers gaussian_copula cart]

Writes its table to its block of ``experiments/benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import time
import warnings
from pathlib import Path

import pandas as pd

from experiments.datasets import read_adult
from experiments.reporting import markdown_table, timed, write_section
from tuner import config, measures
from tuner.measures import removed_by_gate
from tuner.scoring import coded_frames, score, utility_score
from tuner.search import Context, prepare
from tuner.synthesis import SYNTHESIZERS, synthesize

KEYS = ["age", "sex", "race", "marital_status", "education", "native_country"]
PARAMS = {"gaussian_copula": {"default_distribution": "norm"},
          "cart": {"min_samples_leaf": 5, "max_depth": 0, "visit_order": "original",
                   "smoothing": False},
          "ctgan": {"epochs": 5, "batch_size": 500, "pac": 10, "generator_dim": "128x128",
                    "discriminator_dim": "128x128", "generator_lr": 2e-4,
                    "discriminator_lr": 2e-4, "embedding_dim": 128}}


def _garbage_after(fn) -> tuple[float, float]:  # noqa: ANN001
    """Run ``fn`` (one trial's work), then what Optuna's ``gc_after_trial=True`` would do: the
    seconds of a full collection and the megabytes of the cyclic garbage it frees (arrays,
    frames and tensors by their buffers, other objects by ``sys.getsizeof``)."""
    import sys

    import numpy as np

    gc.collect()
    fn()
    gc.set_debug(gc.DEBUG_SAVEALL)
    start = time.perf_counter()
    gc.collect()
    seconds = time.perf_counter() - start
    gc.set_debug(0)

    def size(o: object) -> int:
        if isinstance(o, np.ndarray):
            return o.nbytes
        if isinstance(o, pd.DataFrame):
            return int(o.memory_usage(deep=False).sum())
        nbytes = getattr(o, "nbytes", None)  # torch tensors, pandas arrays
        return int(nbytes) if isinstance(nbytes, int) else sys.getsizeof(o)

    freed = sum(size(o) for o in gc.garbage) / 1e6
    gc.garbage.clear()
    return seconds, freed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--synthesizers", nargs="+", default=["gaussian_copula", "cart"])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    adult = read_adult().sample(2 * args.rows, random_state=0).reset_index(drop=True)
    cfg = config.parse({
        # train and holdout of equal size (no audit set), as in the figures of RESULTS.md
        "data": {"path": "adult", "population_size": 48_842, "audit_fraction": 0.0},
        "study": {"output": "/tmp/bench-trial"},
        "risk": {"attribute_keys": KEYS, "cap_targets": ["income"],
                 "inference_targets": ["income"]},
    }, base=Path.cwd())
    ctx = prepare(cfg, adult)
    rows = []
    for name in args.synthesizers:
        syn = synthesize(name, PARAMS[name], ctx.split.train, seed=1)

        def gate(sampled: pd.DataFrame = syn.synthetic) -> tuple[pd.DataFrame, ...]:
            # as a trial scores: categorical copies of the text columns (the real side once
            # per study, the synthetic data every trial), then the gate's replicated uniques
            train, holdout, coded = coded_frames(ctx.split, sampled)
            gone = removed_by_gate(train, coded, cfg.risk.replicated_uniques)
            return train, holdout, coded, gone

        train, holdout, c_sampled, gone = gate()
        kept = syn.synthetic.loc[~gone].reset_index(drop=True)
        inputs = measures.Inputs(train=train, holdout=holdout,
                                 synthetic=c_sampled.loc[~gone].reset_index(drop=True),
                                 options=cfg.risk, population_size=48_842,
                                 keys=None, seed=1, removed_rows=int(gone.sum()),
                                 sampled=c_sampled, study_seed=1)
        parts = {"fit": syn.fit_seconds, "sample": syn.sample_seconds,
                 "gate and categorical copies": timed(gate, args.repeats)[1],
                 "utility (Quality Report)": timed(
                     lambda k=kept: utility_score(cfg, ctx.split, k, 1), args.repeats)[1]}
        for spec in measures.enabled(cfg.risk):
            parts[spec.name] = timed(lambda s=spec, i=inputs: s.compute(i), args.repeats)[1]
        def one_trial(n=name, c=cfg) -> None:  # noqa: ANN001
            syn_again = synthesize(n, PARAMS[n], ctx.split.train, seed=2)
            score(c, ctx.split, syn_again.synthetic, seed=2)

        gc_seconds, gc_mb = _garbage_after(one_trial)
        total = sum(parts.values())
        measured = total - parts["fit"] - parts["sample"]
        for part, seconds in parts.items():
            rows.append({"synthesizer": name, "part": part, "seconds": seconds,
                         "share of trial": seconds / total})
        rows.append({"synthesizer": name, "part": "risk + utility", "seconds": measured,
                     "share of trial": measured / total})
        rows.append({"synthesizer": name, "part": f"(not in the trial) gc.collect after it: "
                     f"frees {gc_mb:.2f} MB", "seconds": gc_seconds,
                     "share of trial": gc_seconds / total})
        print(f"{name}: risk + utility {measured:.2f} s of {total:.2f} s "
              f"({measured / total:.0%})")
    table = markdown_table(pd.DataFrame(rows), floatfmt=".3f")
    space = _copula_space(cfg, ctx, args.repeats) if "gaussian_copula" in args.synthesizers else ""
    write_section(args.output, "bench_trial", "\n".join([
        f"## Where a trial's time goes ({args.rows:,} Adult training rows, every default "
        "constraint on)", "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, 2 cores, load "
        f"average {os.getloadavg()[0]:.1f} at the end (other jobs ran beside it: the shares, "
        "measured side by side, are what to read); command: "
        "`python -m experiments.benchmarks.bench_trial`; fit and sample once, every other part "
        f"the median of {args.repeats} runs on the same synthetic data (so `inference` is what "
        "a study's trials after its first pay: the attack trained on the original is fitted "
        "once per study). M is computed as a trial computes it: distances up to h only (h = "
        "0: a hash join; the F1 curve at every h is the release's). Not in these rows: the "
        "product's bookkeeping per trial (Optuna storage, MLflow run, about 0.2 s; "
        "`experiments/tuner_benchmark`). The gc row: a second trial (fit, sample, score), "
        "then one full "
        "`gc.collect()` as Optuna's `gc_after_trial=True` would run it, and the cyclic garbage "
        "it freed (the tuner no longer forces it).", "", table, space]))
    return 0


def _copula_space(cfg: config.Config, ctx: Context, repeats: int) -> str:
    """The Gaussian copula over its search space: a study's copula trials draw
    ``default_distribution``, and the fit's cost depends on it. Per choice: fit and sample once,
    then the whole of ``score`` (gate, utility, every measure) the median of ``repeats`` runs."""
    choices = SYNTHESIZERS["gaussian_copula"].space["default_distribution"].choices
    rows = []
    for dist in choices:
        syn = synthesize("gaussian_copula", {"default_distribution": dist},
                         ctx.split.train, seed=1)
        scored = timed(lambda s=syn: score(cfg, ctx.split, s.synthetic, seed=1),
                       repeats)[1]
        trial = syn.fit_seconds + syn.sample_seconds + scored
        rows.append({"default_distribution": dist, "fit": syn.fit_seconds,
                     "sample": syn.sample_seconds, "risk + utility (score)": scored,
                     "share of trial": scored / trial})
        print(f"gaussian_copula {dist}: risk + utility {scored:.2f} s of {trial:.2f} s "
              f"({scored / trial:.0%})")
    frame = pd.DataFrame(rows)
    mean = frame[["fit", "sample", "risk + utility (score)"]].mean()
    share = mean["risk + utility (score)"] / mean.sum()
    return "\n".join([
        "", "### The Gaussian copula over its search space", "",
        "A study's copula trials draw `default_distribution` from "
        f"{', '.join(map(str, choices))}; the fit's cost depends on it (the table above is "
        f"`norm`, the cheapest). Here `score` is timed whole (median of {repeats} runs) on each "
        f"choice's data. Over the four choices equally drawn, risk + utility is {share:.0%} of "
        "a copula trial's fit, sample and score.", "",
        markdown_table(frame, floatfmt=".3f")])


if __name__ == "__main__":
    raise SystemExit(main())
