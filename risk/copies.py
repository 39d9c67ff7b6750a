"""Exact copies of real records in synthetic data, and synthpop's replicated uniques.

The gate of design §9.1: "the share of synthetic records equal to a train record on all released
columns, against the same share for the holdout (chance copies); records equal to a record
unique in train are never released under defaults".

Attacker: holds the released synthetic data and a target's full record (every released
column). When a synthetic record equals the target's record, and the target's record is unique
in the training data, the release has reproduced a real person; a copy of a common record
(say, the modal combination of a few categorical columns) reveals little. The holdout, real
records the generator never saw, says how many copies a model that learned only the population
would make by chance: ``difference = train_share - holdout_share`` is the excess due to
memorising the training records. The chance share grows with the size of the reference data, so
like is compared with like: when train and holdout differ in size (the tuner's default split is
train 0.5 / holdout 0.3 / a sealed audit set 0.2), the larger set's share is the one it would
have at the smaller set's size, exactly: the expected share over uniform subsamples of that
size, ``1 - C(n - c, m) / C(n, m)`` per synthetic record equal to ``c`` of its ``n`` records
(:func:`share_at_size`). A copy of a record unique in a training set 5/3 the holdout's size
then counts 3/5: the price of comparing with the smaller set, and what the chance level of
that set means.

Equality is exact, on raw values: a missing value matches a missing value; numbers compare by
value (``1 == 1.0`` across int and float dtypes of the same column); booleans, strings and
categoricals by value. Datetimes compare to the nanosecond.

**Near copies** (``numeric_bins=B``): a copy with one numeric value nudged (a census weight
moved by 1 %) is no exact copy, and passes every exact check. With ``numeric_bins`` the numeric
(and datetime) columns with more than ``B`` distinct values among the *real* records (train and
holdout) are cut into ``B`` equal-width bins spanning those real values, as the membership
attack bins them (design §3, step 3), and records are compared on the bins; every other column
stays exact. The bins are fitted on the real records only, so that the synthetic data cannot
move them. In the tuner's validation (``experiments/membership_validation``, finding 5) a
generator copying 10 % of its records with one value nudged passed M, exact copies and the
distance to closest record, and had a binned difference of 0.09-0.10 against <= 0.001 for
SDV's Gaussian copula, CTGAN and CopulaGAN.

Replicated uniques follow synthpop (Nowok, Raab & Dibben 2016, R package ``synthpop``,
``replicated.uniques()`` called by ``sdc(rm.replicated.uniques = TRUE)``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import gammaln

from risk._arguments import argument, takes
from risk._encode import _bin, _numeric_values, combine_many, lookup_counts
from risk._result import Interval, Result
from risk._validation import (
    RiskInputError,
    check_column_list,
    check_columns,
    check_frame,
    column_kinds,
    same_columns,
)


@dataclasses.dataclass(frozen=True)
class ExactCopiesResult(Result):
    """Outcome of :func:`exact_copies` (design §9.1).

    Shares are of the ``n_synthetic`` synthetic records. ``train_share``: equal on all
    ``columns`` to some train record; ``holdout_share``: the same against the holdout (chance
    copies; NaN without a holdout). ``difference`` compares like with like: when train and holdout
    differ in size, the larger set's share is the share it would have at the smaller set's size
    (``matched_size``), ``train_share_matched`` / ``holdout_share_matched`` (see
    :func:`share_at_size`); with equal sizes it is ``train_share - holdout_share``.
    ``difference_interval``: a normal-approximation interval of ``difference`` over the
    synthetic records (each record's matched train indicator minus its holdout one).
    ``train_unique_copies``: synthetic records equal to a record that occurs exactly once in
    train (every copy counts, also when the synthetic data repeat it);
    ``replicated_uniques``: synthpop's count, those of them whose combination also occurs
    exactly once in the synthetic data (what ``sdc(rm.replicated.uniques = TRUE)`` removes).
    ``train_uniques`` is the number of records unique in train. Without a holdout the holdout
    counts are ``None``. ``numeric_bins`` is the option used (``None``: exact values) and
    ``binned_columns`` the columns it cut into bins.
    """

    train_share: float
    holdout_share: float
    difference: float
    train_unique_share: float
    holdout_unique_share: float
    replicated_unique_share: float
    train_copies: int
    holdout_copies: int | None
    train_unique_copies: int
    holdout_unique_copies: int | None
    replicated_uniques: int
    train_uniques: int
    n_train: int
    n_holdout: int | None
    n_synthetic: int
    columns: tuple[str, ...]
    numeric_bins: int | None = None
    binned_columns: tuple[str, ...] = ()
    train_share_matched: float | None = None
    holdout_share_matched: float | None = None
    matched_size: int | None = None
    difference_interval: Interval | None = None


def share_at_size(counts: np.ndarray, n: int, m: int) -> np.ndarray:
    """Per synthetic record equal to ``counts`` of the ``n`` records of a real set, the
    probability that a uniform sample of ``m <= n`` of those records holds at least one of
    them: ``1 - C(n - c, m) / C(n, m)`` (hypergeometric; 1 when ``n - c < m``)."""
    c = np.asarray(counts, dtype=np.float64)
    if m >= n:
        return (c > 0).astype(np.float64)
    none = np.zeros_like(c)
    ok = n - c >= m
    cc = c[ok]
    none[ok] = np.exp(gammaln(n - cc + 1) + gammaln(n - m + 1) - gammaln(n - cc - m + 1)
                      - gammaln(n + 1))
    return 1.0 - none


def _difference_interval(train_p: np.ndarray, hold_p: np.ndarray, level: float) -> Interval:
    """Normal-approximation interval of the mean of per-record differences."""
    d = train_p - hold_p
    z = float(stats.norm.ppf(0.5 + level / 2))
    half = z * float(d.std(ddof=1)) / np.sqrt(d.size) if d.size > 1 else float("inf")
    return Interval(float(d.mean() - half), float(d.mean() + half), level,
                    "normal approximation over synthetic records")


def _value_codes(stacked: pd.Series, kind: str) -> np.ndarray:
    """Integer codes of exact values; missing gets a code of its own."""
    if kind == "numeric" and not (
        pd.api.types.is_integer_dtype(stacked) or pd.api.types.is_bool_dtype(stacked)
    ):
        # mixed int/float frames arrive here as float (or as object from nullable dtypes)
        stacked = pd.Series(stacked.to_numpy(dtype="float64", na_value=np.nan))
    codes, _ = pd.factorize(stacked, use_na_sentinel=True)
    codes = codes.astype(np.int64)
    missing = codes < 0
    if missing.any():
        codes[missing] = codes.max() + 1
    return codes


def _binned_codes(stacked: pd.Series, kind: str, numeric_bins: int | None,
                  fit: np.ndarray) -> np.ndarray | None:
    """Bin codes when ``numeric_bins`` applies to this column (see the module docstring)."""
    if numeric_bins is None or kind not in ("numeric", "datetime"):
        return None
    values = _numeric_values(stacked, kind)
    reference = values[fit]
    if np.unique(reference[~np.isnan(reference)]).size <= numeric_bins:
        return None
    return _bin(values, numeric_bins, reference)


def exact_codes(
    frames: Sequence[pd.DataFrame], columns: Sequence[str], kinds: dict[str, str], *,
    numeric_bins: int | None = None, fit_frames: Sequence[int] = (),
) -> tuple[list[np.ndarray], list[int], list[str]]:
    """Code matrices (one per frame) where equal codes mean equal raw values, cardinalities,
    and the columns cut into bins.

    Codes are made jointly over all frames, so they compare across frames. ``-0.0 == 0.0``
    and every missing value (None, NaN, NaT, pd.NA) is the same "missing" value. With
    ``numeric_bins``, numeric columns with more distinct values than that among the frames
    ``fit_frames`` (indices) are compared on equal-width bins spanning those frames' values.
    """
    sizes = [len(f) for f in frames]
    owner = np.repeat(np.arange(len(frames)), sizes)
    fit = np.isin(owner, np.asarray(list(fit_frames), dtype=np.int64))
    per_column: list[np.ndarray] = []
    cards: list[int] = []
    binned: list[str] = []
    for col in columns:
        stacked = pd.concat([f[col] for f in frames], ignore_index=True)
        codes = _binned_codes(stacked, kinds[col], numeric_bins, fit)
        if codes is None:
            codes = _value_codes(stacked, kinds[col])
        else:
            binned.append(col)
        per_column.append(codes)
        cards.append(int(codes.max()) + 1 if codes.size else 1)
    matrix = (
        np.column_stack(per_column) if per_column else np.zeros((sum(sizes), 0), np.int64)
    )
    return list(np.split(matrix, np.cumsum(sizes)[:-1])), cards, binned


def record_ids(
    frames: dict[str, pd.DataFrame], columns: Sequence[str], *,
    numeric_bins: int | None = None,
) -> tuple[list[np.ndarray], list[str]]:
    """One int64 id per record of every frame (equal ids iff equal raw values on ``columns``,
    or equal bins with ``numeric_bins``; bins fitted on every frame but ``synthetic``), and the
    binned columns."""
    kinds = column_kinds(frames, columns)
    fit = [i for i, name in enumerate(frames) if name != "synthetic"]
    codes, cards, binned = exact_codes(list(frames.values()), columns, kinds,
                                       numeric_bins=numeric_bins, fit_frames=fit)
    return combine_many(codes, cards), binned


def _resolve_columns(
    frames: dict[str, pd.DataFrame], columns: Sequence[str] | None
) -> list[str]:
    if columns is None:
        cols = same_columns(frames)
        if not cols:
            raise RiskInputError("`train` must have at least one column, got none.")
        return cols
    cols = check_column_list(columns, "columns")
    for name, frame in frames.items():
        check_columns(frame, name, cols, "compared")
    return cols


def _counts_in(ids: np.ndarray) -> np.ndarray:
    """For each id, how often it occurs in ``ids`` itself."""
    _, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    return counts[inverse.ravel()]


def replicated_uniques(
    train: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    columns: Sequence[str] | None = None,
    synthetic_unique_only: bool = True,
) -> np.ndarray:
    """Boolean mask over the rows of ``synthetic`` (by position) flagging replicated uniques.

    synthpop's definition (``replicated.uniques()``, used by ``sdc(rm.replicated.uniques =
    TRUE)``): the key of a record is its combination of values on ``keys`` (default: every
    variable of the synthetic data); a key is *unique* in a data set when exactly one record
    has it. A synthetic record is a replicated unique when its key is unique in the synthetic
    data **and** unique in the original data (here ``train``, the data the generator was fitted
    on). So "unique in the original" means unique on all the compared variables together, not
    on a subset of quasi-identifiers, and a missing value is a value like any other (synthpop
    pastes the values into one string per record, where NA becomes "NA").

    Differences from synthpop: values are compared as values, not as the text R prints for
    them (R's formatting can merge numbers equal to 15 significant digits); and with
    ``synthetic_unique_only=False`` the mask also flags synthetic records that copy a
    train-unique record more than once (synthpop keeps those: they are not unique in the
    synthetic data), which is what :attr:`ExactCopiesResult.train_unique_copies` counts.
    """
    frames = {
        "train": check_frame(train, "train"),
        "synthetic": check_frame(synthetic, "synthetic"),
    }
    if not isinstance(synthetic_unique_only, (bool, np.bool_)):
        raise TypeError(
            f"`synthetic_unique_only` must be a bool, got {synthetic_unique_only!r}."
        )
    cols = _resolve_columns(frames, columns)
    (train_ids, syn_ids), _ = record_ids(frames, cols)
    mask = lookup_counts(syn_ids, train_ids) == 1
    if synthetic_unique_only:
        mask &= _counts_in(syn_ids) == 1
    return mask


@takes("numeric_bins")
def exact_copies(
    train: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    holdout: pd.DataFrame | None = None,
    columns: Sequence[str] | None = None,
    numeric_bins: int | None = None,
) -> ExactCopiesResult:
    """Shares of synthetic records that exactly copy a train record, and a holdout record.

    Parameters
    ----------
    train, synthetic:
        The generator's training records and the synthetic data.
    holdout:
        Real records the generator never saw (optional): the share of synthetic records equal
        to one of them is the chance level of copying. Without it the holdout fields are NaN
        or ``None``.
    columns:
        Columns compared (all must be equal for a copy); default every column, and then all
        frames must have the same columns.
    numeric_bins:
        ``None`` (default): exact values. An integer B counts *near copies*: numeric columns
        with more than B distinct real values are compared on B equal-width bins fitted on the
        real records (train and holdout), as the membership attack bins them (design §3, step
        3); see the module docstring.

    Notes
    -----
    Computed by a hash join on joint integer codes of the raw values (see the module
    docstring for what counts as equal); linear in the number of records.
    """
    frames = {
        "train": check_frame(train, "train"),
        "synthetic": check_frame(synthetic, "synthetic"),
    }
    if holdout is not None:
        frames["holdout"] = check_frame(holdout, "holdout")
    if numeric_bins is not None:
        numeric_bins = int(argument(numeric_bins, "numeric_bins"))
    cols = _resolve_columns(frames, columns)
    ids, binned = record_ids(frames, cols, numeric_bins=numeric_bins)
    train_ids, syn_ids = ids[0], ids[1]
    n_syn = len(synthetic)

    in_train = lookup_counts(syn_ids, train_ids)
    train_counts = _counts_in(train_ids)
    train_copies = int(np.count_nonzero(in_train))
    unique_copies = in_train == 1
    replicated = unique_copies & (_counts_in(syn_ids) == 1)
    train_share = train_copies / n_syn

    holdout_copies = holdout_unique = n_holdout = None
    holdout_share = holdout_unique_share = difference = float("nan")
    matched: dict[str, object] = {}
    if holdout is not None:
        in_hold = lookup_counts(syn_ids, ids[2])
        holdout_copies = int(np.count_nonzero(in_hold))
        holdout_unique = int(np.count_nonzero(in_hold == 1))
        holdout_share = holdout_copies / n_syn
        holdout_unique_share = holdout_unique / n_syn
        n_holdout = len(holdout)
        size = min(len(train), n_holdout)
        train_p = share_at_size(in_train, len(train), size)
        hold_p = share_at_size(in_hold, n_holdout, size)
        difference = float(train_p.mean() - hold_p.mean())
        matched = dict(train_share_matched=float(train_p.mean()),
                       holdout_share_matched=float(hold_p.mean()), matched_size=size,
                       difference_interval=_difference_interval(train_p, hold_p, 0.95))
    return ExactCopiesResult(
        train_share=train_share,
        holdout_share=holdout_share,
        difference=difference,
        train_unique_share=int(unique_copies.sum()) / n_syn,
        holdout_unique_share=holdout_unique_share,
        replicated_unique_share=int(replicated.sum()) / n_syn,
        train_copies=train_copies,
        holdout_copies=holdout_copies,
        train_unique_copies=int(unique_copies.sum()),
        holdout_unique_copies=holdout_unique,
        replicated_uniques=int(replicated.sum()),
        train_uniques=int(np.count_nonzero(train_counts == 1)),
        n_train=len(train),
        n_holdout=n_holdout,
        n_synthetic=n_syn,
        columns=tuple(cols),
        numeric_bins=numeric_bins,
        binned_columns=tuple(binned),
        **matched,  # type: ignore[arg-type]
    )
