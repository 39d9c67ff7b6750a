"""Utility of synthetic data as a distance between distributions (design §7).

The tuner's default utility is SDMetrics' Quality Report (``tuner.scoring.quality_report``);
this one needs nothing beyond numpy and pandas, so it lives here beside the risk measures it
shares its encoding with.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from risk._arguments import argument, takes
from risk._encode import combine, encode
from risk._validation import check_frame, column_kinds, same_columns


@takes("bins")
def hellinger_utility(train: pd.DataFrame, synthetic: pd.DataFrame, *, bins: int = 20) -> float:
    """``1 - H`` for the Hellinger distance H between the joint distributions of all columns.

    Columns are encoded jointly (numeric ones with more than ``bins`` distinct values cut into
    ``bins`` equal-width bins spanning both frames, design §3 step 3; missing is a category);
    each record becomes one cell of the full cross-classification, and
    ``H = sqrt(1 - sum_c sqrt(p_c q_c))`` (the multivariate Hellinger distance used as a
    utility by El Emam, Mosquera & Fang 2022). 1 for identical distributions, 0 for disjoint.
    """
    check_frame(train, "train")
    check_frame(synthetic, "synthetic")
    n_bins = int(argument(bins, "bins"))
    frames = {"train": train, "synthetic": synthetic}
    cols = same_columns(frames)
    enc = encode([train, synthetic], cols, column_kinds(frames, cols), numeric_bins=n_bins)
    ids = combine(np.concatenate(enc.codes), enc.cardinalities)
    cell, inverse = np.unique(ids, return_inverse=True)
    p = np.bincount(inverse[: len(train)], minlength=cell.size) / len(train)
    q = np.bincount(inverse[len(train):], minlength=cell.size) / len(synthetic)
    bc = float(np.sum(np.sqrt(p * q)))
    return 1.0 - float(np.sqrt(max(0.0, 1.0 - bc)))
