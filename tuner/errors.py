"""The tuner's expected errors: one base class, so that a bug is never reported as bad input.

:class:`TunerError` is every error the tuner raises on purpose; :class:`InputError` (a
``ValueError`` too) is bad input: a config key, an argument, a data file, a study's stored state
that the inputs contradict. The command line (:mod:`tuner.cli`) says an :class:`InputError`, a
``risk.RiskInputError`` or a missing file in one line with exit 2, a fault of the machine
(:class:`tuner.faults.Fault`: a full disk, a read-only folder) in one line with exit 1, "no
release candidate" with exit 3; anything else, a ``ValueError`` from pandas or a broken
invariant included, is a bug: Python's traceback and exit 1 (please report it).

This mirrors Optuna's one ``OptunaError`` and scikit-learn's declared parameter errors: callers
of the Python API catch ``TunerError`` for everything the tuner means to raise.
"""

from __future__ import annotations


class TunerError(Exception):
    """An error the tuner raises on purpose (never a bug); see the module docstring."""


class InputError(TunerError, ValueError):
    """Bad input: the message names the key or argument, the value and what was expected."""


__all__ = ["InputError", "TunerError"]
