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

A signal's exception raised while the main thread runs a finalizer (``__del__``, a weakref or
gc callback) is swallowed by Python ("Exception ignored in ..."): the stop was lost, and with
SIGTERM then ignored the run went on to its end (CI's SIGTERM test, December 2026). The
:data:`sys.unraisablehook` installed here delivers such a swallowed stop again, to the main
thread's next line of ordinary code.
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

EXIT_TERMINATED = 128 + signal.SIGTERM
AGAIN_SECONDS = 0.01  # a swallowed stop, raised again after the finalizer


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises ``KeyboardInterrupt``."""


def _raise(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up runs whole
    raise Terminated(f"stopped by signal {signal.Signals(signum).name}")


def _deliver_again(unraisable: Any) -> None:
    """A stop swallowed by a finalizer, delivered again; anything else to the hook there was.

    The signal is raised again from a thread a moment later (:func:`_thread.interrupt_main`),
    once this hook has returned: raised here, in the main thread, it would be swallowed too."""
    exc = unraisable.exc_value
    if isinstance(exc, Terminated):
        signal.signal(signal.SIGTERM, _raise)  # _raise had set it to be ignored
        signum = signal.SIGTERM
    elif isinstance(exc, KeyboardInterrupt):
        signum = signal.SIGINT
    else:
        _hook_before(unraisable)
        return
    again = threading.Timer(AGAIN_SECONDS, _thread.interrupt_main, args=(signum,))
    again.daemon = True
    again.start()


_hook_before = sys.unraisablehook


def _hook() -> None:
    global _hook_before
    if sys.unraisablehook is not _deliver_again:
        _hook_before = sys.unraisablehook
        sys.unraisablehook = _deliver_again


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
    _hook()
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def install() -> None:
    """SIGTERM raises :class:`Terminated` for the rest of this process (a worker process)."""
    _hook()
    signal.signal(signal.SIGTERM, _raise)
