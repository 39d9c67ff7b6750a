"""Declared settings: a value's range or choices said once, from which come its check (one
message format naming the setting, the value and what was expected), its line in a reference
page and the bad values a test tries.

In the manner of scikit-learn's parameter validation (``sklearn/utils/_param_validation.py``:
``Interval``, ``StrOptions`` and the invalid values its common tests generate from them; here
``Range``, since ``risk.Interval`` is a confidence interval). The
same rules declare ``risk``'s public arguments (:func:`declared`), the tuner's config keys
(``tuner.config.key``) and its ``[risk]`` options (``tuner.measures.Option``).

    >>> rule = Range(0, 1, closed="neither")
    >>> problem("confidence", rule, 1.5)
    'confidence must be in (0, 1), got 1.5'
    >>> rule.outside(integer=False)
    (0, 1)
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import numbers
from collections.abc import Callable, Collection
from typing import Any, Literal, TypeVar

import numpy as np

from risk._errors import RiskInputError

Closed = Literal["both", "left", "right", "neither"]
F = TypeVar("F", bound=Callable[..., Any])


@dataclasses.dataclass(frozen=True)
class Range:
    """A number between ``low`` and ``high`` (``None``: unbounded on that side); ``closed``
    says which ends belong to it. ``unit`` is said after the range ("> 0 minutes"), ``note``
    after that, in brackets (why the range is what it is)."""

    low: float | None = None
    high: float | None = None
    closed: Closed = "both"
    unit: str = ""
    note: str = ""
    integer: bool = False  # a whole number (risk's arguments; a config key has its type)

    def __post_init__(self) -> None:
        if self.low is not None and self.high is not None and not self.low < self.high:
            raise ValueError(f"Range needs low < high, got low={self.low}, high={self.high}")

    @property
    def _low_closed(self) -> bool:
        return self.closed in ("both", "left")

    @property
    def _high_closed(self) -> bool:
        return self.closed in ("both", "right")

    def expected(self) -> str:
        """What a value must be: ``>= 1``, ``> 0 minutes``, ``in (0, 1]``."""
        if self.low is not None and self.high is not None:
            text = (f"in {'[' if self._low_closed else '('}{_num(self.low)}, {_num(self.high)}"
                    f"{']' if self._high_closed else ')'}")
        elif self.low is not None:
            text = f"{'>=' if self._low_closed else '>'} {_num(self.low)}"
        elif self.high is not None:
            text = f"{'<=' if self._high_closed else '<'} {_num(self.high)}"
        else:
            text = "a finite number"
        text += f" {self.unit}" if self.unit else ""
        return text + (f" ({self.note})" if self.note else "")

    def holds(self, value: Any) -> bool:
        """Whether the number ``value`` lies in the range (NaN and the infinities never do: a
        setting is a finite number)."""
        v = float(value)
        if not math.isfinite(v):
            return False
        if self.low is not None and not (v >= self.low if self._low_closed else v > self.low):
            return False
        return self.high is None or (v <= self.high if self._high_closed else v < self.high)

    def outside(self, *, integer: bool) -> tuple[float, ...]:
        """Values just beyond each bounded end (for an integer setting, whole numbers)."""
        integer = integer or self.integer
        step = 1 if integer else 0.5
        out: list[float] = []
        if self.low is not None:
            out.append(self.low - step if self._low_closed else self.low)
        if self.high is not None:
            out.append(self.high + step if self._high_closed else self.high)
        return tuple(int(v) if integer else v for v in out)


@dataclasses.dataclass(frozen=True)
class Choices:
    """One of ``values`` (strings); for a list-valued setting, each of its items. ``values``
    may be a live registry (a mapping whose keys are the choices: a family registered later is
    a choice too)."""

    values: Collection[str]

    def expected(self) -> str:
        return f"one of {tuple(self.values)!r}"

    def holds(self, value: Any) -> bool:
        if isinstance(value, (tuple, list)):
            return all(v in self.values for v in value)
        return isinstance(value, str) and value in self.values

    def outside(self, *, integer: bool = False) -> tuple[str, ...]:
        """A value that is none of the choices."""
        return ("+".join(self.values) + "?",)

    def __hash__(self) -> int:
        return hash(tuple(self.values))


Rule = Range | Choices

# the range most shared: a confidence level, a level alpha, a share strictly between 0 and 1
OPEN_UNIT = Range(0, 1, closed="neither")


def problem(name: str, rule: Rule, value: Any) -> str | None:
    """The one message of a value that breaks its rule (``None`` when it keeps it): the
    setting's name, what was expected and the value. A list-valued setting under
    :class:`Choices` names the items that are not choices."""
    if rule.holds(value):
        return None
    if isinstance(value, (tuple, list)):
        value = [v for v in value if not rule.holds(v)]
    return f"{name} must be {rule.expected()}, got {value!r}"


def declared(**rules: Rule) -> Callable[[F], F]:
    """Declare the ranges and choices of a public function's arguments: the wrapped function
    checks them before its body runs (``None`` is not checked where the signature allows it)
    and raises ``risk.RiskInputError`` naming the argument; ``fn.declared`` holds the rules, so
    that a test tries each one's bad values (``tests/risk/test_declared.py``). A number's type
    (a bool or a string is not one) is checked here too, as :class:`TypeError`."""
    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        unknown = sorted(set(rules) - set(signature.parameters))
        # None is let through where the signature allows it: a None default, or None in the
        # argument's type (``numeric_bins: int | None``: no binning)
        may_be_none = {n for n, p in signature.parameters.items()
                       if p.default is None or "None" in str(p.annotation)}
        if unknown:
            raise TypeError(f"{fn.__qualname__} has no argument(s) {unknown} to declare")

        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            given = signature.bind_partial(*args, **kwargs).arguments
            for name, rule in rules.items():
                if name in given and not (given[name] is None and name in may_be_none):
                    check(given[name], name, rule)
            return fn(*args, **kwargs)

        checked.declared = dict(rules)  # type: ignore[attr-defined]
        return checked  # type: ignore[return-value]
    return decorate


def check(value: Any, name: str, rule: Rule) -> Any:
    """``value`` if it keeps ``rule``; else ``TypeError`` (not a number, not a whole number
    where one is declared, not a string) or ``risk.RiskInputError`` with :func:`problem`'s
    message, the name in backticks."""
    if isinstance(rule, Range):
        if rule.integer and not (_is_number(value) and isinstance(value, numbers.Integral)):
            raise TypeError(f"`{name}` must be an integer, got {value!r}.")
        if not _is_number(value):
            raise TypeError(f"`{name}` must be a number, got {value!r}.")
    elif not isinstance(value, str):  # an argument is one choice (a list of them is a key's)
        raise RiskInputError(f"`{name}` must be {rule.expected()}, got {value!r}")
    said = problem(f"`{name}`", rule, value)
    if said:
        raise RiskInputError(said)
    return value


def _is_number(value: Any) -> bool:
    """A real number, not a bool (Python's or numpy's)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _num(value: float) -> str:
    """A bound as a message says it: whole numbers in full (``1_000_000``), others as ``:g``."""
    if math.isfinite(value) and float(value).is_integer():
        return f"{int(value):_}" if abs(value) >= 10_000 else str(int(value))
    return f"{value:g}"
