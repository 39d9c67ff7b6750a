"""The audit's calibration experiment (experiments/release_audit/calibration.py) in small form:
its generators do what they say, and the coverage simulation on a fit-correlated leak."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from experiments.release_audit import calibration
from tests.data import load_adult


def test_the_generators_copy_the_targets_they_say_they_copy():
    pool = pd.DataFrame({"x": np.arange(1000, 1100), "c": ["p"] * 100})
    train = pd.DataFrame({"x": np.arange(10), "c": ["t"] * 10})
    table = pd.concat([pool.iloc[:40], train.iloc[[2, 5]]], ignore_index=True)
    gens = calibration.generators(pool, train)
    assert not gens["independent"](table, 1).isin({"c": ["t"]}).any().any()
    for name in ("copy_0.1", "all_or_nothing_0.2"):
        gen = gens[name]
        for seed in range(60):
            out = gen(table, seed)
            copied = set(out.loc[out["c"] == "t", "x"])
            assert copied == {row for row in (2, 5) if gen.leaked(seed, row)}
            assert len(out) == len(table)
    # all or nothing: one coin per fit
    aon = gens["all_or_nothing_0.2"]
    assert all(aon.leaked(s, 2) == aon.leaked(s, 5) for s in range(60))
    assert 0 < sum(aon.leaked(s, 2) for s in range(60)) < 30


@pytest.mark.slow
def test_the_bound_over_fits_covers_a_fit_correlated_leak(tmp_path):
    # 6 audits of a generator that copies every target of a fit or none (20 % of fits), the
    # shared design: the interval the audit reports covers the truth (the runs no figure
    # reads, at the same thresholds) at least 5 times, and the one-sided bound that decides
    # every time; Clopper-Pearson treating the runs as independent is narrower
    load_adult()
    frames = calibration.data()
    rows = [calibration.one_audit(frames, "all_or_nothing_0.2", targets=10, shadows=40,
                                  design="shared", shadow_size=200, truth=3, seed=seed,
                                  limit=0.05) for seed in range(6)]
    assert sum(r["covered"] for r in rows) >= 5, [(r["tpr_low"], r["tpr_true"], r["tpr_high"])
                                                  for r in rows]
    assert all(r["covered_upper"] for r in rows)
    assert all(r["half_width_naive"] < r["half_width"] for r in rows)
    assert all(0.05 < r["tpr_true"] < 0.4 for r in rows)
    path = tmp_path / "calibration.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    text = calibration.summarize([path], tmp_path / "calibration.md")
    assert "| small (10 x 40) | shared | all_or_nothing_0.2 | 6 |" in text
