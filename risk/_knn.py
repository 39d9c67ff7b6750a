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

The numeric part is summed over the numeric keys in order and the categorical part, an
integer, is added once, so two records at the same distance get the same float.

Speed: records with the same keys are at the same distance from everything, so the search runs
over distinct key combinations (a third of the rows on 20,000 Adult rows with six keys), each
contributing its first k records in shuffle order. With categorical keys the combinations are
searched by *level*: the categorical part takes a few integer values, so for each query the
profiles (categorical values) at categorical distance 0, 1, 2, ... are visited in turn, and a
level is visited only while a record there could be as near as the k-th found so far (like the
profile levels of :mod:`risk._gower`). Where the profile matrix would be too large or the
first level too wide (numeric keys only, or few categories), scikit-learn's brute-force
search proposes the ``2k + 4`` nearest combinations instead and the exact distances order
them; a query whose proposals may miss a combination tied with its k-th (the last proposal
within rounding of the k-th) is then searched against every combination exactly. Every path
gives the same answer (tests force each one against a slow loop).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.neighbors import NearestNeighbors

from risk._close_pairs import ragged
from risk._encode import combine

_SLACK = 1e-7  # squared distance: well above the rounding of scikit-learn's GEMM distances
_EXACT_BLOCK = 2**21  # (query, combination) pairs evaluated at once
_PROFILE_ENTRIES = 2**24  # largest query x training profile matrix of the level search
_LEVEL_COST = 16  # a level-search pair costs about this many entries of scikit-learn's search
_LEVEL_SPAN = 2  # profile pairs up to this far above the lowest level are found in one pass


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
        """Group the training rows (in their order) by key combination.

        State: ``starts``/``counts``/``rows_of`` list each combination's rows in training
        order; ``num``/``cat`` are the combinations' numeric values and categorical codes;
        ``s_profiles`` the distinct categorical profiles (codes), ``s_profile`` each
        combination's profile, and ``s_order``/``s_pstart``/``s_pcount`` the combinations
        grouped by profile; ``target`` the training rows' class codes (or values).
        """
        self.x = x  # the features are fitted on it only when proposals are needed
        # StandardScaler's scale: the population standard deviation, and 1 for a key its rule
        # calls constant (var <= n eps var + (n mean eps)^2: float noise around one value)
        values = x[self.numeric].to_numpy(dtype=float) if self.numeric else np.zeros((len(x), 0))
        n, eps = len(x), np.finfo(np.float64).eps
        mean, var = values.mean(axis=0), values.var(axis=0)
        constant = var <= n * eps * var + (n * mean * eps) ** 2
        self.scale = np.where(constant, 1.0, np.sqrt(var))
        # the values the training data have (a categorical's unused categories are not)
        self.categories = [np.asarray(x[c].unique()) for c in self.categorical]
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
        self.first = first
        self.search: NearestNeighbors | None = None  # fitted when proposals are needed
        # combinations grouped by their categorical profile, for the level search
        if self.cat.shape[1]:
            ids = combine(self.cat, [len(c) for c in self.categories])
            _, where, inverse = np.unique(ids, return_index=True, return_inverse=True)
            profiles = self.cat[where]
        else:  # numeric keys only: one profile
            profiles, inverse = np.zeros((1, 0), dtype=np.int64), np.zeros(starts.size, int)
        self.s_profiles = profiles
        self.s_profile = inverse.ravel()
        self.s_order = np.argsort(self.s_profile, kind="stable")
        self.s_pcount = np.bincount(self.s_profile, minlength=self.s_profiles.shape[0])
        self.s_pstart = np.cumsum(self.s_pcount) - self.s_pcount
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

    def _numeric(self, q_num: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Numeric part of the squared distance of the pairs (query i, combination j)."""
        out = np.zeros(i.size)
        for c in range(self.num.shape[1]):
            d = (q_num[i, c] - self.num[j, c]) / self.scale[c]
            out += d * d
        return out

    def _distances(self, q_num: np.ndarray, q_cat: np.ndarray, i: np.ndarray,
                   j: np.ndarray) -> np.ndarray:
        """Exact squared distances of the pairs (query i, combination j): the numeric part
        plus the categorical part, an integer added once."""
        cat = np.zeros(i.size, dtype=np.int64)
        for c in range(self.cat.shape[1]):
            qc = q_cat[i, c]
            cat += np.where(qc == self.cat[j, c], 0, np.where(qc < 0, 1, 2))
        return self._numeric(q_num, i, j) + cat

    def predict(self, x: pd.DataFrame) -> np.ndarray:
        """The vote (most frequent class, the smallest on a tie) or mean of the k nearest."""
        q_num, q_cat = self._raw(x)
        n_q = len(x)
        found = self._levels(q_num, q_cat) if self.cat.shape[1] else None
        qi, cj, dist = found if found is not None else self._proposals(x, q_num, q_cat)
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

    def _proposals(self, x: pd.DataFrame, q_num: np.ndarray,
                   q_cat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidates from scikit-learn's nearest combinations, exact where ties may hide."""
        if self.search is None:
            self.features.fit(self.x)
            n_props = min(self.starts.size, 2 * self.k + 4)
            self.search = NearestNeighbors(n_neighbors=n_props).fit(
                self.features.transform(self.first))
        sq, prop = self.search.kneighbors(self.features.transform(x))
        sq = sq * sq
        n_props = prop.shape[1]
        kth = sq[:, min(self.k, n_props) - 1]
        complete = (n_props == self.starts.size) | (sq[:, -1] > kth + _SLACK)
        i = np.repeat(np.flatnonzero(complete), n_props)
        j = prop[complete].ravel()
        pairs = [(i, j, self._distances(q_num, q_cat, i, j))]
        pairs += self._exact(q_num, q_cat, np.flatnonzero(~complete))
        return tuple(np.concatenate([p[m] for p in pairs]) for m in range(3))  # type: ignore

    def _levels(self, q_num: np.ndarray, q_cat: np.ndarray,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Candidates by categorical level: every combination within the k-th nearest record's
        distance, searching the profiles at categorical distance 0, 1, 2, ... only while a
        record there could still be as near as the k-th found. ``None`` when the profile
        matrix or the first level's pairs would cost more than the proposals."""
        n_q = q_cat.shape[0]
        ids = combine(q_cat + 1, [len(c) + 1 for c in self.categories])  # unknown -1 -> 0
        _, first, q_prof = np.unique(ids, return_index=True, return_inverse=True)
        q_profiles = q_cat[first]
        n_pq, n_ps = q_profiles.shape[0], self.s_profiles.shape[0]
        if n_pq * n_ps > _PROFILE_ENTRIES:
            return None
        small = np.uint8 if q_cat.shape[1] < 127 else np.int32
        catd = np.zeros((n_pq, n_ps), dtype=small)
        # narrow codes compare faster (codes run from -1 to the number of values seen)
        code = np.int16 if max((len(c) for c in self.categories), default=0) < 2**15 else np.int64
        q_narrow, s_narrow = q_profiles.astype(code), self.s_profiles.astype(code)
        for c in range(q_cat.shape[1]):
            catd += q_narrow[:, c, None] != s_narrow[None, :, c]
        # 2 per unequal known value, 1 per value unknown to the training data (never equal)
        catd *= 2
        catd -= (q_profiles < 0).sum(axis=1).astype(small)[:, None]
        # the profile pairs within _LEVEL_SPAN of each query profile's lowest level, found in
        # one pass (most queries need no more); farther levels row by row when needed
        lowest = catd.min(axis=1).astype(np.int64)
        cover = lowest + _LEVEL_SPAN
        near_a, near_s = np.nonzero(catd <= cover.astype(small)[:, None])
        near_level = catd[near_a, near_s].astype(np.int64)
        at_lowest = near_level == lowest[near_a]
        first_pairs = np.bincount(near_a[at_lowest], weights=self.s_pcount[near_s[at_lowest]],
                                  minlength=n_pq)[q_prof].sum()
        if first_pairs * _LEVEL_COST > n_q * self.starts.size:
            return None
        kth = np.full(n_q, np.inf)
        qi, cj, dist = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
        for level in range(int(lowest.min()), int(catd.max()) + 1):
            active = np.flatnonzero(kth >= level)
            if active.size == 0:
                break
            has = np.zeros(n_pq, dtype=bool)
            has[q_prof[active]] = True
            profiles = np.flatnonzero(has)
            sel = (near_level == level) & has[near_a]
            pq, ps = near_a[sel], near_s[sel]
            beyond = profiles[cover[profiles] < level]
            if beyond.size:
                extra_a, extra_s = np.nonzero(catd[beyond] == level)
                order = np.argsort(np.concatenate([pq, beyond[extra_a]]), kind="stable")
                pq = np.concatenate([pq, beyond[extra_a]])[order]
                ps = np.concatenate([ps, extra_s])[order]
            if pq.size == 0:
                continue
            pq = np.searchsorted(profiles, pq)  # local numbers of the active profiles
            # combinations at this level, per active profile
            pairs = np.bincount(pq, weights=self.s_pcount[ps], minlength=profiles.size)
            local = np.searchsorted(profiles, q_prof[active])
            ptr = np.searchsorted(pq, np.arange(profiles.size + 1))
            new = [(qi, cj, dist)]
            sizes = pairs[local]
            cuts = np.searchsorted(np.cumsum(sizes), np.arange(
                _EXACT_BLOCK, int(sizes.sum()), _EXACT_BLOCK), side="right")
            for part, loc in zip(np.split(active, cuts), np.split(local, cuts), strict=True):
                n1 = (ptr[1:] - ptr[:-1])[loc]
                ps1 = ps[ragged(ptr[loc], n1)]
                n2 = self.s_pcount[ps1]
                i2 = np.repeat(np.repeat(part, n1), n2)
                j2 = self.s_order[ragged(self.s_pstart[ps1], n2)]
                d2 = self._numeric(q_num, i2, j2) + level
                # a combination of k records or more bounds the k-th distance: drop what lies
                # beyond the bound (each query's pairs are contiguous here)
                full = np.where(self.counts[j2] >= self.k, d2, np.inf)
                ends = np.r_[0, np.cumsum(n2)][np.r_[0, np.cumsum(n1)]]
                per_query = ends[1:] - ends[:-1]  # pairs of each query of the part
                bound = kth[part].copy()
                some = per_query > 0
                first_pair = (np.cumsum(per_query) - per_query)[some]
                bound[some] = np.minimum(bound[some], np.minimum.reduceat(full, first_pair))
                near = d2 <= np.repeat(bound, per_query)
                new.append((i2[near], j2[near], d2[near]))
            qi, cj, dist = (np.concatenate([n[m] for n in new]) for m in range(3))
            is_active = np.zeros(n_q, dtype=bool)
            is_active[active] = True
            mine = is_active[qi]
            kth[active] = self._kth(qi[mine], cj[mine], dist[mine], n_q)[active]
            keep = dist <= kth[qi]
            qi, cj, dist = qi[keep], cj[keep], dist[keep]
        return qi, cj, dist

    def _kth(self, qi: np.ndarray, cj: np.ndarray, dist: np.ndarray, n_q: int) -> np.ndarray:
        """Distance of each query's k-th nearest record among the candidate combinations
        (infinite while fewer than k records are known)."""
        order = np.lexsort((dist, qi))
        qi_s, d_s = qi[order], dist[order]
        cum = np.cumsum(np.minimum(self.counts[cj[order]], self.k))
        start = np.ones(qi_s.size, dtype=bool)
        start[1:] = qi_s[1:] != qi_s[:-1]
        starts = np.flatnonzero(start)
        base = np.zeros(starts.size, dtype=cum.dtype)
        base[1:] = cum[starts[1:] - 1]
        reached = cum - np.repeat(base, np.diff(np.append(starts, qi_s.size))) >= self.k
        first = reached.copy()  # the first record of its query to reach k (monotone within)
        first[1:] &= ~reached[:-1] | start[1:]
        kth = np.full(n_q, np.inf)
        kth[qi_s[first]] = d_s[first]
        return kth

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
