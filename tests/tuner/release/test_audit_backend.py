"""Where the audit's refits run (issue #32): on a Dask cluster of two local worker processes the
audit gives the very figures it gives on this machine's processes, for the same seed."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest

import risk
from tests.data import unavailable
from tuner.config import AuditConfig
from tuner.data import read_builtin, split
from tuner.release import ReleasedFamily
from tuner.release._audit_backend import check_reachable, running

try:
    from distributed import get_task_stream
except ImportError:  # the `dask` extra (CI installs it: there, a failure)
    unavailable('Dask\'s distributed is not installed: python -m pip install -e ".[dask]"')


@pytest.mark.slow
def test_a_dask_cluster_gives_the_local_figures():
    frame = read_builtin("builtin:fair")
    parts = split(frame, train_fraction=0.5, seed=4)
    family = ReleasedFamily("cart", {"min_samples_leaf": 20}, "cpu", "remove")
    kwargs = dict(targets=2, shadows=8, shadow_size=60, design="shared", random_state=11)
    results = {}
    for backend in ("local", "dask"):
        with running(AuditConfig(backend=backend), 2) as jobs:
            assert jobs == 2  # two processes here, or the local cluster's two workers
            with contextlib.ExitStack() as stack:
                tasks = stack.enter_context(get_task_stream()) if backend == "dask" else None
                results[backend] = risk.membership_audit(parts.train, parts.holdout, family,
                                                         n_jobs=jobs, **kwargs)
            if tasks is not None:  # the refits really ran on the cluster's workers
                assert len(tasks.data) >= 1  # joblib may batch several fits into one task
    local, dask = (dataclasses.asdict(results[b]) for b in ("local", "dask"))
    for key in ("seconds",):  # wall time is the one figure that may differ
        local.pop(key), dask.pop(key)
    assert local == dask
    assert results["local"].n_fits == 8


def test_a_local_backend_needs_no_scheduler_and_checks_nothing():
    check_reachable(AuditConfig())  # returns at once: nothing to reach
    with running(AuditConfig(), 3) as jobs:
        assert jobs == 3


@pytest.mark.slow
def test_a_local_cluster_leaves_this_process_environment_as_it_was():
    # LocalCluster sets OMP/MKL/OPENBLAS_NUM_THREADS=1 in the parent for its workers: every
    # process started afterwards (a release in a subprocess) then ran BLAS on one thread
    import os

    before = dict(os.environ)
    with running(AuditConfig(backend="dask"), 1):
        pass
    assert dict(os.environ) == before
