"""Chat at the table: the text rule (one rule for the API and the audit), and the chat and the
host's mute decided on the table as any command is (:func:`president.hosting.commands.decide`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from president.audit import verify_table
from president.hosting.commands import Chat, MuteSeat
from president.hosting.dealer import LocalDealer
from president.hosting.events import ChatPosted, SeatMuted
from president.hosting.host import TableHost
from president.hosting.input_rules import CHAT_MAX, chat_problem
from president.hosting.seat_views import table_view
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import options_for
from president.servicekit.checks import chat_text
from president.servicekit.errors import ServiceError
from president.store import EventStore


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "\u3164\u2800",  # blank fillers only
        "x" * (CHAT_MAX + 1),
        "hi\x1b[2J",
        "hi\u202eereh",  # a right-to-left override
        "zero\u200bwidth",
        "two\nlines",
        "two\u2028lines",
    ],
    ids=["empty", "spaces", "blanks", "too-long", "escape", "bidi", "zero-width", "newline", "ls"],
)
def test_the_api_refuses_what_the_rule_refuses(raw: str) -> None:
    with pytest.raises(ServiceError) as refused:
        chat_text(raw)
    assert refused.value.reason == "INVALID_CHAT"
    assert chat_problem(raw.strip()) is not None  # the audit's rule, on the same text


def test_a_message_is_kept_normalised_and_the_audit_wants_it_so() -> None:
    assert chat_text("  ｇｇ, well played! ♠  ") == "gg, well played! ♠"
    assert chat_text("x" * CHAT_MAX) == "x" * CHAT_MAX
    assert chat_problem("gg, well played! ♠") is None
    assert chat_problem("ｇｇ") is not None  # not NFKC: the API never stores it so
    assert chat_problem(" gg") is not None  # not trimmed


@pytest.fixture
def host(tmp_path: Path) -> Iterator[TableHost]:
    """A lobby table: ann hosts in seat 0, bob sits in 1, a bot in 2."""
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as store:
        tables = TableHost(store, LocalDealer())
        tables.create("t", options_for("club"), seat_count=4, host_player_id="ann")
        tables.decide_and_append("t", g.SitDown(0, "ann", display_name="Ann"), "s0", "ann")
        tables.decide_and_append("t", g.SitDown(1, "bob", display_name="Bob"), "s1", "bob")
        tables.decide_and_append("t", g.SitDown(2, "bot:basic", True), "s2", "ann")
        yield tables


def test_a_seat_chats_until_the_host_mutes_it_and_after_unmuting(host: TableHost) -> None:
    before = host.load("t")
    assert host.decide_and_append("t", Chat(1, "hello"), "c1", "bob").events == 1
    after = host.load("t")
    assert after.moved_version == before.moved_version  # a chat leaves choices current
    assert host.decide_and_append("t", MuteSeat(1, True), "m1", "ann").events == 1
    assert host.decide_and_append("t", MuteSeat(1, True), "m2", "ann").events == 0  # already
    muted = host.load("t")
    assert muted.muted == {"bob"}
    assert [s.muted for s in table_view(muted, None).seats] == [False, True, False, False]
    with pytest.raises(Rejected) as refused:
        host.decide_and_append("t", Chat(1, "let me talk"), "c2", "bob")
    assert refused.value.code is ErrorCode.SEAT_MUTED
    assert "the host muted you" in refused.value.reason
    assert host.load("t").version == muted.version  # nothing changed
    host.decide_and_append("t", MuteSeat(1, False), "m3", "ann")
    host.decide_and_append("t", Chat(1, "thanks"), "c3", "bob")
    store = host._store  # the log the audit reads
    stored = store.read_stream(stream_id("t"))
    decoded = [e.type.rsplit(".", 1)[-1] for e in stored[-4:]]
    assert decoded == ["ChatPosted", "SeatMuted", "SeatMuted", "ChatPosted"]
    assert verify_table(stored).ok


@pytest.mark.parametrize(
    ("seat", "words"),
    [(2, "no person sits in seat 2"), (3, "no person sits in seat 3"), (0, "their own seat")],
    ids=["bot", "empty", "own"],
)
def test_the_host_mutes_only_another_person(host: TableHost, seat: int, words: str) -> None:
    with pytest.raises(Rejected) as refused:
        MuteSeat(seat, True).decide(host.load("t"))
    assert refused.value.code is ErrorCode.CANNOT_MUTE
    assert words in refused.value.reason


def test_a_chat_is_its_text_alone(host: TableHost) -> None:
    """What the table stores of a chat is the seat and the text: no card, nothing added."""
    table = host.load("t")
    assert Chat(1, "nice").decide(table) == [ChatPosted(1, "nice")]
    assert MuteSeat(1, True).decide(table) == [SeatMuted(1, "bob", True)]
    with pytest.raises(Rejected, match="NO_SUCH_SEAT"):
        Chat(3, "from nobody").decide(table)
