"""How an existing study split its data (fractions and secret), read from its storage before
anything else opens it.

A study records its split fractions when it is created (study attribute ``split``), so that every
later process makes the same split; a study without that record was made before 0.1.0, the first
release, and is refused (:func:`tuner.search._context.prepare`). The split must be known before
the context is made (trials read it), so this peeks at the storage with Optuna alone, creating
nothing: no file, no schema, no study.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna

from tuner._common import attrs

SPLIT_ATTR = attrs.SPLIT


def engine_url(url: str) -> str:
    """``url`` with the psycopg 3 driver for PostgreSQL (SQLAlchemy's default is psycopg2)."""
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def no_split(study_name: str, url: str) -> str:
    """Why a study that records no split is refused (every study 0.1.0 makes records one)."""
    return (f"study {study_name!r} in {url} records no split: it was made before 0.1.0, the "
            "first release, whose studies always do; start a new study (another study.name or "
            "--output)")


def recorded_split(url: str, study_name: str) -> dict[str, Any] | None:
    """The split the study ``study_name`` in storage ``url`` recorded (empty for a study made
    before splits were recorded) with its secret; ``None`` when there is no such study yet (or
    its storage cannot be read here: then opening it says why, as before)."""
    try:
        study = _existing(url, study_name)
    except Exception:  # noqa: BLE001 - unreadable here: the storage's own opening says why
        return None
    if study is None or attrs.DATA_FINGERPRINT not in study.user_attrs:
        return None
    # with the study's secret (tuner.search._secret): None for a public-seed study
    return dict(study.user_attrs.get(SPLIT_ATTR) or {}) | {
        attrs.SECRET: study.user_attrs.get(attrs.SECRET)}


def _existing(url: str, study_name: str) -> optuna.Study | None:
    if "://" not in url:  # a journal file
        if not Path(url).exists():
            return None
        from optuna.storages.journal import JournalFileBackend

        store: optuna.storages.BaseStorage = optuna.storages.JournalStorage(
            JournalFileBackend(url))
    else:
        if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
            return None
        store = optuna.storages.RDBStorage(engine_url(url), skip_table_creation=True)
    names = {s.study_name for s in store.get_all_studies()}
    return optuna.load_study(study_name=study_name, storage=store) if study_name in names \
        else None
