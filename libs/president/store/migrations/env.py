"""Alembic environment: runs the migrations on a given connection or on a URL.

``president.store.migrate`` passes its open connection in
``config.attributes["connection"]``. From the ``alembic`` command line the
database comes from ``-x url=...``.
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection
from sqlalchemy.pool import NullPool

from president.store.engine import create_store_engine, normalise_url
from president.store.schema import metadata

config = context.config


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url")
    if not url:
        raise SystemExit("no database given: pass -x url=sqlite:///path/to/store.db")
    return url


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=metadata)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    """Print the SQL instead of running it (``alembic upgrade head --sql``)."""
    context.configure(
        url=normalise_url(_url()).render_as_string(hide_password=False),
        target_metadata=metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Run the migrations on the given connection, or on a fresh one."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    if config.config_file_name is not None:
        fileConfig(config.config_file_name)
    engine = create_store_engine(_url(), poolclass=NullPool)
    try:
        with engine.connect() as fresh:
            _run(fresh)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
