"""Faults of the machine, told from failures of a trial: a full disk, a read-only or
inaccessible folder, a broken database file (:func:`fault_of`).

They stop the study, not just a trial: the trial running is marked FAIL and its MLflow run
FAILED, and the command says what is wrong in one line (exit 1). On a full disk nothing could be
written, so the output folder holds a small reserve file (``.disk-reserve``), freed on a fault
to make room for those last writes and made again by the next run.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tuner._common import stopping

FAULT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM}
FAULT_TEXTS = ("database or disk is full", "no space left on device", "disk quota exceeded",
               "readonly database", "read-only file system", "disk i/o error",
               "unable to open database file", "permission denied")


class Fault(OSError):
    """The machine, not the trial, failed (a full disk, a read-only folder): stop the study."""


def fault_of(exc: BaseException | None) -> str | None:
    """What is wrong, in a few words, when ``exc`` (or an exception it came from) is a fault of
    the disk or a store rather than of a trial; else ``None``."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, Fault):
            return str(exc)
        if isinstance(exc, OSError) and exc.errno in FAULT_ERRNOS:
            where = f" ({exc.filename})" if exc.filename else ""
            return f"{exc.strerror or os.strerror(exc.errno)}{where}"
        text = str(exc).lower()
        for known in FAULT_TEXTS:
            if known in text:
                # SQLite says "readonly": say it as the file system does
                return ("read-only database (the output folder or its database cannot be "
                        "written)" if known == "readonly database" else known)
        exc = exc.__cause__ or exc.__context__
    return None


RESERVE = ".disk-reserve"
RESERVE_BYTES = 2 << 20


def keep_reserve(output: Path) -> None:
    """Make the reserve file of the output folder (see the module docstring) if it is not
    there; on a disk already full it is an error, before any trial."""
    path = Path(output) / RESERVE
    with contextlib.suppress(OSError):
        if path.stat().st_size == RESERVE_BYTES:
            return
    try:
        with open(path, "wb") as f:
            f.write(bytes(RESERVE_BYTES))
            f.flush()
            os.fsync(f.fileno())
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink()
        raise


def free_reserve(output: Path) -> None:
    """Free the reserve's space for the writes that record a fault."""
    with contextlib.suppress(OSError):
        (Path(output) / RESERVE).unlink()


@contextlib.contextmanager
def interrupt_after() -> Iterator[None]:
    """Run the block whole: a Ctrl-C (or a SIGTERM that :mod:`tuner._common.stopping` turns
    into one) that arrives inside it takes effect when it ends.

    A KeyboardInterrupt raised in the middle of a database write (inside SQLAlchemy's session)
    leaves that connection's SQLite transaction open with its write lock, so every later write
    of the process waits out the busy timeout and fails ("database is locked"), and MLflow logs
    each failure with a traceback: the interrupted trial's run could not be ended. Only the
    main thread receives signals; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    deferred: list[int] = [signal.SIGINT, *([signal.SIGTERM] if stopping.raising() else [])]
    caught: list[tuple[int, Any]] = []
    def keep(signum: int, frame: Any) -> None:
        caught.append((signum, frame))

    previous: dict[int, Any] = {s: signal.signal(s, keep) for s in deferred}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if caught:
            signum, frame = caught[0]
            handler = previous[signum]
            if callable(handler):
                handler(signum, frame)
            elif handler == signal.SIG_DFL:
                raise KeyboardInterrupt


class Uninterrupted:
    """``target`` whose every method call runs whole (:func:`interrupt_after`)."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr

        @functools.wraps(attr)
        def whole(*args: Any, **kwargs: Any) -> Any:
            with interrupt_after():
                return attr(*args, **kwargs)

        return whole
