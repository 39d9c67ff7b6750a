"""Quieting library noise for the command line (never done at import)."""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings

NOISY_LOGGERS = ("sdv", "sdmetrics", "rdt", "copulas", "ctgan", "mlflow", "alembic", "optuna",
                 "SingleTableSynthesizer", "MultiTableSynthesizer", "matplotlib")


class TrialFailureLines(logging.Filter):
    """Optuna's warning for a failed trial as one line: without the traceback (the reason is
    recorded with the trial and summed up at the end), without the "failed with value None"
    line that follows it, and not at all for a trial's own failure (the objective says it in
    the tuner's words), a fault of the machine or Ctrl-C (the command says them once)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from tuner._common.faults import fault_of

        message = record.getMessage()
        if message.startswith("Trial ") and message.endswith("failed with value None."):
            return False
        if record.exc_info:
            from tuner.errors import TrialFailed

            exc = record.exc_info[1]
            if isinstance(exc, (KeyboardInterrupt, TrialFailed)) or fault_of(exc):
                return False  # the tuner says it in its own words (the objective, the command)
            record.exc_info, record.exc_text = None, None
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
    # but a renamed config key is said (tuner.config.RENAMED_KEYS): the user's file must change
    warnings.filterwarnings("default", message=r"[\w.]+ is now called ",
                            category=DeprecationWarning)
    warnings.formatwarning = _one_line
    import mlflow  # noqa: F401  (mlflow sets up its own handlers at import; quiet them after)
    import optuna

    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    trials_logger = logging.getLogger("optuna.study._optimize")  # logs a failed trial
    if not any(isinstance(f, TrialFailureLines) for f in trials_logger.filters):
        trials_logger.addFilter(TrialFailureLines())
    threading.excepthook = _thread_hook
