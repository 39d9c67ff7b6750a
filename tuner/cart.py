"""Sequential CART synthesis, as in R's synthpop (DESIGN section 8), as an SDV synthesiser.

References: J. P. Reiter, "Using CART to generate partially synthetic public use microdata",
Journal of Official Statistics 21(3), 2005; B. Nowok, G. M. Raab, C. Dibben, "synthpop:
Bespoke creation of synthetic data in R", Journal of Statistical Software 74(11), 2016.

Columns are visited in order. The first is drawn from its marginal (a bootstrap of the training
values). Each next column is modelled by a decision tree on the columns before it; a synthetic
value is drawn from the *real* values in the leaf that the synthetic predictors fall into
(synthpop's ``cart`` method). ``min_samples_leaf`` and ``max_depth`` are the risk-utility dials:
small leaves copy real records. ``smoothing`` adds Gaussian kernel noise to numeric donor values,
with a per-leaf bandwidth ``1.06 * sd * n^(-1/5)`` (Silverman's rule, as synthpop's
``smoothing="density"``).

Subclassing SDV's ``BaseSingleTableSynthesizer`` gives metadata handling, constraints,
reverse transforms, ``sample``, ``save`` and ``load`` like any SDV synthesiser. Categorical
columns reach the model untransformed (as for CTGAN) and are split on as integer codes.
Beware: a fitted model holds training values (the donors), so never publish its pickle.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
from sdv.single_table.base import BaseSingleTableSynthesizer
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

VISIT_ORDERS = ("original", "reversed", "random")


@dataclasses.dataclass
class _Column:
    name: str
    numeric: bool
    tree: DecisionTreeClassifier | DecisionTreeRegressor | None
    donors: np.ndarray  # training values, ordered by leaf
    leaves: np.ndarray  # sorted leaf ids; every leaf of a fitted tree holds training donors
    start: np.ndarray  # position of each leaf's first donor
    count: np.ndarray  # donors per leaf
    bandwidth: np.ndarray  # kernel bandwidth per leaf (numeric columns)


class _SequentialCART:
    """The fitted model on processed data (what SDV calls ``self._model``)."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params
        self.columns: list[_Column] = []
        self.order: list[str] = []
        self.categories: dict[str, pd.Index] = {}
        self.rng = np.random.default_rng(0)

    def set_random_state(self, random_state: Any) -> None:
        seed = random_state if isinstance(random_state, (int, np.integer)) else None
        self.rng = np.random.default_rng(seed)

    def _codes(self, frame: pd.DataFrame, cols: list[str]) -> np.ndarray:
        out = np.empty((len(frame), len(cols)), dtype=float)
        for j, col in enumerate(cols):
            if col in self.categories:
                out[:, j] = self.categories[col].get_indexer(frame[col])
            else:
                out[:, j] = frame[col].to_numpy(dtype=float)
        return out

    def fit(self, data: pd.DataFrame) -> None:
        p = self.params
        names = list(data.columns)
        rng = np.random.default_rng(p["random_state"])
        if p["visit_order"] == "reversed":
            names = names[::-1]
        elif p["visit_order"] == "random":
            names = list(rng.permutation(names))
        self.order = names
        # numbers with missing values reach the model only for few-valued (categorical sdtype)
        # columns, which SDV passes untransformed: split on them as categories, missing one of
        # them, since a regression tree cannot take a missing target
        numeric = {c: pd.api.types.is_numeric_dtype(data[c]) and not pd.api.types.is_bool_dtype(
            data[c]) and not data[c].isna().any() for c in names}
        self.categories = {
            c: pd.Index(pd.unique(data[c].astype(object))) for c in names if not numeric[c]
        }
        self.columns = []
        for j, col in enumerate(names):
            values = data[col].to_numpy()
            if j == 0:
                leaves = np.zeros(len(data), dtype=np.int64)
                tree = None
            else:
                x = self._codes(data, names[:j])
                model_cls = DecisionTreeRegressor if numeric[col] else DecisionTreeClassifier
                tree = model_cls(
                    min_samples_leaf=p["min_samples_leaf"],
                    max_depth=p["max_depth"],
                    random_state=int(rng.integers(2**31 - 1)),
                )
                target = values if numeric[col] else self.categories[col].get_indexer(values)
                tree.fit(x, target)
                leaves = tree.apply(x)
            self.columns.append(self._leaf_table(col, numeric[col], tree, values, leaves))

    @staticmethod
    def _leaf_table(
        col: str, numeric: bool, tree: Any, values: np.ndarray, leaves: np.ndarray
    ) -> _Column:
        order = np.argsort(leaves, kind="stable")
        uniq, start, count = np.unique(leaves[order], return_index=True, return_counts=True)
        bandwidth = np.zeros(uniq.size)
        if numeric:
            donors = pd.Series(values[order].astype(float))
            sd = donors.groupby(np.repeat(np.arange(uniq.size), count)).std(ddof=1)
            bandwidth = 1.06 * np.nan_to_num(sd.to_numpy()) * count ** (-0.2)
        return _Column(col, numeric, tree, values[order], uniq, start, count, bandwidth)

    def sample(self, num_rows: int) -> pd.DataFrame:
        out = pd.DataFrame(index=range(num_rows))
        for j, column in enumerate(self.columns):
            if column.tree is None:
                pos = np.zeros(num_rows, dtype=np.int64)
            else:
                leaves = column.tree.apply(self._codes(out, self.order[:j]))
                pos = np.searchsorted(column.leaves, leaves)
            offset = np.floor(self.rng.random(num_rows) * column.count[pos]).astype(np.int64)
            values = column.donors[column.start[pos] + offset]
            if column.numeric and self.params["smoothing"]:
                noise = self.rng.normal(0.0, 1.0, num_rows) * column.bandwidth[pos]
                values = values.astype(float) + noise
            out[column.name] = values
        return out


class CARTSynthesizer(BaseSingleTableSynthesizer):
    """Sequential CART synthesiser (synthpop's method) with SDV's interface.

    Args:
        metadata: SDV ``Metadata`` of the table.
        min_samples_leaf: smallest number of real records in a leaf (larger = safer, smoother).
        max_depth: maximum tree depth (``None``: unlimited).
        visit_order: ``"original"``, ``"reversed"`` or ``"random"`` (seeded by random_state).
        smoothing: add Gaussian kernel noise to numeric donor values (synthpop "density").
        random_state: seed of tree fitting and of the random visit order. Sampling has its own
            seed, set like any SDV synthesiser's (fixed by default; ``reset_sampling`` restarts).
    """

    _model_sdtype_transformers = {"categorical": None, "boolean": None, "ordinal": None}

    def __init__(
        self,
        metadata: Any,
        enforce_min_max_values: bool = True,
        enforce_rounding: bool = True,
        locales: list[str] | None = None,
        min_samples_leaf: int = 5,
        max_depth: int | None = None,
        visit_order: str = "original",
        smoothing: bool = False,
        random_state: int = 0,
    ) -> None:
        super().__init__(
            metadata,
            enforce_min_max_values=enforce_min_max_values,
            enforce_rounding=enforce_rounding,
            locales=locales or ["en_US"],
        )
        if isinstance(min_samples_leaf, bool) or not isinstance(min_samples_leaf, int) or (
            min_samples_leaf < 1
        ):
            raise ValueError(f"`min_samples_leaf >= 1` must hold, but got {min_samples_leaf!r}")
        if max_depth is not None and (not isinstance(max_depth, int) or max_depth < 1):
            raise ValueError(f"`max_depth` must be None or an int >= 1, but got {max_depth!r}")
        if visit_order not in VISIT_ORDERS:
            raise ValueError(f"`visit_order` must be one of {VISIT_ORDERS}, got {visit_order!r}")
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.visit_order = visit_order
        self.smoothing = bool(smoothing)
        self.random_state = int(random_state)
        self._model: _SequentialCART | None = None

    def _fit(self, processed_data: pd.DataFrame) -> None:
        self._model = _SequentialCART(
            dict(
                min_samples_leaf=self.min_samples_leaf,
                max_depth=self.max_depth,
                visit_order=self.visit_order,
                smoothing=self.smoothing,
                random_state=self.random_state,
            )
        )
        self._model.fit(processed_data)

    def _sample(self, num_rows: int, conditions: Any = None) -> pd.DataFrame:
        if conditions is not None:
            raise NotImplementedError("CART samples unconditionally; SDV rejects then filters")
        assert self._model is not None
        return self._model.sample(num_rows)
