"""A synthesiser that leaks one person: sequential CART plus three near copies of the most
isolated record of its training table (one numeric value nudged by 1 %, so that the gate's
removal of exact copies of unique records does not see them). Averages barely move (three
records in thousands), so M, exact and near copies and DCR pass; an audit that attacks the most
exposed records with the generator in hand must catch it."""

from __future__ import annotations

from typing import Any

import pandas as pd

import risk
from tuner.synthesis.cart import CARTSynthesizer
from tuner.synthesis.families import _SPECS, SynthesizerSpec

COPIES = 3


class OutlierMemoriser(CARTSynthesizer):
    def _fit(self, processed_data: pd.DataFrame) -> None:
        super()._fit(processed_data)
        score = risk.vulnerability(processed_data.reset_index(drop=True))
        canary = processed_data.reset_index(drop=True).iloc[[int(score.to_numpy().argmax())]]
        numeric = [c for c in canary.columns if pd.api.types.is_numeric_dtype(canary[c])
                   and not pd.api.types.is_bool_dtype(canary[c]) and canary[c].notna().all()]
        if numeric:  # a near copy: its largest value nudged by 1 % (survives rounding)
            col = max(numeric, key=lambda c: abs(float(canary[c].iloc[0])))
            canary = canary.assign(**{col: canary[col].astype(float) * 1.01})
        self._canary = canary

    def _sample(self, num_rows: int, conditions: Any = None) -> pd.DataFrame:
        out = super()._sample(num_rows, conditions)
        copies = pd.concat([self._canary] * min(COPIES, num_rows), ignore_index=True)
        return pd.concat([copies, out.iloc[len(copies):]], ignore_index=True)[out.columns]


CART_SPACE = next(s for s in _SPECS if s.name == "cart").space
SPEC = SynthesizerSpec("memoriser", "CART plus copies of its most isolated training record",
                       lambda: OutlierMemoriser, {"min_samples_leaf": CART_SPACE[
                           "min_samples_leaf"]}, seed_argument="random_state")
