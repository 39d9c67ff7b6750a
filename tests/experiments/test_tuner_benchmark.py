"""The tuner benchmark: its measures on hand-made frames, and a smoke-size run on Hu's CE."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from experiments.tuner_benchmark import holdout, plan, run, summary
from tests.data import require

SEARCHES = ("random", "tpe", "ours", "additive", "pareto", "utility")


def test_identical_frames_have_no_correlation_error():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=200), "y": rng.normal(size=200),
                          "c": rng.choice(list("abc"), 200), "d": rng.choice([1, 2], 200)})
    frame["y"] += frame["x"]
    frame.loc[frame.index[:5], "x"] = np.nan  # a missing value is left out of numeric pairs
    assert holdout.correlation_error(frame, frame, frame) == pytest.approx(0.0, abs=1e-12)
    shuffled = frame.assign(y=frame["y"].sample(frac=1, random_state=1).to_numpy())
    real = holdout.associations(frame, {"x", "y"})  # d has two values: categorical
    syn = holdout.associations(shuffled, {"x", "y"})
    assert len(real) == 6 and real[("x", "y")] > 0.6 and abs(syn[("x", "y")]) < 0.2
    assert holdout.correlation_error(shuffled, frame, frame) == pytest.approx(
        np.mean([abs(real[k] - syn[k]) for k in real]))


def test_associations_of_known_pairs():
    a = pd.Series(list("aabb") * 25)
    assert holdout._cramers_v(a, a) == pytest.approx(1.0)
    assert holdout._cramers_v(a, pd.Series(["x"] * 100)) == 0.0  # a constant: no association
    values = pd.Series(np.where(a == "a", 1.0, 5.0))
    assert holdout._eta(a, values) == pytest.approx(1.0)  # the category fixes the value
    assert holdout._spearman(pd.Series(np.arange(10.0)), pd.Series(np.arange(10.0, 0, -1))) == \
        pytest.approx(-1.0)


def test_tstr_auc_of_separable_and_one_class_data():
    rng = np.random.default_rng(1)
    x = rng.normal(size=400)
    real = pd.DataFrame({"x": x, "y": np.where(x > 0, "yes", "no")})
    train, test = real.iloc[:200], real.iloc[200:]
    target = holdout.Target("y", positive="yes")
    auc, note = holdout.tstr_auc(train, train, test, target)
    assert auc > 0.98 and note == ""
    auc, note = holdout.tstr_auc(train.assign(y="no"), train, test, target)
    assert auc == 0.5 and "one value" in note
    median = holdout.Target("x", above_median=True)
    assert median.labels(test, train).sum() == (test["x"] > train["x"].median()).sum()
    with pytest.raises(ValueError, match="exactly one"):
        holdout.Target("y")


def test_interval_and_anytime_curve():
    mean, low, high = summary.interval(pd.Series([1.0, 2.0, 3.0]))
    assert mean == 2.0 and high - mean == pytest.approx(4.302653 / math.sqrt(3), rel=1e-5)
    rows = pd.DataFrame({"elapsed": [1.0, 2.0, 3.0, 4.0], "utility": [0.9, 0.95, 0.7, 0.99],
                         "feasible": [False, True, True, False]})
    curve = summary.anytime(rows, np.array([0.5, 2.0, 3.5, 10.0]))
    assert np.isnan(curve[0]) and list(curve[1:]) == [0.95, 0.95, 0.95]


def test_plan_rotates_the_searches_and_refuses_bad_values():
    p = plan.load()
    assert [d.name for d in p.datasets] == ["adult", "acs", "ce"]
    orders = [run.method_order(p, s) for s in p.seeds]
    assert all(o[0] == "defaults" and sorted(o) == sorted(p.methods) for o in orders)
    assert len({tuple(o) for o in orders}) == len(p.seeds)
    assert p.budget_of(p.datasets[2]) == 60 and p.budget_of(p.datasets[0]) == 90
    with pytest.raises(ValueError, match="unknown method"):
        plan.load(methods=["grid"])
    with pytest.raises(ValueError, match="unknown dataset"):
        plan.load(datasets=["census"])


def _check_feasibility(trials: pd.DataFrame) -> None:
    constraints = [c for c in trials.columns if c.startswith("c.")]
    assert {"c.m", "c.copies", "c.near_copies", "c.dcr", "c.cap.Expenditure",
            "c.inference.Expenditure"} <= set(constraints)
    complete = trials["state"] == "COMPLETE"
    assert trials.loc[complete, constraints].notna().all().all()
    expected = complete & (trials[constraints] <= 0).all(axis=1)
    assert (trials["feasible"].astype(bool) == expected).all()


def _check_curves(results, trials: pd.DataFrame, budget: float) -> None:
    curve = pd.read_csv(results / "anytime.csv")
    for (_, method), g in curve.groupby(["seed", "method"]):
        u = g.sort_values("seconds")["best_feasible_u"].to_numpy()
        seen = ~np.isnan(u)
        assert not seen.any() or seen[np.argmax(seen):].all()  # NaN only before the first
        assert (np.diff(u[seen]) >= 0).all()  # never worse later
        mine = trials[(trials["method"] == method) & trials["within_budget"]
                      & trials["feasible"]]
        end = u[-1]
        assert (math.isnan(end) and mine.empty) or end == pytest.approx(mine["utility"].max())


@pytest.mark.slow
def test_smoke_run_on_ce(tmp_path):
    require("hu_ce/CEdata.csv")
    results, budget = tmp_path / "results", 3.0
    rc = run.main(["--datasets", "ce", "--seeds", "0", "--budget", str(budget), "--rows", "300",
                   "--synthesizers", "cart", "gaussian_copula", "--results", str(results),
                   "--work", str(tmp_path / "work")])
    assert rc == 0
    trials = pd.read_csv(results / "trials_ce.csv.gz")
    assert {"dataset", "seed", "method", "trial", "synthesizer", "params", "elapsed", "utility",
            "m", "loss", "objective", "feasible", "within_budget"} <= set(trials.columns)
    assert set(trials["method"]) == {"defaults", *SEARCHES}
    assert (trials["elapsed"] >= trials["start"]).all() and (trials["start"] >= 0).all()
    searched = trials[trials["method"] != "defaults"]
    assert (searched["within_budget"] == (searched["elapsed"] <= budget)).all()
    assert set(trials.loc[trials["method"] == "defaults", "params"]) == {"{}"}
    _check_feasibility(trials)
    # the searches start from the same points, seeded as the product seeds its trials
    first = [trials[(trials["method"] == m) & (trials["trial"] == 0)][
        ["synthesizer", "params", "trial_seed"]].to_numpy().tolist() for m in SEARCHES]
    assert all(f == first[0] and len(f) == 1 for f in first)
    _check_curves(results, trials, budget)
    rel = pd.read_csv(results / "releases.csv")
    best = rel[(rel["choice"] == "best feasible") & rel["trial"].notna()]
    for _, r in best.iterrows():
        mine = trials[(trials["method"] == r["method"]) & trials["within_budget"]
                      & trials["feasible"]]
        assert r["utility"] == pytest.approx(mine["utility"].max())
        # the release names the trial's own parameters (the same JSON the trials table holds)
        own = trials[(trials["method"] == r["method"]) & (trials["trial"] == r["trial"])]
        assert len(own) == 1 and json.loads(r["params"]) == json.loads(own["params"].iloc[0])
    done = rel[rel["trial"].notna()]
    assert (done["reproduced"] < 1e-9).all()  # the chosen trial's data made again exactly
    assert done["tstr_auc"].between(0, 1).all() and (done["correlation_error"] >= 0).all()
    assert {"own pick", "default cart", "default gaussian_copula"} <= set(rel["choice"])
    # pysdg's routine releases its most useful trial, whatever the constraints say
    util = trials[(trials["method"] == "utility") & trials["within_budget"]
                  & (trials["state"] == "COMPLETE")]
    pick = rel[(rel["method"] == "utility") & (rel["choice"] == "own pick")]
    assert len(pick) == 1 and pick["utility"].iloc[0] == pytest.approx(util["utility"].max())
    table = pd.read_csv(results / "summary.csv")
    assert set(table["method"]) == {"defaults", *SEARCHES}
    assert table["feasible share"].between(0, 1).all()
    assert (results / "anytime_ce.png").stat().st_size > 0
    # a pair is compared where both methods released within the budget: on a loaded machine
    # "ours" (every measure per trial) may finish no trial in 3 s, and then has no pair
    released = {(m, c) for m, c in rel.loc[rel["trial"].notna(), ["method", "choice"]]
                .itertuples(index=False)}
    expected = [f"{a[0]} - {b[0]}" for a, b in summary.PAIRS if {a, b} <= released]
    compared = pd.read_csv(results / "paired.csv")["comparison"].str.split(" \\(").str[0]
    assert expected and sorted(expected) == sorted(compared), (expected, list(compared))
    # a rerun finds every cell done and runs nothing again
    assert run.main(["--datasets", "ce", "--seeds", "0", "--budget", str(budget), "--rows",
                     "300", "--synthesizers", "cart", "gaussian_copula", "--results",
                     str(results), "--work", str(tmp_path / "work")]) == 0
    assert len(pd.read_csv(results / "trials_ce.csv.gz")) == len(trials)
