"""The verdicts of the validation in the tuner's setting (the tuner's default limits, each
row's decision) and the order and colours the tables and figures share."""

from __future__ import annotations

import numpy as np
import pandas as pd

ACCEPTABLE_M = 0.2
COPY_LIMIT = 0.05  # the tuner's defaults (tuner.measures._gate)
DCR_LIMIT = 0.1
MIN_MEMBERS = 20
# the settings of tuner_setting.SETTINGS that copy training records (copy_rate > 0); named
# here because tuner_setting imports this module
COPIERS = ("copy", "nearcopy", "copy10", "nearcopy10")


def _order(frame: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(frame["synthesizer"]))


def _color(i: int) -> str:
    """Ten distinct colours, then black (the settings beyond ten are drawn dashed/starred)."""
    return f"C{i}" if i < 10 else "black"


def _flag(series: pd.Series) -> pd.Series:
    """A bool column read back from CSV (True/False/NaN) as floats 1/0/NaN."""
    return series.map({True: 1.0, False: 0.0, "True": 1.0, "False": 0.0}).astype(float)


def with_verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the tuner's verdict on each row, and which check fails it."""
    out = frame.copy()
    usable = out["status"].eq("ok")
    out["usable"] = usable
    out["m_passes"] = usable & (out["m_estimate"] <= ACCEPTABLE_M)
    out["copies_fail"] = out["copies_difference"] > COPY_LIMIT
    out["dcr_fail"] = out["dcr_excess"] > DCR_LIMIT
    out["gate_fails"] = out["copies_fail"] | out["dcr_fail"]
    out["released"] = out["m_passes"] & ~out["gate_fails"]
    # a proposed addition: exact copies read on M's own encoding (binned quasi-identifiers)
    # on every column (as the gate's copies), whatever quasi-identifiers M used
    key = ["synthesizer", "sample_fraction", "seed"]
    on_all = out[out["quasi_identifiers"].eq("all")].drop_duplicates(key).set_index(key)
    binned = (out.set_index(key).index.map(on_all["binned_copies_difference"])
              if len(on_all) else out["binned_copies_difference"])
    out["binned_copies_all"] = np.asarray(binned, dtype=float)
    out["binned_fail"] = out["binned_copies_all"] > COPY_LIMIT
    out["released_proposed"] = out["released"] & ~out["binned_fail"]
    out["blind"] = out["m_copy_ceiling"] <= ACCEPTABLE_M
    out["copier"] = out["synthesizer"].isin(COPIERS)
    out["warned"] = ~_flag(out["can_bind"]).astype(bool)
    # the truth about what a release would disclose: the released data's M, and what the
    # generator itself leaks (its data as sampled, before the gate removed anything)
    out["risky"] = usable & (out["m_true"] > ACCEPTABLE_M)
    out["leaky_generator"] = out["m_true_sampled"] > ACCEPTABLE_M
    out["removed_share"] = out["replicated_uniques_removed"] / out["n_train"]
    return out
