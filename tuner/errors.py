"""The tuner's expected errors: one base class, so that a bug is never reported as bad input.

:class:`TunerError` is every error the tuner raises on purpose; :class:`InputError` (a
``ValueError`` too) is bad input: a config key, an argument, a data file, a study's stored state
that the inputs contradict. The command line (:mod:`tuner.cli`) says an :class:`InputError`, a
``risk.RiskInputError`` or a missing file in one line with exit 2, a fault of the machine
(:class:`tuner._common.faults.Fault`: a full disk, a read-only folder) in one line with exit 1, "no
release candidate" with exit 3; anything else, a ``ValueError`` from pandas or a broken
invariant included, is a bug: Python's traceback and exit 1 (please report it).

Inside a study, :class:`TrialFailed` is the one kind of error a trial absorbs: a synthesiser
that cannot fit or sample with the parameters it was given (:class:`SynthesisFailed`, the
library's exception as its cause), synthetic data that cannot be scored or that the gate
emptied (``tuner.scoring.UnusableSynthesis``). The trial is recorded failed with the reason and
the study goes on. Anything else raised in a trial stops the study (a bug in a measure must not
pass for a bad synthesiser, and end as "no release candidate").

This mirrors Optuna's one ``OptunaError`` and scikit-learn's declared parameter errors: callers
of the Python API catch ``TunerError`` for everything the tuner means to raise.
"""

from __future__ import annotations


class TunerError(Exception):
    """An error the tuner raises on purpose (never a bug); see the module docstring."""


class InputError(TunerError, ValueError):
    """Bad input: the message names the key or argument, the value and what was expected."""


class ConfigError(InputError):
    """A configuration file is malformed; the message names the key and the problem."""


class TrialFailed(TunerError):
    """One trial could not be scored for a reason of its own (its synthesiser, its parameters,
    its synthetic data): recorded with the trial, and the study goes on."""


class SynthesisFailed(TrialFailed, RuntimeError):
    """The synthesiser raised while fitting or sampling with the trial's parameters; the
    library's exception is the cause (``__cause__``)."""


__all__ = ["ConfigError", "InputError", "SynthesisFailed", "TrialFailed", "TunerError"]
