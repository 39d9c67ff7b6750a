"""Nearest records in Hamming distance, by blocked matrix products (never a loop over pairs).

For integer-coded records x (query) and y (reference) over p columns, the number of equal
columns is the dot product of their one-hot encodings, so ``Hamming(x, y) = p - onehot(x) .
onehot(y)``. Duplicate rows are collapsed first, exact matches are found by a hash join, and
only the remaining unique query rows go through the matrix product, in blocks that bound memory.
float32 is exact here: the products are small integers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from risk._encode import combine_many

_BLOCK_BYTES = 128 * 2**20


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


def min_hamming(
    query: np.ndarray, reference: np.ndarray, cardinalities: Sequence[int]
) -> np.ndarray:
    """Smallest Hamming distance from each query row to any reference row (int64, shape (n,)).

    An empty reference gives distance ``p`` (all columns differ) for every query row.
    """
    p = query.shape[1]
    if reference.shape[0] == 0 or p == 0:
        return np.full(query.shape[0], p if reference.shape[0] == 0 else 0, dtype=np.int64)
    uq, q_inv = np.unique(query, axis=0, return_inverse=True)
    ur = np.unique(reference, axis=0)
    q_ids, r_ids = combine_many([uq, ur], cardinalities)
    dist = np.full(uq.shape[0], p, dtype=np.int64)
    exact = np.isin(q_ids, r_ids)
    dist[exact] = 0
    todo = np.flatnonzero(~exact)
    if todo.size:
        for rows, matches in _match_blocks(uq[todo], ur, cardinalities):
            dist[todo[rows]] = p - matches.max(axis=1).astype(np.int64)
    return dist[q_inv.ravel()]


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
