"""Attribute disclosure: the Correct Attribution Probability (CAP) family.

Attacker: knows the *key* variables of a target person and reads the *target* variable off the
synthetic records that share the key. References:

* M. Elliot, "Final report on the disclosure risk associated with the synthetic data produced
  by the SYLLS team", CMIST report 2015-2 (2014): the CAP and its baseline.
* J. Taub, M. Elliot, M. Pampaka, D. Smith, "Differential correct attribution probability for
  synthetic data: an exploration", PSD 2018, LNCS 11126, pp. 122-137: the DCAP, and a
  targeted CAP over keys whose synthetic equivalence class has a single target value (not
  computed here under that name: no field called TCAP means anything but synthpop's, which
  :func:`risk.disclosure.disclosure` reports).
* J.-T. Baillargeon, L. Charest, "Some Remarks on Correct Attribution Probability Measures",
  Proc. Privacy in Statistical Databases (2020): versions 1 and 2 of the average CAP (eq. for
  v1 counts unmatched records as 0; v2 averages over matched records only), their lower bounds,
  and the smoker/health example of their section 2.3 that the tests reproduce.
* G. M. Raab, B. Nowok, C. Dibben, "Practical privacy metrics for synthetic data" (2024),
  synthpop's ``disclosure()``: DiSCO, the share of records whose key shows one target only
  (:func:`risk.disclosure.disclosure` reproduces all of synthpop's measures).

Contract: design §4. Everything is a vectorised join on integer codes.

Relation to SDMetrics (``sdmetrics.single_table.privacy.cap``): CategoricalCAP =
``1 - cap_v2``, CategoricalZeroCAP = ``1 - cap_v1``, CategoricalGeneralizedCAP =
``1 - cap_v2`` with ``matching="nearest"``; each result's ``protection_*`` fields are those.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from risk._arguments import argument, takes
from risk._encode import DEFAULT_NUMERIC_BINS, combine_many, encode, lookup_counts
from risk._neighbors import nearest_target_counts
from risk._result import Interval, Result, safe_ratio, welch_interval
from risk._validation import (
    RiskInputError,
    as_synthetic_sets,
    check_column_list,
    check_column_name,
    check_columns,
    check_frame,
    check_no_missing,
    check_number,
    column_kinds,
)


@dataclasses.dataclass(frozen=True)
class _Attribution:
    """Per-record counts against one synthetic set."""

    matched: np.ndarray  # synthetic records sharing the key (nearest keys for "nearest")
    correct: np.ndarray  # ... of which carry the record's own target value
    distinct: np.ndarray  # distinct target values among the matched synthetic records

    def cap(self, unmatched: float = 0.0) -> np.ndarray:
        out = safe_ratio(self.correct, self.matched)
        return np.where(self.matched > 0, out, unmatched)


@dataclasses.dataclass(frozen=True)
class CAPSetResult(Result):
    """CAP measures of the original data against one synthetic data set."""

    cap_v1: float
    cap_v2: float
    disco: float
    disco_over_dis: float
    matched_share: float
    n_matched: int
    n_synthetic: int
    protection_v1: float
    protection_v2: float
    holdout_cap_v1: float | None = None
    holdout_cap_v2: float | None = None
    difference_v1: float | None = None
    difference_v2: float | None = None
    difference_v1_interval: Interval | None = None


@dataclasses.dataclass(frozen=True)
class CAPResult(Result):
    """Outcome of :func:`cap`; averages over the synthetic sets, with each set in ``per_set``.

    ``cap_v1`` averages the individual CAPs over all original records (unmatched count 0);
    ``cap_v2`` over the records whose key appears in the synthetic data. ``cap_train`` is
    the CAP of the training data against itself, ``baseline`` the sum of squared target shares,
    ``lower_bound_v1``/``lower_bound_v2`` the smallest averages that a synthetic set made of
    the original's own key-target cells can reach (Baillargeon & Charest 2020: ``o_min / n``
    and ``min o_kt / o_k`` over the non-empty cells; a synthetic pair the original never has
    scores 0 and can go lower). ``disco`` is the share of original records whose key shows
    only their own target in the synthetic data (synthpop's DiSCO / 100 when nothing is
    excluded), ``disco_over_dis`` that share among the records whose key shows a single target
    at all (synthpop's DiSCO / DiS). Neither is a TCAP. synthpop 1.9-3's ``TCAP``
    (``R/disclosure.R``: ``sum(tab_DiSCO) / sum(tab_kd[tab_ks > 0]) * 100``) divides the DiSCO
    count by the original records whose key occurs in the synthetic data at all (DiSCO / iS,
    in percent); :func:`risk.disclosure.disclosure` reports it. (synthpop's February 2026
    vignette writes TCAP as DiSCO / DiS, our ``disco_over_dis``, but its code reports the
    former.) Taub et al. 2018 average the original's CAP over the synthetic records whose key
    shows one target; synthgauge's TCAP equals our ``disco``. With a
    holdout, ``difference_v1 = cap_v1 - holdout_cap_v1`` (likewise v2) is the attribute
    disclosure that membership adds; ``difference_v1_interval`` is its normal-approximation
    interval (Welch) over the records' individual CAPs (averaged over the sets). ``protection_*
    = 1 - cap_*``, as SDMetrics reports it (the fields' old names still read, warning)."""

    cap_v1: float
    cap_v2: float
    cap_train: float
    baseline: float
    lower_bound_v1: float
    lower_bound_v2: float
    disco: float
    disco_over_dis: float
    protection_v1: float
    protection_v2: float
    holdout_cap_v1: float | None
    holdout_cap_v2: float | None
    difference_v1: float | None
    difference_v2: float | None
    n_train: int
    n_holdout: int | None
    n_sets: int
    keys: tuple[str, ...]
    target: str
    matching: str
    numeric_bins: int | None
    binned_columns: tuple[str, ...]
    per_set: tuple[CAPSetResult, ...]
    difference_v1_interval: Interval | None = None


@dataclasses.dataclass(frozen=True)
class _Prepared:
    keys: list[str]
    target: str
    key_codes: list[np.ndarray]  # per frame: (n, k) key codes
    key_ids: list[np.ndarray]  # per frame: combined key id
    pair_ids: list[np.ndarray]  # per frame: combined key+target id
    target_codes: list[np.ndarray]
    key_cards: tuple[int, ...]
    n_targets: int
    binned: tuple[str, ...]



def _prepare(
    frames: dict[str, pd.DataFrame],
    keys: Sequence[str] | str,
    target: str,
    numeric_bins: int | None,
    missing: str,
) -> _Prepared:
    key_list = check_column_list(keys, "keys")
    target = check_column_name(target, "target")
    if target in key_list:
        raise RiskInputError(
            f"`target` must not be one of the `keys`, got target={target!r} and "
            f"keys={key_list!r}."
        )
    argument(missing, "missing")
    cols = [*key_list, target]
    for name, frame in frames.items():
        check_frame(frame, name)
        check_columns(frame, name, cols, "key/target")
        if missing == "error":
            check_no_missing(frame, name, cols, "key/target")
    kinds = column_kinds(frames, cols)
    # bins fitted on the original (frame 0) alone: adding a holdout or another synthetic set
    # must not move the edges, and so not change any set's value
    enc = encode(list(frames.values()), cols, kinds, numeric_bins=numeric_bins, fit_frames=[0])
    k = len(key_list)
    key_codes = [c[:, :k] for c in enc.codes]
    key_ids = combine_many(key_codes, enc.cardinalities[:k])
    pair_ids = combine_many(list(enc.codes), enc.cardinalities)
    return _Prepared(
        keys=key_list,
        target=target,
        key_codes=key_codes,
        key_ids=key_ids,
        pair_ids=pair_ids,
        target_codes=[c[:, k] for c in enc.codes],
        key_cards=enc.cardinalities[:k],
        n_targets=enc.cardinalities[k],
        binned=enc.binned,
    )


def _attribution(prep: _Prepared, query: int, ref: int, matching: str) -> _Attribution:
    """Counts for records of frame ``query`` against the records of frame ``ref``."""
    if matching == "exact":
        matched = lookup_counts(prep.key_ids[query], prep.key_ids[ref])
        correct = lookup_counts(prep.pair_ids[query], prep.pair_ids[ref])
        # distinct targets per key of ref: count each distinct (key, target) pair once
        ref_pairs = np.unique(prep.pair_ids[ref], return_index=True)[1]
        distinct = lookup_counts(prep.key_ids[query], prep.key_ids[ref][ref_pairs])
        return _Attribution(matched, correct, distinct)
    ref_target = prep.target_codes[ref]
    one_hot = np.zeros((ref_target.size, prep.n_targets), dtype=np.float64)
    one_hot[np.arange(ref_target.size), ref_target] = 1.0
    _, sums = nearest_target_counts(
        prep.key_codes[query], prep.key_codes[ref], one_hot, prep.key_cards
    )
    rows = np.arange(sums.shape[0])
    return _Attribution(
        matched=np.rint(sums.sum(axis=1)).astype(np.int64),
        correct=np.rint(sums[rows, prep.target_codes[query]]).astype(np.int64),
        distinct=(sums > 0).sum(axis=1).astype(np.int64),
    )


def _averages(att: _Attribution) -> tuple[float, float, float, float, int]:
    matched = att.matched > 0
    caps = att.cap()
    v1 = float(caps.mean())
    v2 = float(caps[matched].mean()) if matched.any() else 0.0
    disclosive = (att.correct == att.matched) & matched
    disco = float(disclosive.mean())
    single = (att.distinct == 1) & matched
    disco_over_dis = float(disclosive.sum() / single.sum()) if single.any() else 0.0
    return v1, v2, disco, disco_over_dis, int(matched.sum())


def _bounds(prep: _Prepared, frame: int) -> tuple[float, float, float]:
    """Baseline and the two lower bounds from the original's key x target table."""
    _, first, pair_counts = np.unique(
        prep.pair_ids[frame], return_index=True, return_counts=True
    )
    pair_keys = prep.key_ids[frame][first]
    key_totals = lookup_counts(pair_keys, prep.key_ids[frame])
    n = prep.key_ids[frame].size
    shares = np.bincount(prep.target_codes[frame]) / n
    baseline = float(np.sum(shares**2))
    return baseline, float(pair_counts.min() / n), float((pair_counts / key_totals).min())


def _check_unmatched(value: object) -> float:
    if isinstance(value, (float, np.floating)) and np.isnan(value):
        return float("nan")
    v = check_number(value, "unmatched", finite=False)
    if not 0.0 <= v <= 1.0:
        raise RiskInputError(
            f"`unmatched` must be a CAP in [0, 1] or NaN, got unmatched={value!r}."
        )
    return v


@takes("matching", "numeric_bins", "missing")
def cap_per_record(
    train: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    keys: Sequence[str] | str,
    target: str,
    matching: str = "exact",
    numeric_bins: int | None = DEFAULT_NUMERIC_BINS,
    missing: str = "error",
    unmatched: float = 0.0,
) -> pd.Series:
    """Individual CAP of each original record against ``synthetic`` (design §4).

    ``CAP_x(S) = #{s: K(s)=K(x), T(s)=T(x)} / #{s: K(s)=K(x)}`` (Elliot 2014); with
    ``matching="nearest"`` the synthetic records at the smallest Hamming distance on the keys
    take the place of the exact key matches (the DistanceCAP of Synthesized; SDMetrics'
    GeneralizedCAP). Records whose key has no match get ``unmatched`` (0 by the definition;
    pass ``numpy.nan`` to tell them apart; any other value must lie in [0, 1]). Aligned with
    ``train``'s index.
    """
    argument(matching, "matching")
    fill = _check_unmatched(unmatched)
    frames = {"train": train, "synthetic": synthetic}
    prep = _prepare(frames, keys, target, numeric_bins, missing)
    caps = _attribution(prep, 0, 1, matching).cap(fill)
    return pd.Series(caps, index=train.index, name=f"cap_{target}")


@takes("matching", "numeric_bins", "missing")
def cap(
    train: pd.DataFrame,
    synthetic: pd.DataFrame | Sequence[pd.DataFrame],
    *,
    keys: Sequence[str] | str,
    target: str,
    holdout: pd.DataFrame | None = None,
    matching: str = "exact",
    numeric_bins: int | None = DEFAULT_NUMERIC_BINS,
    missing: str = "error",
) -> CAPResult:
    """The CAP family of attribute-disclosure measures (design §4).

    Parameters
    ----------
    train:
        The real records the synthetic data were made from (for a trained generator: the
        training records).
    synthetic:
        One synthetic DataFrame or a list of m of them (results per set and averaged).
    keys, target:
        What the intruder knows, and the attribute they infer; the target may not be a key.
    holdout:
        Real records the generator never saw; their CAP against the same synthetic data is
        reported and subtracted (``difference_*``) to isolate what membership adds.
    matching:
        ``"exact"`` key equality, or ``"nearest"``: the synthetic records at the smallest
        Hamming distance on the keys.
    numeric_bins:
        Numeric keys/targets with more distinct values *in the original* are cut into this
        many equal-width bins whose edges span the training values (synthetic and holdout
        values outside them fall into the end bins); ``None`` compares them exactly.
    missing:
        ``"error"`` (default) refuses missing keys/targets with a count per column;
        ``"category"`` treats a missing value as a category of its own.
    """
    argument(matching, "matching")
    sets = as_synthetic_sets(synthetic)
    frames = {"train": train}
    if holdout is not None:
        frames["holdout"] = holdout
    frames.update({f"synthetic[{i}]": s for i, s in enumerate(sets)})
    prep = _prepare(frames, keys, target, numeric_bins, missing)
    first_set = 2 if holdout is not None else 1

    per_set: list[CAPSetResult] = []
    per_record: list[tuple[np.ndarray, np.ndarray]] = []  # with a holdout: train's, holdout's
    for i in range(len(sets)):
        ref = first_set + i
        att = _attribution(prep, 0, ref, matching)
        v1, v2, disco, disco_over_dis, n_matched = _averages(att)
        extra: dict[str, Any] = {}
        if holdout is not None:
            held = _attribution(prep, 1, ref, matching)
            h1, h2, *_ = _averages(held)
            extra = dict(
                holdout_cap_v1=h1, holdout_cap_v2=h2, difference_v1=v1 - h1, difference_v2=v2 - h2,
                difference_v1_interval=welch_interval(att.cap(), held.cap()),
            )
            per_record.append((att.cap(), held.cap()))
        per_set.append(
            CAPSetResult(
                cap_v1=v1,
                cap_v2=v2,
                disco=disco,
                disco_over_dis=disco_over_dis,
                matched_share=n_matched / len(train),
                n_matched=n_matched,
                n_synthetic=len(sets[i]),
                protection_v1=1.0 - v1,
                protection_v2=1.0 - v2,
                **extra,
            )
        )

    def mean(field: str) -> float | None:
        values = [getattr(r, field) for r in per_set]
        return None if values[0] is None else float(np.mean(values))

    orig_cap = _attribution(prep, 0, 0, "exact").cap().mean()
    baseline, lb1, lb2 = _bounds(prep, 0)
    v1_mean, v2_mean = float(mean("cap_v1") or 0.0), float(mean("cap_v2") or 0.0)
    return CAPResult(
        cap_v1=v1_mean,
        cap_v2=v2_mean,
        cap_train=float(orig_cap),
        baseline=baseline,
        lower_bound_v1=lb1,
        lower_bound_v2=lb2,
        disco=float(mean("disco") or 0.0),
        disco_over_dis=float(mean("disco_over_dis") or 0.0),
        protection_v1=1.0 - v1_mean,
        protection_v2=1.0 - v2_mean,
        holdout_cap_v1=mean("holdout_cap_v1"),
        holdout_cap_v2=mean("holdout_cap_v2"),
        difference_v1=mean("difference_v1"),
        difference_v2=mean("difference_v2"),
        # over the m sets: each record's CAP averaged over the sets, then Welch
        difference_v1_interval=welch_interval(
            np.mean([a for a, _ in per_record], axis=0),
            np.mean([b for _, b in per_record], axis=0)) if per_record else None,
        n_train=len(train),
        n_holdout=None if holdout is None else len(holdout),
        n_sets=len(sets),
        keys=tuple(prep.keys),
        target=prep.target,
        matching=matching,
        numeric_bins=numeric_bins,
        binned_columns=prep.binned,
        per_set=tuple(per_set),
    )
