"""Differentially private synthesisers MST and AIM with SDV's interface (families ``mst``, ``aim``).

References: R. McKenna, G. Miklau, D. Sheldon, "Winning the NIST Contest: A scalable and general
approach to differentially private synthetic data", Journal of Privacy and Confidentiality
11(3), 2021 (MST); R. McKenna, B. Mullins, D. Sheldon, G. Miklau, "AIM: An Adaptive and
Iterative Mechanism for Differentially Private Synthetic Data", PVLDB 15(11), 2022 (AIM). The
mechanisms are in :mod:`tuner.synthesis._dp_mechanisms`, on the authors' Private-PGM package ``mbi``
(the ``dp`` extra: ``python -m pip install -e ".[dp]"``).

Both need discrete columns. Each column the model sees becomes codes: a column with at most
``bins`` distinct values keeps them (each its own code, missing one of them); a numeric column
with more is cut into ``bins`` equal-width bins between its training minimum and maximum
(missing, if any, a code of its own), and a sampled bin becomes a uniform draw inside it.

What is differentially private, and what is not. The noisy marginals and everything computed
from them are ``(epsilon, delta)``-DP with respect to adding or removing one training record.
The *domain* is DP only when it is public: given a codebook (``domain``,
:mod:`tuner.data._codebook`), the categories and the bins' ranges come from it, a missing
value has a code only where the codebook allows one, and SDV's numeric and date transformers
are left out (they read a mean for missing values, their share, the rounding and the range
from the data); neighbouring tables then give the same domain. Without one (``[data]
dp_domain = "data"``) the categories present in the training data, each numeric column's
minimum and maximum and SDV's rounding and share of missing values are read from the
training data, as for every other family, and leak what they are, e.g. a category that only
one training record has: the release is then not DP, and says so. The number of synthetic
records (the tuner's default: as many as the training data) tells ``n``. smartnoise-synth's
preprocessor can spend part of epsilon on DP bounds; smartnoise-synth is not used because its
noise (OpenDP) cannot be seeded, and the tuner's release re-creates a trial's data from its
seed.

``delta`` defaults to 1e-5, below ``1 / n`` for any table of fewer than 100,000 training
records; the families' search spaces offer it as the only choice, so it is recorded with
``epsilon`` among the trial's parameters (and so in the release's manifest).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
from sdv.single_table.base import BaseSingleTableSynthesizer

from tuner._common.seeding import seeded
from tuner.errors import InputError

EXTRA = 'python -m pip install -e ".[dp]"'


def require() -> None:
    """Raise ImportError, naming the ``dp`` extra, when ``mbi`` (Private-PGM) is missing."""
    try:
        import mbi  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"the differentially private synthesisers 'mst' and 'aim' need the `dp` extra "
            f"(Private-PGM's `mbi` and JAX), which is not installed: {EXTRA}") from exc


@dataclasses.dataclass
class _Column:
    name: Any
    levels: np.ndarray | None  # the distinct values, if kept as they are
    low: float = 0.0
    high: float = 0.0
    bins: int = 0
    missing: bool = False  # binned with a last code for missing values
    integer: bool = False  # a binned draw is rounded (an integer column of a codebook range)
    dates: bool = False  # binned on nanoseconds since 1970 (a date column)

    @property
    def size(self) -> int:
        return len(self.levels) if self.levels is not None else self.bins + self.missing


def _nanoseconds(values: pd.Series) -> np.ndarray:
    """A date column as float nanoseconds since 1970, NaN where missing."""
    ns = values.dt.tz_localize(None) if getattr(values.dtype, "tz", None) else values
    out = ns.to_numpy(dtype="datetime64[ns]").astype(np.int64).astype(float)
    out[ns.isna().to_numpy()] = np.nan
    return out


class Discretizer:
    """Columns to integer codes and back (see the module's docstring). ``domain``: the
    codebook (:class:`tuner.data.Codebook`) whose categories and ranges replace those read
    from the data, for the columns it declares (neither the levels nor the bins then depend
    on the data; a column declared ``"public"`` is read from the data)."""

    def __init__(self, bins: int, domain: Any = None) -> None:
        self.bins = bins
        self.domain = domain
        self.columns: list[_Column] = []
        self.dtypes: pd.Series | None = None

    def _declared(self, name: Any, col: pd.Series) -> _Column | None:
        d = self.domain.domains.get(str(name)) if self.domain is not None else None
        if d is None and self.domain is not None and pd.api.types.is_bool_dtype(col):
            return _Column(name, np.array([False, True], dtype=object))  # a boolean's domain
        if d is None or d.kind == "public":
            return None
        if d.kind == "categories":
            return _Column(name, np.array([*d.categories, *([np.nan] if d.missing else [])],
                                          dtype=object))
        low, high = d.bounds(col)
        dates = pd.api.types.is_datetime64_any_dtype(col)
        if dates:
            low, high = (float(_nanoseconds(pd.Series([low, high], dtype=col.dtype))[i])
                         for i in (0, 1))
        return _Column(name, None, float(low), float(high), self.bins, d.missing,
                       integer=pd.api.types.is_integer_dtype(col), dates=dates)

    def fit(self, frame: pd.DataFrame) -> Discretizer:
        self.dtypes = frame.dtypes
        self.columns = []
        for name in frame.columns:
            col = frame[name]
            declared = self._declared(name, col)
            if declared is not None:
                self.columns.append(declared)
                continue
            numeric = pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
            if not numeric or col.nunique(dropna=False) <= self.bins:
                self.columns.append(_Column(name, pd.unique(col.astype(object))))
                continue
            low, high = float(col.min()), float(col.max())
            self.columns.append(_Column(name, None, low, high, self.bins, bool(col.isna().any())))
        return self

    def transform(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        out = {}
        for j, c in enumerate(self.columns):
            values = frame[c.name]
            if c.levels is not None:
                codes = pd.Index(c.levels).get_indexer(values.astype(object))
            else:
                x = _nanoseconds(values) if c.dates else values.to_numpy(dtype=float)
                scaled = (x - c.low) / (c.high - c.low) * c.bins
                codes = np.clip(np.floor(np.nan_to_num(scaled)), 0, c.bins - 1).astype(np.int64)
                codes[np.isnan(x)] = c.bins
            out[f"c{j}"] = codes.astype(np.int64)
        return out

    @property
    def sizes(self) -> dict[str, int]:
        return {f"c{j}": c.size for j, c in enumerate(self.columns)}

    def inverse(self, codes: dict[str, np.ndarray], rng: np.random.Generator) -> pd.DataFrame:
        assert self.dtypes is not None
        out: dict[Any, Any] = {}
        for j, c in enumerate(self.columns):
            k = np.asarray(codes[f"c{j}"], dtype=np.int64)
            if c.levels is not None:
                values = pd.Series(c.levels[k], dtype=object)
                try:
                    out[c.name] = values.astype(self.dtypes[c.name])
                except (TypeError, ValueError):  # e.g. missing values in an integer column
                    out[c.name] = values
                continue
            width = (c.high - c.low) / c.bins
            x = c.low + (np.minimum(k, c.bins - 1) + rng.random(k.size)) * width
            x = np.where(k == c.bins, np.nan, np.clip(x, c.low, c.high))
            if c.dates:
                out[c.name] = pd.Series(pd.to_datetime(x, unit="ns")).astype(self.dtypes[c.name])
            elif c.integer and not np.isnan(x).any():
                out[c.name] = np.round(x).astype(self.dtypes[c.name])
            else:
                out[c.name] = np.round(x) if c.integer else x
        return pd.DataFrame(out)


class _Model:
    """The fitted mechanism on processed data (what SDV calls ``self._model``)."""

    def __init__(self, discretizer: Discretizer, fitted: Any) -> None:
        self.discretizer, self.fitted = discretizer, fitted
        self.rng = np.random.default_rng(0)

    def set_random_state(self, random_state: Any) -> None:
        seed = random_state if isinstance(random_state, (int, np.integer)) else None
        self.rng = np.random.default_rng(seed)

    def sample(self, num_rows: int) -> pd.DataFrame:
        # mbi samples with NumPy's global generator: seeded here, from this model's generator.
        # i.i.d. sampling, not mbi's default "round": in mbi 1.1.0 that draws each column
        # given its parents from stratified uniforms ordered by the rows' positions in their
        # parent group, so two children of one parent come out rank for rank (perfectly
        # dependent where they should be independent given it; tests/tuner/synthesis/test_dp.py)
        with seeded(int(self.rng.integers(2**31 - 1))):
            data = self.fitted.model.synthetic_data(rows=num_rows, method="sample")
        codes = {k: np.asarray(v, dtype=np.int64) for k, v in data.to_dict().items()}
        for col, merged in self.fitted.merged.items():  # MST's merged values: one at random
            kept = np.setdiff1d(np.arange(self.discretizer.sizes[col]), merged)
            k = codes[col]
            drawn = merged[self.rng.integers(merged.size, size=k.size)]
            codes[col] = np.where(k == kept.size, drawn, kept[np.minimum(k, kept.size - 1)])
        return self.discretizer.inverse(codes, self.rng)


class _DPSynthesizer(BaseSingleTableSynthesizer):
    """Common part of :class:`MSTSynthesizer` and :class:`AIMSynthesizer`.

    Args:
        metadata: SDV ``Metadata`` of the table.
        epsilon, delta: the privacy budget, ``(epsilon, delta)``-DP for the whole fit.
        bins: number of equal-width bins for a numeric column with more distinct values.
        iters: iterations of Private-PGM's mirror descent per estimation.
        random_state: seed of the noise and of the selections. Sampling has its own seed,
            set like any SDV synthesiser's (fixed by default; ``reset_sampling`` restarts).
        domain: the codebook (:class:`tuner.data.Codebook`) the categories and bins come
            from; ``None``: read from the training data (the release is then not DP).
    """

    _model_sdtype_transformers = {"categorical": None, "boolean": None, "ordinal": None}
    _mechanism = ""

    def __init__(self, metadata: Any, enforce_min_max_values: bool = True,
                 enforce_rounding: bool = True, locales: list[str] | None = None,
                 epsilon: float = 1.0, delta: float = 1e-5, bins: int = 16, iters: int = 1000,
                 random_state: int = 0, domain: Any = None) -> None:
        if domain is not None:  # nothing read from the data around the mechanism: SDV's
            # numeric and date transformers (a mean for missing values, their share, the
            # rounding, the minimum and maximum) left out; the codebook gives the domain
            self._model_sdtype_transformers = {**self._model_sdtype_transformers,
                                               "numerical": None, "datetime": None}
            enforce_min_max_values = enforce_rounding = False
        super().__init__(metadata, enforce_min_max_values=enforce_min_max_values,
                         enforce_rounding=enforce_rounding, locales=locales or ["en_US"])
        self.domain = domain
        if not (isinstance(epsilon, (int, float)) and epsilon > 0):
            raise InputError(f"`epsilon > 0` must hold, got {epsilon!r}")
        if not (isinstance(delta, (int, float)) and 0 < delta < 1):
            raise InputError(f"`0 < delta < 1` must hold, got {delta!r}")
        for key, value, low in (("bins", bins, 2), ("iters", iters, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InputError(f"`{key} >= {low}` must hold, got {value!r}")
        self.epsilon, self.delta = float(epsilon), float(delta)
        self.bins, self.iters, self.random_state = bins, iters, int(random_state)
        self._model: _Model | None = None
        self.rho_: float | None = None
        self.rho_spent_: float | None = None

    def _fit(self, processed_data: pd.DataFrame) -> None:
        require()
        from tuner.synthesis import _dp_mechanisms as mech

        discretizer = Discretizer(self.bins, self.domain).fit(processed_data)
        data = mech.dataset(discretizer.transform(processed_data), discretizer.sizes)
        self.rho_ = mech.cdp_rho(self.epsilon, self.delta)
        fitted = self._run(data, self.rho_, np.random.default_rng(self.random_state))
        self.rho_spent_ = fitted.rho_spent
        self._model = _Model(discretizer, fitted)

    def _run(self, data: Any, rho: float, rng: np.random.Generator) -> Any:
        raise NotImplementedError

    def _sample(self, num_rows: int, conditions: Any = None) -> pd.DataFrame:
        if conditions is not None:
            raise NotImplementedError("MST and AIM sample unconditionally")
        assert self._model is not None
        return self._model.sample(num_rows)


class MSTSynthesizer(_DPSynthesizer):
    """MST (McKenna, Miklau & Sheldon 2021): one-way marginals and a private spanning tree of
    pairs; see :func:`tuner.synthesis._dp_mechanisms.mst`. Arguments as :class:`_DPSynthesizer`."""

    def _run(self, data: Any, rho: float, rng: np.random.Generator) -> Any:
        from tuner.synthesis._dp_mechanisms import mst

        return mst(data, rho, rng, iters=self.iters)


class AIMSynthesizer(_DPSynthesizer):
    """AIM (McKenna et al. 2022) on the workload of all pairs; see
    :func:`tuner.synthesis._dp_mechanisms.aim`. Arguments as :class:`_DPSynthesizer`, and
    ``max_model_size`` (megabytes of the graphical model at the end) and ``rounds`` (the
    paper's ``T``: ``None`` for ``16 d``; see :func:`tuner.synthesis._dp_mechanisms.aim_rounds`)."""

    def __init__(self, metadata: Any, enforce_min_max_values: bool = True,
                 enforce_rounding: bool = True, locales: list[str] | None = None,
                 epsilon: float = 1.0, delta: float = 1e-5, bins: int = 16, iters: int = 1000,
                 random_state: int = 0, max_model_size: float = 80.0,
                 rounds: int | None = None, domain: Any = None) -> None:
        super().__init__(metadata, enforce_min_max_values, enforce_rounding, locales, epsilon,
                         delta, bins, iters, random_state, domain)
        if not (isinstance(max_model_size, (int, float)) and max_model_size > 0):
            raise InputError(f"`max_model_size > 0` must hold, got {max_model_size!r}")
        if rounds is not None and (isinstance(rounds, bool) or not isinstance(rounds, int)
                                   or rounds < 1):
            raise InputError(f"`rounds` must be None (16 per column) or a positive integer "
                             f"(at least the number of columns, checked at fit), got "
                             f"{rounds!r}")
        self.max_model_size = float(max_model_size)
        self.rounds = rounds

    def _run(self, data: Any, rho: float, rng: np.random.Generator) -> Any:
        from tuner.synthesis._dp_mechanisms import aim

        return aim(data, rho, rng, iters=self.iters, max_model_size=self.max_model_size,
                   rounds=self.rounds)
