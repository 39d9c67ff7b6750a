"""Identification disclosure risk for partially synthetic data.

References: J. P. Reiter, R. Mitra, "Estimating risks of identification disclosure in partially
synthetic data", Journal of Privacy and Confidentiality 1(1), 2009 (the expected match risk, the
true match rate and the false match rate); J. Hu, Data Confidentiality course (Vassar College,
2020), lectures "Methods for Risk Evaluation 1 and 2", whose ACS example (m = 1 and m = 3)
the tests reproduce. Contract: design §6.

Attacker: knows, for every target, the true values of the key (unsynthesised) variables ``keys`` and
of the *synthesised* variables, and matches them against the released rows. Row i of every
released data set is original record i (rows are matched by position).

Matching: categorical values, known variables and synthesised variables without a radius must
be equal; a synthesised numeric variable with a radius matches when the released value lies
*strictly* within the radius of the true value (``|released - true| < r``; with
``relative_radius=True``, ``r = radius * |true|``), or equals it exactly (so that a relative
radius around a true 0 still matches a released 0). Hu's lecture code uses ``<=``; design §6
says strictly, and that is what is done here. A scalar ``radius`` applies to *every* numeric
synthesised column, integer-coded categories included: pass a mapping to choose columns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from risk._arguments import argument, takes
from risk._encode import combine_many, encode, lookup_counts
from risk._result import Result
from risk._validation import (
    RiskInputError,
    as_synthetic_sets,
    check_column_list,
    check_columns,
    check_frame,
    check_no_missing,
    column_kinds,
)

_PAIR_BLOCK = 4_000_000


@dataclasses.dataclass(frozen=True)
class IdentificationSetResult(Result):
    """Identification risk of one released data set (Reiter & Mitra 2009)."""

    expected_match_risk: float
    true_match_rate: float
    false_match_rate: float
    unique_matches: int
    true_unique_matches: int
    false_unique_matches: int


@dataclasses.dataclass(frozen=True)
class IdentificationResult(Result):
    """Outcome of :func:`identification_risk`: means over the m released sets, and each set.

    ``expected_match_risk`` = sum over targets with c_i > 0 of T_i / c_i (in [0, N]);
    ``true_match_rate`` = sum K_i / N; ``false_match_rate`` = sum F_i / s (NaN when s = 0);
    ``unique_matches`` = s, the number of targets with exactly one match (mean over sets).
    """

    expected_match_risk: float
    true_match_rate: float
    false_match_rate: float
    unique_matches: float
    n_targets: int
    n_sets: int
    keys: tuple[str, ...]
    synthesized: tuple[str, ...]
    radius: tuple[float, ...] | None
    radius_columns: tuple[str, ...]
    relative_radius: bool
    per_set: tuple[IdentificationSetResult, ...]



def _within(diff: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Strictly within the radius; an exactly equal value always matches (even at r = 0)."""
    return (np.abs(diff) < radii) | (diff == 0)


def match_counts(
    target_ids: np.ndarray,
    released_ids: np.ndarray,
    target_values: np.ndarray,
    released_values: np.ndarray,
    radii: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """c_i and T_i of design §6 for every target i.

    ``*_ids`` are exact-match ids (equal id = equal on every exactly matched variable);
    ``*_values`` are (n, q) numeric values matched within ``radii`` (n, q), strictly. With q = 0
    this is a hash join. Candidate pairs are expanded only inside equal-id groups, in blocks.
    """
    n = target_ids.size
    same_row = target_ids == released_ids
    if target_values.shape[1] == 0:
        return lookup_counts(target_ids, released_ids), same_row
    within_own = np.all(_within(released_values - target_values, radii), axis=1)
    own = same_row & within_own
    order = np.argsort(released_ids, kind="stable")
    sorted_ids = released_ids[order]
    lo = np.searchsorted(sorted_ids, target_ids, side="left")
    hi = np.searchsorted(sorted_ids, target_ids, side="right")
    sizes = hi - lo
    counts = np.zeros(n, dtype=np.int64)
    ends = np.cumsum(sizes)
    start = 0
    while start < n:
        # targets [start, stop) hold at most _PAIR_BLOCK candidate pairs (at least one target)
        base = ends[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, base + _PAIR_BLOCK, side="right")))
        stop = min(stop, n)
        idx = np.arange(start, stop)
        reps = sizes[idx]
        tgt = np.repeat(idx, reps)
        offsets = np.arange(tgt.size) - np.repeat(np.cumsum(reps) - reps, reps)
        cand = order[np.repeat(lo[idx], reps) + offsets]
        ok = np.all(_within(released_values[cand] - target_values[tgt], radii[tgt]), axis=1)
        counts[start:stop] = np.bincount(tgt[ok] - start, minlength=stop - start)
        start = stop
    return counts, own


def summarize(c: np.ndarray, t: np.ndarray) -> IdentificationSetResult:
    """The three summaries of Reiter & Mitra (2009) from c_i and T_i (design §6)."""
    t = t.astype(bool)
    positive = c > 0
    expected = float(np.sum(t[positive] / c[positive]))
    k = (c == 1) & t
    f = (c == 1) & ~t
    s = int(np.sum(c == 1))
    return IdentificationSetResult(
        expected_match_risk=expected,
        true_match_rate=float(k.sum() / c.size),
        false_match_rate=float(f.sum() / s) if s else float("nan"),
        unique_matches=s,
        true_unique_matches=int(k.sum()),
        false_unique_matches=int(f.sum()),
    )


def _radius_map(
    radius: float | Mapping[str, float] | None,
    synthesized: list[str],
    kinds: dict[str, str],
) -> dict[str, float]:
    if radius is None:
        return {}
    if isinstance(radius, Mapping):
        unknown = [c for c in radius if c not in synthesized]
        if unknown:
            raise RiskInputError(
                f"`radius` names column(s) {unknown!r} that are not in `synthesized` "
                f"({synthesized!r})."
            )
        chosen = dict(radius)
    else:
        chosen = {c: radius for c in synthesized if kinds[c] == "numeric"}
        if not chosen:
            raise RiskInputError(
                f"`radius`={radius!r} was given but no synthesized column is numeric "
                f"({synthesized!r})."
            )
    for col, r in chosen.items():
        if kinds[col] != "numeric":
            raise RiskInputError(f"`radius` applies to numeric columns, but {col!r} is not.")
        if (isinstance(r, (bool, np.bool_))
                or not isinstance(r, (int, float, np.integer, np.floating))
                or not 0 < r < float("inf")):
            raise RiskInputError(
                f"`radius` for {col!r} must be a finite number > 0, got {r!r}."
            )
    return {c: float(r) for c, r in chosen.items()}


@takes("missing")
def identification_risk(
    train: pd.DataFrame,
    synthetic: pd.DataFrame | Sequence[pd.DataFrame],
    *,
    keys: Sequence[str] | str,
    synthesized: Sequence[str] | str,
    radius: float | Mapping[str, float] | None = None,
    relative_radius: bool = False,
    missing: str = "error",
) -> IdentificationResult:
    """Identification disclosure risk of partially synthetic data (Reiter & Mitra 2009).

    Parameters
    ----------
    train:
        The confidential records (those the released rows were made from); every record is
        a target (N = len(train)).
    synthetic:
        One released data set or a list of m, each row-aligned with ``train``.
    keys, synthesized:
        What the intruder knows of every target: its values of the unsynthesised variables
        ``keys``, and of the synthesised variables ``synthesized`` (the intruder holds their
        true values too).
    radius:
        ``None``: every variable must match exactly. A number: radius of every numeric
        synthesised variable. A mapping: a radius per synthesised numeric column. Radii are
        finite and > 0 (an infinite one would match every record).
    relative_radius:
        When true, the radius is a fraction of the true value: ``r_i = radius * |x_i|``.
    missing:
        ``"error"`` refuses missing values (with a count per column); ``"category"`` lets a
        missing value match a missing value exactly (never within a radius).
    """
    check_frame(train, "train")
    sets = as_synthetic_sets(synthetic)
    if not isinstance(relative_radius, (bool, np.bool_)):
        raise TypeError(f"`relative_radius` must be True or False, got {relative_radius!r}.")
    known_l = check_column_list(keys, "keys")
    synth_l = check_column_list(synthesized, "synthesized")
    overlap = sorted(set(known_l) & set(synth_l))
    if overlap:
        raise RiskInputError(f"A column cannot be both a key and synthesized: {overlap!r}.")
    argument(missing, "missing")
    cols = [*known_l, *synth_l]
    frames = {"train": train}
    frames.update({f"synthetic[{i}]": s for i, s in enumerate(sets)})
    for name, frame in frames.items():
        check_frame(frame, name)
        check_columns(frame, name, cols, "keys/synthesized")
        if len(frame) != len(train):
            raise RiskInputError(
                f"`{name}` must have one row per training record (row i is record i), but has "
                f"{len(frame)} rows for {len(train)} training records."
            )
        if missing == "error":
            check_no_missing(frame, name, cols, "keys/synthesized")
    kinds = column_kinds(frames, cols)
    radii_by_col = _radius_map(radius, synth_l, kinds)
    exact_cols = [c for c in cols if c not in radii_by_col]
    near_cols = list(radii_by_col)

    enc = encode(list(frames.values()), exact_cols, kinds, numeric_bins=None)
    ids = combine_many(list(enc.codes), enc.cardinalities)
    true_vals = train[near_cols].to_numpy(dtype=float)
    base = np.array([radii_by_col[c] for c in near_cols], dtype=float)
    radii = np.abs(true_vals) * base if relative_radius else np.broadcast_to(base, true_vals.shape)

    per_set = []
    for k, frame in enumerate(sets, start=1):
        released = frame[near_cols].to_numpy(dtype=float)
        c, t = match_counts(ids[0], ids[k], true_vals, released, radii)
        per_set.append(summarize(c, t))
    return IdentificationResult(
        expected_match_risk=float(np.mean([r.expected_match_risk for r in per_set])),
        true_match_rate=float(np.mean([r.true_match_rate for r in per_set])),
        false_match_rate=float(np.mean([r.false_match_rate for r in per_set])),
        unique_matches=float(np.mean([r.unique_matches for r in per_set])),
        n_targets=len(train),
        n_sets=len(sets),
        keys=tuple(known_l),
        synthesized=tuple(synth_l),
        radius=tuple(base.tolist()) if near_cols else None,
        radius_columns=tuple(near_cols),
        relative_radius=bool(relative_radius),
        per_set=tuple(per_set),
    )
