"""Every public argument's range or choices, declared once, by name: an argument of the same
name means the same thing in every function that takes it (``tests/risk/test_vocabulary.py``).

A public function declares which of them it takes with :func:`risk.params.declared`
(``@takes("shadows", "design")``), and its private helpers check the same rule with
:func:`argument`; ``tests/risk/test_declared.py`` tries each rule's bad values on every
function that declares it. What a rule alone cannot say (``shadows`` even, ``attack_size``
within the frames, a population that holds the frames) is checked where the frames are known.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from risk.params import OPEN_UNIT, Choices, Range, Rule, check, declared

F = TypeVar("F", bound=Callable[..., Any])

MAX_SHADOWS = 1_000_000  # more shadow fits than any audit could run: a typo, not a request
MAX_REPEATS = 1_000_000  # the most attack sets one call draws (each: keys + 1 counts per class)

DESIGNS = ("per_target", "shared")  # the audit's games (risk.audit)
MATCHING = ("exact", "nearest")  # how CAP matches a synthetic record to a key
MISSING = ("error", "category")  # what a missing key value is

WHOLE_AT_LEAST_ONE = Range(1, integer=True)

ARGUMENTS: dict[str, Rule] = {
    # a level or a share strictly between 0 and 1
    "confidence": OPEN_UNIT, "ci_level": OPEN_UNIT, "alpha": OPEN_UNIT,
    "sampling_fraction": OPEN_UNIT,
    "m_threshold": Range(high=1, closed="left", note="M is at most 1"),
    # a limit on a rate: 1 refuses nothing
    "tpr_limit": Range(0, 1, closed="right"),
    "tolerance": Range(0, closed="neither"),
    # counts
    "numeric_bins": WHOLE_AT_LEAST_ONE, "bins": WHOLE_AT_LEAST_ONE,
    "min_members": WHOLE_AT_LEAST_ONE, "neighbours": WHOLE_AT_LEAST_ONE,
    "targets": WHOLE_AT_LEAST_ONE,  # a count (membership_audit also takes labels)
    "denom_lim": WHOLE_AT_LEAST_ONE,
    "max_synthetic": WHOLE_AT_LEAST_ONE, "population_size": WHOLE_AT_LEAST_ONE,
    "shadow_size": WHOLE_AT_LEAST_ONE,
    "hamming_threshold": Range(0, integer=True),
    "attack_size": Range(2, integer=True),
    "repeats": Range(1, MAX_REPEATS, integer=True),
    "shadows": Range(8, MAX_SHADOWS, integer=True),
    # choices
    "design": Choices(DESIGNS), "matching": Choices(MATCHING), "missing": Choices(MISSING),
}


def argument(value: Any, name: str) -> Any:
    """``value`` of argument ``name`` if it keeps its declared rule (else the rule's error)."""
    return check(value, name, ARGUMENTS[name])


def takes(*names: str) -> Callable[[F], F]:
    """Declare that a public function takes the arguments ``names`` of :data:`ARGUMENTS`:
    they are checked before its body runs (:func:`risk.params.declared`)."""
    return declared(**{n: ARGUMENTS[n] for n in names})
