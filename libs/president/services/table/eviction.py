"""Finished and abandoned tables leave the list and memory; their log stays for the audit.

A table that closed (``TableClosed``: nobody was left at it) is finished; it
is evicted ``PRESIDENT_FINISHED_TABLE_SECONDS`` after its last change (an
hour by default). Any table at which nothing happened for
``PRESIDENT_ABANDONED_TABLE_SECONDS`` (a day by default: a lobby nobody
starts, a game every person walked away from and the timer finished) is
abandoned and evicted too (both are settings,
:class:`~president.servicekit.config.table.EvictionRules`). Each table service
replica sweeps every :attr:`~president.servicekit.config.table.EvictionRules.sweep_seconds`:
the directory marks the due tables
evicted for good (:meth:`~president.services.table.directory.TableDirectory.evict`,
one transaction, so replicas agree), and every replica drops the evicted
tables it holds from memory and gives back their leases. From then on the
table service answers a command or a view of such a table NOT_FOUND
TABLE_GONE (:func:`table_gone`); its events stay readable (``ReadEvents``)
and ``president audit verify`` checks them as any other.
"""

from __future__ import annotations

from president.servicekit.errors import Code, ServiceError


def table_gone(table_id: str) -> ServiceError:
    """The answer about a table that was evicted."""
    return ServiceError(
        Code.NOT_FOUND,
        "TABLE_GONE",
        f"table {table_id!r} is gone: it closed, or nothing happened at it for a long time, "
        "so it left the lobby; its log stays in the store for the audit",
    )
