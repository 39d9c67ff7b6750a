"""Database URLs of the study's storage: PostgreSQL's driver, a URL shown without its
password, and a server that cannot be reached said as bad input naming it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from tuner._common.faults import fault_of
from tuner.config import ConfigError
from tuner.search import _stored_split as stored_split


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


def shown(url: str) -> str:
    """``url`` without its password, if it has one."""
    if "://" in url and "@" in url:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    return url


@contextlib.contextmanager
def opening(url: str) -> Iterator[None]:
    """A database server that cannot be reached or refuses us, said as bad input naming it (a
    fault of a local file, such as a full disk, stays a fault)."""
    import sqlalchemy.exc

    try:
        yield
    except sqlalchemy.exc.SQLAlchemyError as exc:
        if fault_of(exc) or url.startswith("sqlite"):
            raise
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise ConfigError(f"study.storage = {shown(url)!r} cannot be opened: {reason}"
                          ) from None
