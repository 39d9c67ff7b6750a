"""Every pair of code rows within a few unequal columns, without the all-pairs matrix.

For :mod:`risk._gower`: the closest record of a synthetic record mostly lies among the real
records whose non-numeric columns differ from its own in at most one or two columns, and
finding those pairs by comparing every synthetic profile with every real one (an
n_query x n_ref matrix) was most of the time of :func:`risk.distance_to_closest_record`.

Pigeonhole (the principle behind multi-index hashing; Norouzi, Punjani & Fleet, "Fast exact
search in Hamming space with multi-index hashing", IEEE TPAMI 36(6), 2014): split the q columns
into ``d + 1`` disjoint blocks; two rows with at most d unequal columns agree on every column
of at least one block. So a hash join per block on the block's values yields a superset of the
pairs within d, and counting the unequal columns of those candidates alone gives the exact
pairs. A pair found by several blocks is kept only from the first block it agrees on.

The blocks are balanced greedily by how often a random (query, reference) pair agrees on a
column (its collision rate): the number of candidates is known exactly from the joins
(:func:`block_joins`) before any pair is made, so the caller can keep the matrix when hashing
would not be cheaper, and pairs come out in chunks of bounded size (:func:`close_pairs`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np

from risk._encode import combine_many

_POPCOUNT = getattr(np, "bitwise_count", None)  # numpy >= 2.0


def ragged(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for each (s, n), vectorised."""
    total = int(lengths.sum())
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + (np.arange(total) - offsets)


def _blocks(a: np.ndarray, b: np.ndarray, rows: np.ndarray, n_blocks: int) -> list[list[int]]:
    """Columns split into ``n_blocks`` blocks of about equal agreement probability between
    ``a[rows]`` and ``b``."""
    rates = []
    for c in range(a.shape[1]):
        col_a, col_b = a[rows, c], b[:, c]
        size = max(int(col_a.max(initial=0)), int(col_b.max(initial=0))) + 1
        if size > 4 * (rows.size + b.shape[0]):  # sparse codes: count them densified
            _, dense = np.unique(np.concatenate([col_a, col_b]), return_inverse=True)
            col_a, col_b, size = dense[:rows.size], dense[rows.size:], int(dense.max()) + 1
        share_a = np.bincount(col_a, minlength=size) / max(1, rows.size)
        share_b = np.bincount(col_b, minlength=size) / max(1, b.shape[0])
        rates.append(float(share_a @ share_b))
    blocks: list[list[int]] = [[] for _ in range(n_blocks)]
    log_rate = np.zeros(n_blocks)  # log of the block's agreement rate (independence assumed)
    for c in np.argsort(rates, kind="stable"):  # most selective columns first
        k = int(np.argmax(log_rate))  # into the least selective block so far
        blocks[k].append(int(c))
        log_rate[k] += np.log(max(rates[c], 1e-300))
    return [blk for blk in blocks if blk]


@dataclasses.dataclass(frozen=True)
class BlockJoins:
    """The hash join of ``a[rows]`` with ``b`` on each block's values: for block k,
    ``order[k]`` sorts b by the block's id, and query row i matches ``n[k][i]`` rows of b from
    ``lo[k][i]`` on in that order. ``count`` is the number of candidate pairs they make."""

    blocks: list[list[int]]
    order: list[np.ndarray]
    lo: list[np.ndarray]
    n: list[np.ndarray]

    @property
    def count(self) -> int:
        return int(sum(int(n.sum()) for n in self.n))


def block_joins(a: np.ndarray, b: np.ndarray, rows: np.ndarray, within: int) -> BlockJoins:
    """The joins finding every pair of ``a[rows]`` and ``b`` within ``within`` unequal columns
    (a superset: :func:`close_pairs` keeps the pairs that are)."""
    blocks = _blocks(a, b, rows, within + 1)
    orders, los, ns = [], [], []
    for blk in blocks:
        ids_a, ids_b = _block_ids(a, b, rows, blk)
        order = np.argsort(ids_b, kind="stable")
        sorted_b = ids_b[order]
        lo = np.searchsorted(sorted_b, ids_a, side="left")
        orders.append(order)
        los.append(lo)
        ns.append(np.searchsorted(sorted_b, ids_a, side="right") - lo)
    return BlockJoins(blocks, orders, los, ns)


def _block_ids(
    a: np.ndarray, b: np.ndarray, rows: np.ndarray, blk: list[int],
) -> tuple[np.ndarray, np.ndarray]:
    """Ids of the block's values, equal iff equal, for ``a[rows]`` and ``b`` (no row copy)."""
    sub = a[np.ix_(rows, np.asarray(blk, dtype=np.intp))]
    ids_a, ids_b = combine_many([sub, b[:, blk]], _cards(sub, b, list(range(len(blk))), blk))
    return ids_a, ids_b


def _cards(a: np.ndarray, b: np.ndarray, cols_a: list[int],
           cols_b: list[int] | None = None) -> list[int]:
    """Joint cardinality (largest code + 1) of columns ``cols_a`` of a and ``cols_b`` of b."""
    return [int(max(a[:, ca].max(initial=0), b[:, cb].max(initial=0))) + 1
            for ca, cb in zip(cols_a, cols_a if cols_b is None else cols_b, strict=True)]


class PackedPairs:
    """Two code matrices packed into 64-bit words, to count unequal columns of many pairs.

    Each column is a bit field wide enough for its largest code plus one guard bit (several
    words when 64 bits do not hold them all). For a pair, ``x = a XOR b`` is zero exactly on
    the equal fields; adding the field's all-ones low mask carries into its guard bit iff the
    field is non-zero, so the unequal columns are the set guard bits: a population count
    (the SWAR "has non-zero byte" trick, generalised to fields of any width).
    """

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        widths = [max(1, int(c - 1).bit_length()) for c in _cards(a, b, list(range(a.shape[1])))]
        self.field: list[tuple[int, int]] = []  # (word, shift) of each column
        word, used = 0, 0
        for w in widths:
            if used + w + 1 > 64:
                word, used = word + 1, 0
            self.field.append((word, used))
            used += w + 1
        n_words = word + 1 if widths else 0
        self.low = np.zeros(n_words, dtype=np.uint64)
        self.guard = np.zeros(n_words, dtype=np.uint64)
        self.a = np.zeros((a.shape[0], n_words), dtype=np.uint64)
        self.b = np.zeros((b.shape[0], n_words), dtype=np.uint64)
        for c, ((k, shift), w) in enumerate(zip(self.field, widths, strict=True)):
            self.low[k] |= np.uint64(((1 << w) - 1) << shift)
            self.guard[k] |= np.uint64(1 << (shift + w))
            self.a[:, k] |= a[:, c].astype(np.uint64) << np.uint64(shift)
            self.b[:, k] |= b[:, c].astype(np.uint64) << np.uint64(shift)
        self.widths = widths
        self.columns_of = [[c for c, (w, _) in enumerate(self.field) if w == k]
                           for k in range(n_words)]

    def unequal(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Count of unequal columns of each pair (a[i], b[j])."""
        out = np.zeros(i.size, dtype=np.int64)
        for k in range(self.low.size):
            x = self.a[i, k] ^ self.b[j, k]
            flags = ((x & self.low[k]) + self.low[k]) & self.guard[k]
            if _POPCOUNT is not None:
                out += _POPCOUNT(flags)
            else:  # numpy < 2: read each field's guard bit
                for c in self.columns_of[k]:
                    out += ((flags >> np.uint64(self.field[c][1] + self.widths[c]))
                            & np.uint64(1)).astype(np.int64)
        return out

    def agree(self, i: np.ndarray, j: np.ndarray, cols: list[int]) -> np.ndarray:
        """Whether a[i] and b[j] are equal on every column of ``cols``."""
        masks: dict[int, int] = {}
        for c in cols:
            k, shift = self.field[c]
            masks[k] = masks.get(k, 0) | (((1 << self.widths[c]) - 1) << shift)
        out = np.ones(i.size, dtype=bool)
        for k, mask in masks.items():
            out &= ((self.a[i, k] ^ self.b[j, k]) & np.uint64(mask)) == 0
        return out


def close_pairs(
    packed: PackedPairs, rows: np.ndarray, joins: BlockJoins, within: int, max_pairs: int,
) -> Iterator[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]]:
    """Every (i, j) with at most ``within`` unequal columns between ``a[rows[i]]`` and ``b[j]``.

    ``packed`` holds the code matrices a and b (coded jointly: equal codes iff equal values)
    and ``joins`` their :func:`block_joins` for ``rows`` and ``within``. Yields
    ``(lo, hi, i, j, unequal)`` per chunk ``rows[lo:hi]``: the pairs sorted by i (an index
    into ``rows``), each chunk making about ``max_pairs`` candidates.
    """
    per_row = np.sum(joins.n, axis=0) if joins.n else np.zeros(rows.size, dtype=np.int64)
    bounds = np.searchsorted(np.cumsum(per_row), np.arange(max_pairs, int(per_row.sum()),
                                                           max_pairs), side="right")
    for r0, r1 in zip(np.r_[0, bounds], np.r_[bounds, rows.size], strict=True):
        if r1 <= r0:
            continue
        found_i, found_j, found_m = [], [], []
        for k, (order, lo, n) in enumerate(zip(joins.order, joins.lo, joins.n, strict=True)):
            i = np.repeat(np.arange(r0, r1), n[r0:r1])
            j = order[ragged(lo[r0:r1], n[r0:r1])]
            for earlier in joins.blocks[:k]:  # a pair an earlier block found is not made twice
                later = ~packed.agree(rows[i], j, earlier)
                i, j = i[later], j[later]
            unequal = packed.unequal(rows[i], j)
            near = unequal <= within
            found_i.append(i[near])
            found_j.append(j[near])
            found_m.append(unequal[near])
        i, j, m = np.concatenate(found_i), np.concatenate(found_j), np.concatenate(found_m)
        order = np.argsort(i, kind="stable")
        yield int(r0), int(r1), i[order], j[order], m[order]
