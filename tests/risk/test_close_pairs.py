"""Pairs of code rows within d unequal columns (risk._close_pairs) against a double loop."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import risk._close_pairs
from risk._close_pairs import PackedPairs, block_joins, close_pairs
from tests.examples import examples


@st.composite
def code_matrices(draw):
    q = draw(st.integers(1, 7))
    # small alphabets make many near pairs; a huge one forces a second 64-bit word
    cards = [draw(st.sampled_from([1, 2, 3, 5, 2**40])) for _ in range(q)]
    n_a, n_b = draw(st.integers(1, 25)), draw(st.integers(1, 25))

    def matrix(n):
        return np.column_stack([
            draw(st.lists(st.integers(0, min(c - 1, 4)).map(lambda v, c=c: v * (c // 5 or 1)),
                          min_size=n, max_size=n)) for c in cards])

    return matrix(n_a).astype(np.int64), matrix(n_b).astype(np.int64)


@settings(max_examples=examples(80), deadline=None)
@given(codes=code_matrices(), within=st.integers(0, 4), max_pairs=st.sampled_from([1, 7, 10**6]),
       subset_seed=st.integers(0, 100))
def test_close_pairs_equal_a_double_loop(codes, within, max_pairs, subset_seed):
    a, b = codes
    within = min(within, a.shape[1] - 1)
    rows = np.sort(np.random.default_rng(subset_seed).choice(
        a.shape[0], max(1, a.shape[0] // 2), replace=False))
    packed = PackedPairs(a, b)
    want = {(int(x), int(j)): int((a[r] != b[j]).sum())
            for x, r in enumerate(rows) for j in range(b.shape[0])
            if (a[r] != b[j]).sum() <= within}
    joins = block_joins(a, b, rows, within)
    # every candidate shares a whole block with its partner, and every near pair is one
    n_candidates = sum(int(((a[rows][i, blk] == b[j][:, blk]).all(axis=1)).sum())
                       for blk in joins.blocks for i in range(rows.size)
                       for j in [np.arange(b.shape[0])])
    assert joins.count == n_candidates >= len(want)
    assert sorted(c for blk in joins.blocks for c in blk) == list(range(a.shape[1]))
    assert len(joins.blocks) <= within + 1
    got: dict[tuple[int, int], int] = {}
    covered = []
    for lo, hi, i, j, m in close_pairs(packed, rows, joins, within, max_pairs):
        covered.append((lo, hi))
        assert np.all(np.diff(i) >= 0) and np.all((i >= lo) & (i < hi))
        for x, y, k in zip(i.tolist(), j.tolist(), m.tolist(), strict=True):
            assert (x, y) not in got  # every pair once
            got[(x, y)] = k
    assert got == want
    assert [lo for lo, _ in covered] == [0, *[hi for _, hi in covered[:-1]]]
    assert covered[-1][1] == rows.size


@pytest.mark.parametrize("popcount", [risk._close_pairs._POPCOUNT, None],
                         ids=["bitwise_count", "numpy-1-fallback"])
@settings(max_examples=examples(50), deadline=None)
@given(codes=code_matrices())
def test_packed_unequal_counts_every_column(popcount, codes):
    a, b = codes
    packed = PackedPairs(a, b)
    i = np.repeat(np.arange(a.shape[0]), b.shape[0])
    j = np.tile(np.arange(b.shape[0]), a.shape[0])
    with mock.patch.object(risk._close_pairs, "_POPCOUNT", popcount):
        np.testing.assert_array_equal(packed.unequal(i, j), (a[i] != b[j]).sum(axis=1))
    cols = list(range(0, a.shape[1], 2))
    np.testing.assert_array_equal(packed.agree(i, j, cols),
                                  (a[i][:, cols] == b[j][:, cols]).all(axis=1))
