"""Old argument names kept working for one release, with a warning naming the new one.

``risk`` speaks one vocabulary: ``train`` is the real frame the generator was fitted on (it was
``original`` in the attribute measures and ``real`` in :func:`risk.hellinger_utility`), and
``keys`` is what the intruder knows of a person (it was ``quasi_identifiers`` in the membership
measures and ``known`` in :func:`risk.identification_risk`). A call with an old keyword still
runs and warns (:class:`DeprecationWarning`); the old names go in the next release.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def renamed_arguments(**renames: str) -> Callable[[F], F]:
    """Accept each old keyword ``old=new`` of ``renames`` as ``new``, with a
    :class:`DeprecationWarning`; passing both the old and the new name is a :class:`TypeError`,
    as Python says of an argument given twice. The mapping is kept on the wrapped function as
    ``renamed_arguments`` (the tests find every old name there)."""

    def wrap(func: F) -> F:
        @functools.wraps(func)
        def inner(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(f"{func.__name__}() got both {old!r} (its old name) and "
                                    f"{new!r}; pass {new!r} only")
                warnings.warn(f"{func.__name__}(): the argument {old!r} is now called {new!r}; "
                              f"the old name goes in the next release", DeprecationWarning,
                              stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        inner.renamed_arguments = dict(renames)  # type: ignore[attr-defined]
        return inner  # type: ignore[return-value]

    return wrap


def renamed_field(old: str, new: str) -> property:
    """A read-only property ``old`` of a result object that returns its field ``new`` and
    warns (:class:`DeprecationWarning`) that the name changed."""

    def get(self: Any) -> Any:
        warnings.warn(f"{type(self).__name__}.{old} is now called {new}; the old name goes in "
                      f"the next release", DeprecationWarning, stacklevel=2)
        return getattr(self, new)

    return property(get, doc=f"Old name of :attr:`{new}` (deprecated).")
