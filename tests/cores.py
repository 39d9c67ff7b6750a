"""Which cores a test process runs on.

Under xdist each worker (and every process it starts) runs on its own share of the cores
(:func:`pin_worker`, called by ``tests/conftest.py``), so a test's torch, BLAS and audit
processes count that share (``joblib.cpu_count`` reads the affinity) instead of running 2 threads
on a core the other worker also runs on. Servers that stand for other machines (PostgreSQL, an
MLflow server) are started on every core of the session (:func:`every_core`): pinned beside the
test's own workers, CI's MLflow server was starved of its one core.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

_SESSION_CORES: set[int] | None = None  # the cores before pinning; None: never pinned


def pin_worker(count: int, me: int) -> None:
    """Run this process (worker ``me`` of ``count``) on every ``count``-th core from its
    ``me``-th; nothing where affinity cannot be set or there are fewer cores than workers."""
    global _SESSION_CORES
    if count < 2 or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) >= count:
        _SESSION_CORES = set(cores)
        os.sched_setaffinity(0, cores[me % count::count])


@contextlib.contextmanager
def every_core() -> Iterator[None]:
    """Processes started in the block run on every core the session had before pinning."""
    if _SESSION_CORES is None:
        yield
        return
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, _SESSION_CORES)
    try:
        yield
    finally:
        os.sched_setaffinity(0, mine)
