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

Faults (:func:`fault_of`): a full disk, a read-only or inaccessible folder, a broken database
file. They stop the study, not just a trial: the trial running is marked FAIL and its MLflow
run FAILED, and the command says what is wrong in one line. On a full disk nothing could be
written, so the output folder holds a small reserve file (``.disk-reserve``), freed on a fault
to make room for those last writes and made again by the next run.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import optuna
from filelock import FileLock
from optuna.storages.journal import JournalFileBackend

from tuner import attrs, stored_split
from tuner.budget import record_interrupted
from tuner.config import Config, ConfigError
from tuner.context import Context
from tuner.errors import InputError
from tuner.seeding import derive
from tuner.tracking import Tracker, check_reachable
from tuner.trials import PARETO_PICK_ATTR

HEARTBEAT_SECONDS = 10
GRACE_SECONDS = 60
WORKER_PREFIX = attrs.WORKER_PREFIX
_SERVER_STORAGES: dict[tuple[str, int, int], optuna.storages.RDBStorage] = {}
RESERVE = ".disk-reserve"
RESERVE_BYTES = 2 << 20
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
    """``url`` with the psycopg 3 driver for PostgreSQL (SQLAlchemy's default is psycopg2),
    which must be installed."""
    if not is_postgres(url):
        return url
    url = stored_split.engine_url(url)
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
        with _opening(url):
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


def _shown(url: str) -> str:
    """``url`` without its password, if it has one."""
    if "://" in url and "@" in url:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    return url


@contextlib.contextmanager
def _opening(url: str) -> Iterator[None]:
    """A database server that cannot be reached or refuses us, said as bad input naming it (a
    fault of a local file, such as a full disk, stays a fault)."""
    import sqlalchemy.exc

    try:
        yield
    except sqlalchemy.exc.SQLAlchemyError as exc:
        if fault_of(exc) or url.startswith("sqlite"):
            raise
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise ConfigError(f"study.storage = {_shown(url)!r} cannot be opened: {reason}"
                          ) from None


def _check_url(url: str) -> None:
    """A storage URL of a known kind, and a SQLite file in a folder that exists."""
    if "://" in url and not url.startswith(("sqlite", "postgres", "mysql")):
        raise ConfigError(f"study.storage = {_shown(url)!r} is not a storage Optuna can use: "
                          "give sqlite:///PATH, postgresql://..., mysql://..., or a journal "
                          "file's path")
    if url.startswith("sqlite:///"):
        folder = Path(url[len("sqlite:///"):]).parent
        if not folder.is_dir():
            raise ConfigError(f"study.storage = {url!r}: the folder {str(folder)!r} does not "
                              "exist")


def storage(url: str) -> optuna.storages.BaseStorage:
    """RDB storage (SQLite, PostgreSQL, MySQL) with Optuna's heartbeat, or a journal file."""
    _check_url(url)
    if url.startswith(("sqlite", "postgres", "mysql")):
        beat, grace = heartbeat_seconds()

        def make() -> optuna.storages.RDBStorage:
            with _opening(url):
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
    """Create or load the study; refuse one that was run on other data or in the other mode.

    ``[study] mode = "pareto"`` makes a two-objective study (maximise U, minimise M) whose
    user attribute :data:`tuner.trials.PARETO_PICK_ATTR` holds the config's pick rule (taken
    anew on every open: the rule only decides the release, not the search).
    """
    mode = ctx.cfg.study.mode
    study = optuna.create_study(
        study_name=ctx.cfg.study.name, storage=storage(ctx.storage_url),
        sampler=sampler(ctx.cfg, worker), directions=DIRECTIONS[mode], load_if_exists=True,
    )
    stored = "pareto" if len(study.directions) > 1 else "single"
    if stored != mode:
        raise ModeChanged(
            f"study {ctx.cfg.study.name!r} in {ctx.storage_url} was run with study.mode = "
            f"{stored!r}, the config now says {mode!r}: its trials were scored for another "
            f"objective; set study.mode = {stored!r} (or --mode {stored}) to resume it, or "
            "use another study.name or --output for a new study")
    if mode == "pareto" and study.user_attrs.get(PARETO_PICK_ATTR) != ctx.cfg.study.pareto_pick:
        study.set_user_attr(PARETO_PICK_ATTR, ctx.cfg.study.pareto_pick)
    fp = ctx.fingerprint
    known = study.user_attrs.get(attrs.DATA_FINGERPRINT)
    if known is None:
        study.set_user_attr(attrs.DATA_FINGERPRINT, fp)
        study.set_user_attr(attrs.STUDY_SEED, ctx.cfg.study.seed)
        study.set_user_attr(attrs.N_TRAIN, len(ctx.split.train))
        study.set_user_attr(stored_split.SPLIT_ATTR, ctx.split_record())
    elif known != fp:
        raise DataChanged(
            f"study {ctx.cfg.study.name!r} in {ctx.storage_url} was run on other data "
            f"(fingerprint {known[:12]}..., now {fp[:12]}...): data.path "
            f"{str(ctx.cfg.data.path)!r} changed since; use another study.name or --output"
        )
    else:
        _check_split(ctx, study.user_attrs.get(stored_split.SPLIT_ATTR))
    return study


def _check_split(ctx: Context, recorded: dict[str, Any] | None) -> None:
    """The split this process made must be the study's: refuse a changed train or audit
    fraction (its trials were scored on the recorded split)."""
    now = ctx.split_record()
    if recorded is None:  # made before splits were recorded: no audit set, and prepare knew
        if ctx.split.has_audit:
            raise DataChanged(
                f"study {ctx.cfg.study.name!r} in {ctx.storage_url} was made before sealed "
                "audit sets, but this process split the data with one (its storage could not "
                "be read before opening it); run the command again")
        return
    changed = [f"data.{k} = {now[k]!r} (the study was made with {recorded[k]!r})"
               for k in ("train_fraction", "audit_fraction", "stratify")
               if k in recorded and recorded[k] != now[k]]
    if changed:
        raise DataChanged(
            f"study {ctx.cfg.study.name!r} in {ctx.storage_url} split its data otherwise: "
            f"{'; '.join(changed)}; its trials were scored on that split: set the values back "
            "to resume it, or use another study.name or --output for a new study")


class DataChanged(InputError):
    """The study exists and was run on data with another fingerprint."""


class ModeChanged(InputError):
    """The study exists and was run in the other ``study.mode``."""


# the Optuna directions of each study.mode: the loss, or (U, M)
DIRECTIONS = {"single": ["minimize"], "pareto": ["maximize", "minimize"]}


def open_stores(ctx: Context, *, optimizing: bool = False) -> tuple[Tracker, optuna.Study]:
    """The MLflow tracker and the Optuna study, created if new, one process at a time.

    Several invocations started at once would otherwise race to create the stores (MLflow's
    SQLite migration fails with "duplicate column"; two processes create the same study), so
    creation is serialised by :func:`claim_lock`. A process that will run trials
    (``optimizing``) also claims a worker slot there, which seeds its sampler.
    """
    check_reachable(ctx.mlflow_uri)  # an MLflow server that is down: said in seconds
    with claim_lock(ctx, "stores"):
        keep_reserve(ctx.output)
        study = open_study(ctx)  # other data under an existing study: said before MLflow opens
        tracker = Tracker(ctx.mlflow_uri, ctx.cfg.study.name, ctx.output)
        if optimizing:
            study.sampler = sampler(ctx.cfg, claim_worker_slot(study))
        return tracker, study
