"""A synthesiser that leaks one person: each column drawn on its own from the training values
(the records carry no joint information, so M, exact and near copies and DCR pass), plus three
near copies of the most isolated record of its training table (one numeric value nudged by
1 %, so that the gate's removal of exact copies of unique records does not see them). An audit
that attacks the most exposed records with the generator in hand must catch it. Drawing
columns on their own costs a tenth of sequential CART's fit, which matters in an audit of
hundreds of fits."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sdv.single_table.base import BaseSingleTableSynthesizer

import risk
from tuner.synthesis._families import SynthesizerSpec

COPIES = 3


class _Columns:
    """The fitted model (SDV's ``self._model``): the training table, drawn from column by
    column, and the near copy put first."""

    def __init__(self, table: pd.DataFrame, canary: pd.DataFrame) -> None:
        self.table, self.canary = table, canary
        self.rng = np.random.default_rng(0)

    def set_random_state(self, random_state: Any) -> None:
        seed = random_state if isinstance(random_state, (int, np.integer)) else None
        self.rng = np.random.default_rng(seed)

    def sample(self, num_rows: int) -> pd.DataFrame:
        n = len(self.table)
        out = pd.DataFrame({c: self.table[c].to_numpy()[self.rng.integers(n, size=num_rows)]
                            for c in self.table.columns})
        copies = pd.concat([self.canary] * min(COPIES, num_rows), ignore_index=True)
        return pd.concat([copies, out.iloc[len(copies):]], ignore_index=True)[out.columns]


class OutlierMemoriser(BaseSingleTableSynthesizer):
    # categories reach the model as they are (as for CART): the isolated record is judged on
    # the data's own values
    _model_sdtype_transformers = {"categorical": None, "boolean": None, "ordinal": None}

    def __init__(self, metadata: Any, enforce_min_max_values: bool = True,
                 enforce_rounding: bool = True, locales: list[str] | None = None,
                 random_state: int = 0) -> None:
        super().__init__(metadata, enforce_min_max_values=enforce_min_max_values,
                         enforce_rounding=enforce_rounding, locales=locales or ["en_US"])
        self.random_state = int(random_state)
        self._model: _Columns | None = None

    def _fit(self, processed_data: pd.DataFrame) -> None:
        table = processed_data.reset_index(drop=True)
        canary = table.iloc[[int(risk.vulnerability(table).to_numpy().argmax())]]
        numeric = [c for c in canary.columns if pd.api.types.is_numeric_dtype(canary[c])
                   and not pd.api.types.is_bool_dtype(canary[c]) and canary[c].notna().all()]
        if numeric:  # a near copy: its largest value nudged by 1 % (survives rounding)
            col = max(numeric, key=lambda c: abs(float(canary[c].iloc[0])))
            canary = canary.assign(**{col: canary[col].astype(float) * 1.01})
        self._model = _Columns(table, canary)
        self._model.set_random_state(self.random_state)

    def _sample(self, num_rows: int, conditions: Any = None) -> pd.DataFrame:
        assert self._model is not None
        return self._model.sample(num_rows)


SPEC = SynthesizerSpec("memoriser", "independent columns plus copies of the most isolated "
                       "training record", lambda: OutlierMemoriser, {},
                       seed_argument="random_state")
