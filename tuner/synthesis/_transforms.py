"""The neural families' data transforms fitted once per training table, not once per trial.

CTGAN, TVAE and CopulaGAN (the ``ctgan`` package's ``DataTransformer``) start every fit by
fitting a Bayesian Gaussian mixture to each numeric column (Xu et al., "Modeling tabular data
using conditional GAN", NeurIPS 2019, section 4.2: mode-specific normalisation) and one-hot
encoding the others, then transforming the table. On 5,000 Adult records that is about 2 s of
every fit (1.6 s of mixtures, 0.4 s of transform; cProfile, 2026-12-06), more than 5 epochs of
CTGAN and 25 of TVAE: in a study whose trials are pruned after a few epochs (issue 46), most of
a pruned trial. Yet the result never depends on the trial: the transformer's parameters are the
package's defaults, and rdt runs each of its transformers' methods under that transformer's own
fixed random state and restores NumPy's global generator after it (``rdt.transformers.base.
random_state``), so the same table gives the same mixtures, the same transformed matrix and the
same random states whatever the trial's seed, and leaves the seed's streams as it found them.

Within :func:`remembered`, the ``ctgan`` loops build a :class:`_Remembered` transformer: its
first fit and transform of a table are done and kept (a deep copy of the transformer as it
stands after them, and the matrix), and a later fit on an equal table (equal columns, dtypes
and values, by hash) restores a copy of both instead. The records are those of a plain fit
value for value (tests/tuner/synthesis/test_transforms.py). At most :data:`KEPT` tables are
kept per process, the last used (the study's training table, and the audit's shadows, which
differ each and are dropped in turn).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tuner.synthesis._checkpoints import RESTORED, in_loops, loop_modules

KEPT = 2  # tables remembered per process (the training table, one other)
# per table: the fitted state, the transformed matrix, and the seconds the fit and transform took
_kept: OrderedDict[str, tuple[dict[str, Any], np.ndarray, float]] = OrderedDict()


def _key(frame: pd.DataFrame, discrete: Sequence[str], options: tuple[Any, ...]) -> str:
    """A digest of what the fit reads: the columns, their dtypes, the values (index included:
    rdt reads none, but an equal table is an equal table), the discrete columns and the
    transformer's own options."""
    digest = hashlib.sha256()
    digest.update(repr((list(frame.columns), [str(t) for t in frame.dtypes],
                        sorted(map(str, discrete)), options)).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return digest.hexdigest()


@functools.cache
def _remembered_class() -> type:
    from ctgan.data_transformer import DataTransformer

    class _Remembered(DataTransformer):  # type: ignore[misc, valid-type]
        """``DataTransformer`` whose fit and first transform of a table seen before are
        restored, not redone (the module docstring says why that is exact). After its first
        transform it is a plain ``DataTransformer`` again: the fitted model holds nothing of
        this module (it pickles, samples and prints as the package's own)."""

        # fitted here (the fit's seconds), not yet transformed
        _pending: tuple[str, pd.DataFrame, float] | None = None
        _restored: tuple[pd.DataFrame, np.ndarray] | None = None  # the matrix kept for it

        def fit(self, raw_data: Any, discrete_columns: Sequence[str] = ()) -> None:
            if not isinstance(raw_data, pd.DataFrame):  # the package's own path for arrays
                super().fit(raw_data, discrete_columns)
                self.__class__ = DataTransformer
                return
            key = _key(raw_data, discrete_columns, (self._max_clusters, self._weight_threshold))
            if key in _kept:
                _kept.move_to_end(key)
                state, matrix, seconds = _kept[key]
                self.__dict__.update(copy.deepcopy(state))
                self._restored = (raw_data, matrix)
                RESTORED[0] += seconds  # counted in the fit's seconds (restored_seconds)
                return
            start = time.perf_counter()
            super().fit(raw_data, discrete_columns)
            self._pending = (key, raw_data, time.perf_counter() - start)

        def transform(self, raw_data: Any) -> np.ndarray:
            restored, pending = self._restored, self._pending
            self.__dict__.pop("_restored", None)
            self.__dict__.pop("_pending", None)
            self.__class__ = DataTransformer
            if restored is not None and restored[0] is raw_data:
                return restored[1].copy()
            start = time.perf_counter()
            matrix = self.transform(raw_data)  # the package's own, the class being its own
            if pending is not None and pending[1] is raw_data:
                seconds = pending[2] + time.perf_counter() - start
                _kept[pending[0]] = (copy.deepcopy(self.__dict__), matrix.copy(), seconds)
                while len(_kept) > KEPT:
                    _kept.popitem(last=False)
            return matrix

    return _Remembered


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """Within the block, the ``ctgan`` loops fit their data transformer once per table."""
    if not all(hasattr(m, "DataTransformer") for m in loop_modules()):
        yield  # another ctgan: its own transformer, fitted each time
        return
    with in_loops("DataTransformer", _remembered_class()):
        yield


def forget() -> None:
    """Drop every table kept (tests; a process that is done with its training table)."""
    _kept.clear()
