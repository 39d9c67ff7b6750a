"""Sequential CART synthesis, as in R's synthpop (design §8), as an SDV synthesiser.

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

Partial synthesis (Reiter 2005; synthpop's ``method = ""`` for a kept variable): with ``keep``,
those columns are not modelled but given. They come first and are predictors of every modelled
column, which are visited in the chosen order after them (the first modelled column is then a
tree on the kept ones, not a marginal). ``sample_remaining_columns(known)`` draws the modelled
columns for each row of ``known`` at once (one pass of the trees over all rows: no per-condition
loop, no rejection), so row i of the result carries row i's kept values exactly.

Subclassing SDV's ``BaseSingleTableSynthesizer`` gives metadata handling, constraints,
reverse transforms, ``sample``, ``save`` and ``load`` like any SDV synthesiser. Categorical
columns reach the model untransformed (as for CTGAN) and are split on as integer codes.
Beware: a fitted model holds training values (the donors), so never publish its pickle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sdv.single_table.base import FIXED_RNG_SEED, BaseSingleTableSynthesizer
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from tuner.errors import InputError

VISIT_ORDERS = ("original", "reversed", "random")


@dataclasses.dataclass
class _Column:
    name: str
    predictors: list[str]  # the columns before it in the visit order (kept ones first)
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
        self.kept: list[str] = []
        self.kept_rows: pd.DataFrame | None = None  # training values of the kept columns
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
        self.kept = [c for c in data.columns if c in set(p["keep"])]
        modelled = [c for c in data.columns if c not in set(self.kept)]
        rng = np.random.default_rng(p["random_state"])
        if p["visit_order"] == "reversed":
            modelled = modelled[::-1]
        elif p["visit_order"] == "random":
            modelled = list(rng.permutation(modelled))
        names = [*self.kept, *modelled]
        self.order = names
        self.kept_rows = data[self.kept].reset_index(drop=True) if self.kept else None
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
            if col in self.kept:
                continue  # given, not modelled: a predictor of every modelled column
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
            self.columns.append(self._leaf_table(col, names[:j], numeric[col], tree, values,
                                                 leaves))

    @staticmethod
    def _leaf_table(col: str, predictors: list[str], numeric: bool, tree: Any,
                    values: np.ndarray, leaves: np.ndarray) -> _Column:
        order = np.argsort(leaves, kind="stable")
        uniq, start, count = np.unique(leaves[order], return_index=True, return_counts=True)
        bandwidth = np.zeros(uniq.size)
        if numeric:
            donors = pd.Series(values[order].astype(float))
            sd = donors.groupby(np.repeat(np.arange(uniq.size), count)).std(ddof=1)
            bandwidth = 1.06 * np.nan_to_num(sd.to_numpy()) * count ** (-0.2)
        return _Column(col, predictors, numeric, tree, values[order], uniq, start, count,
                       bandwidth)

    def sample(self, num_rows: int) -> pd.DataFrame:
        """``num_rows`` synthetic records; kept columns (if any) are a bootstrap of the training
        records' kept values, the others drawn from the trees given them."""
        if self.kept_rows is None:
            return self._draw(pd.DataFrame(index=range(num_rows)))
        rows = self.rng.integers(0, len(self.kept_rows), num_rows)
        return self._draw(self.kept_rows.iloc[rows].reset_index(drop=True))

    def sample_given(self, known: pd.DataFrame) -> pd.DataFrame:
        """The modelled columns drawn for each row of ``known`` (the kept columns, processed)."""
        return self._draw(known[self.kept].reset_index(drop=True))

    def _draw(self, out: pd.DataFrame) -> pd.DataFrame:
        num_rows = len(out)
        out = out.copy()
        for column in self.columns:
            if column.tree is None:
                pos = np.zeros(num_rows, dtype=np.int64)
            else:
                leaves = column.tree.apply(self._codes(out, column.predictors))
                pos = np.searchsorted(column.leaves, leaves)
            offset = np.floor(self.rng.random(num_rows) * column.count[pos]).astype(np.int64)
            values = column.donors[column.start[pos] + offset]
            if column.numeric and column.name in self.params["smoothing"]:
                noise = self.rng.normal(0.0, 1.0, num_rows) * column.bandwidth[pos]
                values = values.astype(float) + noise
            out[column.name] = values
        return out[self.order]


class CARTSynthesizer(BaseSingleTableSynthesizer):
    """Sequential CART synthesiser (synthpop's method) with SDV's interface.

    Args:
        metadata: SDV ``Metadata`` of the table.
        min_samples_leaf: smallest number of real records in a leaf (larger = safer, smoother).
        max_depth: maximum tree depth (``None``: unlimited).
        visit_order: ``"original"``, ``"reversed"`` or ``"random"`` (seeded by random_state).
        smoothing: add Gaussian kernel noise to the donor values of numerical columns (synthpop
            "density"); categorical ones, few-valued numbers included, are left as drawn.
        random_state: seed of tree fitting and of the random visit order. Sampling has its own
            seed, set like any SDV synthesiser's (fixed by default; ``reset_sampling`` restarts).
        keep: columns given rather than modelled (partial synthesis): predictors of every
            other column, drawn by ``sample_remaining_columns`` for given values of exactly
            these columns; ``sample`` bootstraps them from the training records.
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
        keep: Sequence[str] = (),
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
            raise InputError(f"`min_samples_leaf >= 1` must hold, got {min_samples_leaf!r}")
        if max_depth is not None and (not isinstance(max_depth, int) or max_depth < 1):
            raise InputError(f"`max_depth` must be None or an int >= 1, got {max_depth!r}")
        if visit_order not in VISIT_ORDERS:
            raise InputError(f"`visit_order` must be one of {VISIT_ORDERS}, got {visit_order!r}")
        if isinstance(keep, str) or not all(isinstance(c, str) for c in keep):
            raise TypeError(f"`keep` must be a list of column names, got {keep!r}")
        columns = list(metadata.tables[self._table_name].columns)
        unknown = [c for c in keep if c not in columns]
        if unknown or len(set(keep)) == len(columns):
            raise InputError(f"`keep` must name some, not all, of the columns {columns}, got "
                             f"{list(keep)!r}" + (f" ({unknown} unknown)" if unknown else ""))
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.visit_order = visit_order
        self.smoothing = bool(smoothing)
        self.random_state = int(random_state)
        self.keep = tuple(keep)
        self._model: _SequentialCART | None = None

    def _fit(self, processed_data: pd.DataFrame) -> None:
        self._model = _SequentialCART(
            dict(
                min_samples_leaf=self.min_samples_leaf,
                max_depth=self.max_depth,
                visit_order=self.visit_order,
                # only numerical columns: a few-valued number is a category to SDV (passed as
                # is), and noise would move its values off the categories the data have
                smoothing=frozenset(
                    c for c, meta in self.metadata.tables[self._table_name].columns.items()
                    if meta.get("sdtype") in ("numerical", "datetime")) if self.smoothing
                else frozenset(),
                random_state=self.random_state,
                keep=self.keep,
            )
        )
        self._model.fit(processed_data)

    def _sample(self, num_rows: int, conditions: Any = None) -> pd.DataFrame:
        if conditions is not None:
            raise NotImplementedError("CART samples unconditionally; SDV rejects then filters")
        assert self._model is not None
        return self._model.sample(num_rows)

    def sample_remaining_columns(
        self, known_columns: pd.DataFrame, max_tries_per_batch: int = 100,
        batch_size: int | None = None, output_folder_path: str | None = None,
    ) -> dict[str, pd.DataFrame]:
        """The other columns drawn for every row of ``known_columns`` (exactly the ``keep``
        columns), as SDV's method of that name returns them (``{table: frame}``, the index of
        ``known_columns``), but natively: one pass of the trees, no rejection, so the
        rejection options are accepted and unused. Kept values are returned as given."""
        self._validate_fit_before_sample()
        assert self._model is not None
        if set(known_columns.columns) != set(self.keep):
            raise InputError(
                f"`known_columns` must have exactly the kept columns {list(self.keep)} (the "
                f"synthesiser was fitted to condition on them), but has "
                f"{list(known_columns.columns)}")
        if output_folder_path is not None:
            raise InputError("`output_folder_path` is not supported: the result is returned")
        if not self._random_state_set:
            self._set_random_state(FIXED_RNG_SEED)
        processed = self._data_processor.transform(known_columns, is_condition=True)
        raw = self._model.sample_given(processed)
        sampled = self._data_processor.reverse_transform(raw)
        sampled.index = known_columns.index
        for col in self.keep:  # as given: no rounding or clipping of values the caller holds
            sampled[col] = known_columns[col]
        columns = list(self.metadata.tables[self._table_name].columns)
        return {self._table_name: sampled[columns]}
