"""The risk-utility loss of El Emam, Mosquera & Fang (JAMIA Open 2022), design §3.1.

::

    w(M) = 1                              if M <= threshold (0.2)
    w(M) = floor + 1 / (1 + exp(M - 1))   if M >  threshold, floor = 0.31 as published
    loss = -w(M) * U                      (minimised; U in [0, 1], higher is better)

The published floor 0.31 leaves a step of about 2.6e-5 at M = 0.2; exact continuity needs
``CONTINUOUS_FLOOR = 1 - 1 / (1 + e^0.8) = 0.3100255``. Both are kept as named parameters; 0.31 is
the default. Because ``w(M) >= 0.81`` for ``M <= 1``, the loss alone never forbids a leaky
model: the rule ``M <= threshold`` must also be a hard constraint (the tuner makes it one).
"""

from __future__ import annotations

import dataclasses
import math

from risk._result import Result
from risk._validation import RiskInputError, check_number

ACCEPTABLE_M = 0.2
PUBLISHED_FLOOR = 0.31
CONTINUOUS_FLOOR = 1.0 - 1.0 / (1.0 + math.exp(ACCEPTABLE_M - 1.0))


@dataclasses.dataclass(frozen=True)
class RiskUtilityLoss(Result):
    """Outcome of :func:`risk_utility_loss`: the loss, its weight, and the inputs."""

    loss: float
    weight: float
    m: float
    utility: float
    threshold: float
    floor: float

    @property
    def acceptable(self) -> bool:
        """Whether ``m <= threshold``."""
        return self.m <= self.threshold


def max_floor(threshold: float = ACCEPTABLE_M) -> float:
    """Largest floor accepted at ``threshold``: the one that makes w(M) continuous there,
    ``1 - 1 / (1 + exp(threshold - 1))``, or the published 0.31 if that is larger. The paper's
    own constant stays accepted at every threshold (the tuner passes its configured threshold
    with the default floor), although below 0.2 it lifts w just above the threshold over 1, by
    at most 0.041 as the threshold nears 0 (2.6e-5 at 0.2, design §3.1)."""
    return max(PUBLISHED_FLOOR, 1.0 - 1.0 / (1.0 + math.exp(threshold - 1.0)))


def risk_utility_weight(
    m: float, *, threshold: float = ACCEPTABLE_M, floor: float = PUBLISHED_FLOOR
) -> float:
    """The weight w(M) of design §3.1 (El Emam et al. 2022): 1 up to ``threshold``, then
    ``floor + 1 / (1 + exp(M - 1))``.

    ``m`` must be finite and at most 1 (M = 1 is a perfect adversary); negative values are
    legitimate (M >= -2t / (1 - t) > -inf). ``floor`` must lie in ``[0, max_floor(threshold)]``
    (:func:`max_floor`): a negative floor can turn the weight negative and flip the loss's sign,
    and a larger one lifts the weight of a model just above the threshold over 1, rewarding
    disclosure. Python and numpy numbers are accepted; bools, NaN and infinities are not.
    """
    mv = check_number(m, "m")
    if mv > 1.0:
        raise RiskInputError(f"`m <= 1` must hold (M is a relative F1), got m={m!r}.")
    t = check_number(threshold, "threshold", finite=False)
    if not 0.0 < t < 1.0:
        raise RiskInputError(f"`0 < threshold < 1` must hold, got threshold={threshold!r}.")
    fl = check_number(floor, "floor", finite=False)
    top = max_floor(t)
    if not 0.0 <= fl <= top:
        raise RiskInputError(
            f"`0 <= floor <= {top:.7g}` must hold at threshold={t:g}, got floor={floor!r}: "
            "a negative floor can make the weight negative, a larger one lifts the weight of a "
            f"leaky model over 1 (published floor {PUBLISHED_FLOOR}, continuous one "
            f"{CONTINUOUS_FLOOR:.7f})."
        )
    if mv <= t:
        return 1.0
    return fl + 1.0 / (1.0 + math.exp(mv - 1.0))


def risk_utility_loss(
    m: float,
    utility: float,
    *,
    threshold: float = ACCEPTABLE_M,
    floor: float = PUBLISHED_FLOOR,
) -> RiskUtilityLoss:
    """``loss = -w(M) * U`` (El Emam et al. 2022; design §3.1); lower is better.

    ``utility`` must lie in [0, 1].
    """
    u = check_number(utility, "utility", finite=False)
    if not 0.0 <= u <= 1.0:
        raise RiskInputError(f"`0 <= utility <= 1` must hold, got utility={utility!r}.")
    w = risk_utility_weight(m, threshold=threshold, floor=floor)
    return RiskUtilityLoss(
        loss=-w * u, weight=w, m=float(m), utility=u, threshold=float(threshold), floor=float(floor)
    )
