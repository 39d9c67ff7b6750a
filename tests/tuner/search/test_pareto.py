"""Pareto mode's front and pick rule against the obvious definitions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.examples import examples
from tuner.search._pareto import Point, front_mask, pick


def _slow_front(u, m):
    """Non-dominated: no other point with U >= and M <=, one of them strict."""
    n = len(u)
    return [not any(u[j] >= u[i] and m[j] <= m[i] and (u[j] > u[i] or m[j] < m[i])
                    for j in range(n) if j != i) for i in range(n)]


values = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 0.9, 1.0])  # ties are common


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(values, values), max_size=30))
def test_front_equals_the_pairwise_definition(pairs):
    u = np.array([p[0] for p in pairs], dtype=float)
    m = np.array([p[1] for p in pairs], dtype=float)
    assert front_mask(u, m).tolist() == _slow_front(u, m)


def test_hand_made_front_and_rules():
    pts = [Point(0, 0.90, 0.15, -0.9), Point(1, 0.80, 0.05, -0.85), Point(2, 0.70, 0.10, -0.7),
           Point(3, 0.60, 0.01, -0.62), Point(4, 0.90, 0.18, -0.88)]
    chosen, front, reason = pick(pts)
    assert [p.number for p in front] == [0, 1, 3]  # 2 is dominated by 1, 4 by 0
    assert chosen.number == 0 and "most useful" in reason and "front of 3" in reason
    assert pick(pts, "risk")[0].number == 3
    assert pick(pts, "loss")[0].number == 0
    with pytest.raises(ValueError, match="pareto_pick must be one of"):
        pick(pts, "best")
    with pytest.raises(ValueError, match="no feasible trial"):
        pick([], "utility")
    with pytest.raises(ValueError, match="1-d of one length"):
        front_mask(np.zeros(3), np.zeros(2))
