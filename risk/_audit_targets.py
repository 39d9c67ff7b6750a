"""Which training records the membership audit (:mod:`risk.audit`) attacks: the most vulnerable
by Meeus et al.'s score (the largest mean Gower distance to the nearest other training
records), sought among at most :data:`MAX_CANDIDATES` of them, or the ones named."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from risk._gower_coder import nearest_mean_distance
from risk._validation import RiskInputError

MAX_CANDIDATES = 50_000


def targets_of(train: pd.DataFrame, coded_train: Any, targets: Any, neighbours: int,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """Positions of the targets in ``train`` (most vulnerable first, or as named), their
    vulnerability, and how many records they were sought among."""
    n = len(train)
    if isinstance(targets, (int, np.integer)) and not isinstance(targets, bool):
        if not 1 <= targets <= n - neighbours - 1:
            raise RiskInputError(f"`targets` must be in [1, len(train) - neighbours - 1 = "
                                 f"{n - neighbours - 1}], got targets={targets!r}.")
        k = int(targets)
        candidates = np.arange(n)
        if n > MAX_CANDIDATES:
            candidates = np.sort(rng.choice(n, MAX_CANDIDATES, replace=False))
        scores = nearest_mean_distance(coded_train, neighbours, candidates)
        order = np.lexsort((candidates, -scores))[:k]  # ties: the earlier record
        return candidates[order], scores[order], candidates.size
    if isinstance(targets, str | bytes) or not isinstance(targets,
                                                          Sequence | np.ndarray | pd.Index):
        raise TypeError(f"`targets` must be an int (how many of the most vulnerable records) "
                        f"or a sequence of labels of `train`'s index, got "
                        f"{type(targets).__name__} {targets!r}.")
    labels = list(targets)
    positions = train.index.get_indexer(labels) if labels else np.zeros(0, np.int64)
    if not labels or (positions < 0).any() or len(set(positions.tolist())) < len(labels):
        raise RiskInputError(f"`targets` must name distinct labels of `train`'s index, got "
                             f"{labels[:8]!r}{' ...' if len(labels) > 8 else ''}.")
    return positions, nearest_mean_distance(coded_train, neighbours, positions), n
