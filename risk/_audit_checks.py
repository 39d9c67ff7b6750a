"""The membership audit's arguments checked (:func:`risk.audit.membership_audit`,
:func:`risk.audit.vulnerability`): the frames and columns, the options against the frames, and
the released table the audit scores too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from risk._arguments import argument
from risk._validation import (
    RiskInputError,
    check_column_list,
    check_columns,
    check_frame,
    column_kinds,
    same_columns,
)

SHADOW_SIZE = 1_000


def resolve(train: Any, reference: Any, columns: Sequence[str] | None
            ) -> tuple[pd.DataFrame, pd.DataFrame, list[str], dict[str, str]]:
    """The two frames checked, the audited columns (default: the ones both have) and their
    kinds."""
    frames = {"train": check_frame(train, "train"), "reference": check_frame(reference,
                                                                               "reference")}
    if columns is None:
        cols = same_columns(frames)
    else:
        cols = check_column_list(columns, "columns")
        for name, frame in frames.items():
            check_columns(frame, name, cols, "audited")
    return frames["train"], frames["reference"], cols, column_kinds(frames, cols)


def check_options(train: pd.DataFrame, reference: pd.DataFrame, fit_sample: Any, *,
                  neighbours: Any, shadows: Any, shadow_size: Any, design: Any, n_jobs: Any,
                  progress: Any) -> tuple[int, int, int]:
    """The options checked against the frames: (neighbours, shadows, shadow size)."""
    if not callable(fit_sample):
        raise TypeError(f"`fit_sample` must be callable as fit_sample(table, seed), got "
                        f"{type(fit_sample).__name__}.")
    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` must be None or callable as progress(done, total), but "
                        f"got {type(progress).__name__}.")
    neighbours = int(argument(neighbours, "neighbours"))
    if len(train) < neighbours + 2:
        raise RiskInputError(f"`train` has {len(train)} records; the vulnerability score of a "
                             f"target needs `neighbours` = {neighbours} other records and more.")
    shadows = int(argument(shadows, "shadows"))
    if shadows % 2:
        raise RiskInputError(f"`shadows` must be even (half of the runs hold the target), but "
                             f"got shadows={shadows}.")
    argument(design, "design")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 \
            or n_jobs < -1:
        raise RiskInputError(f"`n_jobs` must be a positive int or -1, got n_jobs={n_jobs!r}.")
    if len(reference) < 2:
        raise RiskInputError(f"`reference` has {len(reference)} record(s); shadow tables are "
                             "drawn from it and need at least 2.")
    if shadow_size is None:
        return neighbours, shadows, min(SHADOW_SIZE, len(reference))
    size = int(argument(shadow_size, "shadow_size"))
    if not 2 <= size <= len(reference):
        raise RiskInputError(f"`shadow_size` must be in [2, len(reference) = {len(reference)}] "
                             f"(shadow tables are drawn from `reference`), got "
                             f"shadow_size={shadow_size!r}.")
    return neighbours, shadows, size


def check_release(release: Any, columns: list[str], train: pd.DataFrame) -> pd.DataFrame | None:
    """``release`` (the synthetic table released, scored by the audit too) checked: None, or a
    non-empty frame holding the audited ``columns`` with the kinds of ``train``'s."""
    if release is None:
        return None
    frame = check_frame(release, "release")
    check_columns(frame, "release", columns, "audited")
    column_kinds({"train": train, "release": frame}, columns)
    return frame
