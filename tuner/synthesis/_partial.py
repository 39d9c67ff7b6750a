"""Partial synthesis (design §11): only the named columns are synthesised, the others are
released as collected, row by row.

References: J. P. Reiter, "Inference for partially synthetic, public use microdata sets", Survey
Methodology 29(2), 2003 (m partially synthetic sets, row i of each is record i); J. P. Reiter &
R. Mitra, "Estimating risks of identification disclosure in partially synthetic data", Journal
of Privacy and Confidentiality 1(1), 2009; synthpop's ``syn(..., method = "")`` for a variable
kept as collected (Nowok, Raab & Dibben 2016).

The synthesiser is fitted on the training records (every column: the kept ones are what the
synthesised ones are drawn given), then draws the synthesised columns for each training record
from its conditional distribution given that record's kept values. Row i of every released set
is training record i: kept columns equal the record's, synthesised columns are drawn. How a
family conditions is data in its :class:`tuner.synthesis._families.SynthesizerSpec`
(``conditioning``):

* ``"native"``: the class's ``sample_remaining_columns`` conditions exactly. Our CART fits its
  trees on the kept columns first (``keep``) and draws every row in one pass. SDV's Gaussian
  copula conditions the copula's normal on the kept values, one distinct kept combination at a
  time, so it costs far more than sampling unconditionally (measured on Hu's ACS in
  ``experiments/partial_synthesis/README.md``).
* ``"reject"``: the model samples only jointly (SDV's CTGAN, TVAE, CopulaGAN raise
  ``NotImplementedError`` for conditions; MST and AIM too), so a draw is a draw from the
  conditional only where its kept values equal the row's. SDV's ``sample_remaining_columns``
  falls back to that rejection one kept combination at a time and, for a combination held by
  one record, draws one row per try (100 tries): on the same ACS set with CTGAN (one epoch) it
  took 378 s and left 45 of the 5,000 rows without values; :func:`reject_sample` filled all
  5,000 from the same model in 4 s (630,000 draws). It does the same rejection vectorised:
  it draws the joint model in growing batches and gives each row the next unused draw whose
  kept values equal its own, until every row has one or ``REJECT_DRAWS_PER_ROW`` draws per row
  are spent; then it raises :class:`PartialSynthesisError` (a model that almost never makes a
  record's kept combination cannot draw that record's synthesised values, and nothing weaker
  than its conditional is put in its place). A continuous kept column (SDV's ``numerical``
  sdtype) defeats rejection altogether (a draw never equals a real value):
  :func:`conditioning_problem` says so before any trial runs.

Draws are seeded: the fitted synthesiser's sampling generator is set to the trial's seed once,
then the m released sets are drawn in order, then the holdout's counterpart (the holdout
records' kept columns with synthesised columns drawn by the same model, for the gate's
train-versus-holdout comparisons, :mod:`tuner.measures._partial_gate`), so set 1 is the same
whatever m, and the release re-creates the trial's sets exactly.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from tuner.data import TABLE, sdtype
from tuner.errors import InputError, TrialFailed
from tuner.synthesis._families import SYNTHESIZERS, SynthesizerSpec
from tuner.synthesis._synthesizers import build, failing_as_trial, fitted

REJECT_DRAWS_PER_ROW = 200  # rejection budget: draws from the joint model per row to fill
REJECT_FIRST_BATCH = 1_000  # smallest first batch; batches double up to REJECT_MAX_BATCH
REJECT_MAX_BATCH = 200_000


NATIVE = tuple(k for k, s in SYNTHESIZERS.items() if s.conditioning == "native")


class PartialSynthesisError(TrialFailed, ValueError):
    """A family could not draw the synthesised columns given the kept ones (a trial fails)."""


@dataclasses.dataclass(frozen=True)
class PartialSynthesis:
    """The m released sets (row i = training record i), the holdout's counterpart, timings."""

    sets: tuple[pd.DataFrame, ...]
    holdout: pd.DataFrame | None
    fit_seconds: float
    sample_seconds: float  # drawing the m released sets
    holdout_seconds: float  # drawing the holdout's counterpart
    draws: int  # rows drawn from the joint model by rejection (0 for native conditioning)


def kept_columns(columns: Sequence[str], synthesize: Sequence[str]) -> list[str]:
    """The columns released as collected: every column not synthesised, in table order."""
    chosen = set(synthesize)
    return [c for c in columns if c not in chosen]


def conditioning_problem(name: str, frame: pd.DataFrame, synthesize: Sequence[str]) -> str | None:
    """Why family ``name`` cannot draw ``synthesize`` given the other columns of ``frame``, or
    ``None``. Rejection needs a draw to *equal* a record's kept values, which a continuous
    column (more than 20 distinct numbers: SDV's ``numerical``) never does."""
    spec = SYNTHESIZERS[name]
    if spec.conditioning != "reject":
        return None
    continuous = [c for c in kept_columns(list(frame.columns), synthesize)
                  if sdtype(frame[c]) in ("numerical", "datetime")]
    if not continuous:
        return None
    return (f"study.synthesize: synthesiser {name!r} can condition only by rejection (its model "
            f"samples whole records), and the kept column(s) {continuous} are continuous: no "
            "draw would equal a record's value. Synthesise them too, or use a family that "
            f"conditions natively ({', '.join(NATIVE)})")


def _comparable(frame: pd.DataFrame, like: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s columns of ``like`` as values that hash equal when they are equal: numbers
    as floats (an integer draw equals an integer record whatever the dtype), others as objects."""
    out = {}
    for col in like.columns:
        numeric = (pd.api.types.is_numeric_dtype(like[col])
                   and pd.api.types.is_numeric_dtype(frame[col])
                   and not pd.api.types.is_bool_dtype(like[col]))
        out[col] = frame[col].astype(float) if numeric else frame[col].astype(object)
    return pd.DataFrame(out, index=frame.index)


def _keys(frame: pd.DataFrame, like: pd.DataFrame) -> np.ndarray:
    return pd.util.hash_pandas_object(_comparable(frame, like), index=False).to_numpy()


def _pair(needed: np.ndarray, drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (row, draw) pairing each needed key with a distinct draw of the same key:
    the k-th row needing a key gets the k-th draw that has it."""
    left = pd.DataFrame({"key": needed, "rank": pd.Series(needed).groupby(needed).cumcount(),
                         "row": np.arange(needed.size)})
    right = pd.DataFrame({"key": drawn, "rank": pd.Series(drawn).groupby(drawn).cumcount(),
                          "draw": np.arange(drawn.size)})
    both = left.merge(right, on=["key", "rank"])
    return both["row"].to_numpy(), both["draw"].to_numpy()


def reject_sample(synth: Any, known: pd.DataFrame, *,
                  draws_per_row: int = REJECT_DRAWS_PER_ROW) -> tuple[pd.DataFrame, int]:
    """Every column for each row of ``known``, by rejection from the fitted ``synth``'s joint
    samples (see the module docstring), and the number of rows drawn. Row i of the result has
    row i's kept values exactly; draws are used once each, in the order they were made."""
    n = len(known)
    need = _keys(known, known)
    parts: list[tuple[np.ndarray, pd.DataFrame]] = []
    open_rows = np.arange(n)
    budget, drawn = draws_per_row * n, 0
    batch = max(n, REJECT_FIRST_BATCH)
    while open_rows.size and drawn < budget:
        size = min(batch, budget - drawn)
        sample = synth.sample(size)[TABLE].reset_index(drop=True)
        drawn += size
        rows, picks = _pair(need[open_rows], _keys(sample, known))
        parts.append((open_rows[rows], sample.iloc[picks]))
        open_rows = np.delete(open_rows, rows)
        batch = min(2 * batch, REJECT_MAX_BATCH)
    if open_rows.size:
        combos = len(np.unique(need[open_rows]))
        raise PartialSynthesisError(
            f"{type(synth).__name__} could not draw the synthesised columns for {open_rows.size} "
            f"of {n} records: their kept values ({combos} distinct combinations) did not occur "
            f"in {drawn} records drawn from the model ({draws_per_row} per record). It gives "
            "them (almost) no probability, and this family conditions only by rejection. Use "
            f"a family that conditions natively ({', '.join(NATIVE)}), keep fewer columns, or "
            "make the model cover them (more epochs; for a DP family, a larger epsilon)")
    order = np.concatenate([rows for rows, _ in parts])
    out = pd.concat([frame for _, frame in parts], ignore_index=True)
    out = out.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)
    out.index = known.index
    for col in known.columns:
        out[col] = known[col]
    return out, drawn


def _native(synth: Any, known: pd.DataFrame) -> pd.DataFrame:
    # SDV draws a tqdm bar on stderr for every call: kept off the command line's output
    with contextlib.redirect_stderr(io.StringIO()):
        out = synth.sample_remaining_columns(known)[TABLE]
    missing = known.index.difference(out.index)
    if len(missing):
        raise PartialSynthesisError(
            f"{type(synth).__name__} could not draw the synthesised columns for {len(missing)} "
            f"of {len(known)} records: its sample_remaining_columns returned no values for "
            "them (a kept combination its model cannot condition on)")
    out = out.loc[known.index]
    for col in known.columns:
        out[col] = known[col]
    return out


def conditional_sample(synth: Any, spec: SynthesizerSpec,
                       known: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Every column for each row of ``known`` (the kept columns), drawn from ``synth`` given
    them as ``spec.conditioning`` says; and the rows drawn by rejection (0 when native)."""
    if spec.conditioning == "native":
        return _native(synth, known), 0
    return reject_sample(synth, known)


def synthesize_partial(
    name: str,
    params: dict[str, Any],
    train: pd.DataFrame,
    *,
    synthesize: Sequence[str],
    seed: int,
    sets: int = 1,
    holdout: pd.DataFrame | None = None,
    device: str = "cpu",
    threads: int = 1,
    noise_key: int | None = None,
) -> PartialSynthesis:
    """Fit ``name`` on ``train`` and draw ``sets`` partially synthetic versions of it.

    Only ``synthesize`` is drawn, given each record's other columns; with ``holdout``, the same
    model also draws the holdout records' synthesised columns once (the gate's comparison).
    Seeded as :func:`tuner.synthesis._synthesizers.synthesize` (fit under
    :func:`tuner._common.seeding.seeded`,
    sampling by the synthesiser's own generator set to ``seed``; a DP family's noise from
    ``noise_key`` where given).
    """
    if isinstance(sets, bool) or not isinstance(sets, int) or sets < 1:
        raise InputError(f"`sets >= 1` must hold, got sets={sets!r}")
    unknown = [c for c in synthesize if c not in train.columns]
    kept = kept_columns(list(train.columns), synthesize)
    if unknown or not list(synthesize) or not kept:
        raise InputError(f"`synthesize` must name some, not all, of the columns "
                         f"{list(train.columns)}, got {list(synthesize)!r}")
    spec = SYNTHESIZERS[name]
    problem = conditioning_problem(name, train, synthesize)
    if problem:
        raise PartialSynthesisError(problem)
    with failing_as_trial(name, params):
        return _drawn(name, params, train, spec, kept, sets=sets, holdout=holdout, seed=seed,
                      device=device, threads=threads, noise_key=noise_key)


def _drawn(name: str, params: dict[str, Any], train: pd.DataFrame, spec: Any, kept: list[str],
           *, sets: int, holdout: pd.DataFrame | None, seed: int, device: str, threads: int,
           noise_key: int | None) -> PartialSynthesis:
    """Fit ``name`` and draw the ``sets`` released sets and the holdout's counterpart."""
    synth = build(name, params, train, seed=seed, device=device, keep=kept, noise_key=noise_key)
    with fitted(synth, train, seed=seed, threads=threads) as fit_seconds:
        start = time.perf_counter()
        drawn, released = 0, []
        for _ in range(sets):
            one, n = conditional_sample(synth, spec, train[kept])
            released.append(one[list(train.columns)].reset_index(drop=True))
            drawn += n
        sample_seconds = time.perf_counter() - start
        start = time.perf_counter()
        counterpart = None
        if holdout is not None:
            counterpart, n = conditional_sample(synth, spec, holdout[kept])
            counterpart = counterpart[list(train.columns)].reset_index(drop=True)
            drawn += n
        holdout_seconds = time.perf_counter() - start
    return PartialSynthesis(tuple(released), counterpart, fit_seconds, sample_seconds,
                            holdout_seconds, drawn)
