"""Opening the study's stores: the Optuna storage and sampler, and the MLflow tracker."""

from __future__ import annotations

import optuna
from filelock import FileLock
from optuna.storages.journal import JournalFileBackend

from tuner.budget import record_interrupted
from tuner.config import Config
from tuner.context import Context
from tuner.seeding import derive
from tuner.tracking import Tracker

HEARTBEAT_SECONDS = 10
GRACE_SECONDS = 60


def storage(url: str) -> optuna.storages.BaseStorage:
    """RDB storage (SQLite, PostgreSQL, MySQL) with Optuna's heartbeat, or a journal file."""
    if url.startswith(("sqlite", "postgresql", "mysql")):
        return optuna.storages.RDBStorage(
            url, heartbeat_interval=HEARTBEAT_SECONDS, grace_period=GRACE_SECONDS,
            heartbeat_stale_trial_callback=record_interrupted,
            engine_kwargs={"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {})
    return optuna.storages.JournalStorage(JournalFileBackend(url))


def sampler(cfg: Config, worker: int) -> optuna.samplers.BaseSampler:
    """TPE seeded per worker (workers proposing the same points would waste the budget)."""
    # Optuna 5's TPE reads the constraints each trial sets (constraints_func is deprecated)
    return optuna.samplers.TPESampler(
        seed=derive(cfg.study.seed, 1, worker),
        n_startup_trials=min(10, cfg.study.n_trials), multivariate=True, group=True,
    )


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


def open_stores(ctx: Context, worker: int = 0) -> tuple[Tracker, optuna.Study]:
    """The MLflow tracker and the Optuna study, created if new, one process at a time.

    Several invocations started at once on a new output folder would otherwise race to create
    the SQLite databases (MLflow's schema migration then fails with "duplicate column"), so
    creation is serialised by a lock file in the output folder.
    """
    with FileLock(str(ctx.output / ".stores.lock"), timeout=600):
        tracker = Tracker(ctx.mlflow_uri, ctx.cfg.study.name, ctx.output)
        return tracker, open_study(ctx, worker)
