"""A failover to an asynchronous PostgreSQL standby loses the last events a table replica
wrote (``make cluster-chaos``: "postgres failover async"). The replica's copy is then
ahead of the store: the table must go on from what the store kept, with no hole in its
stream, instead of refusing every command against a copy the store no longer has."""

from __future__ import annotations

from pathlib import Path

from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.hosting.streams import stream_id
from president.rules import game as g
from president.store import EventStore, migrate, verify_chain
from president.store.schema import events
from tests.support.table_host import bot_table


def test_a_table_goes_on_from_the_store_after_a_failover_lost_its_last_event(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    migrate(url)
    with EventStore.from_url(url) as store:
        host = TableHost(store, LocalDealer())
        bot_table(host)  # seats 0 to 3 taken: versions 1 to 5
        assert host.load("t1").version == 5
        with store.engine.begin() as connection:  # the standby never got the last sitting
            connection.execute(
                events.delete().where(events.c.stream_id == stream_id("t1"), events.c.version == 5)
            )
        outcome = host.decide_and_append("t1", g.SitDown(3, "b3", True), "sit-3-again", "p0")
        stored = store.read_stream(stream_id("t1"))
        assert outcome.version == 5
        assert [e.version for e in stored] == [1, 2, 3, 4, 5]
        assert stored[-1].command_id == "sit-3-again"
        assert verify_chain(stored) is None
        assert host.load("t1").version == 5
