"""CAP family (design §4) against published examples, SDMetrics and a slow loop."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import risk
from tests.data import load_acs
from tests.examples import examples


def _table(cells: dict[tuple[str, str], int]) -> pd.DataFrame:
    rows = [(s, h) for (s, h), n in cells.items() for _ in range(n)]
    return pd.DataFrame(rows, columns=["smoker", "health"])


# Baillargeon & Charest (2020), section 2.3: smoker (key) x health (target).
ORIGINAL = _table({("yes", "sick"): 20, ("no", "sick"): 5, ("yes", "healthy"): 30,
                   ("no", "healthy"): 45})
SYNTHETIC = _table({("yes", "sick"): 8, ("no", "sick"): 7, ("yes", "healthy"): 25,
                    ("no", "healthy"): 60})


def _individual(frame_o, frame_s, smoker, health):
    caps = risk.cap_per_record(frame_o, frame_s, keys=["smoker"], target="health")
    mask = (frame_o["smoker"] == smoker) & (frame_o["health"] == health)
    return caps[mask].iloc[0]


@pytest.mark.parametrize(
    ("health", "original", "synthetic"),
    [("sick", 0.4, 0.2424), ("healthy", 0.6, 0.7576)],
)
def test_baillargeon_charest_smoker_example(health, original, synthetic):
    assert _individual(ORIGINAL, ORIGINAL, "yes", health) == pytest.approx(original, abs=5e-5)
    assert _individual(ORIGINAL, SYNTHETIC, "yes", health) == pytest.approx(synthetic, abs=5e-5)


def test_smoker_example_averages_and_bounds():
    res = risk.cap(ORIGINAL, SYNTHETIC, keys="smoker", target="health")
    # every key appears in S, so v1 = v2; hand computation: (20*8/33 + 30*25/33 + 5*7/67
    # + 45*60/67) / 100
    expected = (20 * 8 / 33 + 30 * 25 / 33 + 5 * 7 / 67 + 45 * 60 / 67) / 100
    assert res.cap_v1 == pytest.approx(expected)
    assert res.cap_v2 == pytest.approx(expected)
    own = (20 * 0.4 + 30 * 0.6 + 5 * 5 / 50 + 45 * 45 / 50) / 100
    assert res.cap_train == pytest.approx(own)
    assert res.baseline == pytest.approx(0.25**2 + 0.75**2)
    assert res.lower_bound_v1 == pytest.approx(5 / 100)
    assert res.lower_bound_v2 == pytest.approx(5 / 50)
    assert res.protection_v1 == pytest.approx(1 - expected)
    assert res.disco == 0.0 and res.disco_over_dis == 0.0


def test_unmatched_keys_count_zero_in_v1_only():
    orig = pd.DataFrame({"k": ["a", "a", "b", "c"], "t": [1, 2, 1, 1]})
    syn = pd.DataFrame({"k": ["a", "a", "b"], "t": [1, 1, 1]})
    res = risk.cap(orig, syn, keys="k", target="t", numeric_bins=None)
    # CAPs: a/1 -> 1, a/2 -> 0, b/1 -> 1, c/1 unmatched
    assert res.cap_v1 == pytest.approx(2 / 4)
    assert res.cap_v2 == pytest.approx(2 / 3)
    assert res.disco == pytest.approx(2 / 4)
    # keys with a single synthetic target: a (target 1) and b; records there: 3, correct 2
    assert res.disco_over_dis == pytest.approx(2 / 3)
    per = risk.cap_per_record(orig, syn, keys="k", target="t", unmatched=np.nan)
    assert per.isna().tolist() == [False, False, False, True]
    only = res.per_set[0]
    assert only.n_matched == 3 and only.matched_share == pytest.approx(3 / 4)
    assert only.n_synthetic == 3


def _slow_cap(orig, syn, keys, target, nearest=False):
    out = []
    for i in range(len(orig)):
        key = tuple(orig[keys].iloc[i])
        dists = [
            sum(a != b for a, b in zip(key, tuple(syn[keys].iloc[j]), strict=True))
            for j in range(len(syn))
        ]
        best = min(dists) if nearest else 0
        pool = [j for j, d in enumerate(dists) if d == best]
        if not pool:
            out.append(0.0)
            continue
        same = sum(syn[target].iloc[j] == orig[target].iloc[i] for j in pool)
        out.append(same / len(pool))
    return np.array(out)


def _random_pair(seed, n_o, n_s, card):
    rng = np.random.default_rng(seed)
    def make(n):
        cols = {f"k{j}": rng.integers(0, card, n) for j in range(2)}
        return pd.DataFrame(cols | {"t": rng.integers(0, 3, n)})

    return make(n_o), make(n_s)


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 10**6), n_o=st.integers(1, 20), n_s=st.integers(1, 20),
       card=st.integers(1, 4), nearest=st.booleans())
def test_vectorised_cap_equals_slow_loop(seed, n_o, n_s, card, nearest):
    orig, syn = _random_pair(seed, n_o, n_s, card)
    got = risk.cap_per_record(orig, syn, keys=["k0", "k1"], target="t",
                              matching="nearest" if nearest else "exact")
    np.testing.assert_allclose(got.to_numpy(), _slow_cap(orig, syn, ["k0", "k1"], "t", nearest))


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 10**6), n_o=st.integers(2, 20), n_s=st.integers(1, 20))
def test_invariant_to_row_order_and_not_mutating(seed, n_o, n_s):
    orig, syn = _random_pair(seed, n_o, n_s, 3)
    before_o, before_s = orig.copy(), syn.copy()
    res = risk.cap(orig, syn, keys=["k0", "k1"], target="t", holdout=orig.iloc[::-1])
    pd.testing.assert_frame_equal(orig, before_o)
    pd.testing.assert_frame_equal(syn, before_s)
    shuffled = risk.cap(orig.sample(frac=1, random_state=1), syn.sample(frac=1, random_state=2),
                        keys=["k0", "k1"], target="t", holdout=orig)
    assert shuffled.cap_v1 == pytest.approx(res.cap_v1)
    assert shuffled.cap_v2 == pytest.approx(res.cap_v2)
    assert shuffled.disco_over_dis == pytest.approx(res.disco_over_dis)
    assert res.difference_v1 == pytest.approx(0.0)


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 10**6), n_o=st.integers(1, 30), n_s=st.integers(1, 30))
def test_lower_bounds_hold_for_sets_drawn_from_original_cells(seed, n_o, n_s):
    # Baillargeon & Charest (2020): a synthetic set made of the original's key-target cells
    # cannot go below o_min / n (v1) nor min o_kt / o_k (v2).
    orig, _ = _random_pair(seed, n_o, 1, 3)
    syn = orig.sample(n_s, replace=True, random_state=seed % 1000)
    res = risk.cap(orig, syn, keys=["k0", "k1"], target="t")
    assert res.cap_v1 >= res.lower_bound_v1 - 1e-12
    assert res.cap_v2 >= res.lower_bound_v2 - 1e-12
    assert res.cap_v2 <= 1.0 and res.cap_v1 <= res.cap_v2 + 1e-12


def _sdmetrics(metric, real, syn, keys, target):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return metric.compute(real, syn, key_fields=keys, sensitive_fields=[target])


@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_sdmetrics_on_random_tables(seed):
    from sdmetrics.single_table import (
        CategoricalCAP,
        CategoricalGeneralizedCAP,
        CategoricalZeroCAP,
    )

    rng = np.random.default_rng(seed)
    n = 300
    real = pd.DataFrame({"a": rng.choice(list("xyzw"), n), "b": rng.choice(list("pq"), n),
                         "c": rng.integers(0, 5, n), "t": rng.choice(list("LMN"), n)})
    syn = pd.DataFrame({"a": rng.choice(list("xyzv"), n), "b": rng.choice(list("pqr"), n),
                        "c": rng.integers(0, 6, n), "t": rng.choice(list("LMN"), n)})
    keys = ["a", "b", "c"]
    exact = risk.cap(real, syn, keys=keys, target="t")
    nearest = risk.cap(real, syn, keys=keys, target="t", matching="nearest")
    assert exact.protection_v2 == pytest.approx(_sdmetrics(CategoricalCAP, real, syn, keys, "t"))
    zero = _sdmetrics(CategoricalZeroCAP, real, syn, keys, "t")
    assert exact.protection_v1 == pytest.approx(zero)
    assert nearest.protection_v2 == pytest.approx(
        _sdmetrics(CategoricalGeneralizedCAP, real, syn, keys, "t"))


def test_multiple_sets_are_averaged():
    orig, syn = load_acs()
    keys = ["SEX", "RACE", "MAR"]
    res = risk.cap(orig, syn, keys=keys, target="DIS")
    singles = [risk.cap(orig, s, keys=keys, target="DIS") for s in syn]
    assert res.n_sets == 3
    for name in ("cap_v1", "cap_v2", "disco", "disco_over_dis", "protection_v1",
                 "protection_v2"):
        values = [getattr(r, name) for r in singles]
        assert len(set(values)) > 1, name  # the three sets differ, so the mean is a mean
        assert getattr(res, name) == pytest.approx(np.mean(values)), name
        assert [getattr(r, name) for r in res.per_set] == pytest.approx(values), name


def test_hu_acs_cap_of_original():
    # CAP of the original ACS sample with keys SEX, RACE, MAR and target DIS, checked here
    # against an independent pandas group-by of the definition (Hu's course data).
    orig, syn = load_acs()
    res = risk.cap(orig, syn[0], keys=["SEX", "RACE", "MAR"], target="DIS")
    key_n = orig.groupby(["SEX", "RACE", "MAR"])["DIS"].transform("size")
    pair_n = orig.groupby(["SEX", "RACE", "MAR", "DIS"])["DIS"].transform("size")
    assert res.cap_train == pytest.approx((pair_n / key_n).mean())
    assert res.cap_train == pytest.approx(0.7224, abs=5e-5)
    assert res.baseline < res.cap_train


def test_numeric_target_is_binned():
    rng = np.random.default_rng(0)
    orig = pd.DataFrame({"k": rng.integers(0, 3, 200), "x": rng.normal(size=200)})
    res = risk.cap(orig, orig, keys="k", target="x")
    assert res.binned_columns == ("x",)
    raw = risk.cap(orig, orig, keys="k", target="x", numeric_bins=None)
    assert raw.cap_v1 == pytest.approx(raw.cap_train)
    assert res.cap_v1 > raw.cap_v1


def _slow_aggregates(orig, syn, keys, target, nearest=False):
    """Every CAP summary by loops over records, straight from the definitions (design §4).

    With ``nearest``, the synthetic records at the smallest Hamming distance on the keys take
    the place of the exact key matches (the summaries of the original itself stay exact).
    """
    n = len(orig)
    rows_o = [(tuple(orig[keys].iloc[i]), orig[target].iloc[i]) for i in range(n)]
    rows_s = [(tuple(syn[keys].iloc[j]), syn[target].iloc[j]) for j in range(len(syn))]

    def hamming(a, b):
        return sum(x != y for x, y in zip(a, b, strict=True))

    caps, matched, disclosive, single = [], [], [], []
    for key, t in rows_o:
        best = min(hamming(key, kk) for kk, _ in rows_s) if nearest else 0
        pool = [tt for kk, tt in rows_s if hamming(key, kk) == best]
        caps.append(sum(tt == t for tt in pool) / len(pool) if pool else 0.0)
        matched.append(bool(pool))
        disclosive.append(bool(pool) and all(tt == t for tt in pool))
        single.append(bool(pool) and len(set(pool)) == 1)
    own = [sum(kk == key and tt == t for kk, tt in rows_o) / sum(kk == key for kk, _ in rows_o)
           for key, t in rows_o]
    targets = [t for _, t in rows_o]
    cells = {(k, t): sum(r == (k, t) for r in rows_o) for k, t in rows_o}
    key_n = {k: sum(kk == k for kk, _ in rows_o) for k, _ in rows_o}
    return dict(
        cap_v1=sum(caps) / n,
        cap_v2=(sum(c for c, m in zip(caps, matched, strict=True) if m) / sum(matched)
                if any(matched) else 0.0),
        disco=sum(disclosive) / n,
        disco_over_dis=sum(disclosive) / sum(single) if any(single) else 0.0,
        cap_train=sum(own) / n,
        baseline=sum((targets.count(v) / n) ** 2 for v in set(targets)),
        lower_bound_v1=min(cells.values()) / n,
        lower_bound_v2=min(c / key_n[k] for (k, _), c in cells.items()),
        matched_share=sum(matched) / n,
    )


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 10**6), n_o=st.integers(1, 25), n_s=st.integers(1, 25),
       n_h=st.integers(1, 25), card=st.integers(1, 3), nearest=st.booleans())
def test_vectorised_summaries_equal_slow_loop(seed, n_o, n_s, n_h, card, nearest):
    orig, syn = _random_pair(seed, n_o, n_s, card)
    holdout, _ = _random_pair(seed + 1, n_h, 1, card)
    keys = ["k0", "k1"]
    res = risk.cap(orig, syn, keys=keys, target="t", holdout=holdout,
                   matching="nearest" if nearest else "exact")
    want = _slow_aggregates(orig, syn, keys, "t", nearest)
    matched_share = want.pop("matched_share")
    for name, value in want.items():
        assert getattr(res, name) == pytest.approx(value), name
    assert res.per_set[0].matched_share == pytest.approx(matched_share)
    # the holdout's records against the same synthetic data, and what membership adds
    hold = _slow_aggregates(holdout, syn, keys, "t", nearest)
    for v in ("v1", "v2"):
        assert getattr(res, f"holdout_cap_{v}") == pytest.approx(hold[f"cap_{v}"]), v
        assert getattr(res, f"difference_{v}") == pytest.approx(
            want[f"cap_{v}"] - hold[f"cap_{v}"]), v


def test_numeric_bins_are_fitted_on_the_original_alone():
    # The bin edges of a numeric key come from the original's values only: a holdout or a
    # further synthetic set with a wider range must not move them, so the first set's CAP
    # stays the same whatever else is passed in the call.
    rng = np.random.default_rng(5)
    n = 400
    orig = pd.DataFrame({"age": rng.integers(20, 60, n), "sex": rng.choice(list("FM"), n),
                         "t": rng.choice(list("abc"), n)})
    syn = orig.sample(300, replace=True, random_state=2)
    wide = orig.assign(age=orig["age"] + 40)  # ages 60-99: outside the original's range
    keys = ["age", "sex"]
    alone = risk.cap(orig, syn, keys=keys, target="t")
    with_holdout = risk.cap(orig, syn, keys=keys, target="t", holdout=wide)
    with_set = risk.cap(orig, [syn, wide], keys=keys, target="t")
    assert alone.binned_columns == ("age",)
    assert with_holdout.cap_v1 == pytest.approx(alone.cap_v1)
    assert with_holdout.cap_v2 == pytest.approx(alone.cap_v2)
    assert with_set.per_set[0].cap_v1 == pytest.approx(alone.cap_v1)
    assert with_set.per_set[0].disco == pytest.approx(alone.disco)
    # values outside the original's range fall into the end bins: here all into the last one
    per = risk.cap_per_record(orig, wide, keys=keys, target="t")
    assert per[orig["age"] < 58].eq(0).all()


def test_difference_interval_is_welchs_over_the_records_caps():
    rng = np.random.default_rng(3)
    f = pd.DataFrame({"a": rng.integers(0, 3, 400), "b": rng.choice(list("xyz"), 400),
                      "t": rng.choice(["p", "q"], 400)})
    train, syn, hold = f.iloc[:200], f.iloc[200:300], f.iloc[300:]
    res = risk.cap(train, syn, keys=["a", "b"], target="t", holdout=hold)
    a = risk.cap_per_record(train, syn, keys=["a", "b"], target="t").to_numpy()
    b = risk.cap_per_record(hold, syn, keys=["a", "b"], target="t").to_numpy()
    half = 1.959963984540054 * np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert res.difference_v1 == pytest.approx(a.mean() - b.mean())
    assert (res.difference_v1_interval.low, res.difference_v1_interval.high) == pytest.approx(
        (a.mean() - b.mean() - half, a.mean() - b.mean() + half))
