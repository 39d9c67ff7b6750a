"""The membership validation experiment: its ground truth is right, and it runs end to end."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.membership_validation import summarize, validate
from tests.data import load_adult
from tests.examples import examples


def _slow_truth(population: pd.DataFrame, members: np.ndarray, synthetic: pd.DataFrame,
                h: int) -> float:
    """Attack every person of the population, by explicit loops over pairs."""
    tp = fp = 0
    for i in range(len(population)):
        row = population.iloc[i].tolist()
        nearest = min(sum(a != b for a, b in zip(row, synthetic.iloc[j].tolist(), strict=True))
                      for j in range(len(synthetic)))
        if nearest <= h:
            tp += bool(members[i])
            fp += not members[i]
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / members.sum() if members.sum() else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


@st.composite
def _tables(draw: st.DrawFn) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
    p = draw(st.integers(1, 3))
    cells = st.sampled_from(["a", "b", "c"])
    n_pop = draw(st.integers(4, 12))
    rows = draw(st.lists(st.lists(cells, min_size=p, max_size=p), min_size=n_pop,
                         max_size=n_pop))
    syn = draw(st.lists(st.lists(cells, min_size=p, max_size=p), min_size=1, max_size=6))
    members = np.array(draw(st.lists(st.booleans(), min_size=n_pop, max_size=n_pop)))
    members[0], members[-1] = True, False  # at least one of each
    cols = [f"q{k}" for k in range(p)]
    return pd.DataFrame(rows, columns=cols), members, pd.DataFrame(syn, columns=cols)


@settings(max_examples=examples(40), deadline=None)
@given(_tables())
def test_ground_truth_with_the_whole_population_equals_the_slow_attack(case):
    population, members, synthetic = case
    # attacking all N people is deterministic: the hypergeometric draw takes every record
    mean, sd = validate.ground_truth(population, members, synthetic, quasi_identifiers=None,
                                     attack_size=len(population), repeats=3, seed=0)
    for h in range(population.shape[1] + 1):
        assert mean[h] == pytest.approx(_slow_truth(population, members, synthetic, h))
        assert sd[h] == pytest.approx(0.0)


def test_ground_truth_attack_holds_members_in_proportion():
    rng = np.random.default_rng(1)
    population = pd.DataFrame({"q": rng.integers(0, 50, 4000).astype(str)})
    members = np.zeros(4000, dtype=bool)
    members[:1000] = True
    # synthetic = 100 members' records: precision is the members' share among those who match;
    # a draw that over- or under-sampled members would move the mean F1 off the full attack's
    synthetic = population[:100]
    mean, sd = validate.ground_truth(population, members, synthetic, quasi_identifiers=None,
                                     attack_size=2000, repeats=1000, seed=3)
    full, _ = validate.ground_truth(population, members, synthetic, quasi_identifiers=None,
                                    attack_size=4000, repeats=1, seed=0)
    assert 0.05 < full[0] < 0.95
    assert mean[0] == pytest.approx(full[0], abs=0.01)
    # the spread is that of 2,000 people drawn without replacement from 4,000, drawn here
    # person by person: an attack on everyone would have none, draws with replacement about
    # 40% more (standard error of each s.d. about 2%)
    matched = population["q"].isin(set(synthetic["q"])).to_numpy()
    rng = np.random.default_rng(7)
    f1 = []
    for _ in range(1000):
        drawn = rng.choice(4000, 2000, replace=False)
        tp = int(np.sum(matched[drawn] & members[drawn]))
        precision = tp / int(np.sum(matched[drawn]))
        recall = tp / int(np.sum(members[drawn]))
        f1.append(2 * precision * recall / (precision + recall))
    assert np.mean(f1) == pytest.approx(mean[0], abs=0.005)
    assert sd[0] == pytest.approx(np.std(f1, ddof=1), rel=0.12)
    other, _ = validate.ground_truth(population, members, synthetic, quasi_identifiers=None,
                                     attack_size=2000, repeats=1000, seed=4)
    assert other[0] != mean[0]  # the seed drives the draws


def test_options_reject_bad_values():
    with pytest.raises(ValueError, match="fractions"):
        validate.Options(fractions=(0.5, 1.0))
    with pytest.raises(ValueError, match="unknown synthesiser"):
        validate.Options(settings=("cart", "gan9000"))
    with pytest.raises(ValueError, match="seeds >= 1"):
        validate.Options(seeds=0)


@pytest.mark.slow
def test_smoke_run_writes_every_output_and_resumes(tmp_path):
    adult = load_adult()
    opts = validate.Options(fractions=(0.1, 0.5), settings=("cart", "gaussian_copula"),
                            seeds=1, hamming=(0, 2), repeats=10, population_rows=2000)
    frame = validate.run(adult, opts, tmp_path, progress=False)
    assert len(frame) == 2 * 2 * 1 * 2  # fractions x synthesisers x seeds x thresholds
    expected = {(s, f, h) for s, f, h in itertools.product(
        ("cart", "gaussian_copula"), (0.1, 0.5), (0, 2))}
    assert set(zip(frame["synthesizer"], frame["fraction"], frame["hamming_threshold"],
                   strict=True)) == expected
    for col in ("actual_f1", "est_f1_tn", "est_f1_t05"):
        assert frame[col].between(0, 1).all()
    assert (frame["n"] == (frame["fraction"] * 2000).round()).all()
    # M is F1 rescaled at the t of its own F1
    t = frame["n"] / frame["population_size"]
    f_naive = 2 * t / (1 + t)
    assert np.allclose(frame["actual_m"], (frame["actual_f1"] - f_naive) / (1 - f_naive))
    assert np.allclose(frame["est_m_t05"], (frame["est_f1_t05"] - 2 / 3) / (1 / 3))

    written = summarize.summarize(frame, tmp_path)
    assert all(p.exists() and p.stat().st_size > 0 for p in written)
    table = (tmp_path / "table.md").read_text()
    assert "h = 0" in table and "h = 2" in table and "gaussian_copula" in table
    errors = summarize.error_summary(frame)
    assert len(errors) == 2 * 3 * 2  # thresholds x (2 synthesisers + all) x 2 estimates

    # resuming does no work twice; other options without --fresh are refused
    again = validate.run(adult, opts, tmp_path, progress=False)
    assert len(again) == len(frame)
    with pytest.raises(SystemExit, match="other options"):
        validate.run(adult, validate.Options(fractions=(0.1, 0.5), settings=("cart",), seeds=1,
                                             repeats=20, population_rows=2000),
                     tmp_path, progress=False)
