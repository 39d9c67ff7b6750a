"""Membership disclosure by the partition method.

Reference: K. El Emam, L. Mosquera, X. Fang, "Validating a membership disclosure metric for
synthetic health data", JAMIA Open 5(4), 2022, ooac083 (the partition method, its relative F1
"M" and the acceptability threshold M <= 0.2). The contract is design §3.

Attacker: holds the full quasi-identifier record of a target and the released synthetic data,
and claims "member" when some synthetic record is within Hamming distance ``h`` of the target
on the (encoded) quasi-identifiers. Real members are the records the generator was trained on
(``train``); real non-members come from ``holdout``.

Sampling fraction: ``t = n_train / N``, the share of the population in the data the evaluated
generator was trained on. This library evaluates exactly the generator that is released, so
``n_train`` is used, not the size of a larger data set that a later retraining would use.

When M cannot bind (design §9.1): an attack set of ``a`` records holds ``round(a t)`` members.
When the population is far larger than the table (SD2011: 5,000 records, N = 31 million), t is
tiny and the holdout limits ``a``, so an attack set holds a handful of members or none; F1 then
rests on a few records and M <= 0.2 certifies nothing. The result says so (``can_bind``,
``warning``) instead of failing or passing silently.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from risk._arguments import argument, takes
from risk._encode import DEFAULT_NUMERIC_BINS, encode
from risk._f1 import _relative
from risk._f1 import naive_f1 as naive_f1
from risk._f1 import relative_f1 as relative_f1
from risk._f1 import scores_from_counts as scores_from_counts
from risk._membership_interval import CI_METHOD, effective_holdout, interval_from_rates
from risk._membership_interval import f1_from_rates as f1_from_rates
from risk._neighbors import min_hamming
from risk._partition import DEFAULT_ATTACK_CAP as DEFAULT_ATTACK_CAP
from risk._partition import MIN_MEMBERS as MIN_MEMBERS
from risk._partition import (
    binding_warning,
    check_threshold,
    members_in_attack,
    merged_colors,
    resolve_attack_size,
    resolve_sampling_fraction,
    split_farther,
)
from risk._result import Interval, Result, percentile_interval
from risk._validation import (
    RiskInputError,
    check_column_list,
    check_columns,
    check_frame,
    column_kinds,
    resolve_seed,
    same_columns,
)
from risk.loss import ACCEPTABLE_M


@dataclasses.dataclass(frozen=True)
class MembershipResult(Result):
    """Outcome of :func:`membership_disclosure` (design §3, El Emam et al. 2022).

    ``m`` is the relative F1, ``(F1 - F_naive) / (1 - F_naive)``, averaged over the ``repeats``
    attack sets; it is acceptable when ``m <= m_threshold`` (:attr:`acceptable`; 0.2 in the
    paper). ``f1``, ``precision`` and ``recall`` are the same means at the chosen
    ``hamming_threshold``; ``f1_by_threshold[h]`` and ``m_by_threshold[h]`` give them for every
    h from 0 to the number of quasi-identifiers.

    **Negative M.** M = 0 is the adversary who calls everyone a member (precision t, recall 1).
    Matching within h claims only the records that have a synthetic record that near, so its
    recall is below 1; unless its precision rises above t enough to make up for that, its F1
    falls below F_naive and M < 0. That happens when the synthetic records are no nearer to
    the training records than to the holdout ones, and more so when they are nearer to the
    holdout (precision below t: the synthetic data match non-members more than members, e.g.
    when the generator over-smooths and reproduces common combinations rather than the members'
    own). So a negative M is no risk and not an error: the adversary does worse than guessing.
    M is at most 1 and at least ``-2t / (1 - t)`` (F1 = 0; -2 at t = 0.5).

    **When M cannot bind.** Each attack set holds ``attack_members = round(a t)`` members
    (``expected_members = a t`` before rounding). With fewer than ``min_members`` (default
    :data:`MIN_MEMBERS` = 20; design §9.1) F1 rests on a handful of records, and with none it is
    0 whatever the synthetic data are; ``can_bind`` is then False, ``warning`` says why and what
    to do, and ``m <= m_threshold`` certifies nothing (``acceptable`` still compares the
    number, so check ``can_bind`` beside it). ``warning`` is ``""`` when M can bind.

    **Confidence interval** (design §3.2). ``m_ci`` (and ``f1_ci`` on the F1 scale) is a
    two-sided ``m_ci.level`` confidence interval of the release's true M: the M that the same
    attack (keys, h, encoding) on the whole population would give, with the training records as
    the members and the population's other people as the non-members (R attack sets of
    min(10,000, N) people). It covers that M in ``level`` of releases. It rests on the shares
    matched within h: ``member_match_rate`` r of the training records (exact: every member is
    measured) and ``holdout_match_rate`` f of the holdout, which stands for the non-members;
    the attack's F1 tends to ``2 t r / (t r + t + (1 - t) f)`` (design §3.2, eq. 1), f gets
    Clopper & Pearson's (1934) interval at the ``effective_holdout`` size (eq. 3), and the
    population attack's own attack-set error is added (eqs. 5-6). It needs no attack set of
    the estimate, so it stays valid when they hold few members (then it may lie away from
    ``m``, the estimate's noisy mean).

    ``m_spread`` is the central ``m_spread.level`` share of the M values of single attack sets
    (percentiles over the repeats): how much one attack's M varies from draw to draw. It is
    *not* a confidence interval of ``m`` (``m_ci`` is): the repeats reuse the same train,
    holdout and synthetic records. ``m_interval`` is its deprecated old name.
    """

    m: float
    m_ci: Interval
    f1_ci: Interval
    m_spread: Interval
    f1: float
    f1_std: float
    precision: float
    recall: float
    f_naive: float
    sampling_fraction: float
    population_size: int | None
    hamming_threshold: int
    attack_size: int
    attack_members: int
    expected_members: float
    min_members: int
    can_bind: bool
    m_threshold: float
    warning: str
    repeats: int
    n_train: int
    n_holdout: int
    n_synthetic: int
    keys: tuple[str, ...]
    binned_columns: tuple[str, ...]
    missing_values: int
    f1_by_threshold: tuple[float, ...]
    m_by_threshold: tuple[float, ...]
    member_match_rate: float
    holdout_match_rate: float
    effective_holdout: float
    random_state: int


    @property
    def acceptable(self) -> bool:
        """Whether ``m <= m_threshold`` (the configured threshold; 0.2 by default as in
        El Emam et al. 2022). Says nothing when ``can_bind`` is False."""
        return self.m <= self.m_threshold

    @property
    def m_interval(self) -> Interval:
        """Deprecated name of :attr:`m_spread` (a spread over repeats, not a confidence
        interval of ``m``)."""
        warnings.warn(
            "`MembershipResult.m_interval` is deprecated: it is the percentile spread of M over "
            "the repeats, now named `m_spread` (not a confidence interval of `m`).",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.m_spread


def _resolve_qis(
    frames: dict[str, pd.DataFrame], keys: Sequence[str] | None
) -> list[str]:
    if keys is None:
        return same_columns(frames)
    qis = check_column_list(keys, "keys")
    for name, frame in frames.items():
        check_columns(frame, name, qis, "quasi-identifier")
    return qis


@takes("numeric_bins")
def membership_distances(
    records: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    keys: Sequence[str] | None = None,
    numeric_bins: int | None = DEFAULT_NUMERIC_BINS,
) -> pd.Series:
    """Hamming distance from each record to its nearest synthetic record (design §3, steps 3-4).

    Encoded on the quasi-identifiers with the rules of design §3, step 3 (bin edges from ``records``
    and ``synthetic`` together). Returned as an int Series aligned with ``records``.
    """
    frames = {
        "records": check_frame(records, "records"),
        "synthetic": check_frame(synthetic, "synthetic"),
    }
    qis = _resolve_qis(frames, keys)
    kinds = column_kinds(frames, qis)
    enc = encode([records, synthetic], qis, kinds, numeric_bins=numeric_bins)
    dist = min_hamming(enc.codes[0], enc.codes[1], enc.cardinalities)
    return pd.Series(dist, index=records.index, name="hamming_distance")


@takes(
    "population_size", "sampling_fraction", "hamming_threshold", "attack_size", "repeats",
    "numeric_bins", "confidence", "ci_level", "m_threshold", "min_members",
)
def membership_disclosure(
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    population_size: int | None = None,
    sampling_fraction: float | None = None,
    keys: Sequence[str] | None = None,
    hamming_threshold: int = 0,
    attack_size: int | None = None,
    repeats: int = 100,
    numeric_bins: int | None = DEFAULT_NUMERIC_BINS,
    confidence: float = 0.95,
    ci_level: float = 0.95,
    random_state: int | None = None,
    m_threshold: float = ACCEPTABLE_M,
    min_members: int = MIN_MEMBERS,
    curve: bool = True,
) -> MembershipResult:
    """Membership disclosure risk M by the partition method (El Emam et al. 2022, design §3).

    Parameters
    ----------
    train, holdout, synthetic:
        The generator's training records (members), real non-members, and the synthetic data.
    population_size, sampling_fraction:
        Exactly one is required: N, giving ``t = len(train) / N``, or t itself; ``0 < t < 1``.
    keys:
        The quasi-identifiers: the columns the adversary knows of a person;
        default every column (then all frames must share them).
    hamming_threshold:
        Claim "member" when the nearest synthetic record differs in at most this many
        quasi-identifiers (default 0: exact match on the encoded values).
    attack_size:
        Records per attack set, ``round(a t)`` of them members; default the largest size both
        pools allow, capped at 10,000.
    repeats:
        Attack sets drawn (default 100, at most :data:`MAX_REPEATS`); F1, precision and recall
        are their means.
    numeric_bins:
        Numeric quasi-identifiers with more distinct values are cut into this many equal-width
        bins (design §3, step 3); ``None`` compares them exactly.
    confidence:
        Share of the repeats' M values inside ``m_spread`` (a spread over repeats, not a
        confidence interval of ``m``: that is ``m_ci``; see :class:`MembershipResult`).
    ci_level:
        Confidence level of ``m_ci`` and ``f1_ci`` (default 0.95; ``0 < ci_level < 1``).
    random_state:
        Seed of the attack-set draws; the seed used is recorded in the result.
    m_threshold:
        ``acceptable`` means ``m <= m_threshold`` (default 0.2, El Emam et al. 2022); pass the
        threshold your study enforces. Must be below 1.
    min_members:
        Fewest members per attack set for M to bind (default :data:`MIN_MEMBERS` = 20): with
        fewer, ``can_bind`` is False and ``warning`` says why and what to do.
    curve:
        Also estimate F1 and M at every threshold (``f1_by_threshold``, ``m_by_threshold``
        from 0 to the number of quasi-identifiers; the default). ``False`` computes distances
        only up to ``hamming_threshold`` (h = 0 is a hash join) and gives the two curves up to
        h: what a tuning trial needs. M, F1, precision and recall at h are the same to the last
        digit either way (the draws at distances <= h come first; see below).

    Notes
    -----
    When t is so small that no attack set the holdout allows holds a member (``round(a t) =
    0``, e.g. a few thousand records of a population of millions), the default attack size is
    the largest all-non-member set: F1 is 0, M is ``-2t / (1 - t)``, and the result says M
    cannot bind rather than raising (an explicit ``attack_size`` must still hold a member).

    Missing values are a category of their own (missing matches missing), never dropped; their
    count is reported as ``missing_values``. The distance of each real record to the synthetic
    data is computed once; each repeat then only draws how many sampled members and non-members
    fall at each distance (a multivariate hypergeometric draw, exactly sampling without
    replacement), so R repeats cost R small draws. The draw is over the distances 0..h and
    "farther than h"; with ``curve``, each repeat's records farther than h are then split over
    the distances h + 1..p by a second, conditional draw (given how many of them were drawn,
    which they are is a uniform sample of the farther ones: the joint draw is exact).
    """
    frames = {
        "train": check_frame(train, "train"),
        "holdout": check_frame(holdout, "holdout"),
        "synthetic": check_frame(synthetic, "synthetic"),
    }
    qis = _resolve_qis(frames, keys)
    kinds = column_kinds(frames, qis)
    p = len(qis)
    if isinstance(hamming_threshold, bool) or not isinstance(hamming_threshold, (int, np.integer)):
        raise TypeError(f"`hamming_threshold` must be an integer, got {hamming_threshold!r}.")
    if not 0 <= hamming_threshold <= p:
        raise RiskInputError(
            f"`0 <= hamming_threshold <= {p}` (the number of quasi-identifiers) must hold, but "
            f"got hamming_threshold={hamming_threshold}."
        )
    repeats = int(argument(repeats, "repeats"))
    confidence = float(argument(confidence, "confidence"))
    ci_level = float(argument(ci_level, "ci_level"))
    m_threshold = check_threshold(m_threshold)
    min_members = int(argument(min_members, "min_members"))
    n_train, n_holdout = len(train), len(holdout)
    t, n_pop = resolve_sampling_fraction(n_train, n_holdout, population_size, sampling_fraction)
    a = resolve_attack_size(attack_size, t, n_train, n_holdout)
    k = members_in_attack(a, t)
    seed = resolve_seed(random_state)

    enc = encode([train, holdout, synthetic], qis, kinds, numeric_bins=numeric_bins)
    # keep the synthetic codes in the narrowest dtype and drop the int64 matrix before the
    # distances (a million synthetic rows: 15 MB instead of 120 MB of codes for p = 15)
    narrow = np.min_scalar_type(max(enc.cardinalities, default=1))
    real = np.concatenate([enc.codes[0], enc.codes[1]])
    syn_codes = enc.codes[2].astype(narrow)
    cards, binned = enc.cardinalities, enc.binned
    del enc
    h = hamming_threshold
    if not isinstance(curve, (bool, np.bool_)):
        raise TypeError(f"`curve` must be True or False, got {curve!r}.")
    dist = min_hamming(real, syn_codes, cards, max_distance=None if curve else h)
    del syn_codes
    colors_members = np.bincount(dist[:n_train], minlength=p + 1)
    colors_non = np.bincount(dist[n_train:], minlength=p + 1)

    rng = np.random.default_rng(seed)
    # distances 0..h and "farther" first, for members then non-members: the same numbers
    # whether or not the curve follows
    member_counts = rng.multivariate_hypergeometric(merged_colors(colors_members, h), k,
                                                    size=repeats)
    non_counts = rng.multivariate_hypergeometric(merged_colors(colors_non, h), a - k, size=repeats)
    if curve:
        member_counts = split_farther(rng, member_counts, colors_members, h)
        non_counts = split_farther(rng, non_counts, colors_non, h)
    precision, recall, f1 = scores_from_counts(member_counts, non_counts)

    f1_h = f1[:, h]
    member_rate = float(colors_members[: h + 1].sum() / n_train)
    holdout_rate = float(colors_non[: h + 1].sum() / n_holdout)
    f1_ci = Interval(*interval_from_rates(
        member_rate, holdout_rate, n_train=n_train, n_holdout=n_holdout, population_size=n_pop,
        sampling_fraction=t, repeats=repeats, level=ci_level, seed=seed), ci_level, CI_METHOD)
    m_low, m_high = _relative(np.array([f1_ci.low, f1_ci.high]), t)
    m_reps = _relative(f1_h, t)
    f1_curve = f1.mean(axis=0)[: (p if curve else h) + 1]
    missing = sum(int(f[c].isna().sum()) for f in frames.values() for c in qis)
    return MembershipResult(
        m=float(m_reps.mean()),
        m_ci=Interval(float(m_low), float(m_high), ci_level, CI_METHOD),
        f1_ci=f1_ci,
        m_spread=percentile_interval(m_reps, confidence),
        f1=float(f1_h.mean()),
        f1_std=float(f1_h.std(ddof=1)) if repeats > 1 else 0.0,
        precision=float(precision[:, h].mean()),
        recall=float(recall[:, h].mean()),
        f_naive=naive_f1(t),
        sampling_fraction=t,
        population_size=n_pop,
        hamming_threshold=h,
        attack_size=a,
        attack_members=k,
        expected_members=a * t,
        min_members=min_members,
        can_bind=k >= min_members,
        m_threshold=m_threshold,
        warning=binding_warning(a, k, t, (n_train, n_holdout), min_members, n_pop),
        repeats=repeats,
        n_train=n_train,
        n_holdout=n_holdout,
        n_synthetic=len(synthetic),
        keys=tuple(qis),
        binned_columns=binned,
        missing_values=missing,
        f1_by_threshold=tuple(float(v) for v in f1_curve),
        m_by_threshold=tuple(float(v) for v in _relative(f1_curve, t)),
        member_match_rate=member_rate,
        holdout_match_rate=holdout_rate,
        effective_holdout=effective_holdout(
            n_holdout, (n_pop if n_pop is not None else n_train / t) - n_train - n_holdout),
        random_state=seed,
    )
