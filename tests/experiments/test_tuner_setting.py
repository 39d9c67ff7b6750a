"""M in the tuner's own setting (issue #18): the truth is right, the copiers copy, and the smoke
grid runs end to end with sane numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import risk
from experiments.membership_validation import tuner_setting as ts
from experiments.membership_validation import tuner_summary, tuner_truth, tuner_verdicts, validate
from tests.data import load_adult


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "a": rng.choice(list("xyz"), n), "b": rng.integers(0, 4, n),
        "fnlwgt": rng.integers(10_000, 500_000, n),
    })


def test_true_attack_on_the_whole_population_is_validate_ground_truth():
    # attacking all N people leaves nothing to chance: K = n_members and every record is drawn
    population = _table(300, 0)
    members = np.zeros(300, dtype=bool)
    members[:90] = True
    synthetic = pd.concat([population[:20], _table(40, 1)], ignore_index=True)
    mean, sd, *_ = tuner_truth.true_attack(population, 90, synthetic, population_size=300,
                              quasi_identifiers=None, attack_size=300, repeats=3, seed=0)
    expected, _ = validate.ground_truth(population, members, synthetic, quasi_identifiers=None,
                                        attack_size=300, repeats=3, seed=0)
    np.testing.assert_allclose(mean, expected)
    np.testing.assert_allclose(sd, 0.0, atol=1e-12)


def test_true_attack_draws_members_in_the_population_share():
    # synthetic = the members: recall 1, and precision is the members' share among matches;
    # a draw with the wrong member share would move the mean F1 off the exhaustive attack's
    population = _table(4000, 2)[["a", "b"]]
    synthetic = population[:1000]
    full, *_ = tuner_truth.true_attack(population, 1000, synthetic, population_size=4000,
                             quasi_identifiers=None, attack_size=4000, repeats=1, seed=0)
    mean, *_ = tuner_truth.true_attack(population, 1000, synthetic, population_size=4000,
                             quasi_identifiers=None, attack_size=1500, repeats=300, seed=3)
    assert mean[0] == pytest.approx(full[0], abs=0.01)


@pytest.mark.parametrize("jitter", [False, True])
def test_copier_puts_the_share_of_training_records_asked_for(jitter):
    train = _table(200, 3).drop_duplicates().reset_index(drop=True)
    base = _table(len(train), 4)
    setting = tuner_truth.Setting(None, copy_rate=0.1, jitter=jitter, base="x")
    out = tuner_truth.copier(train, setting, base, seed=0)
    assert len(out) == len(train) and list(out.columns) == list(train.columns)
    on_keys = out.merge(train[["a", "b", "fnlwgt"]].assign(hit=1), how="left",
                        on=["a", "b", "fnlwgt"])["hit"].notna().sum()
    if jitter:
        assert on_keys == 0  # fnlwgt moved: no exact copy is left...
        moved = out.merge(train, on=["a", "b"], suffixes=("", "_t"))
        close = (moved["fnlwgt"] - moved["fnlwgt_t"]).abs() <= 0.01 * moved["fnlwgt_t"] + 1
        assert close.sum() >= round(0.1 * len(train))  # ...but each sits right next to one
    else:
        assert on_keys >= round(0.1 * len(train))
    full = tuner_truth.copier(train, tuner_truth.Setting(None, copy_rate=1.0), None, seed=0)
    assert full.sort_values(list(train.columns)).reset_index(drop=True).equals(
        train.sort_values(list(train.columns)).reset_index(drop=True))


def test_options_and_grid():
    with pytest.raises(ValueError, match="unknown synthesiser"):
        ts.Options(settings=("cart", "gan9000"))
    with pytest.raises(ValueError, match="fractions"):
        ts.Options(fractions=(0.5, 1.0))
    opts = ts.Options(seeds=3, heavy_seeds=1, heavy_max_fraction=0.15)
    assert opts.runs("cart", 0.5, 2) and not opts.runs("cart", 0.5, 3)
    assert opts.runs("ctgan", 0.15, 0) and not opts.runs("ctgan", 0.5, 0)
    assert not opts.runs("ctgan", 0.15, 1)
    # every setting's trial seed is fixed by the registry, not by the subset run
    assert list(ts.TRIAL_NUMBER) == list(ts.SETTINGS)
    assert set(tuner_verdicts.COPIERS) == {k for k, s in ts.SETTINGS.items() if s.copy_rate > 0}


@pytest.mark.slow
def test_smoke_grid_runs_and_its_numbers_are_sane(tmp_path):
    adult = load_adult()
    assert ts.main(["--smoke", "--output", str(tmp_path)]) == 0
    frame = pd.read_csv(tmp_path / ts.CSV_NAME)
    assert tuple(frame.columns[: len(ts.COLUMNS)]) == ts.COLUMNS
    opts = ts.SMOKE
    assert len(frame) == (len(opts.fractions) * len(opts.settings) * opts.seeds
                          * len(opts.qi_sets) * len(opts.hamming))
    ok = frame[frame["status"] == "ok"]
    assert ok[["f1_estimate", "f1_true"]].stack().between(0, 1).all()
    # the trial's t is n_train / N, and M is the relative F1 at that t
    assert np.allclose(frame["t"], frame["n_train"] / len(adult))
    f_naive = 2 * ok["t"] / (1 + ok["t"])
    assert np.allclose(ok["f_naive"], f_naive)
    assert np.allclose(ok["m_true"], (ok["f1_true"] - f_naive) / (1 - f_naive))
    assert np.allclose(ok["m_estimate"], (ok["f1_estimate"] - f_naive) / (1 - f_naive))
    assert np.allclose(ok["abs_error"], (ok["f1_estimate"] - ok["f1_true"]).abs())
    agrees = (ok["m_estimate"] <= 0.2) == (ok["m_true"] <= 0.2)
    assert (ok["decision_agrees"].astype(bool) == agrees).all()
    # members per attack set: round(a t); fewer than 20 cannot bind; with 20 or more, M cannot
    # bind only when even a verbatim copy of train scores M <= 0.2 (the trial's copy ceiling,
    # seeded by the study seed; the experiment's own ceiling column is seeded per unit, so
    # compare it with a margin)
    binds = frame["can_bind"].astype(bool)
    assert (~binds | (frame["attack_members"] >= 20)).all()
    blind = ~binds & (frame["attack_members"] >= 20)
    assert (frame.loc[blind, "m_copy_ceiling"] <= 0.25).all()
    assert (frame.loc[binds, "m_copy_ceiling"] > 0.15).all()

    h0 = frame[(frame["hamming_threshold"] == 0) & (frame["quasi_identifiers"] == "all")]
    rows = {s: h0[h0["synthesizer"] == s] for s in opts.settings}
    # the verbatim copy: its data leak (true M high), the copies gate fails it, and the
    # replicated-uniques removal leaves (almost) nothing to release: Adult's few duplicates
    copy = rows["copy"]
    assert (copy["m_true_sampled"] > 0.5).all() and (copy["m_estimate_sampled"] > 0.5).all()
    assert (copy["copies_difference"] > 0.9).all() and not copy["gate_pass"].any()
    assert (copy["n_released"] <= 0.01 * copy["n_train"]).all()
    # the near copy evades exact matching (no copy, nothing removed) but not M or the DCR
    near = rows["nearcopy"]
    assert (near["copies_difference"].abs() <= 0.05).all()
    assert (near["replicated_uniques_removed"] == 0).all()
    assert (near["m_true"] > 0.5).all() and (near["m_estimate"] > 0.2).all()
    assert (near["dcr_excess"] > 0.1).all() and not near["gate_pass"].any()
    # ...and read at M's resolution (numeric columns binned) it is a copy again
    assert (near["binned_copies_difference"] > 0.9).all()
    # a smooth generator: no risk, and estimate and truth agree where M can bind
    copula = rows["gaussian_copula"]
    assert (copula["m_true"] <= 0.2).all() and copula["decision_agrees"].astype(bool).all()
    assert (copula["binned_copies_difference"].abs() <= 0.05).all()
    binding = ok[ok["can_bind"].astype(bool)]
    assert (binding["abs_error"] < 0.1).all()
    # six keys shared by most people: M cannot see even the verbatim copy
    keys = frame[(frame["hamming_threshold"] == 0) & (frame["quasi_identifiers"] == "keys6")
                 & (frame["synthesizer"] == "copy")]
    assert (keys["m_copy_ceiling"] < 0.2).all()

    for name in ("tuner_setting.md", "tuner_setting_scatter.png", "tuner_setting_error.png",
                 "tuner_setting_region.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert len(tuner_summary.rule_table(frame)) == len(opts.qi_sets) * len(opts.hamming)
    # M's confidence interval (issue 34): ordered, around the decision it reports, its
    # coverage flags what they say, and the summary has the coverage tables
    assert (ok["m_ci_low"] <= ok["m_ci_high"]).all() and (ok["m_ci_level"] == 0.95).all()
    covers = (ok["m_ci_low"] <= ok["m_true_trial_bins"]) & (ok["m_true_trial_bins"]
                                                            <= ok["m_ci_high"])
    assert (ok["ci_covers_trial_bins"].astype(bool) == covers).all()
    assert covers.mean() >= 0.8  # 28 rows of the smoke grid; the full grid checks the rate
    overall = tuner_summary.coverage_overall(frame)
    assert list(overall["truth"][:2]) == list(tuner_summary.TRUTHS)
    assert "Coverage of M's confidence interval" in (tmp_path / "tuner_setting.md").read_text()
    assert len(tuner_summary.coverage_table(frame)) == len(
        ok.groupby(["synthesizer", "sample_fraction", "hamming_threshold"]))
    # --rescore recomputes the interval from the stored shares and seeds: the same numbers
    exact = pd.read_csv(tmp_path / ts.CSV_NAME, float_precision="round_trip")
    again = ts.rescore(exact)
    for column in ("m_ci_low", "m_ci_high", "f1_ci_low", "f1_ci_high"):
        pd.testing.assert_series_equal(again[column], exact[column])
    assert (again["ci_covers_trial_bins"].astype(str) == exact["ci_covers_trial_bins"]
            .astype(str)).all()
    # resuming does no work twice
    again = ts.run(adult, opts, tmp_path, progress=False)
    assert len(again) == len(frame)


def test_truth_in_trial_bins_matches_members_as_the_trial_does():
    # bin edges from train, holdout and synthetic data: the members' matched share is the
    # trial's own, whatever range the people outside the sample span
    rng = np.random.default_rng(7)
    train, holdout = _table(300, 8), _table(300, 9)
    others = _table(3000, 10)
    others["fnlwgt"] = others["fnlwgt"] * 3  # a population range far wider than the sample's
    synthetic = pd.concat([train[:100], _table(200, 11)], ignore_index=True)
    records = pd.concat([train, others], ignore_index=True)
    truth = tuner_truth.true_attack(records, 300, synthetic, population_size=3600,
                                    quasi_identifiers=None, attack_size=1000, repeats=5,
                                    seed=int(rng.integers(1000)), trial_bins=(holdout, 1))
    trial = risk.membership_disclosure(train, holdout, synthetic, population_size=3600,
                                       hamming_threshold=1, curve=False, random_state=0)
    assert truth.member_rate[1] == pytest.approx(trial.member_match_rate)
    assert truth.f1.shape == (3,)  # h = 0, 1 and "farther"
