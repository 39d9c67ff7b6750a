"""Membership disclosure (design §3, 9.1): behaviour on Adult, vectorised parts vs slow loops,
the hashed distance path vs the former matrix-product path, and when M cannot bind."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import risk
from risk import _neighbors
from risk._encode import encode
from risk._neighbors import min_hamming
from risk._validation import column_kinds
from risk.membership import MIN_MEMBERS, scores_from_counts
from tests.data import load_adult
from tests.examples import examples


@pytest.fixture(scope="module")
def adult_thirds():
    adult = load_adult()
    idx = np.random.default_rng(0).permutation(len(adult))
    third = len(adult) // 3
    parts = [adult.iloc[idx[i * third:(i + 1) * third]] for i in range(3)]
    return len(adult), parts


def test_copying_training_records_is_high_risk(adult_thirds):
    n_pop, (train, holdout, _) = adult_thirds
    res = risk.membership_disclosure(train, holdout, train.copy(), population_size=n_pop,
                                     random_state=3)
    assert res.m > 0.5
    assert res.m_spread.low > 0.5
    assert res.can_bind and res.warning == "" and res.attack_members >= MIN_MEMBERS
    assert res.sampling_fraction == pytest.approx(len(train) / n_pop)
    assert res.f_naive == pytest.approx(2 * res.sampling_fraction / (1 + res.sampling_fraction))
    assert res.keys == tuple(train.columns)
    # Adult's '?' are kept as a category, and counted in all three frames
    assert res.missing_values > 0
    assert res.missing_values == sum(int(f.isna().sum().sum()) for f in (train, holdout, train))
    # binned: the numeric columns with more than 20 distinct values over the frames together
    wide = [c for c in train.columns if pd.api.types.is_numeric_dtype(train[c])
            and pd.concat([train[c], holdout[c]]).nunique() > 20]
    assert res.binned_columns == tuple(wide) and "education_num" not in wide
    assert not res.acceptable


def test_real_non_members_as_synthetic_is_no_risk(adult_thirds):
    n_pop, (train, holdout, others) = adult_thirds
    for h in (0, 2):
        res = risk.membership_disclosure(train, holdout, others, population_size=n_pop,
                                         hamming_threshold=h, random_state=4)
        assert res.m <= 0.0 + 0.02, (h, res.m)
        assert res.acceptable


def test_t_equal_one_and_missing_population_are_errors():
    df = pd.DataFrame({"a": [1, 2, 3, 4], "b": [0, 1, 0, 1]})
    with pytest.raises(risk.RiskInputError, match="Exactly one of `population_size`"):
        risk.membership_disclosure(df, df, df)
    with pytest.raises(risk.RiskInputError, match="Exactly one of"):
        risk.membership_disclosure(df, df, df, population_size=100, sampling_fraction=0.1)
    with pytest.raises(risk.RiskInputError, match=r"`sampling_fraction` must be in \(0, 1\)"):
        risk.membership_disclosure(df, df, df, sampling_fraction=1.0)
    with pytest.raises(risk.RiskInputError, match="population_size >= len"):
        risk.membership_disclosure(df, df, df, population_size=4)
    with pytest.raises(risk.RiskInputError, match="hamming_threshold"):
        risk.membership_disclosure(df, df, df, sampling_fraction=0.5, hamming_threshold=3)


def test_seed_is_recorded_and_reproduces():
    # 100 key cells, half of them in the synthetic data: which records an attack set draws
    # changes F1 (with few cells all covered by the synthetic data, every draw scores the same
    # and no seed could matter)
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 10, 400), "b": rng.integers(0, 10, 400)})
    train, holdout, synthetic = df.iloc[:200], df.iloc[200:], df.iloc[:100]
    first = risk.membership_disclosure(train, holdout, synthetic, sampling_fraction=0.3)
    assert first.f1_std > 0
    again = risk.membership_disclosure(train, holdout, synthetic, sampling_fraction=0.3,
                                       random_state=first.random_state)
    assert first == again
    other = risk.membership_disclosure(train, holdout, synthetic, sampling_fraction=0.3,
                                       random_state=first.random_state + 1)
    assert other.random_state == first.random_state + 1
    assert (other.m, other.f1_std) != (first.m, first.f1_std)  # other draws, other numbers


def _slow_min_hamming(q, r):
    return np.array([min(int(np.sum(x != y)) for y in r) for x in q])


def _former_min_hamming(query, reference, cardinalities):
    """The implementation this module had before hashing (full one-hot product of every
    non-exact unique row against every unique reference row), kept as the reference."""
    p = query.shape[1]
    if reference.shape[0] == 0 or p == 0:
        return np.full(query.shape[0], p if reference.shape[0] == 0 else 0, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(cardinalities)[:-1]]).astype(np.int64)

    def hot(codes):
        out = np.zeros((codes.shape[0], int(sum(cardinalities))), dtype=np.float32)
        out[np.repeat(np.arange(codes.shape[0]), p), (codes + offsets).ravel()] = 1.0
        return out

    uq, q_inv = np.unique(query, axis=0, return_inverse=True)
    ur = np.unique(reference, axis=0)
    matches = hot(uq) @ hot(ur).T
    return (p - matches.max(axis=1).astype(np.int64))[q_inv.ravel()]


def _every_path(q, r, cards):
    """min_hamming with the cost model and with every cap on the hashed levels."""
    p = q.shape[1]
    return [min_hamming(q, r, cards)] + [min_hamming(q, r, cards, max_hash_level=k)
                                         for k in range(p + 1)]


codes = st.integers(1, 7).flatmap(
    lambda p: st.tuples(
        st.lists(st.lists(st.integers(0, 3), min_size=p, max_size=p), min_size=1, max_size=30),
        st.lists(st.lists(st.integers(0, 3), min_size=p, max_size=p), min_size=1, max_size=30),
    )
)


@settings(max_examples=examples(80), deadline=None)
@given(codes)
def test_min_hamming_equals_slow_loop_on_every_path(pair):
    q, r = (np.array(x, dtype=np.int64) for x in pair)
    want = _slow_min_hamming(q, r)
    for got in _every_path(q, r, [4] * q.shape[1]):
        np.testing.assert_array_equal(got, want)


@settings(max_examples=examples(80), deadline=None)
@given(codes, st.integers(0, 8))
def test_min_hamming_up_to_a_distance_is_the_distance_capped(pair, cap):
    # max_distance = D: min(true distance, D + 1), on every path (hashing or product for the
    # levels up to D), with the slow loop as the reference
    q, r = (np.array(x, dtype=np.int64) for x in pair)
    want = np.minimum(_slow_min_hamming(q, r), cap + 1)
    p = q.shape[1]
    for k in (None, *range(p + 1)):
        got = min_hamming(q, r, [4] * p, max_hash_level=k, max_distance=cap)
        np.testing.assert_array_equal(got, want)
    empty = min_hamming(q, r[:0], [4] * p, max_distance=cap)
    np.testing.assert_array_equal(empty, np.full(len(q), min(p, cap + 1)))


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 10**6), h=st.integers(0, 5), repeats=st.integers(1, 30))
def test_without_the_curve_m_at_h_is_the_same_to_the_last_digit(seed, h, repeats):
    # a trial computes distances only up to h (curve=False); the release the whole curve:
    # M, F1, precision, recall, the spread and the confidence interval at h must not differ
    # by a single draw (the trial decides on what the release reports)
    rng = np.random.default_rng(seed)
    p = 5
    n = int(rng.integers(40, 120))

    def frame(rows):
        return pd.DataFrame({f"c{j}": rng.integers(0, 3, rows) for j in range(p)})

    train, holdout, synthetic = frame(n), frame(n), frame(int(rng.integers(1, 150)))
    kw = dict(sampling_fraction=0.3, hamming_threshold=h, repeats=repeats, random_state=seed)
    full = risk.membership_disclosure(train, holdout, synthetic, **kw)
    cheap = risk.membership_disclosure(train, holdout, synthetic, curve=False, **kw)
    for field in ("m", "f1", "f1_std", "precision", "recall", "m_spread", "attack_size",
                  "can_bind", "m_ci", "f1_ci", "member_match_rate", "holdout_match_rate"):
        assert getattr(cheap, field) == getattr(full, field), field
    assert len(full.f1_by_threshold) == p + 1 and len(cheap.f1_by_threshold) == h + 1
    assert cheap.f1_by_threshold == full.f1_by_threshold[: h + 1]
    assert cheap.m_by_threshold == full.m_by_threshold[: h + 1]


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 10**6), p=st.integers(1, 9))
def test_min_hamming_equals_former_product_path_with_missing_values(seed, p):
    # random frames with NaN / None in numeric and categorical columns (missing is a category),
    # a binned numeric column, few and many categories: identical distances, row for row
    rng = np.random.default_rng(seed)

    def frame(n):
        cols = {}
        for j in range(p):
            kind = j % 3
            if kind == 0:
                v = rng.choice(["a", "b", "c", None], n, p=[0.5, 0.2, 0.2, 0.1]).astype(object)
            elif kind == 1:
                v = rng.integers(0, 1 + j, n).astype(float)
                v[rng.random(n) < 0.1] = np.nan
            else:
                v = rng.normal(size=n)
                v[rng.random(n) < 0.05] = np.nan
            cols[f"c{j}"] = v
        return pd.DataFrame(cols)

    real, syn = frame(int(rng.integers(1, 300))), frame(int(rng.integers(1, 200)))
    cols = list(real.columns)
    enc = encode([real, syn], cols, column_kinds({"r": real, "s": syn}, cols))
    want = _former_min_hamming(enc.codes[0], enc.codes[1], enc.cardinalities)
    for got in _every_path(enc.codes[0], enc.codes[1], enc.cardinalities):
        np.testing.assert_array_equal(got, want)


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 10**6))
def test_min_hamming_without_radix_keys_and_with_tiny_blocks(seed):
    # cardinalities whose product overflows int64 (keys re-densified by hashing), and memory
    # blocks of a few rows (many query and reference chunks, early stop per query row)
    rng = np.random.default_rng(seed)
    p = int(rng.integers(5, 9))
    cards = [2**20] * p
    assert _neighbors._radix_weights(cards) is None
    pool = rng.integers(0, 2**20, size=(4, p))  # few distinct values per column: near rows
    q = np.where(rng.random((40, p)) < 0.4, rng.integers(0, 2**20, (40, p)),
                 pool[rng.integers(0, 4, (40, p)), np.arange(p)])
    r = np.where(rng.random((30, p)) < 0.4, rng.integers(0, 2**20, (30, p)),
                 pool[rng.integers(0, 4, (30, p)), np.arange(p)])
    want = _slow_min_hamming(q, r)
    for got in _every_path(q, r, cards):
        np.testing.assert_array_equal(got, want)
    small = [int(rng.integers(2, 6)) for _ in range(p)]
    qs, rs = q % small, r % small
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_neighbors, "_ONE_HOT_BYTES", 4 * 7 * sum(small))  # 7 rows per one-hot
        mp.setattr(_neighbors, "_PRODUCT_BYTES", 4 * 5 * 7)
        for got in _every_path(qs, rs, small):
            np.testing.assert_array_equal(got, _slow_min_hamming(qs, rs))


def test_min_hamming_equals_former_product_path_on_adult(adult_thirds):
    # real data: every column of Adult, 2 of its thirds against the third one (2 x 3,000 rows
    # for time); the counts per distance are identical, not just close
    _, (train, holdout, others) = adult_thirds
    real, syn = pd.concat([train.iloc[:3000], holdout.iloc[:3000]]), others.iloc[:3000]
    cols = list(real.columns)
    enc = encode([real, syn], cols, column_kinds({"r": real, "s": syn}, cols))
    want = _former_min_hamming(enc.codes[0], enc.codes[1], enc.cardinalities)
    got = min_hamming(enc.codes[0], enc.codes[1], enc.cardinalities)
    np.testing.assert_array_equal(got, want)
    assert np.bincount(want).size > 4  # distances 0 to at least 4 occur: every path is used


def test_min_hamming_memory_is_bounded_by_its_blocks():
    # 100,000 distinct reference rows of p = 8 columns with 20 codes each: the former
    # algorithm held their one-hot (100,000 x 160 float32 = 61 MiB) at once. With 2 MiB
    # blocks only the per-row keys (about 100 + p bytes per reference row) and the blocks
    # remain, whichever path resolves the rows.
    import tracemalloc

    rng = np.random.default_rng(0)
    ref = rng.integers(0, 20, size=(100_000, 8))
    query = rng.integers(0, 20, size=(200, 8))
    want = None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_neighbors, "_ONE_HOT_BYTES", 2 * 2**20)
        mp.setattr(_neighbors, "_PRODUCT_BYTES", 2 * 2**20)
        for level in (0, None):
            tracemalloc.start()
            got = min_hamming(query, ref, [20] * 8, max_hash_level=level)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            assert peak < 24 * 2**20, (level, peak / 2**20)
            want = got if want is None else want
            np.testing.assert_array_equal(got, want)


def test_min_hamming_edge_shapes():
    q = np.array([[0, 1], [1, 1]])
    np.testing.assert_array_equal(min_hamming(q, q[:0], [2, 2]), [2, 2])
    np.testing.assert_array_equal(min_hamming(q[:0], q, [2, 2]), np.zeros(0, dtype=np.int64))
    np.testing.assert_array_equal(min_hamming(q[:, :0], q[:, :0], []), [0, 0])
    np.testing.assert_array_equal(min_hamming(q, np.array([[1, 0]]), [2, 2]), [2, 1])


@settings(max_examples=examples(60), deadline=None)
@given(
    d_members=st.lists(st.integers(0, 4), min_size=1, max_size=30),
    d_non=st.lists(st.integers(0, 4), min_size=1, max_size=30),
)
def test_scores_from_counts_equal_per_record_loop(d_members, d_non):
    p = 4
    precision, recall, f1 = scores_from_counts(np.bincount(d_members, minlength=p + 1),
                                               np.bincount(d_non, minlength=p + 1))
    for h in range(p + 1):
        tp = sum(d <= h for d in d_members)
        fp = sum(d <= h for d in d_non)
        fn = len(d_members) - tp
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        assert precision[h] == pytest.approx(prec)
        assert recall[h] == pytest.approx(rec)
        assert f1[h] == pytest.approx(f)


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(4, 40))
def test_distances_invariant_to_row_order_and_inputs_untouched(seed, n):
    rng = np.random.default_rng(seed)
    real = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.choice(["x", "y", None], n),
                         "c": rng.normal(size=n)})
    syn = real.sample(frac=0.5, random_state=seed % 100).assign(a=lambda f: f["a"] + 1)
    before = real.copy()
    d = risk.membership_distances(real, syn)
    pd.testing.assert_frame_equal(real, before)
    shuffled = risk.membership_distances(real.iloc[::-1], syn.sample(frac=1, random_state=1))
    pd.testing.assert_series_equal(d, shuffled.loc[d.index])
    # numeric column with > 20 distinct values is binned; distances are within [0, p]
    assert d.between(0, 3).all()


def test_binning_rule_uses_real_and_synthetic_values():
    real = pd.DataFrame({"x": np.arange(30, dtype=float)})
    syn = pd.DataFrame({"x": [100.0]})
    frames = {"real": real, "syn": syn}
    enc = encode([real, syn], ["x"], column_kinds(frames, ["x"]))
    assert enc.binned == ("x",)
    # edges span 0..100 in 20 bins of width 5: 0-4 -> bin 0, ..., 25-29 -> bin 5; 100 -> 19
    assert enc.codes[0][:, 0].max() == 5
    assert enc.codes[1][0, 0] == 19
    # bins are closed on the left, [0, 5), [5, 10), ..., the last one also on the right
    np.testing.assert_array_equal(enc.codes[0][:, 0], np.arange(30) // 5)
    # "more than 20 distinct values": 20 stay categories, 21 are binned
    for n, binned in ((20, ()), (21, ("x",))):
        frame = pd.DataFrame({"x": np.arange(n, dtype=float)})
        assert encode([frame], ["x"], column_kinds({"f": frame}, ["x"])).binned == binned
    few = pd.DataFrame({"x": [1.0, 2.0, np.nan]})
    enc2 = encode([few], ["x"], column_kinds({"few": few}, ["x"]))
    assert enc2.binned == () and enc2.cardinalities == (3,)  # missing is its own category


def _slow_draws(train, holdout, synthetic, t, a, h, repeats, seed):
    """design §3 steps 2-5 literally: draw records, match each, score, average over repeats.

    Means of precision, recall and F1 for every threshold 0..p, and the s.d. of F1 at ``h``.
    """
    syn_rows = [tuple(r) for r in synthetic.itertuples(index=False)]

    def dist(row):
        return min(sum(x != y for x, y in zip(row, s, strict=True)) for s in syn_rows)

    d_train = np.array([dist(tuple(r)) for r in train.itertuples(index=False)])
    d_hold = np.array([dist(tuple(r)) for r in holdout.itertuples(index=False)])
    thresholds = np.arange(train.shape[1] + 1)
    k = int(np.floor(a * t + 0.5))
    rng = np.random.default_rng(seed)
    scores = np.zeros((repeats, 3, thresholds.size))  # precision, recall, F1 per threshold
    for r in range(repeats):
        members = rng.choice(len(train), k, replace=False)
        others = rng.choice(len(holdout), a - k, replace=False)
        for j, hh in enumerate(thresholds):
            tp = int(np.sum(d_train[members] <= hh))
            fp = int(np.sum(d_hold[others] <= hh))
            precision = tp / (tp + fp) if tp + fp else 0.0
            recall = tp / k
            f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
            scores[r, :, j] = precision, recall, f1
    mean = scores.mean(axis=0)
    return mean[0], mean[1], mean[2], float(np.std(scores[:, 2, h], ddof=1))


@pytest.mark.parametrize(("seed", "h"), [(0, 0), (1, 0), (2, 1), (3, 2)])
def test_count_draws_match_drawing_records(seed, h):
    # membership_disclosure draws how many sampled members/non-members fall at each distance
    # (multivariate hypergeometric) instead of drawing records: same distribution of F1
    rng = np.random.default_rng(seed)
    def table(n):
        return pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.integers(0, 2, n),
                             "c": rng.integers(0, 4, n), "d": rng.integers(0, 6, n),
                             "e": rng.integers(0, 5, n)})

    real = table(140)
    train, holdout = real.iloc[:60], real.iloc[60:]
    synthetic = pd.concat([train.sample(20, random_state=seed), table(20)])
    fast = risk.membership_disclosure(train, holdout, synthetic, sampling_fraction=0.3,
                                      attack_size=40, hamming_threshold=h, repeats=4000,
                                      numeric_bins=None, random_state=seed)
    precision, recall, f1, f1_std = _slow_draws(train, holdout, synthetic, 0.3, 40, h, 4000,
                                                seed + 100)
    # both are means of 4,000 draws: standard error about 0.002; the spread is that of draws
    # without replacement (with replacement it would be about 10% wider here)
    assert fast.f1 == pytest.approx(f1[h], abs=0.012)
    assert fast.f1_std == pytest.approx(f1_std, rel=0.05)
    # the reported precision and recall are those at the chosen threshold, and the curve
    # holds every threshold's mean F1
    assert fast.precision == pytest.approx(precision[h], abs=0.02)  # a few matches: noisier
    assert fast.recall == pytest.approx(recall[h], abs=0.012)
    np.testing.assert_allclose(fast.f1_by_threshold, f1, atol=0.012)
    assert fast.f1_by_threshold[h] == pytest.approx(fast.f1, abs=1e-12)
    # M is F1 rescaled (linear, so the mean of the repeats' M is M of the mean F1)
    f_naive = 2 * 0.3 / 1.3
    assert fast.f_naive == pytest.approx(f_naive, abs=1e-12)
    assert fast.m == pytest.approx((fast.f1 - f_naive) / (1 - f_naive), abs=1e-12)
    np.testing.assert_allclose(fast.m_by_threshold,
                               (np.array(fast.f1_by_threshold) - f_naive) / (1 - f_naive),
                               atol=1e-12)


# --- when M cannot bind, the threshold, the spread (design §9.1; issue: "M that says when it
# cannot bind") ---------------------------------------------------------------------------------


def _small_table(n, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"sex": rng.choice(["f", "m"], n), "age": rng.integers(16, 90, n),
                         "region": rng.integers(0, 16, n), "edu": rng.choice(list("abcde"), n)})


def test_sd2011_like_population_reports_that_m_cannot_bind():
    # SD2011: 5,000 records of a population of about 31 million. Train/holdout halves give
    # t = 2,500 / 31e6 = 8.1e-5: an attack set the holdout allows (a <= 2,500) holds
    # round(a t) = 0 members. A result (not an error) says M cannot bind and what would help.
    table = _small_table(5000)
    train, holdout = table.iloc[:2500], table.iloc[2500:]
    res = risk.membership_disclosure(train, holdout, train.copy(), population_size=31_000_000,
                                     random_state=0)
    t = 2500 / 31_000_000
    assert res.attack_members == 0 and res.attack_size == 2500
    assert res.expected_members == pytest.approx(2500 * t)
    assert not res.can_bind
    # with no member, F1 is 0 even for a copy of the training data: M sits at its floor
    assert res.f1 == 0.0 and res.recall == 0.0
    assert res.m == pytest.approx(-2 * t / (1 - t))
    assert "M cannot bind" in res.warning and "no member at all" in res.warning
    assert "241,800" in res.warning  # round(a t) >= 20 needs a >= 19.5 / t = 241,800 records
    assert res.acceptable  # the number passes; can_bind says it certifies nothing
    flat = res.to_dict()
    assert flat["can_bind"] == 0.0 and flat["warning"] == res.warning


@pytest.mark.parametrize(("population", "members", "binds"), [
    (3_100_000, 2, False),   # ACS-like: a few members per attack set
    (1_300_000, 5, False),
    (300_000, 21, True),     # just above the default minimum of 20
])
def test_members_per_attack_set_decide_can_bind(population, members, binds):
    table = _small_table(5000, seed=1)
    train, holdout = table.iloc[:2500], table.iloc[2500:]
    res = risk.membership_disclosure(train, holdout, holdout.copy(), population_size=population,
                                     repeats=20, random_state=0)
    assert res.attack_members == members == round(res.expected_members)
    assert res.can_bind is binds and res.min_members == MIN_MEMBERS
    assert (res.warning == "") is binds
    if not binds:
        assert f"only {members} members" in res.warning and "holdout of about" in res.warning


def test_min_members_is_an_option():
    table = _small_table(5000, seed=2)
    train, holdout = table.iloc[:2500], table.iloc[2500:]
    kwargs = dict(population_size=1_300_000, repeats=10, random_state=0)
    assert not risk.membership_disclosure(train, holdout, train, **kwargs).can_bind
    res = risk.membership_disclosure(train, holdout, train, min_members=5, **kwargs)
    assert res.can_bind and res.warning == "" and res.min_members == 5
    with pytest.raises(risk.RiskInputError, match="`min_members` must be >= 1"):
        risk.membership_disclosure(train, holdout, train, min_members=0, **kwargs)


def test_explicit_attack_size_without_members_is_still_an_error():
    table = _small_table(400)
    with pytest.raises(risk.RiskInputError, match="needs 0 members"):
        risk.membership_disclosure(table.iloc[:200], table.iloc[200:], table,
                                   population_size=10**7, attack_size=100)


def test_explicit_attack_size_must_fit_both_pools_exactly():
    # round(a t) members from train and a - round(a t) non-members from holdout: one record
    # more than a pool holds is an error, a set that uses a whole pool is not
    table = _small_table(130)
    train, holdout = table.iloc[:30], table.iloc[30:]
    kwargs = dict(sampling_fraction=0.5, repeats=5, random_state=0)
    full = risk.membership_disclosure(train, holdout, table, attack_size=60, **kwargs)
    assert (full.attack_size, full.attack_members) == (60, 30)
    with pytest.raises(risk.RiskInputError, match=r"needs 31 members \(1 <= k <= len\(train\)=30"):
        risk.membership_disclosure(train, holdout, table, attack_size=62, **kwargs)
    kwargs["sampling_fraction"] = 0.3  # a = 40: 12 members, 28 non-members; a = 41: 12, 29
    big_holdout = risk.membership_disclosure(holdout, train.iloc[:28], table, attack_size=40,
                                             **kwargs)
    assert (big_holdout.attack_members, big_holdout.attack_size) == (12, 40)
    with pytest.raises(risk.RiskInputError, match=r"and 29 non-members"):
        risk.membership_disclosure(holdout, train.iloc[:28], table, attack_size=41, **kwargs)


@pytest.mark.parametrize(("attack_size", "members"), [(5, 3), (9, 5), (7, 4), (6, 3)])
def test_members_per_attack_set_round_half_up(attack_size, members):
    # round(a t) rounds half up as R and the authors' code do (Python's round would give 2
    # and 4 members for a t = 2.5 and 4.5)
    table = _small_table(40)
    res = risk.membership_disclosure(table.iloc[:20], table.iloc[20:], table,
                                     sampling_fraction=0.5, attack_size=attack_size, repeats=5,
                                     random_state=0)
    assert res.attack_members == members


def _largest_attack_size(t, n_train, n_holdout):
    """By brute force: the largest a <= 10,000 whose round(a t) members and a - round(a t)
    non-members (each at least one) both pools hold."""
    best = None
    for a in range(2, 10_001):
        k = int(np.floor(a * t + 0.5))
        if 1 <= k <= n_train and 1 <= a - k <= n_holdout:
            best = a
    return best




@pytest.mark.parametrize(("n_train", "n_holdout", "t"), [
    (100, 100, 0.5), (300, 300, 0.25), (400, 100, 0.1), (50, 400, 0.7), (1000, 3000, 0.2),
    (30_000, 30_000, 0.5),  # the cap of 10,000
    (300, 300, 0.3),  # 429 = 129 + 300 fits (the bounds once ignored the rounding: 428)
    (5, 100, 0.1),  # 54 = 5 + 49 fits (was 51)
])
def test_default_attack_size_is_the_largest_both_pools_allow(n_train, n_holdout, t):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 5, max(n_train, n_holdout))})
    res = risk.membership_disclosure(frame.iloc[:n_train], frame.iloc[:n_holdout], frame,
                                     sampling_fraction=t, repeats=2, random_state=0)
    assert res.attack_size == _largest_attack_size(t, n_train, n_holdout)


def test_acceptable_uses_the_configured_threshold():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.integers(0, 6, 600), "b": rng.integers(0, 5, 600)})
    base = risk.membership_disclosure(df.iloc[:300], df.iloc[300:], df.iloc[:300],
                                      sampling_fraction=0.3, random_state=1)
    assert base.m_threshold == risk.ACCEPTABLE_M == 0.2
    assert base.acceptable == (base.m <= 0.2)
    at = risk.membership_disclosure(df.iloc[:300], df.iloc[300:], df.iloc[:300],
                                    sampling_fraction=0.3, random_state=1, m_threshold=base.m)
    assert at.acceptable  # M equal to the threshold is acceptable (M <= 0.2, design §3, step 6)
    for thr in (base.m - 0.01, base.m + 0.01):
        res = risk.membership_disclosure(df.iloc[:300], df.iloc[300:], df.iloc[:300],
                                         sampling_fraction=0.3, random_state=1, m_threshold=thr)
        assert res.m == base.m and res.m_threshold == thr
        assert res.acceptable == (thr > base.m)
    for bad in (1.0, float("nan"), float("inf")):
        with pytest.raises(risk.RiskInputError,
                           match=r"`m_threshold` must be < 1 \(M is at most 1\)"):
            risk.membership_disclosure(df, df, df, sampling_fraction=0.3, m_threshold=bad)
    with pytest.raises(TypeError, match="m_threshold"):
        risk.membership_disclosure(df, df, df, sampling_fraction=0.3, m_threshold="0.2")


def test_m_spread_is_the_percentile_spread_over_repeats_and_m_interval_its_old_name():
    rng = np.random.default_rng(6)
    df = pd.DataFrame({c: rng.integers(0, 6, 800) for c in "abcd"})
    res = risk.membership_disclosure(df.iloc[:400], df.iloc[400:], df.iloc[:200],
                                     sampling_fraction=0.4, repeats=400, confidence=0.9,
                                     random_state=2)
    lo, hi = res.m_spread.low, res.m_spread.high
    assert lo < res.m < hi and res.m_spread.level == 0.9
    assert res.m_spread.method == "percentile over repeats"
    # it is the spread of single attacks, far wider than the Monte Carlo error of the mean m
    # (f1_std / sqrt(repeats) on the F1 scale; an interval of the mean at 90% would be
    # 2 x 1.645 of those wide)
    se_of_mean = res.f1_std / (1 - res.f_naive) / np.sqrt(res.repeats)
    assert se_of_mean > 0
    assert hi - lo > 10 * se_of_mean
    with pytest.warns(DeprecationWarning, match="m_spread"):
        assert res.m_interval == res.m_spread
    assert "m_spread_low" in res.to_dict() and "m_interval_low" not in res.to_dict()


def test_negative_m_when_synthetic_data_resemble_non_members():
    # synthetic data copied from the holdout: members are matched less often than non-members,
    # so the adversary does worse than calling everyone a member (documented as no risk)
    rng = np.random.default_rng(8)
    df = pd.DataFrame({c: rng.integers(0, 5, 2000) for c in "abcd"})
    train, holdout = df.iloc[:1000], df.iloc[1000:]
    res = risk.membership_disclosure(train, holdout, holdout.copy(), sampling_fraction=0.5,
                                     random_state=0)
    assert res.m < 0 and res.f1 < res.f_naive
    assert res.m >= -2 * 0.5 / (1 - 0.5)  # the floor -2t/(1-t), reached at F1 = 0
    assert res.acceptable and res.can_bind


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(1, 3000), st.integers(1, 3000), st.floats(0.001, 0.999))
@example(29, 1, 0.95)  # the bound (1 + 0.5) / (1 - 0.95) rounds to 29.99...; a = 30 fits
def test_default_attack_size_matches_brute_force(n_train, n_holdout, t):
    from risk._partition import members_in_attack, resolve_attack_size

    want = _largest_attack_size(t, n_train, n_holdout)
    if want is None:  # no set holds a member and a non-member: all non-members, or an error
        try:
            a = resolve_attack_size(None, t, n_train, n_holdout)
        except risk.RiskInputError as exc:
            assert "No attack set can hold a non-member" in str(exc)
        else:
            assert members_in_attack(a, t) == 0 and 1 <= a <= n_holdout
    else:
        assert resolve_attack_size(None, t, n_train, n_holdout) == want
