"""Distance to closest record (DCR): are synthetic records closer to train than to holdout?

The gate of design §9.1: the share of synthetic records closer to train than to holdout,
against ``b = n_train / (n_train + n_holdout)``, its value for a generator that never saw the
training records. A tie (as near to a training as to a holdout record) counts ``b``, as if
the tie were broken at random among the records of both sets: a synthetic record
exchangeable with the real ones then scores ``b`` exactly, ties or not. Counting a tie half,
as design §9.1 once said for train and holdout of equal size (where ``b`` is one half), is
right only there: under the tuner's split (train 0.5 / holdout 0.3, ``b`` = 0.625) it pulls a
fresh generator's share towards 0.5 wherever ties are common, and on Hu's ACS (ten categorical
columns, nine synthetic records in ten tie) it put a generator that never saw the data 0.11
below its baseline, so the 0.1 limit let through an excess of 0.2
(``experiments/release_audit/README.md``).

Attacker: holds the released synthetic data and real records, and asks whether the synthetic
records sit nearer to the records the generator was trained on than to other people of the
same population. A generator that learned the population, not its training records, places
its records no nearer to train than to a holdout drawn the same way: with train and holdout
exchangeable, the nearest of the ``n_train + n_holdout`` real records is in train with
probability ``baseline = n_train / (n_train + n_holdout)`` (0.5 for equal sizes). A generator
that copies or perturbs training records pushes the share towards 1. This is the "DCR share"
of Platzer & Reutterer, "Holdout-based empirical assessment of mixed-type synthetic data",
Frontiers in Big Data 4 (2021), with the baseline generalised to unequal sizes.

Distance: Gower's (1971) coefficient, the mean over the compared columns of per-column
distances in [0, 1]:

* numeric and datetime (in days) columns: ``min(|x - y| / range, 1)``, the range (max - min)
  taken over train and holdout together, so train and holdout distances are on one scale and
  the synthetic data cannot move it (a synthetic value outside the real range is at most 1
  away); a numeric column constant in the real data is compared as a category;
* every other column (strings, categoricals, booleans): 0 if equal, 1 if not;
* missing vs missing is 0, missing vs a value is 1.

So 0 means an exact copy (equal on every column) and 1 means different in every column.

Anchors. SDMetrics' ``DCROverfittingProtection`` (sdmetrics 0.32, ``dcr_utils.calculate_dcr``)
uses the same per-column distances with two differences: its range comes from the reference
alone (the range of train for distances to train and of holdout for distances to holdout), and
a tie counts as closer to holdout (``dcr_real < dcr_holdout``). When train and holdout have the
same range on every numeric column its ``closer_to_training`` equals our
``share_strictly_closer_to_train`` and ``share_closer_to_train = closer_to_training +
b share_ties``; its score is ``min(2 (1 - closer_to_training), 1)``. syntheval's ``dcr``
uses Gower too (range over the two compared frames, floored at 1, uncapped) but reports the
ratio of median DCR synthetic-to-real over median DCR real-to-real, without a holdout.

Computation (:mod:`risk._gower`): exact nearest neighbours, never an approximation, and never
a synthetic x real matrix held at once. Identical rows are collapsed, records are grouped by
the values of their non-numeric columns, the groups within one or two unequal values of each
other are found by hash joins, the numeric part is searched only in the groups that can still
hold the closest record (with an exact k-d tree in L1 for large groups), and memory is bounded
by fixed block sizes (time and memory on up to 1,000,000 synthetic Adult rows: block
``bench_gate`` of ``experiments/benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from risk._arguments import argument, takes
from risk._gower import nearest_distances
from risk._result import Interval, Result
from risk._validation import (
    RiskInputError,
    check_column_list,
    check_columns,
    check_frame,
    column_kinds,
    resolve_seed,
    same_columns,
)

TIE_TOLERANCE = 1e-9  # two summed distances closer than this are a tie (rounding)
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


@dataclasses.dataclass(frozen=True)
class DistanceSummary:
    """Mean and quantiles of the distances from synthetic records to their closest record."""

    mean: float
    q05: float
    q25: float
    median: float
    q75: float
    q95: float


@dataclasses.dataclass(frozen=True)
class DCRResult(Result):
    """Outcome of :func:`distance_to_closest_record` (design §9.1).

    ``share_closer_to_train``: share of the evaluated synthetic records whose closest train
    record is nearer than their closest holdout record, a tie counting ``baseline = n_train /
    (n_train + n_holdout)`` (the module docstring says why); compare it with that baseline,
    its expected value for a generator that learned only the population (``excess = share -
    baseline``). ``interval`` is a Wilson score interval of that share over the
    ``n_evaluated`` records (a tie counted as ``baseline`` of a success), given the
    train/holdout split. ``share_strictly_closer_to_train`` counts
    no ties (SDMetrics' ``closer_to_training``). ``share_exact_train``: synthetic records at
    distance 0 from train (exact copies on every column). ``dcr_train``/``dcr_holdout``
    summarise the Gower distances to the closest record. ``random_state`` is the seed of the
    subsample when ``max_synthetic`` cut one, else ``None``.
    """

    share_closer_to_train: float
    interval: Interval
    baseline: float
    excess: float
    share_strictly_closer_to_train: float
    share_ties: float
    share_exact_train: float
    share_exact_holdout: float
    dcr_train: DistanceSummary
    dcr_holdout: DistanceSummary
    n_closer_to_train: int
    n_closer_to_holdout: int
    n_ties: int
    n_exact_train: int
    n_train: int
    n_holdout: int
    n_synthetic: int
    n_evaluated: int
    columns: tuple[str, ...]
    numeric_columns: tuple[str, ...]
    max_synthetic: int | None
    random_state: int | None


# ---------------------------------------------------------------------------------------------
# public functions


def _resolve(
    frames: dict[str, pd.DataFrame], columns: Sequence[str] | None
) -> tuple[list[str], dict[str, str]]:
    if columns is None:
        cols = same_columns(frames)
        if not cols:
            raise RiskInputError("`train` must have at least one column, got none.")
    else:
        cols = check_column_list(columns, "columns")
        for name, frame in frames.items():
            check_columns(frame, name, cols, "compared")
    return cols, column_kinds(frames, cols)


def distances_to_closest_record(
    train: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    holdout: pd.DataFrame | None = None,
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per synthetic record, the Gower distance to its closest train (and holdout) record.

    A DataFrame aligned with ``synthetic`` with column ``train`` and, when a holdout is given,
    ``holdout``. The distance and the numeric ranges (from train and holdout together) are
    those of :func:`distance_to_closest_record`, described in the module docstring.
    """
    frames = {
        "train": check_frame(train, "train"),
        "synthetic": check_frame(synthetic, "synthetic"),
    }
    if holdout is not None:
        frames["holdout"] = check_frame(holdout, "holdout")
    cols, kinds = _resolve(frames, columns)
    real = [train] if holdout is None else [train, holdout]
    dists, _, inverse, _ = nearest_distances(real, synthetic, cols, kinds)
    names = ["train", "holdout"][: len(real)]
    return pd.DataFrame({n: d[inverse] for n, d in zip(names, dists, strict=True)},
                        index=synthetic.index)


def _summary(dist: np.ndarray, weights: np.ndarray) -> DistanceSummary:
    values = np.repeat(dist, weights)
    q = np.quantile(values, QUANTILES)
    return DistanceSummary(float(values.mean()), *(float(v) for v in q))


def wilson_interval(successes: float, n: int, level: float) -> Interval:
    """Wilson score interval of a binomial proportion ``successes / n`` (Wilson 1927)."""
    z = float(stats.norm.ppf(0.5 + level / 2.0))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Interval(float(max(0.0, centre - half)), float(min(1.0, centre + half)), level,
                    "Wilson score, a tie as n_train / (n_train + n_holdout) of a success")


@takes("max_synthetic", "confidence")
def distance_to_closest_record(
    train: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    holdout: pd.DataFrame,
    columns: Sequence[str] | None = None,
    max_synthetic: int | None = None,
    confidence: float = 0.95,
    random_state: int | None = None,
) -> DCRResult:
    """Share of synthetic records closer to train than to holdout (design §9.1).

    Parameters
    ----------
    train, synthetic, holdout:
        The generator's training records, the synthetic data, and real records of the same
        population the generator never saw (required: it is the reference).
    columns:
        Columns the distance is taken over; default every column, and then all frames must
        have the same columns.
    max_synthetic:
        Evaluate a uniform sample of this many synthetic records (without replacement) when
        there are more; default ``None``: all of them. The exact nearest neighbours cost
        about linear time in the synthetic records, so this is only for very large tables.
    confidence:
        Level of the Wilson interval of ``share_closer_to_train``.
    random_state:
        Seed of the subsample (used only when ``max_synthetic`` cuts one); the seed used is
        recorded in the result, ``None`` when nothing was drawn.

    Notes
    -----
    The distance (Gower's, numeric ranges from train and holdout together, each numeric
    column capped at 1, missing matches missing) and the comparison with SDMetrics are in the
    module docstring. A tie (distances equal up to ``TIE_TOLERANCE`` of the summed distance,
    i.e. float rounding) counts ``n_train / (n_train + n_holdout)``.
    """
    frames = {
        "train": check_frame(train, "train"),
        "holdout": check_frame(holdout, "holdout"),
        "synthetic": check_frame(synthetic, "synthetic"),
    }
    cols, kinds = _resolve(frames, columns)
    confidence = float(argument(confidence, "confidence"))
    if max_synthetic is not None:
        max_synthetic = int(argument(max_synthetic, "max_synthetic"))
    seed = None
    evaluated = synthetic
    if max_synthetic is not None and len(synthetic) > max_synthetic:
        seed = resolve_seed(random_state)
        rows = np.random.default_rng(seed).choice(len(synthetic), max_synthetic, replace=False)
        evaluated = synthetic.iloc[np.sort(rows)]
    elif random_state is not None:
        resolve_seed(random_state)  # type check only: nothing is drawn

    (d_train, d_hold), numeric, _, weights = nearest_distances(
        [train, holdout], evaluated, cols, kinds)
    p = max(1, len(cols))
    gap = (d_train - d_hold) * p
    closer = gap < -TIE_TOLERANCE
    ties = np.abs(gap) <= TIE_TOLERANCE
    n_eval = int(weights.sum())
    n_closer = int(weights[closer].sum())
    n_ties = int(weights[ties].sum())
    n_exact = int(weights[d_train == 0].sum())
    baseline = len(train) / (len(train) + len(holdout))
    successes = n_closer + baseline * n_ties  # a tie broken at random among both sets' records
    share = successes / n_eval
    return DCRResult(
        share_closer_to_train=share,
        interval=wilson_interval(successes, n_eval, confidence),
        baseline=baseline,
        excess=share - baseline,
        share_strictly_closer_to_train=n_closer / n_eval,
        share_ties=n_ties / n_eval,
        share_exact_train=n_exact / n_eval,
        share_exact_holdout=int(weights[d_hold == 0].sum()) / n_eval,
        dcr_train=_summary(d_train, weights),
        dcr_holdout=_summary(d_hold, weights),
        n_closer_to_train=n_closer,
        n_closer_to_holdout=n_eval - n_closer - n_ties,
        n_ties=n_ties,
        n_exact_train=n_exact,
        n_train=len(train),
        n_holdout=len(holdout),
        n_synthetic=len(synthetic),
        n_evaluated=n_eval,
        columns=tuple(cols),
        numeric_columns=numeric,
        max_synthetic=max_synthetic,
        random_state=seed,
    )
