"""One seed, one synthetic table, whatever the machine (tuner._common.seeding.seeded)."""

from __future__ import annotations

import os

import pytest
from threadpoolctl import threadpool_limits

from tuner.data import read_builtin
from tuner.scoring._evaluation import data_sha256
from tuner.synthesis._synthesizers import synthesize


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: BLAS runs one thread anyway")
def test_a_fit_gives_the_same_data_whatever_the_blas_thread_count():
    # a Gaussian copula with truncated normal marginals gave other last digits with OpenBLAS on
    # 2 threads than on 1 (338 of 3,183 values of `affairs`), so a trial run on one machine
    # was refused at release on another, or under a Dask worker's OPENBLAS_NUM_THREADS=1
    train = read_builtin("builtin:fair").sample(3183, random_state=1).reset_index(drop=True)
    params = {"default_distribution": "truncnorm"}
    hashes = set()
    for limit in (1, 2):
        with threadpool_limits(limits=limit, user_api="blas"):
            hashes.add(data_sha256((synthesize("gaussian_copula", params, train, seed=123,
                                               threads=1).synthetic,)))
    assert len(hashes) == 1


def test_threads_and_audit_processes_count_the_cores_this_process_may_use(monkeypatch):
    # a container given 2 of a host's 64 cores: its affinity (joblib.cpu_count reads it), not
    # the host's count; in the audit game too
    from types import SimpleNamespace

    import risk._audit_game as game
    from tuner.release._audit_plan import _jobs
    from tuner.search._study import threads_per_worker

    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3, 7}, raising=False)
    assert threads_per_worker(1) == 2 and threads_per_worker(2) == 1 and threads_per_worker(4) == 1
    ctx = SimpleNamespace(cfg=SimpleNamespace(audit=SimpleNamespace(jobs=0)))
    assert _jobs(ctx) == 2  # type: ignore[arg-type]
    ctx.cfg.audit.jobs = 5
    assert _jobs(ctx) == 5  # type: ignore[arg-type]
    started = []

    class Parallel:  # what play asks joblib for
        def __init__(self, n_jobs, **kwargs):  # noqa: ANN001, ANN003
            started.append(n_jobs)

        def __call__(self, tasks):  # noqa: ANN001, ANN204
            return iter(())

    monkeypatch.setattr(game, "Parallel", Parallel)
    game.play(None, [None] * 10, None, None, None, None, None,  # type: ignore[arg-type]
              n_jobs=8, progress=None)
    assert started == [2]
