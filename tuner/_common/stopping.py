"""SIGTERM ends a run as Ctrl-C does.

``kill``, ``timeout`` and batch schedulers (Slurm, PBS, Kubernetes) stop a job with SIGTERM,
sent to the tuner's process only. Python's default for it ends the process at once: no line
said, the trial left RUNNING, and the processes it started (the study's workers, the audit's
joblib workers and their resource tracker) orphaned, burning the cores after the tuner had gone.
Within :func:`terminating_as_interrupt` SIGTERM raises :class:`Terminated`, a
``KeyboardInterrupt``, where the signal finds the main thread: every clean-up Ctrl-C runs (the
trial cut short and resumable, MLflow runs ended KILLED, joblib's workers terminated, the
study's worker processes ended) runs for it too, and the command says so (exit 143, 128 +
SIGTERM). A second SIGTERM during that clean-up is ignored; a scheduler's SIGKILL is not.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises ``KeyboardInterrupt``."""


def _raise(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up runs whole
    raise Terminated(f"stopped by signal {signal.Signals(signum).name}")


def raising() -> bool:
    """Whether SIGTERM raises :class:`Terminated` here now."""
    return signal.getsignal(signal.SIGTERM) is _raise


@contextlib.contextmanager
def terminating_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (main thread only: elsewhere the
    block runs as it is, signals go to the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def install() -> None:
    """SIGTERM raises :class:`Terminated` for the rest of this process (a worker process)."""
    signal.signal(signal.SIGTERM, _raise)
