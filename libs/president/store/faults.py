"""Which store failures pass: the database was away or dropped the connection, so the same
call may succeed when it is tried again (with the same command id)."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` says the database could not be reached or lost the connection.

    An ``OperationalError`` (server shut down, connection refused or reset), an
    ``InterfaceError`` (a closed connection), or any DBAPI error SQLAlchemy saw
    as a disconnect. A constraint or a bad statement is not transient.
    """
    if isinstance(error, OperationalError | InterfaceError):
        return True
    return isinstance(error, DBAPIError) and bool(error.connection_invalidated)
