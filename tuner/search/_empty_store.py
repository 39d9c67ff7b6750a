"""A study's new local MLflow store, started from a copy of an empty one MLflow made.

MLflow builds a new SQLite store by creating its first tables and then running every schema
migration since (``mlflow.store.db.utils._initialize_tables``): 2-5 s on 2 cores, paid by every
new study and by every test that runs one. The first time, this module lets MLflow build one
empty store in the user's cache (one per MLflow version); each new study then starts from a copy
of that file, which MLflow opens as it opens any store of its version (it checks the schema
revision, ``_verify_schema``). The copy's ``Default`` experiment is pointed at the study's own
artifact folder; :class:`tuner.search._tracking.Tracker` deletes it when it is empty, as before.

Anything unusual (no writable cache, a copy that fails, another process that made the store
first) leaves the store to MLflow, which builds it as it always did.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

CACHE_ENV = "RISK_TUNER_CACHE"  # where the empty store is kept (default: the user's cache)


def cache_folder() -> Path:
    """``$RISK_TUNER_CACHE``, else ``$XDG_CACHE_HOME/risk-tuner``, else ``~/.cache/risk-tuner``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "risk-tuner"


def _empty_store() -> Path:
    """The empty store of the installed MLflow version, made by MLflow the first time."""
    import mlflow

    folder = cache_folder()
    made = folder / f"mlflow-{mlflow.__version__}-empty.db"
    if made.exists():
        return made
    folder.mkdir(parents=True, exist_ok=True)
    building = folder / f".{made.name}.{os.getpid()}"
    building.unlink(missing_ok=True)
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    store = SqlAlchemyStore(f"sqlite:///{building}", (folder / "mlruns").as_uri())
    store.engine.dispose()
    os.replace(building, made)  # whole or absent, whoever of several processes finishes last
    return made


def start_from_empty(db: Path, artifacts: Path) -> bool:
    """Create ``db`` as a copy of MLflow's empty store, unless it exists; True when copied.

    The copy is written beside ``db`` and linked to its name, which fails when another process
    created ``db`` meanwhile (that one is kept).
    """
    if db.exists():
        return False
    part = db.with_name(f".{db.name}.{os.getpid()}")
    try:
        shutil.copyfile(_empty_store(), part)
        with sqlite3.connect(part) as con:
            con.execute("UPDATE experiments SET artifact_location = ? WHERE experiment_id = 0",
                        (str(artifacts / "0"),))
        con.close()
        os.link(part, db)
        return True
    except Exception:  # noqa: BLE001 - a cache: whatever fails, MLflow builds the store itself
        return False
    finally:
        part.unlink(missing_ok=True)
