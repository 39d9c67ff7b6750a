"""Are the membership audit's intervals valid and its refusals calibrated? Simulated with
generators whose truth is known (issue 32, items 1 and 2).

Each cell plays the audit as the product runs it (:func:`risk.membership_audit`: its targets,
its three attacks, its calibration and test halves, its thresholds and its clustered
intervals) on Adult, with a generator that costs nothing to fit, many times over seeds:

* ``independent``: samples records of the population that never met the shadow table (no
  leak: every refusal is a false alarm);
* ``copy_p``: the same, plus a copy of each target in the table with probability ``p``,
  independently per target and fit (a leak of known size, independent between runs);
* ``all_or_nothing_q``: with probability ``q`` a fit copies every target in its table, else
  none (the leak is one coin per *fit*: in the shared design all of a fit's runs move
  together, the case the issue measured).

**Truth**: each audit also plays ``--truth`` times as many shadow runs per target that no
figure reads (``risk.audit._audit``'s ``truth_shadows``): at the thresholds the calibration
runs fixed, their hit rates are the TPR and FPR the audit's figures estimate for that audit.
A cell reports how often the audit's 95 % interval of the pooled TPR at 1 % FPR (over the test
fits, :mod:`risk._audit_bound`) and its one-sided bound at the release's confidence (98.3 %,
the one that decides) cover that truth (with a Monte Carlo error of its own: the truth runs
are finite), beside three intervals the audit does not use: Korn & Graubard's clustered one
(the audit's before issue 44 item 3), Clopper-Pearson treating runs as independent (before
issue 32) and a percentile bootstrap over fits. And how often the release is refused (the
pooled bound above ``--limit``, and the whole verdict, a flagged person included), against
:func:`risk.audit.null_refusal_rate`'s model.

    python -m experiments.release_audit.calibration --quick           # minutes
    python -m experiments.release_audit.calibration --audits 10 --truth 1   # the committed
    python -m experiments.release_audit.calibration --summary-only

Rows are appended to ``results/calibration_fits.csv`` as each audit finishes (a rerun skips
what is there); ``results/calibration.md`` holds the tables.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

import risk
from experiments.datasets import read_adult
from experiments.release_audit.korn_graubard import clustered_interval
from experiments.reporting import append_rows
from risk.audit import _audit, null_refusal_rate

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
# rows of the audit since its bound is over fits (issue 44 item 3); the calibration_*.csv before
# it (Korn-Graubard's interval, balanced test fits) are kept, and their tables quoted in
# docs/audit.md's history, but no longer summarised
CSV = RESULTS / "calibration_fits.csv"
TABLE = RESULTS / "calibration.md"
CONFIDENCE = 1 - 0.05 / 3  # the release's, at the default [audit] attempts = 3
N_TRAIN, N_REFERENCE, N_POOL = 3000, 1800, 6000
BOOTSTRAP = 2000


def _uniform(*key: int) -> float:
    """A uniform number fixed by ``key``: the generator's coin for a fit (its seed) or for a
    target in a fit (seed, the target's row in train), which the truth reads again."""
    return float(np.random.default_rng(list(key)).random())


def _row_hashes(frame: pd.DataFrame) -> np.ndarray:
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


@dataclasses.dataclass(frozen=True)
class Generator:
    """``fit_sample`` of known truth: records drawn from ``pool`` (people who are in neither
    the training nor the reference records), plus copies of the targets in the table: each
    with probability ``p`` (``per="target"``: coin ``_uniform(seed, row)``), or all of them
    with probability ``p`` (``per="fit"``: coin ``_uniform(seed)``)."""

    pool: pd.DataFrame
    train_hashes: np.ndarray  # row i of train's hash: the only training rows in a shadow
    p: float = 0.0            # table are the targets inserted
    per: str = "target"

    def leaked(self, seed: int, row: int) -> bool:
        """Whether the fit of ``seed`` copies the target at ``row`` of train, if it holds it."""
        if self.p == 0.0:
            return False
        return (_uniform(seed) if self.per == "fit" else _uniform(seed, row)) < self.p

    def __call__(self, table: pd.DataFrame, seed: int) -> pd.DataFrame:
        rng = np.random.default_rng(seed)
        out = self.pool.iloc[rng.integers(0, len(self.pool), len(table))]
        if self.p == 0.0:
            return out.reset_index(drop=True)
        hashes = _row_hashes(table)
        inside = np.flatnonzero(np.isin(hashes, self.train_hashes))
        rows = [int(np.flatnonzero(self.train_hashes == hashes[i])[0]) for i in inside]
        copied = [i for i, row in zip(inside, rows, strict=True) if self.leaked(seed, row)]
        hit = table.iloc[copied]
        return pd.concat([hit, out.iloc[len(hit):]], ignore_index=True)


def generators(pool: pd.DataFrame, train: pd.DataFrame) -> dict[str, Generator]:
    """The generators of the tables, by name."""
    hashes = _row_hashes(train) if len(train) else np.zeros(0, np.uint64)
    return {
        "independent": Generator(pool, hashes),
        **{f"copy_{p:g}": Generator(pool, hashes, p) for p in (0.02, 0.05, 0.1)},
        **{f"all_or_nothing_{q:g}": Generator(pool, hashes, q, "fit") for q in (0.05, 0.2)},
    }


def data(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Train, reference and pool: disjoint samples of Adult's people."""
    adult = read_adult().sample(N_TRAIN + N_REFERENCE + N_POOL, random_state=seed)
    adult = adult.reset_index(drop=True)
    return (adult.iloc[:N_TRAIN].reset_index(drop=True),
            adult.iloc[N_TRAIN:N_TRAIN + N_REFERENCE].reset_index(drop=True),
            adult.iloc[N_TRAIN + N_REFERENCE:].reset_index(drop=True))


def _bootstrap(hits: np.ndarray, trials: np.ndarray, seed: int) -> tuple[float, float]:
    """Percentile bootstrap over fits of ``sum(hits) / sum(trials)`` (the comparator)."""
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(hits.size, np.full(hits.size, 1 / hits.size), BOOTSTRAP)
    ratio = (weights @ hits) / np.maximum(weights @ trials, 1)
    return float(np.quantile(ratio, 0.025)), float(np.quantile(ratio, 0.975))


def one_audit(frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame], generator: str, *,
              targets: int, shadows: int, design: str, shadow_size: int, truth: int,
              seed: int, limit: float) -> dict[str, Any]:
    """One audit and its truth: the row of ``results/calibration.csv``."""
    train, reference, pool = frames
    start = time.perf_counter()
    gen = generators(pool, train)[generator]
    res, runs = _audit(train, reference, gen, targets=targets, shadows=shadows,
                       shadow_size=shadow_size, design=design, columns=None, neighbours=5,
                       n_jobs=1, progress=None, random_state=seed,
                       truth_shadows=truth * shadows)
    shown = runs.fit < res.n_fits
    called = runs.called(0.01)
    # truth: TPR = p h + (1 - p) f with the leak's known probability p; h, the share of copied
    # member runs called, and f, that of the others (distributed as non-member runs: the
    # generator ignores its table otherwise), from the truth runs
    rows = _target_rows(train, reference, targets)[runs.target]
    leaked = runs.member & np.array([gen.leaked(int(s), int(r)) for s, r in
                                     zip(runs.fit_seed, rows, strict=True)], dtype=bool)
    truth_runs = ~shown
    nan = math.nan
    f = float(called[truth_runs & ~leaked].mean()) if truth else nan
    h = float(called[truth_runs & leaked].mean()) if (truth_runs & leaked).any() else nan
    tpr_true = gen.p * (1.0 if math.isnan(h) else h) + (1 - gen.p) * f
    fpr_true = float(called[truth_runs & ~runs.member].mean()) if truth else nan
    rates = runs.rates(0.01, shown)
    hits, trials = (np.asarray(v) for v in _per_fit(runs, called, shown & runs.member))
    boot = _bootstrap(hits, trials, seed)
    x, n = rates["tpr_counts"]
    naive = _clopper_pearson(x, n)
    before = clustered_interval(hits, trials)
    ci = res.tpr_at_1pct_interval
    verdict = res.verdict(tpr_limit=limit, confidence=CONFIDENCE)
    return {
        "generator": generator, "design": design, "targets": targets, "shadows": shadows,
        "runs": targets * shadows, "shadow_size": shadow_size, "seed": seed, "limit": limit,
        "tpr": res.tpr_at_1pct, "tpr_low": ci.low, "tpr_high": ci.high,
        "fpr": res.fpr_at_1pct, "fpr_high": res.fpr_at_1pct_interval.high,
        "tpr_true": tpr_true, "fpr_true": fpr_true, "caught_if_copied": h,
        "truth_runs": int(truth_runs.sum()),
        **({"covered": ci.low <= tpr_true <= ci.high,
            "covered_naive": naive.low <= tpr_true <= naive.high,
            "covered_kg": before.low <= tpr_true <= before.high,
            "covered_upper": verdict.pooled_upper >= tpr_true,
            "covered_bootstrap": boot[0] <= tpr_true <= boot[1],
            "fpr_covered": (res.fpr_at_1pct_interval.low <= fpr_true
                            <= res.fpr_at_1pct_interval.high)} if truth else {}),
        "half_width": (ci.high - ci.low) / 2, "half_width_naive": (naive.high - naive.low) / 2,
        "upper": verdict.pooled_upper, "confidence": CONFIDENCE,
        "refused": verdict.pooled_refused, "refused_verdict": verdict.refused,
        "flagged": verdict.n_flagged, "epsilon_lower_bound": res.epsilon_lower_bound,
        "epsilon_ceiling": res.epsilon_ceiling,
        "mean_target_auc": float(np.nanmean(res.target_auc)),
        "mean_best_attack_auc": float(np.nanmean(res.best_attack_auc)),
        "model_null_refusal": null_refusal_rate(targets, shadows, design=design, tpr_limit=limit,
                                                confidence=CONFIDENCE),
        "seconds": time.perf_counter() - start,
    }


def _clopper_pearson(successes: int, n: int) -> Any:
    """The exact 95 % interval of ``successes / n`` (Clopper & Pearson 1934), as scipy gives it:
    the audit's interval when its runs are taken as independent."""
    return stats.binomtest(int(successes), int(n)).proportion_ci(0.95, method="exact")


def _target_rows(train: pd.DataFrame, reference: pd.DataFrame, k: int) -> np.ndarray:
    """The audit's targets' rows in train: the ``k`` most vulnerable, ties to the earlier."""
    score = risk.vulnerability(train, reference=reference).to_numpy()
    return np.lexsort((np.arange(score.size), -score))[:k]


def _per_fit(runs: Any, called: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hits and runs per fit among ``keep``."""
    fits, inverse = np.unique(runs.fit[keep], return_inverse=True)
    return (np.bincount(inverse, weights=called[keep], minlength=fits.size),
            np.bincount(inverse, minlength=fits.size).astype(float))


SETTINGS = {  # name: (targets, shadows)
    "default = demo": (40, 300),
    "issue's 40 shadows": (20, 40),  # the all-or-nothing case issue 44 measured
}
QUICK = {"small": (10, 40)}


def cells(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every (setting, design, generator, seed) to play, in an order that fills the tables
    evenly (seed last), so that a run stopped early leaves usable rows."""
    settings = QUICK if args.quick else SETTINGS
    names = args.generators or list(generators(pd.DataFrame(), pd.DataFrame()))
    out = []
    for seed in range(args.first_seed, args.first_seed + args.audits):
        for setting, (k, r) in settings.items():
            if args.settings and setting not in args.settings:
                continue
            for design in args.designs:
                for name in names:
                    out.append(dict(setting=setting, generator=name, targets=k, shadows=r,
                                    design=design, seed=seed))
    return out


def _done(path: Path) -> set[tuple[Any, ...]]:
    if not path.exists():
        return set()
    old = pd.read_csv(path)
    return set(zip(old["generator"], old["design"], old["targets"], old["shadows"],
                   old["shadow_size"], old["seed"], strict=True))


def summarize(paths: list[Path], out: Path = TABLE) -> str:
    """The coverage, refusal and power tables, as Markdown, from every CSV of ``paths``."""
    rows = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    for col in ("covered", "covered_naive", "covered_bootstrap", "covered_kg", "covered_upper",
                "fpr_covered"):
        rows[col] = rows[col].astype(float)
    rows["truth_audits"] = rows["tpr_true"].notna()
    keys = ["setting", "design", "generator"]
    rows["setting"] = [next((n for n, s in {**SETTINGS, **QUICK}.items()
                             if s == (k, r)), f"{k}x{r}")
                       for k, r in zip(rows["targets"], rows["shadows"], strict=True)]
    g = rows.groupby(keys, sort=False)
    table = g.agg(audits=("seed", "size"), truth_audits=("truth_audits", "sum"),
                  runs=("runs", "first"),
                  tpr_true=("tpr_true", "mean"), fpr_true=("fpr_true", "mean"),
                  coverage=("covered", "mean"), coverage_naive=("covered_naive", "mean"),
                  coverage_bootstrap=("covered_bootstrap", "mean"),
                  coverage_kg=("covered_kg", "mean"), coverage_upper=("covered_upper", "mean"),
                  refused_verdict=("refused_verdict", "mean"), flagged=("flagged", "mean"),
                  fpr_coverage=("fpr_covered", "mean"),
                  half_width=("half_width", "mean"), tpr_sd=("tpr", "std"),
                  refused=("refused", "mean"), model=("model_null_refusal", "first"),
                  epsilon_ceiling=("epsilon_ceiling", "mean"),
                  target_auc=("mean_target_auc", "mean"),
                  best_attack_auc=("mean_best_attack_auc", "mean"),
                  seconds=("seconds", "mean")).reset_index()

    def se(p: float, n: int) -> str:  # the share with its exact (Clopper-Pearson) 95 % interval
        ci = stats.binomtest(int(round(p * n)), n).proportion_ci(method="exact")
        return f"{p:.3f} [{ci.low:.3f}, {ci.high:.3f}]"

    lines = ["# Coverage and refusals of the membership audit (simulated)", "",
             f"Adult: {N_TRAIN:,} training, {N_REFERENCE:,} reference records; shadow tables of "
             f"{int(rows['shadow_size'].iloc[0]):,}; limit {rows['limit'].iloc[0]:g} on the "
             f"pooled TPR at 1 % FPR, decided on its one-sided {CONFIDENCE:.1%} bound over the "
             "test fits (`[audit] attempts = 3`). `python -m "
             "experiments.release_audit.calibration`. [a, b] is the exact (Clopper-Pearson) "
             "95 % interval of the share over the audits.", "",
             "## Coverage of the pooled TPR at 1 % FPR", "",
             "| setting (K x R) | design | generator | audits | true TPR | true FPR | 95 % "
             "interval over fits (the audit's) | one-sided bound that decides | Korn-Graubard "
             "(the audit's before) | Clopper-Pearson, runs independent | percentile bootstrap "
             "over fits | FPR interval coverage | mean half-width | SD of the TPR over seeds |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        if not r.truth_audits:
            continue
        k, sh = rows.loc[(rows["setting"] == r.setting), ["targets", "shadows"]].iloc[0]
        lines.append(f"| {r.setting} ({k} x {sh}) | {r.design} | {r.generator} | "
                     f"{r.truth_audits} | "
                     f"{r.tpr_true:.3f} | {r.fpr_true:.4f} | {se(r.coverage, r.truth_audits)} | "
                     f"{se(r.coverage_upper, r.truth_audits)} | {r.coverage_kg:.3f} | "
                     f"{r.coverage_naive:.3f} | {r.coverage_bootstrap:.3f} | "
                     f"{r.fpr_coverage:.3f} | {r.half_width:.3f} | {r.tpr_sd:.3f} |")
    lines += ["", "## Refusals (no leak) and power (leaks of known size)", "",
              "| setting (K x R) | design | generator | audits | true TPR at 1 % FPR | refused "
              "by the pooled bound | model (no leak) | refused by the verdict (pooled or a "
              "person) | people flagged per audit | epsilon ceiling | mean target AUC (chosen "
              "attack) | mean best attack's AUC (diagnostic) | seconds per audit |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        k, sh = rows.loc[(rows["setting"] == r.setting), ["targets", "shadows"]].iloc[0]
        model = f"{r.model:.3f}" if r.generator == "independent" else ""
        lines.append(f"| {r.setting} ({k} x {sh}) | {r.design} | {r.generator} | {r.audits} | "
                     f"{r.tpr_true:.3f} | {se(r.refused, r.audits)} | {model} | "
                     f"{se(r.refused_verdict, r.audits)} | {r.flagged:.2f} | "
                     f"{r.epsilon_ceiling:.2f} | {r.target_auc:.3f} | {r.best_attack_auc:.3f} "
                     f"| {r.seconds:.1f} |")
    text = "\n".join(lines) + "\n"
    out.write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--audits", type=int, default=100, help="audits per cell (seeds)")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seeds first-seed, first-seed + 1, ... (to add audits to a cell "
                             "from another CSV)")
    parser.add_argument("--quick", action="store_true", help="one small setting")
    parser.add_argument("--settings", nargs="*", help=f"of {list(SETTINGS)}")
    parser.add_argument("--designs", nargs="*", default=["shared"])
    parser.add_argument("--generators", nargs="*", help="default: all")
    parser.add_argument("--shadow-size", type=int, default=300)
    parser.add_argument("--truth", type=int, default=4,
                        help="truth runs per target, in multiples of the shadows")
    parser.add_argument("--limit", type=float, default=0.05)
    parser.add_argument("--csv", type=Path, default=CSV,
                        help="rows go here (the tables read every "
                             "results/calibration_fits*.csv)")
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args(argv)
    if not args.summary_only:
        frames = data()
        done = _done(args.csv)
        for cell in cells(args):
            key = (cell["generator"], cell["design"], cell["targets"], cell["shadows"],
                   args.shadow_size, cell["seed"])
            if key in done:
                continue
            row = one_audit(frames, cell["generator"], targets=cell["targets"],
                            shadows=cell["shadows"], design=cell["design"],
                            shadow_size=args.shadow_size, truth=args.truth,
                            seed=cell["seed"], limit=args.limit)
            append_rows(args.csv, [row])
            print(f"{cell['setting']} {cell['design']} {cell['generator']} seed "
                  f"{cell['seed']}: TPR {row['tpr']:.3f} [{row['tpr_low']:.3f}, "
                  f"{row['tpr_high']:.3f}] truth {row['tpr_true']:.3f}, refused "
                  f"{row['refused']}, {row['seconds']:.0f} s", flush=True)
    paths = set(RESULTS.glob("calibration_fits*.csv")) | ({args.csv} if args.csv.exists()
                                                          else set())
    print(summarize(sorted(paths)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
