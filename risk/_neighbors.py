"""Nearest records in Hamming distance: hash joins first, blocked matrix products for the rest.

Records are integer-coded (``risk._encode``) over p columns. :func:`min_hamming` finds the smallest
Hamming distance d(x) from every query row x to any reference row, exactly, level by level:

* **d = 0** is a hash join on whole-row keys (duplicate rows are collapsed first).
* **d = k** for 1 <= k < p, by deletion-neighbourhood hashing: x is within distance k of some y
  iff, for some set S of k columns, x and y agree on every column outside S. So for each of the
  C(p, k) sets S, the rows still unresolved (d > k - 1) are joined with the reference on their
  keys with the columns of S left out; those that find a partner have d = k exactly. With
  mixed-radix row keys, leaving out column j is subtracting ``code_j * weight_j`` from the key.
* **The rest**: once hashing the next level would cost more (a cost model in seconds, see
  :func:`_plan`) than the one-hot matrix product over the unresolved rows, those rows get
  ``d(x) = p - max_y onehot(x) . onehot(y)`` (the dot product counts equal columns; float32 is
  exact for these small integers), in blocks over the query *and* the reference rows.

Where hashing stops only changes the time, never a distance (the tests force every level).

Memory above the inputs, for n_r reference rows: the row keys, their hash factorisation, a
narrowest-dtype copy of the distinct reference rows and the keys along the tree of column sets
of the level being hashed, with its hash table: at most about 160 bytes per reference row;
plus, while the product runs, at most
``_ONE_HOT_BYTES`` (32 MiB) of reference one-hot, as much of query one-hot and
``_PRODUCT_BYTES`` (64 MiB) of equal-column counts. So about 128 MiB + 160 bytes per reference
(and per query) row (measured on 1,000,000 rows: block ``bench_membership`` of
``experiments/benchmarks/RESULTS.md``), where the former algorithm held the whole reference
one-hot, 4 x (sum of the cardinalities) bytes per distinct reference row (880 for Adult).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations
from math import comb

import numpy as np
import pandas as pd

_BLOCK_BYTES = 128 * 2**20  # nearest_target_counts: one block of equal-column counts
_PRODUCT_BYTES = 64 * 2**20  # min_hamming: one block of equal-column counts (float32)
_ONE_HOT_BYTES = 32 * 2**20  # min_hamming: one-hot of one chunk of reference or query rows
_KEY_LIMIT = 2**62  # row keys stay below this, so key * cardinality never overflows int64
_LOOKUP_MAX = 2**22  # one-hot columns by a lookup table up to this many codes in all

# Cost model of the choice between hashing one more level and the matrix product (seconds; only
# the speed depends on them, measured on a 2-core x86-64 with OpenBLAS).
_HASH_S = 18e-9  # per key hashed or probed
_CALL_S = 40e-6  # per column set (Python and pandas overhead)
_MAC_S = 2e-11  # per multiply-add of the one-hot product
_PAIR_S = 5e-10  # per (query, reference) pair: writing and reducing the product


def _one_hot(codes: np.ndarray, cardinalities: Sequence[int]) -> np.ndarray:
    offsets = np.concatenate([[0], np.cumsum(cardinalities)[:-1]]).astype(np.int64)
    out = np.zeros((codes.shape[0], int(sum(cardinalities))), dtype=np.float32)
    rows = np.repeat(np.arange(codes.shape[0]), codes.shape[1])
    out[rows, (codes + offsets).ravel()] = 1.0
    return out


def _match_blocks(
    query: np.ndarray, reference: np.ndarray, cardinalities: Sequence[int]
) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield (query rows, matrix of equal-column counts against every reference row)."""
    ref_hot = _one_hot(reference, cardinalities)
    block = max(1, _BLOCK_BYTES // (4 * max(1, reference.shape[0])))
    for start in range(0, query.shape[0], block):
        rows = slice(start, min(start + block, query.shape[0]))
        yield rows, _one_hot(query[rows], cardinalities) @ ref_hot.T


# --- row keys ------------------------------------------------------------------------------


def _radix_weights(cardinalities: Sequence[int]) -> np.ndarray | None:
    """Mixed-radix weights making ``sum_j code_j * w_j`` an exact row key, or None on overflow."""
    cards = [max(int(c), 1) for c in cardinalities]
    total = 1
    for c in cards:
        total *= c
    if total >= _KEY_LIMIT:
        return None
    weights = [1] * len(cards)
    for j in range(len(cards) - 2, -1, -1):
        weights[j] = weights[j + 1] * cards[j + 1]
    return np.array(weights, dtype=np.int64)


def _keys(
    parts: Sequence[np.ndarray], columns: Sequence[int], cardinalities: Sequence[int]
) -> list[np.ndarray]:
    """Exact int64 key of every row of each part on ``columns`` (equal iff equal there).

    Mixed-radix packing, re-densified by a hash factorisation over all parts together whenever
    the next column could overflow; keys are comparable between the parts of one call only.
    """
    sizes = [x.shape[0] for x in parts]
    ids = [np.zeros(n, dtype=np.int64) for n in sizes]
    bound = 1
    for j in columns:
        card = max(int(cardinalities[j]), 1)
        if bound > _KEY_LIMIT // card:
            dense, uniq = pd.factorize(np.concatenate(ids))
            ids = np.split(dense.astype(np.int64), np.cumsum(sizes)[:-1])
            bound = max(len(uniq), 1)
        ids = [i * card + x[:, j].astype(np.int64) for i, x in zip(ids, parts, strict=True)]
        bound *= card
    return ids


def _isin(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``values`` occur in ``pool`` (a hash join)."""
    if pool.size > 100 * values.size:  # hash the few values, probe the pool, then the rest
        pool = pool[pd.Index(pool, copy=False).isin(values)]
    return pd.Index(values, copy=False).isin(pool)


def _unique_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(inverse, one representative row index per unique key, unique keys) by hashing."""
    inverse, uniq = pd.factorize(keys)
    rep = np.empty(len(uniq), dtype=np.intp)
    rep[inverse] = np.arange(keys.size)
    return inverse, rep, np.asarray(uniq, dtype=np.int64)


def _compact(codes: np.ndarray, rows: np.ndarray, cardinalities: Sequence[int]) -> np.ndarray:
    """``codes[rows]`` in the narrowest unsigned dtype, column-major (cheap column access)."""
    top = max((int(c) for c in cardinalities), default=1)
    dtype = np.uint8 if top <= 2**8 else np.uint16 if top <= 2**16 else np.int64
    out = np.empty((rows.size, codes.shape[1]), dtype=dtype, order="F")
    for j in range(codes.shape[1]):
        out[:, j] = codes[rows, j]
    return out


# --- the levels ----------------------------------------------------------------------------


def _hash_seconds(p: int, k: int, n_query: int, n_ref: int, radix: bool) -> float:
    # a reference key costs a subtraction and a hash (radix keys), or packing the p - k kept
    # columns first; query keys are probed by fewer and fewer rows as the level resolves them
    per_ref = 1.5 if radix else 1.5 + 0.15 * (p - k)
    return comb(p, k) * (_CALL_S + _HASH_S * (n_ref * per_ref + n_query))


def _product_seconds(n_query: int, n_ref: int, width: int) -> float:
    return n_query * n_ref * (width * _MAC_S + _PAIR_S)


def _plan(p: int, k: int, n_query: int, n_ref: int, width: int, radix: bool) -> bool:
    """Whether hashing level k is cheaper than the matrix product for all unresolved rows."""
    return _hash_seconds(p, k, n_query, n_ref, radix) < _product_seconds(n_query, n_ref, width)


def _deletion_level(
    q_keys: np.ndarray,
    r_keys: np.ndarray,
    q_rows: np.ndarray,
    ref: np.ndarray,
    k: int,
    cardinalities: Sequence[int],
    weights: np.ndarray | None,
) -> np.ndarray:
    """Which query rows agree with some reference row outside some set of k columns.

    ``q_rows``/``ref`` are code matrices and ``q_keys``/``r_keys`` their whole-row keys (used
    when ``weights`` gives mixed-radix keys: leaving out column j subtracts code_j * w_j, and
    the keys are updated along the tree of column sets, one subtraction per set).
    """
    p = ref.shape[1]
    found = np.zeros(q_rows.shape[0], dtype=bool)

    def probe(kq: np.ndarray, kr: np.ndarray) -> None:
        live = np.flatnonzero(~found)
        if live.size:
            found[live[_isin(kq[live], kr)]] = True

    if weights is None:
        for left_out in combinations(range(p), k):
            keep = [j for j in range(p) if j not in left_out]
            kq, kr = _keys([q_rows, ref], keep, cardinalities)
            probe(kq, kr)
        return found

    def descend(kq: np.ndarray, kr: np.ndarray, start: int, depth: int) -> None:
        for j in range(start, p - depth + 1):
            if found.all():
                return
            w = weights[j]
            sub_q = kq - q_rows[:, j].astype(np.int64) * w
            sub_r = kr - ref[:, j].astype(np.int64) * w
            if depth == 1:
                probe(sub_q, sub_r)
            else:
                descend(sub_q, sub_r, j + 1, depth - 1)

    descend(q_keys, r_keys, 0, k)
    return found


def _product_min(
    q_rows: np.ndarray, ref: np.ndarray, cardinalities: Sequence[int], floor: int
) -> np.ndarray:
    """Exact smallest distance of each query row (all known to be >= ``floor``) by blocked
    one-hot products over query and reference chunks."""
    m, p = q_rows.shape
    offsets = np.concatenate([[0], np.cumsum(cardinalities)[:-1]]).astype(np.int64)
    # only codes some query row has can add to an equal-column count: one-hot columns for those
    # alone, found by a lookup table (or a binary search when the cardinalities are huge)
    present = np.unique(q_rows.astype(np.int64) + offsets)
    w = present.size
    total = int(offsets[-1]) + int(cardinalities[-1])
    lookup = None
    if total <= _LOOKUP_MAX:
        lookup = np.full(total, -1, dtype=np.int64)
        lookup[present] = np.arange(w)

    def hot(codes: np.ndarray) -> np.ndarray:
        ids = codes.astype(np.int64) + offsets
        if lookup is not None:
            pos = lookup[ids]
            ok = pos >= 0
        else:
            pos = np.minimum(np.searchsorted(present, ids), w - 1)
            ok = present[pos] == ids
        out = np.zeros((codes.shape[0], w), dtype=np.float32)
        out[np.nonzero(ok)[0], pos[ok]] = 1.0
        return out

    best = np.zeros(m, dtype=np.float32)
    ceiling = p - floor  # no unresolved row can have more equal columns than this
    active = np.arange(m)
    q_hot = hot(q_rows) if m * w * 4 <= _ONE_HOT_BYTES else None  # else made per block
    ref_chunk = max(1, _ONE_HOT_BYTES // (4 * w))
    for r0 in range(0, ref.shape[0], ref_chunk):
        ref_hot = hot(ref[r0:r0 + ref_chunk]).T.copy()
        block = max(1, min(_PRODUCT_BYTES // (4 * ref_hot.shape[1]), _ONE_HOT_BYTES // (4 * w)))
        for q0 in range(0, active.size, block):
            rows = active[q0:q0 + block]
            counts = (hot(q_rows[rows]) if q_hot is None else q_hot[rows]) @ ref_hot
            best[rows] = np.maximum(best[rows], counts.max(axis=1))
        active = active[best[active] < ceiling]
        if not active.size:
            break
    return p - best.astype(np.int64)


def min_hamming(
    query: np.ndarray,
    reference: np.ndarray,
    cardinalities: Sequence[int],
    *,
    max_hash_level: int | None = None,
    max_distance: int | None = None,
) -> np.ndarray:
    """Smallest Hamming distance from each query row to any reference row (int64, shape (n,)).

    Exact: a hash join for d = 0, deletion-neighbourhood hash joins for d = 1, 2, ... while they
    are cheaper than the blocked one-hot product, which resolves the rest (module docstring).
    ``max_hash_level`` caps the hashed levels (0: only the exact join; ``None``: the cost model
    decides); it changes the time, never the result. ``max_distance`` = D stops once every
    distance up to D is known: a row farther than D gets D + 1 (``min(true distance, D + 1)``;
    D = 0 is the hash join alone). An empty reference gives distance ``p`` (all columns differ)
    for every query row.
    """
    n, p = query.shape
    if reference.shape[0] == 0 or p == 0 or n == 0:
        far = p if max_distance is None else min(p, max_distance + 1)
        return np.full(n, far if reference.shape[0] == 0 else 0, dtype=np.int64)
    limit = p - 1 if max_distance is None else min(max_distance, p - 1)
    weights = _radix_weights(cardinalities)
    if weights is not None:
        q_all, r_all = query @ weights, reference @ weights
    else:
        q_all, r_all = _keys([query, reference], range(p), cardinalities)
    q_inv, q_rep, q_keys = _unique_rows(q_all)
    _, r_rep, r_keys = _unique_rows(r_all)
    del q_all, r_all
    dist = np.full(q_keys.size, p, dtype=np.int64)
    exact = _isin(q_keys, r_keys)
    dist[exact] = 0
    todo = np.flatnonzero(~exact)
    if todo.size:
        q_rows = _compact(query, q_rep, cardinalities)
        ref = _compact(reference, r_rep, cardinalities)
        cap = limit if max_hash_level is None else min(max_hash_level, limit)
        k = 1
        while (todo.size and k <= cap and (max_hash_level is not None or _plan(
                p, k, todo.size, ref.shape[0], min(sum(cardinalities), todo.size * p),
                weights is not None))):
            found = _deletion_level(q_keys[todo], r_keys, q_rows[todo], ref, k, cardinalities,
                                    weights)
            dist[todo[found]] = k
            todo = todo[~found]
            k += 1
        if todo.size and k <= limit:  # levels up to the limit not all hashed: the product
            dist[todo] = _product_min(q_rows[todo], ref, cardinalities, floor=k)
        elif todo.size:  # every level up to the limit hashed: the rest are farther
            dist[todo] = limit + 1
    if max_distance is not None:
        np.minimum(dist, max_distance + 1, out=dist)
    return dist[q_inv]


def nearest_target_counts(
    query: np.ndarray,
    reference: np.ndarray,
    reference_weights: np.ndarray,
    cardinalities: Sequence[int],
) -> tuple[np.ndarray, np.ndarray]:
    """Sum ``reference_weights`` over the reference rows nearest to each query row.

    ``reference_weights`` is (n_reference, k), e.g. a one-hot of the reference's target. Returns
    ``(distance, sums)``: the smallest Hamming distance per query row, and the (n_query, k)
    sums of the weights of all reference rows at that distance (ties all count).
    """
    uq, q_inv = np.unique(query, axis=0, return_inverse=True)
    ur, r_inv = np.unique(reference, axis=0, return_inverse=True)
    r_inv = r_inv.ravel()
    weights = np.zeros((ur.shape[0], reference_weights.shape[1]), dtype=np.float64)
    np.add.at(weights, r_inv, reference_weights)
    p = query.shape[1]
    dist = np.empty(uq.shape[0], dtype=np.int64)
    sums = np.empty((uq.shape[0], weights.shape[1]), dtype=np.float64)
    for rows, matches in _match_blocks(uq, ur, cardinalities):
        best = matches.max(axis=1, keepdims=True)
        dist[rows] = p - best.ravel().astype(np.int64)
        sums[rows] = (matches == best).astype(np.float64) @ weights
    q_inv = q_inv.ravel()
    return dist[q_inv], sums[q_inv]
