"""Opening the study's stores: the Optuna storage and sampler, and the MLflow tracker.

One machine (the default): SQLite files in the output folder, and a lock file there makes
processes that start at once create them one at a time. Many machines: a PostgreSQL URL
(``study.storage``) and an MLflow server (``study.mlflow_uri``); a lock file cannot serialise
processes on several hosts, so PostgreSQL's advisory locks do (:func:`claim_lock`): creating
Optuna's schema (several ``RDBStorage`` made at once on a new database race on it), creating
the study and handing out worker slots, and claiming the release.

Optuna's heartbeat fails the trial of a worker that died anywhere (no heartbeat for
``GRACE_SECONDS``); ``RISK_TUNER_HEARTBEAT_SECONDS`` and ``RISK_TUNER_GRACE_SECONDS`` change
the two periods (a test uses a few seconds).
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
from optuna.storages.journal import JournalFileBackend

from tuner.budget import record_interrupted
from tuner.config import Config, ConfigError
from tuner.context import Context
from tuner.seeding import derive
from tuner.tracking import Tracker

HEARTBEAT_SECONDS = 10
GRACE_SECONDS = 60
WORKER_PREFIX = "worker."  # study attribute per worker slot: "host:pid"
_SERVER_STORAGES: dict[tuple[str, int, int], optuna.storages.RDBStorage] = {}


def heartbeat_seconds() -> tuple[int, int]:
    """Optuna's heartbeat interval and grace period (environment overrides, else defaults)."""
    beat = int(os.environ.get("RISK_TUNER_HEARTBEAT_SECONDS", HEARTBEAT_SECONDS))
    grace = int(os.environ.get("RISK_TUNER_GRACE_SECONDS", GRACE_SECONDS))
    if beat < 1 or grace <= beat:
        raise ConfigError(f"RISK_TUNER_HEARTBEAT_SECONDS={beat} and RISK_TUNER_GRACE_SECONDS="
                          f"{grace}: need 1 <= heartbeat < grace")
    return beat, grace


def is_postgres(url: str) -> bool:
    return url.startswith(("postgresql", "postgres:"))


def engine_url(url: str) -> str:
    """``url`` with the psycopg 3 driver for PostgreSQL (SQLAlchemy's default is psycopg2)."""
    if not is_postgres(url):
        return url
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    if url.startswith("postgresql+psycopg://"):
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:
            raise ConfigError(
                "study.storage is a PostgreSQL URL, which needs psycopg 3: install the "
                "distributed extra, python -m pip install -e \".[tuner,distributed]\"") from exc
    return url


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
        with engine.connect() as conn:
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


def storage(url: str) -> optuna.storages.BaseStorage:
    """RDB storage (SQLite, PostgreSQL, MySQL) with Optuna's heartbeat, or a journal file."""
    if url.startswith(("sqlite", "postgres", "mysql")):
        beat, grace = heartbeat_seconds()

        def make() -> optuna.storages.RDBStorage:
            return optuna.storages.RDBStorage(
                engine_url(url), heartbeat_interval=beat, grace_period=grace,
                heartbeat_stale_trial_callback=record_interrupted,
                engine_kwargs={"connect_args": {"timeout": 60}} if url.startswith("sqlite")
                else {"pool_pre_ping": True})

        if url.startswith("sqlite"):
            return make()
        # a server: one storage (one connection pool) per process, not one per call
        key = (url, beat, grace)
        if key not in _SERVER_STORAGES:
            if is_postgres(url):  # a new database: its schema made by one process at a time
                with pg_lock(url, "optuna-schema"):
                    _SERVER_STORAGES[key] = make()
            else:
                _SERVER_STORAGES[key] = make()
        return _SERVER_STORAGES[key]
    return optuna.storages.JournalStorage(JournalFileBackend(url))


def sampler(cfg: Config, slot: int) -> optuna.samplers.BaseSampler:
    """TPE seeded per worker slot (workers proposing the same points would waste the budget).

    Slots are handed out by the study itself (:func:`claim_worker_slot`), so they differ across
    processes and hosts; the first worker of a new study has slot 0, so one invocation with
    one worker proposes the same points for the same seed.
    """
    # Optuna 5's TPE reads the constraints each trial sets (constraints_func is deprecated)
    return optuna.samplers.TPESampler(
        seed=derive(cfg.study.seed, 1, slot),
        n_startup_trials=min(10, cfg.study.n_trials), multivariate=True, group=True,
    )


def claim_worker_slot(study: optuna.Study) -> int:
    """The next free worker slot of ``study``, recorded as ``worker.N = host:pid``. Callers
    hold the study's ``open`` lock (:func:`claim_lock`), which makes this atomic."""
    taken = [int(k[len(WORKER_PREFIX):]) for k in study.user_attrs if k.startswith(WORKER_PREFIX)]
    slot = max(taken, default=-1) + 1
    study.set_user_attr(f"{WORKER_PREFIX}{slot}", f"{socket.gethostname()}:{os.getpid()}")
    return slot


def open_study(ctx: Context, worker: int = 0) -> optuna.Study:
    """Create or load the study; refuse one that was run on other data."""
    study = optuna.create_study(
        study_name=ctx.cfg.study.name, storage=storage(ctx.storage_url),
        sampler=sampler(ctx.cfg, worker), direction="minimize", load_if_exists=True,
    )
    fp = ctx.fingerprint
    known = study.user_attrs.get("data_fingerprint")
    if known is None:
        study.set_user_attr("data_fingerprint", fp)
        study.set_user_attr("seed", ctx.cfg.study.seed)
        study.set_user_attr("n_train", len(ctx.split.train))
    elif known != fp:
        raise DataChanged(
            f"study {ctx.cfg.study.name!r} in {ctx.storage_url} was run on other data "
            f"(fingerprint {known[:12]}..., now {fp[:12]}...): data.path "
            f"{str(ctx.cfg.data.path)!r} changed since; use another study.name or --output"
        )
    return study


class DataChanged(ValueError):
    """The study exists and was run on data with another fingerprint."""


def open_stores(ctx: Context, *, optimizing: bool = False) -> tuple[Tracker, optuna.Study]:
    """The MLflow tracker and the Optuna study, created if new, one process at a time.

    Several invocations started at once would otherwise race to create the stores (MLflow's
    SQLite migration fails with "duplicate column"; two processes create the same study), so
    creation is serialised by :func:`claim_lock`. A process that will run trials
    (``optimizing``) also claims a worker slot there, which seeds its sampler.
    """
    with claim_lock(ctx, "stores"):
        tracker = Tracker(ctx.mlflow_uri, ctx.cfg.study.name, ctx.output)
        study = open_study(ctx)
        if optimizing:
            study.sampler = sampler(ctx.cfg, claim_worker_slot(study))
        return tracker, study
