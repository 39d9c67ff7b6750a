"""The attack-set design of the partition method (design §3 steps 1-2, 9.1), for ``membership``.

The sampling fraction t, the size a of an attack set and its ``round(a t)`` members, whether
that many members let M bind, and the threshold M is judged against.
"""

from __future__ import annotations

import math

import numpy as np

from risk._arguments import argument
from risk._validation import RiskInputError

DEFAULT_ATTACK_CAP = 10_000
MIN_MEMBERS = 20
"""Fewest members per attack set for M to bind (design §9.1: "fewer than ~20 members")."""


def resolve_sampling_fraction(
    n_train: int, n_holdout: int, population_size: int | None, sampling_fraction: float | None
) -> tuple[float, int | None]:
    if (population_size is None) == (sampling_fraction is None):
        raise RiskInputError(
            "Exactly one of `population_size` and `sampling_fraction` must be given, got "
            f"(population_size={population_size!r}, sampling_fraction={sampling_fraction!r}). "
            "There is no default: the customary t = 0.5 misstates the risk (El Emam et al. "
            "2022); give the size N of the population the data were drawn from."
        )
    if sampling_fraction is not None:
        return float(argument(sampling_fraction, "sampling_fraction")), None
    n_pop = int(argument(population_size, "population_size"))
    if n_pop < n_train + n_holdout:
        raise RiskInputError(
            "`population_size >= len(train) + len(holdout)` must hold (both are people of the "
            f"population), got (population_size={n_pop}, len(train)={n_train}, "
            f"len(holdout)={n_holdout})."
        )
    t = n_train / n_pop
    if not 0.0 < t < 1.0:
        raise RiskInputError(
            f"The sampling fraction t = len(train) / population_size = {n_train}/{n_pop} = {t} "
            "must satisfy 0 < t < 1; at t = 1 the naive F1 is 1 and M is undefined."
        )
    return t, n_pop


def members_in_attack(attack_size: int, t: float) -> int:
    # round half up, as round() in R and in the authors' code (Python's round is banker's).
    return int(np.floor(attack_size * t + 0.5))


def resolve_attack_size(requested: int | None, t: float, n_train: int, n_holdout: int) -> int:
    def fits(a: int, fewest_members: int = 1) -> bool:
        k = members_in_attack(a, t)
        return fewest_members <= k <= n_train and 1 <= a - k <= n_holdout

    if requested is not None:
        a = int(argument(requested, "attack_size"))
        if not fits(a):
            k = members_in_attack(a, t)
            raise RiskInputError(
                f"`attack_size`={a} at t={t:.6g} needs {k} members (1 <= k <= len(train)="
                f"{n_train}) and {a - k} non-members (1 <= a - k <= len(holdout)={n_holdout})."
            )
        return a
    # k = floor(a t + 0.5) lies in (a t - 0.5, a t + 0.5], so no size above these bounds can
    # fit; searching down from them finds the largest that does (design §3 step 2). (Bounds
    # without the 0.5 stopped a few records short: 428 instead of 429 for 300/300 at t = 0.3;
    # and the bounds are floats: 1.5 / (1 - 0.95) rounds to 29.99..., though a = 30 fits at
    # n_holdout = 1, so the search starts two above them.)
    a = int(min(DEFAULT_ATTACK_CAP, np.floor((n_holdout + 0.5) / (1.0 - t)) + 2,
                np.floor((n_train + 0.5) / t) + 2))
    while a >= 2 and not fits(a):
        a -= 1
    if a >= 2:
        return a
    # t so small that no attack set the holdout allows holds one member (round(a t) = 0): use
    # the largest all-non-member set; M is then reported as unable to bind (can_bind False),
    # not raised as an error, so a study on such a table still runs and says so.
    a = int(min(DEFAULT_ATTACK_CAP, n_holdout))
    while a >= 1 and not fits(a, fewest_members=0):
        a -= 1
    if a < 1:
        raise RiskInputError(
            f"No attack set can hold a non-member at t={t:.6g} with len(train)={n_train} and "
            f"len(holdout)={n_holdout}; use a larger holdout."
        )
    return a


def binding_warning(
    a: int, k: int, t: float, sizes: tuple[int, int], min_members: int,
    population_size: int | None,
) -> str:
    """What it means that M cannot bind with k members per attack set, and what to do."""
    if k >= min_members:
        return ""
    held = "no member at all" if k == 0 else f"only {k} member{'s' if k > 1 else ''}"
    # named as the argument (and the tuner's data.population_size): an N far above the true
    # population is the commonest reason t is too small
    source = (f"t = len(train) / population_size = {t:.3g} with population_size = "
              f"{population_size:,}" if population_size is not None else f"t = {t:.3g}")
    n_train, n_holdout = sizes
    needed = math.ceil((min_members - 0.5) / t)  # smallest a with round(a t) >= min_members
    if n_train < min_members:
        remedy = f"the training data hold only {n_train} records"
    elif needed - min_members > n_holdout:
        remedy = (f"{min_members} members need attack sets of about {needed:,} records, so a "
                  f"holdout of about {needed - min_members:,} records (now {n_holdout:,})")
    else:
        remedy = f"{min_members} members need attack_size >= {needed:,} (now {a:,})"
    why = ("F1 is 0 whatever the synthetic data are" if k == 0
           else "F1 turns on whether these few records find a match")
    return (
        f"M cannot bind: each attack set of {a:,} records holds {held} (a t = {a * t:.3g}; "
        f"{source}), fewer than the {min_members} needed. {why}, so M <= the threshold "
        "certifies nothing about membership disclosure. Judge it by the other measures (exact "
        f"copies of training records, distance to closest record) instead; {remedy}."
    )


def check_threshold(value: object) -> float:
    """``m_threshold`` as its declaration allows it (:data:`risk._arguments.ARGUMENTS`)."""
    return float(argument(value, "m_threshold"))


def merged_colors(colors: np.ndarray, h: int) -> np.ndarray:
    """Records at distance 0, 1, ..., h, then all those farther (length h + 2)."""
    return np.concatenate([colors[: h + 1], [colors[h + 1:].sum()]]).astype(np.int64)


def split_farther(rng: np.random.Generator, counts: np.ndarray, colors: np.ndarray,
                   h: int) -> np.ndarray:
    """Per repeat, the ``counts[:, h + 1]`` records drawn farther than h spread over the
    distances h + 1..p: given their number they are a uniform sample without replacement of
    the farther records, so successive hypergeometric draws (one per distance, vectorised over
    the repeats) complete an exact multivariate hypergeometric draw. Shape (repeats, p + 1)."""
    p = colors.size - 1
    out = np.zeros((counts.shape[0], p + 1), dtype=np.int64)
    out[:, : h + 1] = counts[:, : h + 1]
    left = counts[:, h + 1].astype(np.int64)
    pool = int(colors[h + 1:].sum())
    for d in range(h + 1, p):
        good = int(colors[d])
        out[:, d] = rng.hypergeometric(good, pool - good, left) if good else 0
        left = left - out[:, d]
        pool -= good
    if h < p:
        out[:, p] = left
    return out
