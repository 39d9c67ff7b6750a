"""Exact closest records under Gower's distance, for :mod:`risk.dcr` (the definition is there).

Computation: exact nearest neighbours, no approximation and no synthetic x real matrix held at
once. Identical rows are collapsed first. Records are grouped by their *profile*, the codes of
the columns compared by equality plus which numeric values are missing; the profile part of
the distance is an integer count of mismatches. Since each numeric column adds between 0 and
1, a synthetic record's nearest real record lies in the profiles at the smallest mismatch count
m, unless the numeric part found there is at least 1, in which case profiles at m + 1, m + 2,
... are searched too, only as far as they can still win. The profile pairs at mismatch 0 and 1,
then (for the records still open) at 2, come from block hash joins (:mod:`risk._close_pairs`:
pigeonhole over column blocks, unequal columns counted on bit-packed profiles); the few records
whose closest record lies farther are searched through a profile-mismatch matrix computed in
bounded blocks, for their profiles only, each level scanned only for the profiles with a record
that can still improve. Within a candidate profile with few rows every pair is computed (in
batches), unless a record has many candidate profiles (data far from every real record, such as
a Gaussian copula with uniform marginals): then each profile's box (per numeric column its
smallest and largest value) bounds the numeric part from below, the profile with the smallest
bound is searched first and the others only while their bound is below the distance found;
a profile with many rows (a table with few or no categorical columns) is searched with an exact
k-d tree in L1 (scikit-learn), which is the numeric part exactly once query values are clipped
to the real range, and a lower bound otherwise (then a radius query collects every row that
could still be closer); query rows whose missing values differ from such a profile's get a
lower bound from one matrix product (squared Euclidean distance on the numeric columns present
in both) and only the pairs it cannot rule out are computed. Memory is bounded by the block
sizes, not by the table sizes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.neighbors import KDTree

from risk._close_pairs import PackedPairs, block_joins, close_pairs, ragged
from risk._gower_tables import Grouped, group, prepare

_BLOCK = 2**22  # entries of one profile-mismatch block or bound matrix
_PAIRS = 2**20  # candidate pairs evaluated at once
_HASH_STAGES = (1, 2)  # profile mismatch levels found by block hash joins, in stages
_HASH_COST = 8  # a hashed candidate pair costs about this many profile-matrix entries
_TREE_MIN = 256  # profiles with this many distinct rows are searched with a k-d tree
_GEMM_TOLERANCE = 1e-9  # rounding allowance of the squared-distance bound
_ROUNDING = 1e-12  # allowance between the tree's L1 distance and the exact one
_PRUNE_FROM = 4  # candidate profiles per query row from which their boxes prune them


# ---------------------------------------------------------------------------------------------
# nearest records


def _mismatches(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) count of unequal columns between profile code rows."""
    dtype = np.uint8 if a.shape[1] < 255 else np.int32
    out = np.zeros((a.shape[0], b.shape[0]), dtype=dtype)
    for c in range(a.shape[1]):
        out += a[:, c, None] != b[None, :, c]
    return out


def _numeric_part(query: Grouped, ref: Grouped, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Sum over numeric columns of ``min(|x - y|, 1)`` for pairs (i, j); missing adds 0 here.

    A missing value against a value adds 1 through the profile (its missingness code).
    """
    out = np.zeros(i.size)
    for c in range(query.values.shape[0]):
        out += _capped(np.abs(query.values[c, i] - ref.values[c, j]), query, ref, c)
    return out


def _capped(d: np.ndarray, query: Grouped, ref: Grouped, c: int) -> np.ndarray:
    """Column ``c``'s part of the numeric distance, ``d`` capped at 1, missing adding 0 (in
    place): one rule for the pairs and for the profile boxes' bound, so that the bound is the
    same float operations on a smaller ``d``, never above a pair's value."""
    np.minimum(d, 1.0, out=d)
    if query.has_missing[c] or ref.has_missing[c]:
        d[np.isnan(d)] = 0.0
    return d


def _nearest(query: Grouped, ref: Grouped) -> np.ndarray:
    """Summed Gower distance (p times the mean) from each query row to its closest ref row.

    Profile mismatch levels are searched in stages (``_HASH_STAGES``): levels up to 1 for
    every row, then up to 2 for the rows still open (closest distance found so far > 1 + the
    last level searched), by block hash joins (:mod:`risk._close_pairs`) as long as they make
    fewer candidate pairs (times ``_HASH_COST``) than the profile matrix would have entries;
    the rows left open are searched from the next level on through the profile-mismatch
    matrix. A stage needs more columns than levels (pigeonhole: one more block than levels), so
    a table with two profile columns hashes level 0-1 only, one with a single column none. Only
    the time depends on the stages.
    """
    best = np.full(query.row_profile.size, np.inf)
    trees: dict[int, KDTree] = {}
    open_rows = np.arange(best.size)
    done = -1  # every level up to this one has been searched for the open rows
    n_cols = query.profiles.shape[1]
    packed = PackedPairs(query.profiles, ref.profiles) if n_cols > 1 else None
    for stage in _HASH_STAGES:
        stage = min(stage, n_cols - 1)
        if packed is None or stage <= done or open_rows.size == 0:
            break
        profiles = np.unique(query.row_profile[open_rows])
        joins = block_joins(query.profiles, ref.profiles, profiles, stage)
        if joins.count * _HASH_COST > profiles.size * ref.profiles.shape[0]:
            break  # the block joins would cost more than the matrix
        open_profile = query.row_profile[open_rows]
        for lo, hi, pa, pb, pm in close_pairs(packed, profiles, joins, stage, _PAIRS):
            cut = np.searchsorted(open_profile, [profiles[lo], profiles[hi - 1] + 1])
            rows = open_rows[cut[0]:cut[1]]
            local = np.searchsorted(profiles[lo:hi], query.row_profile[rows])
            for level in range(done + 1, stage + 1):
                at = pm == level
                _search_level(query, ref, best, rows, local, hi - lo, pa[at] - lo, pb[at],
                              level, trees)
        done = stage
        open_rows = open_rows[best[open_rows] > done + 1]
    if open_rows.size:
        _matrix_levels(query, ref, best, open_rows, done + 1, trees)
    return best


def _search_level(
    query: Grouped, ref: Grouped, best: np.ndarray, rows: np.ndarray, local: np.ndarray,
    n_local: int, cand_a: np.ndarray, cand_b: np.ndarray, level: int | np.ndarray,
    trees: dict[int, KDTree],
) -> None:
    """Fold into ``best`` the ref profiles ``cand_b`` at mismatch ``level`` from ``cand_a``.

    Query profiles are numbered locally ``0 .. n_local - 1``; ``local`` gives that number for
    each of ``rows``; the candidate pairs are sorted by ``cand_a``; ``level`` is one count or
    one per local profile. Only rows whose best distance so far exceeds the level can improve.
    """
    lev = np.broadcast_to(np.asarray(level, dtype=np.int64), (n_local,))
    active = np.flatnonzero(best[rows] > lev[local])
    if active.size == 0 or cand_a.size == 0:
        return
    ptr = np.searchsorted(cand_a, np.arange(n_local + 1))
    n_b = (ptr[1:] - ptr[:-1])[local[active]]
    if query.values.shape[0] == 0:  # no numeric part: the level is the distance
        found = active[n_b > 0]
        best[rows[found]] = np.minimum(best[rows[found]], lev[local[found]])
        return
    b = cand_b[ragged(ptr[local[active]], n_b)]
    _refine(query, ref, best, np.repeat(rows[active], n_b), b,
            np.repeat(lev[local[active]], n_b), trees)


def _matrix_levels(
    query: Grouped, ref: Grouped, best: np.ndarray, open_rows: np.ndarray, floor: int,
    trees: dict[int, KDTree],
) -> None:
    """Search levels >= ``floor`` for ``open_rows`` (sorted) through the mismatch matrix."""
    open_profile = query.row_profile[open_rows]
    profiles = np.unique(open_profile)
    step = max(1, _BLOCK // ref.profiles.shape[0])
    for s in range(0, profiles.size, step):
        chunk = profiles[s:s + step]
        mism = _mismatches(query.profiles[chunk], ref.profiles)
        start = np.maximum(mism.min(axis=1).astype(np.int64), floor)
        cut = np.searchsorted(open_profile, [chunk[0], chunk[-1] + 1])
        rows = open_rows[cut[0]:cut[1]]
        local = np.searchsorted(chunk, query.row_profile[rows])
        for offset in range(int(mism.max()) - int(start.min()) + 1):
            level = start + offset
            live = best[rows] > level[local]
            if not live.any():
                break
            # scan the matrix rows of the profiles with a row that can still improve only
            need = np.unique(local[live])
            if need.size * 2 > chunk.size:
                cand_a, cand_b = np.nonzero(mism == level[:, None])
            else:
                sub, cand_b = np.nonzero(mism[need] == level[need, None])
                cand_a = need[sub]
            _search_level(query, ref, best, rows, local, chunk.size, cand_a, cand_b, level,
                          trees)


def _refine(
    query: Grouped, ref: Grouped, best: np.ndarray, rows: np.ndarray,
    b: np.ndarray, base: np.ndarray, trees: dict[int, KDTree],
) -> None:
    """Lower ``best[rows]`` to the exact distance to the ref rows of profile ``b``.

    ``base`` is the profile mismatch count of each (row, b). Small profiles are compared pair
    by pair; a large one is searched with a k-d tree (:func:`_tree_search`).
    """
    big = ref.counts[b] >= _TREE_MIN
    if big.any():
        order = np.argsort(b[big], kind="stable")
        rows_big, b_big, base_big = rows[big][order], b[big][order], base[big][order]
        cut = np.flatnonzero(np.diff(b_big)) + 1
        for lo, hi in zip(np.r_[0, cut], np.r_[cut, b_big.size], strict=True):
            _tree_search(query, ref, best, rows_big[lo:hi], int(b_big[lo]),
                         base_big[lo:hi], trees)
        rows, b, base = rows[~big], b[~big], base[~big]
    # the rest pair by pair. Where rows have many candidate profiles (data far from every real
    # record), each profile's box bounds its rows' distance: first, for every run of one row's
    # candidates, the profile with the smallest bound; then the others that can still beat it
    if rows.size == 0:
        return
    runs = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    if query.values.shape[0] == 0 or rows.size < _PRUNE_FROM * runs.size:
        _profile_pairs(query, ref, best, rows, b, base)
        return
    bound = base + _box_part(query, ref, rows, b)
    run = np.repeat(np.arange(runs.size), np.diff(np.r_[runs, rows.size]))
    lowest = np.flatnonzero(bound == np.minimum.reduceat(bound, runs)[run])
    lead = np.zeros(rows.size, dtype=bool)
    lead[lowest[np.r_[True, run[lowest][1:] != run[lowest][:-1]]]] = True
    for pick in (np.flatnonzero(lead), np.flatnonzero(~lead)):
        pick = pick[bound[pick] < best[rows[pick]]]
        _profile_pairs(query, ref, best, rows[pick], b[pick], base[pick])


def _profile_pairs(
    query: Grouped, ref: Grouped, best: np.ndarray, rows: np.ndarray,
    b: np.ndarray, base: np.ndarray,
) -> None:
    """Every pair of query ``rows`` with the ref rows of their profile ``b``, in batches."""
    sizes = ref.counts[b]
    bounds = np.searchsorted(np.cumsum(sizes), np.arange(_PAIRS, int(sizes.sum()), _PAIRS))
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, b.size], strict=True):
        if hi > lo:
            n = sizes[lo:hi]
            _pairs(query, ref, best, np.repeat(rows[lo:hi], n),
                   ragged(ref.starts[b[lo:hi]], n), np.repeat(base[lo:hi], n))


def _box_part(query: Grouped, ref: Grouped, rows: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A lower bound of :func:`_numeric_part` between each query row and every ref row of its
    profile ``b``: the capped distance to the profile's range in each numeric column (``x``
    below ``lo`` gives ``lo - x``, which is ``|x - lo|`` to the last bit, and no nearer value
    is inside; missing adds 0, as there), summed in the same column order."""
    low, high = ref.boxes
    out = np.zeros(rows.size)
    for c in range(query.values.shape[0]):
        x = query.values[c, rows]
        d = np.maximum(low[c, b] - x, x - high[c, b])
        out += _capped(np.maximum(d, 0.0, out=d), query, ref, c)
    return out


def _pairs(
    query: Grouped, ref: Grouped, best: np.ndarray, i: np.ndarray,
    j: np.ndarray, base: np.ndarray,
) -> None:
    """Exact distances of the pairs (query row i, ref row j) folded into ``best``."""
    d = base.astype(np.float64) + _numeric_part(query, ref, i, j)
    np.minimum.at(best, i, d)


def _tree_search(
    query: Grouped, ref: Grouped, best: np.ndarray, rows: np.ndarray, b: int,
    base: np.ndarray, trees: dict[int, KDTree],
) -> None:
    """Closest record among the many ref rows of profile ``b``, for query ``rows``.

    Within one profile every ref row has the same numeric columns present, and the numeric
    part is the L1 distance on them once query values are clipped to the real range [0, 1]
    (a lower bound when a synthetic value lies outside it, where the cap can bind). So an
    exact k-d tree in L1 (scikit-learn) finds the closest row; when the clipped distance
    understates the capped one, a radius query collects every row that could still be closer.
    Query rows missing a value the profile has go through :func:`_bounded_block`.
    """
    start, count = int(ref.starts[b]), int(ref.counts[b])
    dims = np.flatnonzero(~np.isnan(ref.values[:, start]))
    if dims.size == 0:
        np.minimum.at(best, rows, base.astype(np.float64))
        return
    x = query.values[dims][:, rows].T
    complete = ~np.isnan(x).any(axis=1)
    if not complete.all():
        _bounded_block(query, ref, best, rows[~complete], b, base[~complete])
        rows, base, x = rows[complete], base[complete], x[complete]
    if rows.size == 0:
        return
    if b not in trees:
        trees[b] = KDTree(ref.values[dims, start:start + count].T, metric="manhattan")
    np.clip(x, 0.0, 1.0, out=x)
    low, first = trees[b].query(x, k=1)
    _pairs(query, ref, best, rows, first[:, 0] + start, base)
    loose = np.flatnonzero(best[rows] - base - low[:, 0] > _ROUNDING)
    if loose.size:
        found = trees[b].query_radius(x[loose], r=best[rows[loose]] - base[loose])
        n = np.array([f.size for f in found])
        if n.sum():
            _pairs(query, ref, best, np.repeat(rows[loose], n),
                   np.concatenate(found) + start, np.repeat(base[loose], n))


def _bounded_block(
    query: Grouped, ref: Grouped, best: np.ndarray, rows: np.ndarray, b: int,
    base: np.ndarray,
) -> None:
    """Closest record among the ref rows of profile ``b`` by a lower bound and refinement.

    For query rows whose missing values differ from the profile's: ``E``, the squared
    Euclidean distance on the numeric columns present in both (query values clipped to
    [0, 1]), comes from one matrix product; ``sqrt(E)`` is at most the numeric part. The pair
    with the smallest E is evaluated exactly, then every pair with ``base + sqrt(E)`` below
    the best distance found.
    """
    start, count = int(ref.starts[b]), int(ref.counts[b])
    y = ref.values[:, start:start + count]
    y_present = ~np.isnan(y)
    y0 = np.where(y_present, y, 0.0)
    ref_feat = np.vstack([y_present, y0 * y0, y0]).T
    x = query.values[:, rows]
    x_present = ~np.isnan(x)
    x0 = np.clip(np.where(x_present, x, 0.0), 0.0, 1.0)
    q_feat = np.vstack([x0 * x0, x_present, -2.0 * x0]).T
    step = max(1, _BLOCK // count)
    for lo in range(0, rows.size, step):
        sub = slice(lo, min(rows.size, lo + step))
        sq = q_feat[sub] @ ref_feat.T
        _pairs(query, ref, best, rows[sub], sq.argmin(axis=1) + start, base[sub])
        slack = np.maximum(best[rows[sub]] - base[sub], 0.0)
        ii, jj = np.nonzero(sq < (slack * slack + _GEMM_TOLERANCE)[:, None])
        if ii.size:
            _pairs(query, ref, best, rows[sub][ii], jj + start, base[sub][ii])


def nearest_distances(
    real: list[pd.DataFrame], synthetic: pd.DataFrame, columns: list[str],
    kinds: dict[str, str],
) -> tuple[list[np.ndarray], tuple[str, ...], np.ndarray, np.ndarray]:
    """Mean Gower distance of each distinct synthetic row to each real frame's closest record.

    Returns the distances (one array per real frame, over distinct synthetic rows), the
    numeric columns, ``inverse`` (distinct row of every synthetic row) and multiplicities.
    """
    tables, numeric = prepare([*real, synthetic], len(real), columns, kinds)
    query, inverse, weights = group(tables[-1])
    p = max(1, len(columns))
    out = [_nearest(query, group(t)[0]) / p for t in tables[:-1]]
    return out, numeric, inverse, weights
