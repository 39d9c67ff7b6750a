"""Does M hold where the tuner uses it? (issues #18 and #34)

The tuner splits the custodian's table once, fits on the training part only, releases exactly
that model's synthetic data (replicated uniques removed) and computes M with t = n_train / N.
This experiment validates that setting trial by trial on UCI Adult (N = 48,842): each trial is
made as the tuner makes it with public seeds (``study.public_seed``: the split at
``derive(study_seed, SeedPath.SPLIT)``, the fit at
``derive(study_seed, SeedPath.TRIAL, trial_number)``, the measures
through :data:`tuner.measures.MEASURES`), and compared with the truth of the released data on
the population (:func:`tuner_truth.true_attack`), with M's confidence interval and whether it
covers (:mod:`experiments.membership_validation.tuner_interval`). Design, settings, commands
and results: ``experiments/membership_validation/README.md`` ("In the tuner's own setting")::

    python -m experiments.membership_validation.tuner_setting           # full grid, resumes
    python -m experiments.membership_validation.tuner_setting --smoke   # CI size, < 60 s
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import risk
from experiments.membership_validation.tuner_interval import (
    interval_columns,
    rescore,
    same_bins_columns,
)
from experiments.membership_validation.tuner_truth import (
    KEYS,
    TARGET,
    Setting,
    Truth,
    binned_copies_difference,
    copier,
    distinct_keys,
    risk_options,
    trial_membership,
    true_attack,
)
from experiments.reporting import append_rows
from risk.membership import DEFAULT_ATTACK_CAP
from tuner import measures
from tuner._common.seeding import SeedPath, derive
from tuner.data import split
from tuner.measures import remove_replicated_uniques
from tuner.synthesis import synthesize

HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE / "results"
CSV_NAME = "tuner_setting.csv"
COLUMNS = ("sample_fraction", "synthesizer", "hamming_threshold", "f1_estimate", "f1_true",
           "m_estimate", "m_true", "abs_error", "decision_agrees")
KEY = ["synthesizer", "sample_fraction", "seed"]
ACCEPTABLE_M = risk.ACCEPTABLE_M  # 0.2
QI_SETS: Mapping[str, tuple[str, ...] | None] = {"all": None, "keys6": KEYS}


_NEURAL = {"epochs": 30, "batch_size": 500}
# Registry order fixes each setting's trial number (its seed), whatever subset is run.
SETTINGS: Mapping[str, Setting] = {
    "copy": Setting(None, copy_rate=1.0),
    "nearcopy": Setting(None, copy_rate=1.0, jitter=True),
    "copy10": Setting(None, copy_rate=0.1, base="gaussian_copula"),
    "nearcopy10": Setting(None, copy_rate=0.1, jitter=True, base="gaussian_copula"),
    "cart_leaf1": Setting("cart", {"min_samples_leaf": 1}),
    "cart_leaf2": Setting("cart", {"min_samples_leaf": 2}),
    "cart": Setting("cart", {"min_samples_leaf": 5}),
    "gaussian_copula": Setting("gaussian_copula"),
    "ctgan": Setting("ctgan", _NEURAL, heavy=True),
    "tvae": Setting("tvae", _NEURAL, heavy=True),
    "copulagan": Setting("copulagan", _NEURAL, heavy=True),
}
TRIAL_NUMBER = {label: i for i, label in enumerate(SETTINGS)}
DEFAULT_FRACTIONS = (0.01, 0.02, 0.05, 0.15, 0.5)


@dataclasses.dataclass(frozen=True)
class Options:
    """Everything that changes the numbers; stored beside the results to guard resumption."""

    fractions: tuple[float, ...] = DEFAULT_FRACTIONS
    settings: tuple[str, ...] = tuple(SETTINGS)
    seeds: int = 5
    heavy_seeds: int = 2  # seeds for the neural families (their fits dominate the run time)
    heavy_max_fraction: float = 0.15  # and the largest n/N they run at (CTGAN: 3 min at 0.5)
    hamming: tuple[int, ...] = (0, 2)
    qi_sets: tuple[str, ...] = tuple(QI_SETS)
    train_fraction: float = 0.5
    repeats: int = 100
    base_seed: int = 2022

    def __post_init__(self) -> None:
        for f in self.fractions:
            if not 0.0 < f < 1.0:
                raise ValueError(f"`fractions` must lie in (0, 1), got {f!r}")
        unknown = sorted(set(self.settings) - set(SETTINGS))
        if unknown:
            raise ValueError(f"unknown synthesiser setting(s) {unknown}; known: {list(SETTINGS)}")
        if self.seeds < 1 or self.heavy_seeds < 0:
            raise ValueError(f"`seeds >= 1` and `heavy_seeds >= 0` must hold, got "
                             f"{self.seeds}, {self.heavy_seeds}")
        if any(h < 0 for h in self.hamming):
            raise ValueError(f"`hamming` thresholds must be >= 0, got {self.hamming}")
        if set(self.qi_sets) - set(QI_SETS):
            raise ValueError(f"unknown quasi-identifier set(s) in {self.qi_sets}")
        if not 0.0 < self.train_fraction < 1.0:
            raise ValueError(f"`train_fraction` must lie in (0, 1), got {self.train_fraction}")

    def runs(self, label: str, fraction: float, seed: int) -> bool:
        """Whether the grid holds (setting, fraction, seed)."""
        if not SETTINGS[label].heavy:
            return seed < self.seeds
        return seed < self.heavy_seeds and fraction <= self.heavy_max_fraction


SMOKE = Options(fractions=(0.02, 0.1), settings=("copy", "nearcopy", "cart", "gaussian_copula"),
                seeds=1, heavy_seeds=0, repeats=20)


@dataclasses.dataclass
class Unit:
    """One custodian's sample and the study's split of it: what every setting shares."""

    population: pd.DataFrame
    fraction: float
    fraction_index: int
    seed: int
    opts: Options

    def __post_init__(self) -> None:
        n_pop = len(self.population)
        self.n = int(round(self.fraction * n_pop))
        self.study_seed = derive(self.opts.base_seed, 2, self.fraction_index, self.seed)
        chosen = np.sort(np.random.default_rng(
            derive(self.opts.base_seed, 1, self.fraction_index, self.seed)).choice(
            n_pop, size=self.n, replace=False))
        sample = self.population.iloc[chosen].reset_index(drop=True)
        self.split = split(sample, train_fraction=self.opts.train_fraction,
                           seed=derive(self.study_seed, SeedPath.SPLIT))
        outside = np.ones(n_pop, dtype=bool)
        outside[chosen] = False
        # members first, then the people outside the sample (never the holdout)
        self.outside = self.population.loc[outside].reset_index(drop=True)
        self.truth_records = pd.concat([self.split.train, self.outside], ignore_index=True)
        self.cache: dict[str, tuple[pd.DataFrame, float]] = {}
        self.ceilings: dict[tuple[str, int], float] = {}

    def trial_seed(self, label: str) -> int:
        return derive(self.study_seed, SeedPath.TRIAL, TRIAL_NUMBER[label])

    def synthetic(self, label: str, threads: int) -> tuple[pd.DataFrame, float]:
        """The setting's synthetic data as sampled, and the fit time (memoised)."""
        if label not in self.cache:
            setting, seed = SETTINGS[label], self.trial_seed(label)
            if setting.family is not None:
                out = synthesize(setting.family, dict(setting.params), self.split.train,
                                 seed=seed, threads=threads)
                self.cache[label] = (out.synthetic, out.fit_seconds)
            else:
                base = self.synthetic(setting.base, threads)[0] if setting.base else None
                self.cache[label] = (copier(self.split.train, setting, base, seed), 0.0)
        return self.cache[label]


def copy_ceiling(unit: Unit, inputs: measures.Inputs, qi_name: str, h: int) -> float:
    """The M the trial would report for a verbatim copy of its training data (memoised).

    The most a synthesiser can leak to this attack: every member is matched, and precision is
    capped by the non-members who share a member's quasi-identifiers within h. When this
    ceiling is itself low, M cannot tell a copier from a safe generator, however many members
    the attack sets hold.
    """
    if (qi_name, h) not in unit.ceilings:
        copy = trial_membership(inputs, unit.split.train, QI_SETS[qi_name], h)
        unit.ceilings[qi_name, h] = copy.m
    return unit.ceilings[qi_name, h]


def one_setting(unit: Unit, label: str, *, threads: int = 1) -> list[dict[str, Any]]:
    """Truth and the trial's estimates for one (fraction, seed, setting): a row per QI set, h."""
    opts, sp = unit.opts, unit.split
    n_pop, t = len(unit.population), len(sp.train) / len(unit.population)
    seed = unit.trial_seed(label)
    sampled, fit_seconds = unit.synthetic(label, threads)
    sampled = sampled[list(sp.train.columns)]
    start = time.perf_counter()
    released, removed = remove_replicated_uniques(sp.train, sampled,
                                                  risk_options(0)["replicated_uniques"])
    inputs = measures.Inputs(
        train=sp.train, holdout=sp.holdout, synthetic=released, options=risk_options(0),
        population_size=n_pop, keys=None, seed=seed, removed_rows=removed,
        sampled=sampled)
    copies = measures.MEASURES["copies"].compute(inputs).results[""]
    dcr = measures.MEASURES["dcr"].compute(inputs).results[""]
    assert isinstance(copies, risk.ExactCopiesResult) and isinstance(dcr, risk.DCRResult)
    rep_u = (float(measures.MEASURES["disclosure"].compute(inputs).results[TARGET]
                   .to_dict()["repU"]) if len(released) else np.nan)
    gate_pass = bool(copies.difference <= inputs.options["copy_limit"]
                     and dcr.excess <= inputs.options["dcr_limit"])
    distinct_share = float(len(sampled.drop_duplicates()) / len(sampled))
    versions = {"released": released, "sampled": sampled}
    a_true = min(DEFAULT_ATTACK_CAP, n_pop)
    rows = []
    for qi_name in opts.qi_sets:
        qis = QI_SETS[qi_name]
        truth: dict[str, Truth] = {}
        for v, data in versions.items():
            if data.empty:
                continue
            if v == "sampled" and removed == 0:
                truth[v] = truth["released"]
                continue
            truth[v] = true_attack(
                unit.truth_records, len(sp.train), data, population_size=n_pop,
                quasi_identifiers=qis, attack_size=a_true, repeats=opts.repeats,
                seed=derive(opts.base_seed, 3, unit.fraction_index, unit.seed,
                            TRIAL_NUMBER[label]))
        if len(released):
            truth["trial_bins"] = true_attack(
                unit.truth_records, len(sp.train), released, population_size=n_pop,
                quasi_identifiers=qis, attack_size=a_true, repeats=opts.repeats,
                seed=derive(opts.base_seed, 3, unit.fraction_index, unit.seed,
                            TRIAL_NUMBER[label]), trial_bins=(sp.holdout, max(opts.hamming)))
        keys_train = distinct_keys(sp.train, qis)
        binned_copies = binned_copies_difference(sp.train, sp.holdout, sampled, qis)
        for h in opts.hamming:
            est = trial_membership(inputs, released, qis, h) if len(released) else None
            est_s = (est if removed == 0 else trial_membership(inputs, sampled, qis, h))
            row: dict[str, Any] = {"sample_fraction": unit.fraction, "synthesizer": label,
                                   "hamming_threshold": h}
            if est is not None:
                f1_true = float(truth["released"][0][h])
                m_true = float(risk.relative_f1(f1_true, t))
                row |= {
                    "f1_estimate": est.f1, "f1_true": f1_true, "m_estimate": est.m,
                    "m_true": m_true, "abs_error": abs(est.f1 - f1_true),
                    "decision_agrees": (est.m <= ACCEPTABLE_M) == (m_true <= ACCEPTABLE_M),
                }
            else:  # the gate removed every record: the tuner fails the trial (UnusableSynthesis)
                row |= dict.fromkeys(COLUMNS[3:], np.nan)
            f1_true_s = float(truth["sampled"][0][h])
            row |= {
                "seed": unit.seed, "quasi_identifiers": qi_name, "status":
                    "ok" if est is not None else "unusable: gate removed every record",
                "m_abs_error": abs(row["m_estimate"] - row["m_true"]),
                "m_true_sd": float(truth["released"][1][h]) if est is not None else np.nan,
                "m_spread_low": est.m_spread.low if est else np.nan,
                "m_spread_high": est.m_spread.high if est else np.nan,
                "spread_covers": (est.m_spread.low <= row["m_true"] <= est.m_spread.high)
                if est else np.nan,
                **interval_columns(est, truth.get("released"), h, t),
                **same_bins_columns(est, truth.get("trial_bins"), h, t),
                "expected_members": (est or est_s).expected_members,
                "attack_members": (est or est_s).attack_members,
                "attack_size": (est or est_s).attack_size,
                "can_bind": (est or est_s).can_bind,
                "m_copy_ceiling": copy_ceiling(unit, inputs, qi_name, h),
                "m_estimate_sampled": est_s.m, "m_true_sampled": float(
                    risk.relative_f1(f1_true_s, t)),
                "f1_estimate_sampled": est_s.f1, "f1_true_sampled": f1_true_s,
                "n": unit.n, "n_train": len(sp.train), "n_holdout": len(sp.holdout),
                "population_size": n_pop, "t": t, "f_naive": risk.naive_f1(t),
                "distinct_keys_train": keys_train,
                "n_released": len(released), "replicated_uniques_removed": removed,
                "copies_train_share": copies.train_share,
                "copies_holdout_share": copies.holdout_share,
                "copies_difference": copies.difference,
                "binned_copies_difference": binned_copies,
                "distinct_synthetic_share": distinct_share,
                "dcr_share_closer_to_train": dcr.share_closer_to_train,
                "dcr_excess": dcr.excess, "repU": rep_u, "gate_pass": gate_pass,
                "fit_seconds": fit_seconds, "trial_seed": seed,
            }
            rows.append(row)
    seconds = time.perf_counter() - start
    for row in rows:
        row["measure_seconds"] = seconds
    return rows


def _guard_resume(output: Path, opts: Options, fresh: bool) -> pd.DataFrame:
    results, stored = output / CSV_NAME, output / "tuner_setting_options.json"
    current = json.loads(json.dumps(dataclasses.asdict(opts)))
    if fresh:
        results.unlink(missing_ok=True)
    if results.exists() and stored.exists():
        before = json.loads(stored.read_text())
        grows = ("seeds", "heavy_seeds", "settings", "fractions", "heavy_max_fraction")
        changed = {k for k in current if k not in grows and before.get(k) != current[k]}
        if changed:
            raise SystemExit(
                f"{results} was made with other options ({sorted(changed)}); rerun with "
                "--fresh to start over, or pass the same options to resume")
    stored.write_text(json.dumps(current, indent=2) + "\n")
    return pd.read_csv(results) if results.exists() else pd.DataFrame(columns=KEY)


def run(population: pd.DataFrame, opts: Options, output: Path, *, fresh: bool = False,
        progress: bool = True, threads: int = 1,
        log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Run every missing (fraction, seed, setting), appending to ``output/tuner_setting.csv``."""
    from tqdm import tqdm

    output.mkdir(parents=True, exist_ok=True)
    done = _guard_resume(output, opts, fresh)
    finished = {(str(s), float(f), int(k)) for s, f, k in done[KEY].itertuples(index=False)}
    units = [(fi, seed) for fi in range(len(opts.fractions))
             for seed in range(max(opts.seeds, opts.heavy_seeds))]
    todo = [(fi, seed, [lab for lab in opts.settings if opts.runs(lab, opts.fractions[fi], seed)
                        and (lab, opts.fractions[fi], seed) not in finished])
            for fi, seed in units]
    todo = [u for u in todo if u[2]]
    bar = tqdm(todo, desc="samples", unit="sample", disable=not progress, dynamic_ncols=True)
    for fi, seed, labels in bar:
        unit = Unit(population, opts.fractions[fi], fi, seed, opts)
        for label in labels:
            bar.set_postfix_str(f"n/N={opts.fractions[fi]} seed={seed} {label}")
            start = time.perf_counter()
            append_rows(output / CSV_NAME, one_setting(unit, label, threads=threads))
            if log:
                log(f"n/N={opts.fractions[fi]} seed={seed} {label}: "
                    f"{time.perf_counter() - start:.1f} s")
    return pd.read_csv(output / CSV_NAME)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true",
                        help="the CI size: 2 fractions, 4 settings, 1 seed, 20 repeats")
    parser.add_argument("--fractions", type=float, nargs="+")
    parser.add_argument("--synthesizers", nargs="+", choices=list(SETTINGS))
    parser.add_argument("--seeds", type=int, help="seeds 0..K-1 (default 5)")
    parser.add_argument("--heavy-seeds", type=int, help="seeds for ctgan/tvae/copulagan (2)")
    parser.add_argument("--heavy-max-fraction", type=float,
                        help="largest n/N for ctgan/tvae/copulagan (0.15)")
    parser.add_argument("--repeats", type=int)
    parser.add_argument("--seed", type=int, help="the base seed every seed derives from")
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=1, help="torch threads for neural fits")
    parser.add_argument("--fresh", action="store_true", help="discard earlier results")
    parser.add_argument("--verbose", action="store_true", help="time of every setting")
    parser.add_argument("--rescore", action="store_true",
                        help="recompute only M's confidence interval columns of the results "
                             "(after a change of the interval) and the summary, then stop")
    args = parser.parse_args(argv)
    if args.rescore:
        from experiments.membership_validation.tuner_summary import summarize

        output = args.output or DEFAULT_OUTPUT
        path = output / CSV_NAME
        frame = rescore(pd.read_csv(path, float_precision="round_trip"))
        frame.to_csv(path, index=False)
        print("\n".join(str(p) for p in [path, *summarize(frame, output)]))
        return 0

    from experiments.datasets import DatasetMissing, read_adult
    from experiments.membership_validation.tuner_summary import summarize
    from tuner._common.quiet import quiet_libraries

    quiet_libraries()
    warnings.filterwarnings("ignore")
    try:
        population = read_adult()
    except DatasetMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    base = SMOKE if args.smoke else Options()
    changes = {k: v for k, v in {
        "fractions": tuple(args.fractions) if args.fractions else None,
        "settings": tuple(args.synthesizers) if args.synthesizers else None,
        "seeds": args.seeds, "heavy_seeds": args.heavy_seeds,
        "heavy_max_fraction": args.heavy_max_fraction, "repeats": args.repeats,
        "base_seed": args.seed}.items() if v is not None}
    opts = dataclasses.replace(base, **changes)
    output = args.output or (Path(tempfile.mkdtemp(prefix="tuner_setting_smoke_"))
                             if args.smoke else DEFAULT_OUTPUT)  # smoke: never over results/
    start = time.perf_counter()
    frame = run(population, opts, output, fresh=args.fresh, threads=args.threads,
                progress=not args.verbose, log=print if args.verbose else None)
    written = summarize(frame, output)
    print(f"\n{len(frame)} rows in {output / CSV_NAME} "
          f"({time.perf_counter() - start:.0f} s this invocation)")
    print("\n".join(f"  {path}" for path in written))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
