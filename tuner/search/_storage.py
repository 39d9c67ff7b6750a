"""Opening the study's stores: the Optuna storage and sampler, and the MLflow tracker.

One machine (the default): SQLite files in the output folder, and a lock file there makes
processes that start at once create them one at a time. Many machines: a PostgreSQL URL
(``study.storage``) and an MLflow server (``study.mlflow_uri``), with PostgreSQL's advisory
locks between the workers (:mod:`tuner.search._locks`). Faults of the machine are told from a
trial's failures by :mod:`tuner._common.faults`.

Optuna's heartbeat fails the trial of a worker that died anywhere (no heartbeat for
``GRACE_SECONDS``); ``RISK_TUNER_HEARTBEAT_SECONDS`` and ``RISK_TUNER_GRACE_SECONDS`` change
the two periods (a test uses a few seconds).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import optuna
from optuna.storages.journal import JournalFileBackend
from optuna.study import StudyDirection

from tuner._common import attrs
from tuner._common.faults import keep_reserve
from tuner._common.seeding import SeedPath, derive
from tuner.config import Config, ConfigError
from tuner.errors import InputError
from tuner.search import _pruning as pruning
from tuner.search import _secret as secret
from tuner.search import _stored_split as stored_split
from tuner.search._budget import record_interrupted
from tuner.search._checkpointed import prunes
from tuner.search._context import Context
from tuner.search._database import engine_url, is_postgres, opening, shown
from tuner.search._locks import claim_lock, claim_worker_slot, pg_lock
from tuner.search._tracking import Tracker, check_reachable
from tuner.search._trials import PARETO_PICK_ATTR
from tuner.synthesis import SYNTHESIZERS, narrow

HEARTBEAT_SECONDS = 10
GRACE_SECONDS = 60
_SERVER_STORAGES: dict[tuple[str, int, int], optuna.storages.RDBStorage] = {}


def heartbeat_seconds() -> tuple[int, int]:
    """Optuna's heartbeat interval and grace period (environment overrides, else defaults)."""
    beat = int(os.environ.get("RISK_TUNER_HEARTBEAT_SECONDS", HEARTBEAT_SECONDS))
    grace = int(os.environ.get("RISK_TUNER_GRACE_SECONDS", GRACE_SECONDS))
    if beat < 1 or grace <= beat:
        raise ConfigError(f"RISK_TUNER_HEARTBEAT_SECONDS={beat} and RISK_TUNER_GRACE_SECONDS="
                          f"{grace}: need 1 <= heartbeat < grace")
    return beat, grace


def _check_url(url: str) -> None:
    """A storage URL of a known kind, and a SQLite file in a folder that exists."""
    if "://" in url and not url.startswith(("sqlite", "postgres", "mysql")):
        raise ConfigError(f"study.storage = {shown(url)!r} is not a storage Optuna can use: "
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
            with opening(url):
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
        seed=derive(cfg.study.seed, SeedPath.SAMPLER, slot),
        n_startup_trials=min(10, cfg.study.trial_budget), multivariate=True, group=True,
    )


def pruner(cfg: Config) -> optuna.pruners.BasePruner:
    """What stops an unpromising neural trial at a checkpoint (``[study] pruner``; Optuna keeps
    no pruner in its storage, so every process builds it from the config), comparing it with
    trials of its own family only (:mod:`tuner.search._pruning`). The rungs are the
    checkpoints' (first_checkpoint x 3^k, :mod:`tuner.search._checkpointed`); Hyperband's
    largest is the most epochs any searched family may draw."""
    study = cfg.study
    if not prunes(cfg):
        return optuna.pruners.NopPruner()
    if study.pruner == "halving":
        return pruning.halving(min_resource=study.first_checkpoint, reduction_factor=3,
                               bootstrap_count=study.pruner_bootstrap)
    tops = [narrow(n, cfg.spaces.get(n))["epochs"] for n in study.synthesizers
            if SYNTHESIZERS[n].has_epochs]
    top = max((int(getattr(d, "high", study.first_checkpoint)) for d in tops),
              default=study.first_checkpoint)
    return pruning.hyperband(min_resource=study.first_checkpoint,
                             max_resource=max(top, study.first_checkpoint), reduction_factor=3,
                             bootstrap_count=study.pruner_bootstrap)


def open_study(ctx: Context, worker: int = 0) -> optuna.Study:
    """Create or load the study; refuse one that was run on other data or in the other mode.

    ``[study] mode = "pareto"`` makes a two-objective study (maximise U, minimise M) whose
    user attribute :data:`tuner.search._trials.PARETO_PICK_ATTR` holds the config's pick rule (taken
    anew on every open: the rule only decides the release, not the search).
    """
    mode = ctx.cfg.study.mode
    study = optuna.create_study(
        study_name=ctx.cfg.study.name, storage=storage(ctx.storage_url),
        sampler=sampler(ctx.cfg, worker), directions=DIRECTIONS[mode], load_if_exists=True,
        pruner=pruner(ctx.cfg),
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
        _owner_only(ctx.storage_url)  # it will hold the secret: like split.json, 0600
        # the secret first: a study whose storage holds a fingerprint holds its secret too
        study.set_user_attr(attrs.SECRET, secret.encode(ctx.secret))
        secret.record_new(ctx.output, ctx.cfg.study.name, ctx.secret, seed=ctx.cfg.study.seed,
                          public_seed=ctx.secret is None,
                          identity=secret.identity(ctx.cfg, ctx.fingerprint))
        study.set_user_attr(attrs.STUDY_SEED, ctx.cfg.study.seed)
        study.set_user_attr(attrs.N_TRAIN, len(ctx.split.train))
        study.set_user_attr(stored_split.SPLIT_ATTR, ctx.split_record())
        # the fingerprint last: it marks the study as made, so a worker reading it meanwhile
        # (stored_split.recorded_split) finds no study, never one without its split (which
        # it would refuse as made before 0.1.0)
        study.set_user_attr(attrs.DATA_FINGERPRINT, fp)
    elif secret.decode(study.user_attrs.get(attrs.SECRET), "the study's storage") != ctx.secret:
        raise SecretChanged(
            f"study {ctx.cfg.study.name!r} in {ctx.storage_url} was made by another process "
            "with its own secret after this one read the storage; run the command again")
    elif known != fp:
        raise DataChanged(
            f"study {ctx.cfg.study.name!r} in {ctx.storage_url} was run on other data "
            f"(fingerprint {known[:12]}..., now {fp[:12]}...): data.path "
            f"{str(ctx.cfg.data.path)!r} changed since; use another study.name or --output"
            + (f" (or the study was made before columns written with leading zeros, here "
               f"{list(ctx.codes_as_text)}, were read as text: its trials learnt them as "
               "numbers, so a new study is needed for them)" if ctx.codes_as_text else ""))
    else:
        _check_split(ctx, study.user_attrs.get(stored_split.SPLIT_ATTR))
    return study


def _check_split(ctx: Context, recorded: dict[str, Any] | None) -> None:
    """The split this process made must be the study's: refuse a changed train or audit
    fraction (its trials were scored on the recorded split)."""
    now = ctx.split_record()
    if recorded is None:  # prepare refuses such a study when it can read the storage first
        raise DataChanged(stored_split.no_split(ctx.cfg.study.name, ctx.storage_url))
    changed = [f"data.{k} = {now[k]!r} (the study was made with {recorded[k]!r})"
               for k in ("train_fraction", "audit_fraction", "stratify")
               if k in recorded and recorded[k] != now[k]]
    if changed:
        raise DataChanged(
            f"study {ctx.cfg.study.name!r} in {ctx.storage_url} split its data otherwise: "
            f"{'; '.join(changed)}; its trials were scored on that split: set the values back "
            "to resume it, or use another study.name or --output for a new study")


def _owner_only(url: str) -> None:
    """A local storage file (SQLite, journal) readable by its owner only."""
    path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else \
        (url if "://" not in url else None)
    if path and os.path.exists(path):
        os.chmod(path, 0o600)


class SecretChanged(InputError):
    """Another process made the study, with its own secret, after this one prepared its split
    (:func:`tuner.api.start` prepares again then)."""


class DataChanged(InputError):
    """The study exists and was run on data with another fingerprint."""


class ModeChanged(InputError):
    """The study exists and was run in the other ``study.mode``."""


# the Optuna directions of each study.mode: the loss, or (U, M)
DIRECTIONS: dict[str, list[StudyDirection]] = {
    "single": [StudyDirection.MINIMIZE],
    "pareto": [StudyDirection.MAXIMIZE, StudyDirection.MINIMIZE],
}


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
