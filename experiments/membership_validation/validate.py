"""Does the partition estimate of membership disclosure match the truth?

Reproduces the simulation design of K. El Emam, L. Mosquera, X. Fang, "Validating a membership
disclosure metric for synthetic health data", JAMIA Open 5(4), 2022, ooac083, on a real
population: UCI Adult (adult.data + adult.test, N = 48,842 people).

For every sampling fraction n/N, synthesiser and seed:

* **Ground truth.** Draw the custodian's real sample of n people from the population and train
  the synthesiser on all of it (the model that would be released). Draw attack records uniformly
  from the *population*; members are those who are in the sample, so about a share n/N of the
  attack set are members, as in the real world. The adversary claims "member" when a synthetic
  record lies within Hamming distance h of the target on the quasi-identifiers (the matching rule
  of ``risk.membership_disclosure``: design §3, steps 3-4). F1 is averaged over the repeats.
* **Partition estimate.** Using only the real sample, as a custodian must: split it (seeded,
  ``--train-fraction``), train on the training part, and run ``risk.membership_disclosure`` on
  (training part, holdout part, synthetic) with the attack's member share t = n/N (the
  authors' recommendation) and again with the customary t = 0.5.

The relative F1 ``M = (F1 - F_naive(t)) / (1 - F_naive(t))`` is reported for each, with the t the
number was computed at: the actual M at t = n/N, the estimated M at n/N and at 0.5 (what a
custodian using the customary value would report).

Run from the repository root (``../shared/data`` beside it)::

    python -m experiments.membership_validation.validate [--seeds 5] [--fresh]

Results go to ``experiments/membership_validation/results/`` (``results.csv`` is appended to
setting by setting, so an interrupted run resumes where it stopped).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import risk
from experiments.reporting import append_rows
from risk.membership import DEFAULT_ATTACK_CAP, scores_from_counts
from tuner._common.seeding import derive
from tuner.data import split
from tuner.synthesis import synthesize

HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE / "results"
DEFAULT_FRACTIONS = (0.05, 0.15, 0.25, 0.5)
# label -> (synthesiser, fixed hyperparameters). The leaf-1 CART copies training records on
# purpose: it puts one generator in the high-risk region, where a validation matters most.
SETTINGS: dict[str, tuple[str, dict[str, Any]]] = {
    "cart": ("cart", {"min_samples_leaf": 5}),
    "cart_leaf1": ("cart", {"min_samples_leaf": 1}),
    "gaussian_copula": ("gaussian_copula", {}),
    "ctgan": ("ctgan", {"epochs": 30, "batch_size": 500}),
}
DEFAULT_SETTINGS = ("cart", "cart_leaf1", "gaussian_copula", "ctgan")
KEY = ["synthesizer", "fraction", "seed"]


@dataclasses.dataclass(frozen=True)
class Options:
    """Everything that changes the numbers; stored beside the results to guard resumption."""

    fractions: tuple[float, ...] = DEFAULT_FRACTIONS
    settings: tuple[str, ...] = DEFAULT_SETTINGS
    seeds: int = 5
    hamming: tuple[int, ...] = (0, 2)
    train_fraction: float = 0.5
    repeats: int = 100
    quasi_identifiers: tuple[str, ...] | None = None  # None: every column
    population_rows: int | None = None  # subsample the population (smoke tests only)
    base_seed: int = 2022

    def __post_init__(self) -> None:
        for f in self.fractions:
            if not 0.0 < f < 1.0:
                raise ValueError(f"`fractions` must lie in (0, 1), got {f!r}")
        unknown = sorted(set(self.settings) - set(SETTINGS))
        if unknown:
            raise ValueError(f"unknown synthesiser setting(s) {unknown}; known: {sorted(SETTINGS)}")
        if self.seeds < 1:
            raise ValueError(f"`seeds >= 1` must hold, got seeds={self.seeds}")
        if any(h < 0 for h in self.hamming):
            raise ValueError(f"`hamming` thresholds must be >= 0, got {self.hamming}")
        if not 0.0 < self.train_fraction < 1.0:
            raise ValueError(f"`train_fraction` must lie in (0, 1), got {self.train_fraction}")


def ground_truth(
    population: pd.DataFrame,
    members: np.ndarray,
    synthetic: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[str] | None,
    attack_size: int,
    repeats: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and s.d. of the adversary's F1, per threshold h, on attacks drawn from the population.

    ``members[i]`` says whether population record i was in the training sample. Each repeat
    draws ``attack_size`` people uniformly without replacement from the population; the number
    of members among them is therefore hypergeometric with mean ``attack_size * n / N``. Only
    the count of drawn records at each (membership, distance) matters, so a repeat is one
    multivariate hypergeometric draw over those 2 (p + 1) cells (exactly sampling without
    replacement). Returns arrays of length p + 1 (h = 0 .. p).
    """
    dist = risk.membership_distances(
        population, synthetic, keys=quasi_identifiers
    ).to_numpy()
    p = population.shape[1] if quasi_identifiers is None else len(quasi_identifiers)
    cells = np.concatenate([np.bincount(dist[members], minlength=p + 1),
                            np.bincount(dist[~members], minlength=p + 1)])
    draws = np.random.default_rng(seed).multivariate_hypergeometric(
        cells, attack_size, size=repeats)
    _, _, f1 = scores_from_counts(draws[:, : p + 1], draws[:, p + 1:])
    return f1.mean(axis=0), f1.std(axis=0, ddof=1) if repeats > 1 else np.zeros(p + 1)


def one_setting(
    population: pd.DataFrame, label: str, fraction_index: int, seed: int, opts: Options,
    *, threads: int = 1,
) -> list[dict[str, Any]]:
    """Truth and partition estimates for one (synthesiser, fraction, seed); one row per h."""
    fraction = opts.fractions[fraction_index]
    name, params = SETTINGS[label]
    qis = list(opts.quasi_identifiers) if opts.quasi_identifiers else None
    n_pop = len(population)
    n = int(round(fraction * n_pop))
    t = n / n_pop
    # The real sample depends on (seed, fraction) only: every synthesiser sees the same people.
    chosen = np.random.default_rng(derive(opts.base_seed, seed, fraction_index)).choice(
        n_pop, size=n, replace=False)
    members = np.zeros(n_pop, dtype=bool)
    members[chosen] = True
    sample = population.iloc[np.sort(chosen)].reset_index(drop=True)
    fit_seed = derive(opts.base_seed, seed, fraction_index, 2)

    released = synthesize(name, params, sample, seed=fit_seed, threads=threads)
    start = time.perf_counter()
    truth_mean, truth_sd = ground_truth(
        population, members, released.synthetic, quasi_identifiers=qis,
        attack_size=min(DEFAULT_ATTACK_CAP, n_pop), repeats=opts.repeats,
        seed=derive(opts.base_seed, seed, fraction_index, 3))
    truth_seconds = time.perf_counter() - start

    parts = split(sample, train_fraction=opts.train_fraction,
                  seed=derive(opts.base_seed, seed, fraction_index, 1))
    evaluated = synthesize(name, params, parts.train, seed=fit_seed, threads=threads)
    start = time.perf_counter()
    estimates = {
        key: risk.membership_disclosure(
            parts.train, parts.holdout, evaluated.synthetic, sampling_fraction=t_attack,
            keys=qis, repeats=opts.repeats,
            random_state=derive(opts.base_seed, seed, fraction_index, 4))
        for key, t_attack in (("tn", t), ("t05", 0.5))
    }
    estimate_seconds = (time.perf_counter() - start) / 2
    p = len(estimates["tn"].f1_by_threshold) - 1
    rows = []
    for h in opts.hamming:
        if h > p:
            raise ValueError(f"hamming threshold {h} exceeds the {p} quasi-identifiers")
        actual = float(truth_mean[h])
        est_tn = estimates["tn"].f1_by_threshold[h]
        est_05 = estimates["t05"].f1_by_threshold[h]
        rows.append({
            "synthesizer": label, "model": name, "fraction": fraction, "seed": seed,
            "n": n, "population_size": n_pop, "hamming_threshold": h,
            "actual_f1": actual, "actual_f1_sd": float(truth_sd[h]),
            "est_f1_tn": est_tn, "est_f1_t05": est_05,
            "actual_m": float(risk.relative_f1(actual, t)),
            "est_m_tn": float(risk.relative_f1(est_tn, t)),
            "est_m_t05": float(risk.relative_f1(est_05, 0.5)),
            "f_naive_tn": risk.naive_f1(t),
            "n_train_estimate": len(parts.train), "n_holdout_estimate": len(parts.holdout),
            "attack_size_truth": min(DEFAULT_ATTACK_CAP, n_pop),
            "attack_size_tn": estimates["tn"].attack_size,
            "attack_size_t05": estimates["t05"].attack_size,
            "fit_seconds_truth": released.fit_seconds,
            "fit_seconds_estimate": evaluated.fit_seconds,
            "truth_seconds": truth_seconds, "estimate_seconds": estimate_seconds,
        })
    return rows


def _guard_resume(output: Path, opts: Options, fresh: bool) -> pd.DataFrame:
    """Previously finished rows, or a clear error when they were made with other options."""
    results, stored = output / "results.csv", output / "options.json"
    current = json.loads(json.dumps(dataclasses.asdict(opts)))
    if fresh:
        results.unlink(missing_ok=True)
    if results.exists() and stored.exists():
        before = json.loads(stored.read_text())
        changed = {k for k in current if k not in ("seeds", "settings", "fractions")
                   and before.get(k) != current[k]}
        if changed:
            raise SystemExit(
                f"{results} was made with other options ({sorted(changed)}: "
                f"{ {k: before.get(k) for k in sorted(changed)} }); rerun with --fresh to start "
                "over, or pass the same options to resume")
    stored.write_text(json.dumps(current, indent=2) + "\n")
    return pd.read_csv(results) if results.exists() else pd.DataFrame(columns=KEY)


def run(population: pd.DataFrame, opts: Options, output: Path, *, fresh: bool = False,
        progress: bool = True, threads: int = 1) -> pd.DataFrame:
    """Run every missing setting, append each to ``output/results.csv``; return all rows."""
    from tqdm import tqdm

    output.mkdir(parents=True, exist_ok=True)
    if opts.population_rows is not None:
        keep = np.random.default_rng(opts.base_seed).choice(
            len(population), size=opts.population_rows, replace=False)
        population = population.iloc[np.sort(keep)].reset_index(drop=True)
    done = _guard_resume(output, opts, fresh)
    finished = {(str(s), float(f), int(k)) for s, f, k in done[KEY].itertuples(index=False)}
    todo = [(label, fi, seed) for fi in range(len(opts.fractions))
            for seed in range(opts.seeds) for label in opts.settings
            if (label, opts.fractions[fi], seed) not in finished]
    bar = tqdm(todo, desc="settings", unit="setting", disable=not progress, dynamic_ncols=True)
    for label, fi, seed in bar:
        bar.set_postfix_str(f"{label} n/N={opts.fractions[fi]} seed={seed}")
        append_rows(output / "results.csv",
                    one_setting(population, label, fi, seed, opts, threads=threads))
    return pd.read_csv(output / "results.csv")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fractions", type=float, nargs="+", default=list(DEFAULT_FRACTIONS))
    parser.add_argument("--synthesizers", nargs="+", default=list(DEFAULT_SETTINGS),
                        choices=sorted(SETTINGS))
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..K-1 (default 5)")
    parser.add_argument("--hamming", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--train-fraction", type=float, default=0.5,
                        help="share of the real sample the partition trains on (tuner default)")
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--threads", type=int, default=2, help="torch threads for CTGAN")
    parser.add_argument("--fresh", action="store_true", help="discard earlier results")
    args = parser.parse_args(argv)

    from experiments.datasets import DatasetMissing, read_adult
    from experiments.membership_validation.summarize import summarize
    from tuner._common.quiet import quiet_libraries

    quiet_libraries()
    warnings.filterwarnings("ignore")
    try:
        population = read_adult()
    except DatasetMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    opts = Options(fractions=tuple(args.fractions), settings=tuple(args.synthesizers),
                   seeds=args.seeds, hamming=tuple(args.hamming),
                   train_fraction=args.train_fraction, repeats=args.repeats)
    start = time.perf_counter()
    frame = run(population, opts, args.output, fresh=args.fresh, threads=args.threads)
    written = summarize(frame, args.output)
    print(f"\n{len(frame)} rows in {args.output / 'results.csv'} "
          f"({time.perf_counter() - start:.0f} s this invocation)")
    for path in written:
        print(f"  {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
