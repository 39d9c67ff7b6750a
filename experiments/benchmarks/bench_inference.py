"""The default inference attack against scikit-learn's k-NN and a single 1-NN predict, one run.

Adult as the tuner's trials see it (``bench_trial``'s setting): 20,000 training and 20,000
holdout rows, six keys (age, sex, race, marital_status, education, native_country), target
``income``; the synthetic data of a Gaussian copula and of CART fitted on the training rows.
Records with a missing key or target are left out, as the tuner's measure does (the row counts
printed are those left). Side by side, each the median of ``--repeats`` runs on the same data:

* **ours**: ``risk.attribute_inference`` with its default attack (3-NN computed exactly over
  distinct key combinations, searched by categorical level), the attack trained on the
  original already cached: what a trial pays, input checks included;
* **scikit-learn 3-NN**: the former default's k-NN work alone: ``KNeighborsClassifier(3)`` in
  the same feature pipeline (standardised age, one-hot categories), fitted on the synthetic rows
  and predicting the distinct key combinations of the training and holdout records;
* **one 1-NN predict**: ``KNeighborsClassifier(1)`` on the same features, fitted on the
  synthetic rows, one ``predict`` of every training and holdout row.

Also the risks of both attacks (the former default through ``estimator=KNeighborsClassifier(3)``,
same seeded tie-break): they differ only where scikit-learn's rounding broke a tie between
records at equal distance.

Run: ``python -m experiments.benchmarks.bench_inference [--repeats 5]`` from the repository
root with ../shared/data present; writes its block of ``experiments/benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import warnings
from pathlib import Path

import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import risk
from experiments.datasets import read_adult
from experiments.reporting import markdown_table, timed, write_section
from tuner import config
from tuner.search import prepare
from tuner.synthesis import synthesize

KEYS = ["age", "sex", "race", "marital_status", "education", "native_country"]
TARGET = "income"
PARAMS = {"gaussian_copula": {"default_distribution": "norm"},
          "cart": {"min_samples_leaf": 5, "max_depth": 0, "visit_order": "original",
                   "smoothing": False}}


def _pipeline(k: int) -> Pipeline:
    """The attack's features (standardised age, one-hot categories) and scikit-learn's k-NN."""
    features = ColumnTransformer([
        ("numeric", StandardScaler(), ["age"]),
        ("categorical", OneHotEncoder(handle_unknown="ignore", sparse_output=False), KEYS[1:])])
    return Pipeline([("features", features), ("model", KNeighborsClassifier(n_neighbors=k))])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    adult = read_adult().sample(2 * args.rows, random_state=0).reset_index(drop=True)
    cfg = config.parse({"data": {"path": "adult", "population_size": 48_842,
                                 "audit_fraction": 0.0},  # as in RESULTS.md: 50/50
                        "study": {"output": "/tmp/bench-inference"}}, base=Path.cwd())
    split = prepare(cfg, adult).split
    cols = [*KEYS, TARGET]
    train, holdout = (f.dropna(subset=cols).reset_index(drop=True)
                      for f in (split.train, split.holdout))
    real = pd.concat([train[KEYS], holdout[KEYS]], ignore_index=True)
    distinct = real.drop_duplicates()
    kw = dict(keys=KEYS, target=TARGET, holdout=holdout, random_state=1)
    rows = []
    for name, params in PARAMS.items():
        syn = synthesize(name, params, split.train, seed=1).synthetic
        syn = syn.dropna(subset=cols).reset_index(drop=True)
        ours, t_ours = timed(lambda s=syn: risk.attribute_inference(train, s, **kw),
                               args.repeats)  # the first call fills the original's cache
        _, t_sk = timed(lambda s=syn: _pipeline(3).fit(s[KEYS], s[TARGET]).predict(distinct),
                          args.repeats)
        _, t_one = timed(lambda s=syn: _pipeline(1).fit(s[KEYS], s[TARGET]).predict(real),
                           args.repeats)
        former = risk.attribute_inference(train, syn, estimator=KNeighborsClassifier(3), **kw)
        rows.append({"synthesizer": name, "synthetic rows (key combinations)":
                     f"{len(syn):,} ({len(syn[KEYS].drop_duplicates()):,})",
                     "ours s": t_ours, "scikit-learn 3-NN s": t_sk, "one 1-NN predict s": t_one,
                     "ours / 3-NN": t_ours / t_sk, "ours / 1-NN predict": t_ours / t_one,
                     "risk, ours / former": f"{ours.risk:.4f} / {former.risk:.4f}",
                     "holdout risk, ours / former":
                     f"{ours.holdout_risk:.4f} / {former.holdout_risk:.4f}"})
        print(f"{name}: ours {t_ours:.3f} s, scikit-learn 3-NN {t_sk:.3f} s, one 1-NN predict "
              f"{t_one:.3f} s; risk {ours.risk:.4f} (former {former.risk:.4f})")
    table = markdown_table(pd.DataFrame(rows), floatfmt=".3f")
    write_section(args.output, "bench_inference", "\n".join([
        "## Inference attack: ours vs scikit-learn's k-NN and a single 1-NN predict", "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, 2 cores, load "
        f"average {os.getloadavg()[0]:.1f} at the end; command: `python -m "
        f"experiments.benchmarks.bench_inference`; median of {args.repeats} runs each, side by "
        f"side. Adult, keys {', '.join(KEYS)}, target {TARGET}: {len(train):,} training and "
        f"{len(holdout):,} holdout records with complete keys and target ({len(distinct):,} "
        "distinct key combinations among them) are predicted from each synthetic set. 'former': "
        "the same attack with scikit-learn's k-NN (`estimator=KNeighborsClassifier(3)`, same "
        "seeded tie-break); the risks differ only where its rounding broke a tie between "
        "records at equal distance.",
        "", table]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
