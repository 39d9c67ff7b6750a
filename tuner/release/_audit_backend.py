"""Where the release audit's refits run: this machine's processes, or a Dask cluster.

The audit's cost is its refits, each independent and seeded by its own run (so the figures do
not depend on where or in which order they run). ``[audit] backend = "local"`` runs them over
``[audit] jobs`` processes of this machine (joblib's loky); ``"dask"`` hands them to a Dask
cluster through joblib's Dask backend (Dask's ``distributed``, the ``dask`` extra): the
scheduler at ``[audit] scheduler`` (``tcp://host:8786``, started as the Dask documentation
says: ``dask scheduler`` on one machine, ``dask worker tcp://host:8786`` on each), or without
one a cluster of ``jobs`` worker processes on this machine. Every worker must be able to import
the tuner (and a registered family's module).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from unittest import mock

from tuner.config import AuditConfig, ConfigError

CONNECT_SECONDS = 10.0


def check_reachable(a: AuditConfig) -> None:
    """A Dask scheduler that is not there: said before any trial, naming the key."""
    if a.backend != "dask" or not a.scheduler:
        return
    from distributed import Client

    try:
        with Client(a.scheduler, timeout=CONNECT_SECONDS) as client:
            client.wait_for_workers(1, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(f"audit.scheduler = {a.scheduler!r}: no Dask scheduler with a "
                          f"worker answered within {CONNECT_SECONDS:g} s "
                          f"({type(exc).__name__}: {exc}); start it (dask scheduler, then dask "
                          "worker ADDRESS on each machine) or fix the address") from None


@contextlib.contextmanager
def running(a: AuditConfig, jobs: int) -> Iterator[int]:
    """The block's joblib calls run on the configured backend; yields the parallel jobs to ask
    for (the cluster's worker processes with Dask)."""
    if a.backend != "dask":
        yield jobs
        return
    from distributed import Client, LocalCluster
    from joblib import parallel_config

    # a LocalCluster sets OMP/MKL/OPENBLAS_NUM_THREADS=1 (and MALLOC_TRIM_THRESHOLD_) in this
    # process's environment for its workers and leaves them: every process started afterwards
    # ran its BLAS on one thread. patch.dict puts the environment back as it was.
    with mock.patch.dict(os.environ), contextlib.ExitStack() as stack:
        if a.scheduler:
            client = stack.enter_context(Client(a.scheduler, timeout=CONNECT_SECONDS))
        else:
            cluster = stack.enter_context(LocalCluster(
                n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None))
            client = stack.enter_context(Client(cluster))
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        stack.enter_context(parallel_config(backend="dask"))
        yield workers

