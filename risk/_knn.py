"""The default attack of :mod:`risk.inference`: k nearest neighbours, exactly, on key combinations.

The attack is scikit-learn's k-nearest-neighbours vote (classifier) or mean (regressor) on the
features of :func:`risk.inference._features`: numeric keys standardised on the synthetic data
(``StandardScaler``), categorical keys one-hot encoded (unknown categories ignored), Euclidean
distance. Between a query x and a training record y the squared distance is therefore

    sum over numeric keys of ((x - y) / scale)^2  +  sum over categorical keys of c,

with c = 0 for equal values, 2 for different known values and 1 for a value the synthetic data
never had (its one-hot is all zeros). This module computes that, not scikit-learn's
``|x|^2 - 2 x.y + |y|^2``, whose rounding decides between records at equal distance, and breaks
ties by training-row order, which :func:`risk.inference._fit_predict` makes a seeded shuffle:
among records at equal distance the earlier in the shuffle is the nearer (scikit-learn's rule
too, wherever its rounding leaves equal distances equal).

Speed: records with the same keys are at the same distance from everything, so the search runs
over distinct key combinations (a third of the rows on 20,000 Adult rows with six keys):
scikit-learn's brute-force search proposes the ``2k + 4`` nearest combinations, the exact
distances above order them, and each combination contributes its first k records in shuffle
order. A query whose proposals may miss a combination tied with its k-th (the last proposal
within rounding of the k-th) is searched against every combination exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.neighbors import NearestNeighbors

_SLACK = 1e-7  # squared distance: well above the rounding of scikit-learn's GEMM distances
_EXACT_BLOCK = 2**21  # (query, combination) pairs of one exact fallback block


class ExactKNN:
    """k-NN vote or mean over exact distances, ties by training-row order (module docstring).

    ``features`` is the unfitted :class:`~sklearn.compose.ColumnTransformer` of the attack,
    whose transformers are named ``"numeric"`` (a ``StandardScaler``) and ``"categorical"``
    (a ``OneHotEncoder``).
    """

    def __init__(self, features: ColumnTransformer, numeric: list[str], categorical: list[str],
                 *, n_neighbors: int, regression: bool) -> None:
        self.features = features
        self.numeric, self.categorical = numeric, categorical
        self.k, self.regression = n_neighbors, regression

    def fit(self, x: pd.DataFrame, y: pd.Series) -> ExactKNN:
        """Group the training rows (in their order) by key combination."""
        self.features.fit(x)
        named = self.features.named_transformers_
        self.scale = (named["numeric"].scale_ if self.numeric else np.ones(0))
        self.categories = (named["categorical"].categories_ if self.categorical else [])
        keys = [*self.numeric, *self.categorical]
        combo = x.groupby(keys, sort=False, observed=True).ngroup().to_numpy()
        order = np.argsort(combo, kind="stable")  # rows by combination, each in shuffle order
        _, starts, counts = np.unique(combo[order], return_index=True, return_counts=True)
        self.rows_of = order  # positions (training-row order) of each combination's rows
        self.starts, self.counts = starts, counts
        first = x.iloc[order[starts]]
        self.num, self.cat = self._raw(first)
        if self.regression:
            self.target = y.to_numpy(dtype=float)
        else:
            self.classes, self.target = np.unique(y.to_numpy(), return_inverse=True)
        n_props = min(starts.size, 2 * self.k + 4)
        self.search = NearestNeighbors(n_neighbors=n_props).fit(self.features.transform(first))
        return self

    def _raw(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Numeric key values (float) and categorical codes (-1: unknown to the training data)."""
        num = frame[self.numeric].to_numpy(dtype=float) if self.numeric else np.zeros(
            (len(frame), 0))
        cat = np.column_stack([
            pd.Categorical(frame[c], categories=cats).codes.astype(np.int64)
            for c, cats in zip(self.categorical, self.categories, strict=True)
        ]) if self.categorical else np.zeros((len(frame), 0), dtype=np.int64)
        return num, cat

    def _distances(self, q_num: np.ndarray, q_cat: np.ndarray, i: np.ndarray,
                   j: np.ndarray) -> np.ndarray:
        """Exact squared distances of the pairs (query i, combination j)."""
        out = np.zeros(i.size)
        for c in range(self.num.shape[1]):
            d = (q_num[i, c] - self.num[j, c]) / self.scale[c]
            out += d * d
        for c in range(self.cat.shape[1]):
            qc = q_cat[i, c]
            out += np.where(qc == self.cat[j, c], 0.0, np.where(qc < 0, 1.0, 2.0))
        return out

    def predict(self, x: pd.DataFrame) -> np.ndarray:
        """The vote (most frequent class, the smallest on a tie) or mean of the k nearest."""
        q_num, q_cat = self._raw(x)
        sq, prop = self.search.kneighbors(self.features.transform(x))
        sq = sq * sq
        n_q, n_props = prop.shape
        kth = sq[:, min(self.k, n_props) - 1]
        complete = (n_props == self.starts.size) | (sq[:, -1] > kth + _SLACK)
        i = np.repeat(np.flatnonzero(complete), n_props)
        j = prop[complete].ravel()
        pairs = [(i, j, self._distances(q_num, q_cat, i, j))]
        pairs += self._exact(q_num, q_cat, np.flatnonzero(~complete))
        qi = np.concatenate([p[0] for p in pairs])
        cj = np.concatenate([p[1] for p in pairs])
        dist = np.concatenate([p[2] for p in pairs])
        # each combination's first k rows in training order
        take = np.minimum(self.counts[cj], self.k)
        offsets = np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take)
        qi, dist = np.repeat(qi, take), np.repeat(dist, take)
        pos = self.rows_of[np.repeat(self.starts[cj], take) + offsets]
        order = np.lexsort((pos, dist, qi))
        qi, pos = qi[order], pos[order]
        rank = np.arange(qi.size) - np.searchsorted(qi, qi)
        keep = rank < self.k
        qi, pos = qi[keep], pos[keep]
        if self.regression:
            return np.bincount(qi, self.target[pos], n_q) / np.bincount(qi, minlength=n_q)
        votes = np.zeros((n_q, self.classes.size), dtype=np.int64)
        np.add.at(votes, (qi, self.target[pos]), 1)
        return self.classes[votes.argmax(axis=1)]

    def _exact(self, q_num: np.ndarray, q_cat: np.ndarray,
               queries: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Every combination within the k-th nearest one's distance, for ``queries``."""
        out: list[tuple[Any, Any, Any]] = []
        n_c = self.starts.size
        step = max(1, _EXACT_BLOCK // n_c)
        for s in range(0, queries.size, step):
            block = queries[s:s + step]
            i = np.repeat(block, n_c)
            j = np.tile(np.arange(n_c), block.size)
            d = self._distances(q_num, q_cat, i, j).reshape(block.size, n_c)
            kth = np.partition(d, min(self.k, n_c) - 1, axis=1)[:, min(self.k, n_c) - 1]
            r, c = np.nonzero(d <= kth[:, None])
            out.append((block[r], c, d[r, c]))
        return out
