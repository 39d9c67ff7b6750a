"""What the workers of one study coordinate through: locks that every worker sees, and the
worker slots that seed each worker's sampler differently.

One machine: a lock file in the output folder. Many machines: a lock file cannot serialise
processes on several hosts, so PostgreSQL's advisory locks do (:func:`claim_lock`): creating
Optuna's schema (several ``RDBStorage`` made at once on a new database race on it), creating
the study and handing out worker slots, and claiming the release.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import optuna
from filelock import FileLock

from tuner._common import attrs
from tuner.search._context import Context
from tuner.search._database import engine_url, is_postgres, opening

WORKER_PREFIX = attrs.WORKER_PREFIX

def _lock_key(name: str) -> int:
    """A signed 64-bit advisory-lock key for ``name``."""
    return int.from_bytes(hashlib.sha256(f"risk-tuner:{name}".encode()).digest()[:8], "big",
                          signed=True)


@contextlib.contextmanager
def pg_lock(url: str, name: str) -> Iterator[None]:
    """PostgreSQL's session advisory lock ``name`` on the database of ``url``, for the block."""
    import sqlalchemy
    from sqlalchemy.pool import NullPool

    engine = sqlalchemy.create_engine(engine_url(url), poolclass=NullPool)
    try:
        with opening(url):
            conn = engine.connect()
        with conn:
            conn.execute(sqlalchemy.text("SELECT pg_advisory_lock(:k)"), {"k": _lock_key(name)})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:k)"),
                             {"k": _lock_key(name)})
                conn.commit()
    finally:
        engine.dispose()


@contextlib.contextmanager
def claim_lock(ctx: Context, name: str) -> Iterator[None]:
    """A lock that every worker of the study sees: PostgreSQL's advisory lock when the study
    is in PostgreSQL (any host), else a lock file in the output folder (this host only)."""
    if is_postgres(ctx.storage_url):
        with pg_lock(ctx.storage_url, f"{ctx.cfg.study.name}:{name}"):
            yield
    else:
        with FileLock(str(Path(ctx.output) / f".{name}.lock"), timeout=3600):
            yield


def claim_worker_slot(study: optuna.Study) -> int:
    """The next free worker slot of ``study``, recorded as ``worker.N = host:pid``. Callers
    hold the study's ``open`` lock (:func:`claim_lock`), which makes this atomic."""
    taken = [int(k[len(WORKER_PREFIX):]) for k in study.user_attrs if k.startswith(WORKER_PREFIX)]
    slot = max(taken, default=-1) + 1
    study.set_user_attr(f"{WORKER_PREFIX}{slot}", f"{socket.gethostname()}:{os.getpid()}")
    return slot
