"""The default inference attack against scikit-learn's k-NN and a single 1-NN predict, one run.

Adult as the tuner's trials see it (``bench_trial``'s setting): 20,000 training and 20,000
holdout rows, six keys (age, sex, race, marital_status, education, native_country), target
``income``; the synthetic data of a Gaussian copula and of CART fitted on the training rows.
Records with a missing key or target are left out, as the tuner's measure does (the row counts
printed are those left). Side by side, each the median of ``--repeats`` runs on the same data:

* **ours, synthetic side**: the 3-NN attack trained on the synthetic data (:mod:`risk._knn`:
  exact distances over distinct key combinations, categorical levels), predicting every
  training and holdout record: what a trial pays (the attack trained on the original is fitted
  once per study);
* **scikit-learn 3-NN**: the former default, ``KNeighborsClassifier(3)`` in the same feature
  pipeline, fitted on the same shuffled synthetic rows and predicting the same distinct key
  combinations (our code's former path);
* **one 1-NN predict**: ``KNeighborsClassifier(1)`` on the same features, fitted on the
  synthetic rows, one ``predict`` of every training and holdout row: the floor a k-NN attack
  cannot go under without changing its algorithm;
* the whole measure (``risk.attribute_inference`` with a warm cache of the original's attack).

Also the share of records where ours and scikit-learn's 3-NN predict alike (they differ only
where scikit-learn's rounding broke a tie between records at equal distance).

Run: ``python -m experiments.benchmarks.bench_inference [--repeats 5]`` from the repository
root with ../shared/data present; writes its block of ``experiments/benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline

import risk
from experiments.datasets import read_adult
from experiments.reporting import markdown_table, write_section
from risk import inference
from risk._knn import ExactKNN
from tuner import config
from tuner.context import prepare
from tuner.synthesizers import synthesize

KEYS = ["age", "sex", "race", "marital_status", "education", "native_country"]
TARGET = "income"
PARAMS = {"gaussian_copula": {"default_distribution": "norm"},
          "cart": {"min_samples_leaf": 5, "max_depth": 0, "visit_order": "original",
                   "smoothing": False}}


def _median(fn: Callable[[], Any], repeats: int) -> tuple[Any, float]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    adult = read_adult().sample(2 * args.rows, random_state=0).reset_index(drop=True)
    cfg = config.parse({"data": {"path": "adult", "population_size": 48_842},
                        "study": {"output": "/tmp/bench-inference"}}, base=Path.cwd())
    split = prepare(cfg, adult).split
    cols = [*KEYS, TARGET]
    train, holdout = (f.dropna(subset=cols).reset_index(drop=True)
                      for f in (split.train, split.holdout))
    numeric = {"age"}
    real = pd.concat([train[KEYS], holdout[KEYS]], ignore_index=True)
    kw = dict(keys=KEYS, target=TARGET, holdout=holdout, random_state=1)
    rows = []
    for name, params in PARAMS.items():
        syn = synthesize(name, params, split.train, seed=1).synthetic
        syn = syn.dropna(subset=cols).reset_index(drop=True)
        risk.attribute_inference(train, syn, **kw)  # the original's attack: cached

        def ours(s: pd.DataFrame = syn) -> list[np.ndarray]:
            model = ExactKNN(inference._features(KEYS, numeric), ["age"], KEYS[1:],
                             n_neighbors=3, regression=False)
            return inference._fit_predict(model, s, KEYS, TARGET, 1, train, holdout)

        def sklearn_3nn(s: pd.DataFrame = syn) -> list[np.ndarray]:
            model = Pipeline([("features", inference._features(KEYS, numeric)),
                              ("model", KNeighborsClassifier(n_neighbors=3))])
            return inference._fit_predict(model, s, KEYS, TARGET, 1, train, holdout)

        def one_nn(s: pd.DataFrame = syn, real: pd.DataFrame = real) -> np.ndarray:
            model = Pipeline([("features", inference._features(KEYS, numeric)),
                              ("model", KNeighborsClassifier(n_neighbors=1))])
            return model.fit(s[KEYS], s[TARGET]).predict(real)

        mine, t_ours = _median(ours, args.repeats)
        theirs, t_sk = _median(sklearn_3nn, args.repeats)
        _, t_one = _median(one_nn, args.repeats)
        _, t_measure = _median(lambda s=syn: risk.attribute_inference(train, s, **kw),
                               args.repeats)
        agree = float(np.mean(np.concatenate(mine) == np.concatenate(theirs)))
        distinct = len(real.drop_duplicates())
        combos = len(syn[KEYS].drop_duplicates())
        rows.append({"synthesizer": name, "synthetic rows (key combinations)":
                     f"{len(syn):,} ({combos:,})", "ours, synthetic side s": t_ours,
                     "scikit-learn 3-NN s": t_sk, "one 1-NN predict s": t_one,
                     "ours / 3-NN": t_ours / t_sk, "ours / 1-NN predict": t_ours / t_one,
                     "whole measure s": t_measure, "same prediction": agree})
        print(f"{name}: ours {t_ours:.3f} s, scikit-learn 3-NN {t_sk:.3f} s, one 1-NN predict "
              f"{t_one:.3f} s, agreement {agree:.4f}")
    table = markdown_table(pd.DataFrame(rows), floatfmt=".3f")
    write_section(args.output, "bench_inference", "\n".join([
        "## Inference attack: ours vs scikit-learn's k-NN and a single 1-NN predict", "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, 2 cores, load "
        f"average {os.getloadavg()[0]:.1f} at the end; command: `python -m "
        f"experiments.benchmarks.bench_inference`; median of {args.repeats} runs each, side by "
        f"side. Adult, keys {', '.join(KEYS)}, target {TARGET}: {len(train):,} training and "
        f"{len(holdout):,} holdout records with complete keys and target ({distinct:,} distinct "
        "key combinations among them) are predicted from each synthetic set. 'same "
        "prediction': share of those records where ours and scikit-learn's 3-NN agree (they "
        "differ only where scikit-learn's rounding broke a tie between equidistant records).",
        "", table]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
