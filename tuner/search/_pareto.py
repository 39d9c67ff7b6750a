"""Pareto mode: the utility-risk front of a study, and the rule that picks the release from it.

``[study] mode = "pareto"`` runs a two-objective study (maximise U, minimise M; design §7 and 3)
instead of minimising the risk-utility loss, so the whole front is traced, as DPareto does for
privacy budgets (Avent, Gonzalez, Diethe, Paleyes & Balle, "Automatic discovery of
privacy-utility Pareto fronts", PoPETs 2020(4)). Every constraint still applies: a trial that
breaks one is never on the front that a release is picked from (Optuna's constrained
domination, Deb et al. 2002, ranks feasible trials first; here infeasible ones are left out).

The release is the front point the config's rule picks (``[study] pareto_pick``):

* ``"utility"`` (default): the most useful feasible point. Every front point already passed
  M <= m_threshold and the gate, so the custodian takes the most utility the limits allow;
* ``"loss"``: the lowest risk-utility loss (design §3.1), as the single-objective mode ranks;
* ``"risk"``: the lowest M (the most cautious point, whatever its utility).

Ties are broken by the other objective, then by the lower trial number.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from tuner.config import PICK_RULES
from tuner.errors import InputError


@dataclasses.dataclass(frozen=True)
class Point:
    """One feasible trial on the U-M plane (``loss`` is its risk-utility loss)."""

    number: int
    utility: float
    m: float
    loss: float


def front_mask(utility: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Whether each point is non-dominated: no other point has U >= and M <=, one strictly.

    Vectorised as a sort by U descending (then M ascending): a point is on the front iff its M
    is below the smallest M of every point with a strictly larger U, and no point of equal U has
    a smaller M. O(n log n).
    """
    u = np.asarray(utility, dtype=float)
    r = np.asarray(m, dtype=float)
    if u.shape != r.shape or u.ndim != 1:
        raise ValueError(f"utility and m must be 1-d of one length, got {u.shape} and {r.shape}")
    n = u.size
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((r, -u))  # U descending, then M ascending
    u_s, r_s = u[order], r[order]
    # smallest M among points with strictly larger U: the running minimum up to the previous
    # block of equal U
    running = np.minimum.accumulate(r_s)
    starts = np.flatnonzero(np.r_[True, u_s[1:] != u_s[:-1]])  # first index of each U block
    block = np.cumsum(np.r_[True, u_s[1:] != u_s[:-1]]) - 1
    before = np.full(starts.size, np.inf)
    before[1:] = running[starts[1:] - 1]
    best_in_block = r_s[starts]  # sorted by M within a block
    on = (r_s < before[block]) & (r_s == best_in_block[block])
    mask = np.zeros(n, dtype=bool)
    mask[order] = on
    return mask


def pick(points: Sequence[Point], rule: str = "utility") -> tuple[Point, list[Point], str]:
    """The release among feasible ``points``: (chosen, the front, a sentence saying why)."""
    if rule not in PICK_RULES:
        raise InputError(f"study.pareto_pick must be one of {PICK_RULES}, got {rule!r}")
    if not points:
        raise ValueError("no feasible trial: nothing on the front to pick from")
    mask = front_mask(np.array([p.utility for p in points]), np.array([p.m for p in points]))
    front = sorted((p for p, on in zip(points, mask, strict=True) if on),
                   key=lambda p: (-p.utility, p.m, p.number))
    if rule == "utility":
        chosen = min(front, key=lambda p: (-p.utility, p.m, p.number))
        why = "the most useful feasible point"
    elif rule == "risk":
        chosen = min(front, key=lambda p: (p.m, -p.utility, p.number))
        why = "the feasible point with the lowest M"
    else:
        chosen = min(front, key=lambda p: (p.loss, -p.utility, p.number))
        why = "the front point with the lowest risk-utility loss"
    reason = (f"Pareto mode: trial {chosen.number} (U = {chosen.utility:.4f}, M = "
              f"{chosen.m:.4f}) is {why} (study.pareto_pick = {rule!r}) of a front of "
              f"{len(front)} feasible trial(s) out of {len(points)} feasible.")
    return chosen, front, reason
