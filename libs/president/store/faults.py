"""Which store failures pass: the database was away or dropped the connection, so the same
call may succeed when it is tried again (with the same command id)."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError

#: PEP 249's names of the driver errors that say the database is unreachable or gone.
_DRIVER_NAMES = frozenset({"OperationalError", "InterfaceError"})


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` (or an error it came from) says the database could not be reached
    or lost the connection.

    SQLAlchemy's ``OperationalError``, ``InterfaceError`` and ``DisconnectionError``, any
    DBAPI error it saw as a disconnect, and a driver's PEP 249 ``OperationalError`` or
    ``InterfaceError`` raised as is (a pool's reconnect). A constraint or a bad
    statement is not transient.
    """
    for cause in _chain(error):
        if isinstance(cause, OperationalError | InterfaceError | DisconnectionError):
            return True
        if isinstance(cause, DBAPIError) and cause.connection_invalidated:
            return True
        if type(cause).__name__ in _DRIVER_NAMES and not isinstance(cause, DBAPIError):
            return True
    return False


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
