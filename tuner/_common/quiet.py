"""Quieting library noise for the command line (never done at import)."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import warnings
from collections.abc import Iterator

NOISY_LOGGERS = ("sdv", "sdmetrics", "rdt", "copulas", "ctgan", "mlflow", "alembic", "optuna",
                 "SingleTableSynthesizer", "MultiTableSynthesizer", "matplotlib")


class TrialFailureLines(logging.Filter):
    """Optuna's warning for a trial that raised, never shown: the tuner says each in its own
    words once (a trial's own failure and a bug: the objective; a fault of the machine and
    Ctrl-C: the command; a bug's traceback: the command), nor the "failed with value None" line
    that follows it. Another warning of Optuna's about a trial shows as one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith("Trial ") and message.endswith("failed with value None."):
            return False
        if record.exc_info:
            return False  # said in the tuner's words (the objective, the command)
        return True


def _thread_hook(args: threading.ExceptHookArgs) -> None:
    """A fault in a library's thread (Optuna's heartbeat on a full disk) in one line; the
    study stops on it in the main thread, which says so."""
    from tuner._common.faults import fault_of

    fault = fault_of(args.exc_value)
    if fault is None:
        threading.__excepthook__(args)
    else:
        print(f"warning: {getattr(args.thread, 'name', 'a thread')}: {fault}", file=sys.stderr)


def _one_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
              line: str | None = None) -> str:
    """A warning the CLI lets through, as one line for the user (no source line)."""
    return f"warning: {message}\n"


def quiet_libraries() -> None:
    """Silence SDV/SDMetrics warnings and bars and INFO logs: for the CLI and its workers only,
    called by them; library users keep their own logging and warnings set-up."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    warnings.filterwarnings("ignore")
    warnings.formatwarning = _one_line  # a warning a caller lets through again: one line
    import mlflow  # noqa: F401  (mlflow sets up its own handlers at import; quiet them after)
    import optuna

    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    trials_logger = logging.getLogger("optuna.study._optimize")  # logs a failed trial
    if not any(isinstance(f, TrialFailureLines) for f in trials_logger.filters):
        trials_logger.addFilter(TrialFailureLines())
    threading.excepthook = _thread_hook


@contextlib.contextmanager
def optuna_quiet() -> Iterator[None]:
    """Within the tuner's Python API: none of Optuna's INFO lines (``[I ...] Trial 0 finished``,
    ``A new study created``) nor its ExperimentalWarning for the features the tuner itself
    chose (``heartbeat_interval``, ``group``), which tell a library user nothing they can act
    on; the caller's own verbosity and warning filters are back on return. Also a decorator."""
    import optuna

    before = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(max(before, optuna.logging.WARNING))
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
            yield
    finally:
        optuna.logging.set_verbosity(before)
