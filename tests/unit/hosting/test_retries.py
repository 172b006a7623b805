"""A command id sent again with other content is a conflicting retry (CommandConflict), never
answered with the first command's result; the same command again runs once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from president.hosting.dealer import LocalDealer
from president.hosting.errors import CommandConflict
from president.hosting.host import TableHost
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import mask_of
from president.store import EventStore
from tests.support.table_host import bot_table, human_move


@pytest.fixture
def host(tmp_path: Path) -> Iterator[TableHost]:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as store:
        yield TableHost(store, LocalDealer())


def test_the_same_id_with_other_content_is_refused_and_changes_nothing(host: TableHost) -> None:
    bot_table(host)
    host.decide_and_append("t1", g.StartGame(), "start", "p0")
    move = human_move(host, "t1")
    assert move is not None
    first = host.decide_and_append("t1", move, "move-1", "p0")
    assert host.decide_and_append("t1", move, "move-1", "p0") == first  # a retry: once
    version = host.load("t1").version
    others: list[tuple[object, str]] = [(g.NextRound(), "p0"), (move, "p1")]
    if isinstance(move, rnd.PlayCards | rnd.Pass | rnd.ReturnCards):
        others.append((move._replace(seat=1), "p0"))  # another seat
        others.append((rnd.Pass(0) if isinstance(move, rnd.PlayCards) else move, "server"))
    if isinstance(move, rnd.PlayCards | rnd.ReturnCards):
        others.append((move._replace(cards=mask_of("RJ")), "p0"))  # other cards
    for other, actor in others:
        with pytest.raises(CommandConflict, match="used before for another command"):
            host.decide_and_append("t1", other, "move-1", actor)
    assert host.load("t1").version == version
    assert host._store.current_version(stream_id("t1")) == version


def test_reactions_and_handovers_are_compared_too(host: TableHost) -> None:
    bot_table(host)
    host.append_reaction("t1", 0, "wave", "r1", "p0")
    host.append_reaction("t1", 0, "wave", "r1", "p0")
    with pytest.raises(CommandConflict):
        host.append_reaction("t1", 0, "thumbs_up", "r1", "p0")
    with pytest.raises(CommandConflict):
        host.hand_over_host("t1", 0, "r1", "p0")
