"""One applied event of a table and what each seat receives of it, built once per seat.

An :class:`Entry` is an event folded into the table (the envelope, its
message, the table after it). Everything a watcher is sent of it (its
redacted event, its view, the ``WatchResponse``, the serialized Session
change) is built on first use for a seat and shared by every watcher of
that seat. Each is one message built and serialized whole, every field once
on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from google.protobuf.message import Message

from president import codec
from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.countdown import countdown
from president.hosting.deadlines import IdleRules, TableClock, clocked, event_time
from president.hosting.events import TableEvent
from president.hosting.projection import Table, fold_next
from president.hosting.seat_views import public_view, redact, seat_part
from president.services.gateway.streams.receipts import receipt
from president.services.gateway.streams.wire import batched_change, session_change


@dataclass
class Entry:
    """One applied event: its envelope, its message, and the table after it."""

    envelope: epb.EventEnvelope
    message: Message
    table: Table
    _public: gpb.TableView | None = None
    _views: dict[int | None, gpb.TableView] = field(default_factory=dict)
    _events: dict[int | None, epb.EventEnvelope] = field(default_factory=dict)
    _sessions: dict[int | None, bytes] = field(default_factory=dict)
    _wire: dict[int | None, bytes] = field(default_factory=dict)
    _batched: dict[int | None, bytes] = field(default_factory=dict)
    _skipped: dict[int | None, bytes] = field(default_factory=dict)
    #: The table's timer after this event (:func:`with_clock`), and when the entry was made.
    clock: TableClock | None = None
    made_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    _countdown: gpb.TableView | None = None
    #: A newer change followed (:meth:`supersede`): its views invite no move.
    superseded: bool = False

    @property
    def version(self) -> int:
        return self.envelope.version

    def supersede(self) -> None:
        """A newer change of the table was applied: from now on this change's views carry
        no legal actions (what was built with them is dropped, to be built again without)."""
        if self.superseded:
            return
        self.superseded = True
        self._views.clear()  # the views built with legal actions go unused
        self._sessions.clear()
        self._wire.clear()
        self._batched.clear()
        self._skipped.clear()

    @property
    def shows_legal(self) -> bool:
        """Whether this change's views carry legal actions: not once a newer change followed."""
        return not self.superseded

    def countdown(self) -> gpb.TableView:
        """The view's timing fields after this event (the same for every seat)."""
        if self._countdown is None:
            self._countdown = countdown(self.clock, self.made_at)
        return self._countdown

    def _public_view(self) -> gpb.TableView:
        if self._public is None:
            self._public = public_view(self.table)
        return self._public

    def _fill(self, view: gpb.TableView, seat: int | None) -> gpb.TableView:
        """``view`` (empty) made the table after this event as ``seat`` sees it: what everyone
        sees, the seat's own part and the countdown."""
        view.CopyFrom(self._public_view())
        if seat is not None:
            view.MergeFrom(seat_part(self.table, seat, legal=self.shows_legal))
        view.MergeFrom(self.countdown())
        return view

    def view(self, seat: int | None) -> gpb.TableView:
        """The table after this event as ``seat`` sees it (computed once per seat)."""
        cached = self._views.get(seat)
        if cached is None:
            cached = self._views[seat] = self._fill(gpb.TableView(), seat)
        return cached

    def session_response(self, seat: int | None) -> bytes:
        """The change as ``seat`` sees it, as a Session stream carries it, serialized: the
        bytes of :meth:`watch_response` framed as a ``SessionResponse`` holding that one
        change (:func:`session_change`), built once per seat."""
        cached = self._sessions.get(seat)
        if cached is None:
            cached = self._sessions[seat] = session_change(self.watch_response(seat))
        return cached

    def batched_watch_response(self, seat: int | None) -> bytes:
        """:meth:`watch_response` as one of a batched ``WatchResponse``'s ``changes``
        (:func:`batched_change`): several joined are one message. Built once per seat."""
        cached = self._batched.get(seat)
        if cached is None:
            cached = self._batched[seat] = batched_change(self.watch_response(seat))
        return cached

    def watch_response(self, seat: int | None) -> bytes:
        """The change as ``seat`` sees it, a serialized ``WatchResponse``, built once per seat
        and shared by every stream of that seat (every spectator shares ``None``'s). Nothing
        in it differs per watcher: a watcher's resume point is the version it holds."""
        cached = self._wire.get(seat)
        if cached is None:
            out = pb.WatchResponse(version=self.version, event=self.event(seat))
            self._fill(out.view, seat)
            cached = self._wire[seat] = receipt(out, self.envelope).SerializeToString()
        return cached

    def skipped_view(self, seat: int | None) -> bytes:
        """The view after this event for a watcher that skipped the states before it: a
        serialized ``WatchResponse`` snapshot marked ``skipped``, with this change's clock
        and receipt, built once per seat (every spectator skipped here shares it)."""
        cached = self._skipped.get(seat)
        if cached is None:
            out = pb.WatchResponse(
                version=self.version, view=self.view(seat), snapshot=True, skipped=True
            )
            cached = self._skipped[seat] = receipt(out, self.envelope).SerializeToString()
        return cached

    def event(self, seat: int | None) -> epb.EventEnvelope:
        """The envelope with other seats' cards removed."""
        cached = self._events.get(seat)
        if cached is None:
            shown = redact(self.message, seat)
            if shown is self.message:
                cached = self.envelope
            else:
                cached = epb.EventEnvelope()
                cached.CopyFrom(self.envelope)
                cached.payload = shown.SerializeToString(deterministic=True)
            self._events[seat] = cached
        return cached


def parse(envelope: epb.EventEnvelope) -> tuple[Message, TableEvent]:
    """The payload message (the wire form, to redact) and the event of an envelope."""
    message = codec.parse(envelope.type, envelope.payload)
    return message, codec.from_message(message)


def apply(table: Table | None, envelope: epb.EventEnvelope) -> Entry:
    """Fold one envelope into a table (None before the first event)."""
    message, event = parse(envelope)
    return Entry(envelope, message, fold_next(table, event, envelope))


def with_clock(entry: Entry, previous: Entry | None, idle: IdleRules | None = None) -> Entry:
    """``entry``, the one after ``previous`` (None: the first, its clock following ``idle``,
    the timer service's waits), with the table's timer started where the timer service
    starts it: at the commit time of the event that started it
    (:func:`president.hosting.deadlines.clocked`)."""
    at = event_time(entry.envelope, entry.made_at)
    before = previous.clock if previous is not None else None
    entry.clock = clocked(entry.table, before, at, idle)
    return entry
