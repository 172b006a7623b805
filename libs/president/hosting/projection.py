"""The table projection: a table folded from its stored events, in version order.

The table host keeps one per table in memory; the gateway's feed and the
timer fold the same events into the same :class:`Table`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from president import codec
from president.hosting.events import (
    SERVICE_EVENT_TYPES,
    ChatPosted,
    DealCommitted,
    DealRevealed,
    DealSecretLost,
    HostChanged,
    ReactionShown,
    SeatMuted,
    SeatPresence,
    TableClosed,
    TableCreated,
    TableEvent,
)
from president.hosting.presence import Present, moved, with_presence, without_seat
from president.hosting.seat_rates import CHAT, REACTIONS, SeatTimes
from president.rules import game as g

if TYPE_CHECKING:  # the stored events' type only: the gateway folds tables without a store
    from president.store import StoredEvent


class StreamPlace(Protocol):
    """Where an event sits: a stored event, or the envelope it travels in."""

    @property
    def stream_id(self) -> str: ...

    @property
    def version(self) -> int: ...


#: The departures a table remembers (the latest), for the words of a refusal.
MAX_DEPARTURES = 32


@dataclass(frozen=True)
class Departure:
    """A player who left a seat of the table, or was removed from it."""

    player_id: str
    seat: int
    #: The display name of the host who removed them; empty when they left themselves.
    removed_by: str = ""


@dataclass(frozen=True)
class Table:
    """A table as loaded: the engine's state, the stream version and the table's settings."""

    table_id: str
    game: g.GameState
    version: int
    visibility: str = "practice"
    host_player_id: str = ""
    commitment: DealCommitted | None = None
    #: The name shown in the lobby (may be empty).
    name: str = ""
    #: Who left or was removed, latest last (at most MAX_DEPARTURES).
    departures: tuple[Departure, ...] = ()
    #: The table closed (``TableClosed``): it takes no more commands.
    closed: bool = False
    #: The seats reported connected, by gateway replica (:mod:`president.hosting.presence`).
    presence: Present = frozenset()
    #: The people the host muted (account ids): their chat is refused, in any seat.
    muted: frozenset[str] = frozenset()
    #: The version of the table's last change other than a presence report or a chat
    #: message: a command
    #: chosen on any version from this one on is current (:func:`is_current`).
    moved_version: int = 1
    #: Each seat's last reactions' (chat messages') stored times, for their rate
    #: (:mod:`president.hosting.seat_rates`); folded only where the times are known.
    reaction_times: SeatTimes = ()
    chat_times: SeatTimes = ()


def fold(table: Table, event: TableEvent, version: int, at: datetime | None = None) -> Table:
    """A table after one more stored event (an engine event, most often, is one check),
    stored at ``at`` (None: a fold that does not keep the seats' rates, such as a feed's)."""
    if not isinstance(event, SERVICE_EVENT_TYPES):
        table = replace(table, moved_version=version)
        if type(event) is g.SeatLeft:
            gone = without_seat(table.presence, event.seat)
            return _left(replace(table, presence=gone), event, version)
        if table.presence:
            table = replace(table, presence=_present_after(table.presence, event))
        return replace(table, game=g.evolve(table.game, event), version=version)
    if isinstance(event, SeatPresence):  # not a move: the table's choices stay current
        present = with_presence(table.presence, event.seat, event.gateway, event.connected)
        return replace(table, version=version, presence=present)
    if isinstance(event, ChatPosted):  # not a move either: a chat leaves choices current
        if at is None:
            return replace(table, version=version)
        chats = CHAT.after(table.chat_times, event.seat, at)
        return replace(table, version=version, chat_times=chats)
    table = replace(table, moved_version=version)
    if isinstance(event, SeatMuted):
        muted = table.muted | {event.player_id} if event.muted else table.muted - {event.player_id}
        return replace(table, version=version, muted=muted)
    if isinstance(event, HostChanged):
        return replace(table, version=version, host_player_id=event.player_id)
    if isinstance(event, TableClosed):
        return replace(table, version=version, closed=True)
    if isinstance(event, DealCommitted):
        return replace(table, version=version, commitment=event)
    if isinstance(event, (DealRevealed, DealSecretLost)):
        return replace(table, version=version, commitment=None)
    if isinstance(event, ReactionShown) and at is not None:
        reactions = REACTIONS.after(table.reaction_times, event.seat, at)
        return replace(table, version=version, reaction_times=reactions)
    return replace(table, version=version)  # a reaction (or a TableCreated again)


def is_current(table: Table, expected_version: int) -> bool:
    """A command chosen on ``expected_version`` is current at ``table``: no change but
    presence reports and chat messages came after that version."""
    return table.moved_version <= expected_version <= table.version


def _present_after(present: Present, event: g.GameEvent) -> Present:
    """Who is connected after an engine event: a seat's new occupant, or none, is not."""
    if isinstance(event, g.SeatTaken | g.SeatFreed):
        return without_seat(present, event.seat)
    if isinstance(event, g.SeatsChanged):
        return moved(present, event.moved_from)
    return present


def _left(table: Table, event: g.SeatLeft, version: int) -> Table:
    """The table after a ``SeatLeft``: the departure remembered, with who removed them."""
    remover = ""
    if event.removed:
        host = next((s for s in table.game.seats if s.player == table.host_player_id), None)
        remover = host.display_name if host is not None and host.display_name else "the host"
    kept = tuple(d for d in table.departures if d.player_id != event.player)
    departure = Departure(event.player, event.seat, remover)
    return replace(
        table,
        game=g.evolve(table.game, event),
        version=version,
        departures=(*kept, departure)[-MAX_DEPARTURES:],
    )


def departure_of(table: Table, player_id: str) -> Departure | None:
    """How ``player_id`` last left this table, if they did."""
    return next((d for d in reversed(table.departures) if d.player_id == player_id), None)


def fold_stored(table: Table | None, stored: Iterable[StoredEvent]) -> Table | None:
    """``table`` after more stored events of its stream, in order (None: before its first).

    A stream begins with ``TableCreated``; ValueError if it does not.
    """
    for event in stored:
        decoded = codec.decode(event.type, event.payload)
        at = stored_time(event) if isinstance(decoded, RATED_EVENTS) else None
        table = fold_next(table, decoded, event, at)
    return table


#: The events whose stored times the table keeps (:mod:`president.hosting.seat_rates`).
RATED_EVENTS = (ReactionShown, ChatPosted)


def stored_time(event: StoredEvent) -> datetime:
    """The time the store keeps with ``event`` (its metadata ``time``)."""
    return datetime.fromisoformat(event.time)


def fold_next(
    table: Table | None, event: TableEvent, stored: StreamPlace, at: datetime | None = None
) -> Table:
    """``table`` after the next event of its stream, at the place ``stored`` gives (None: before
    the first, which must be ``TableCreated``; ValueError if it is not), stored at ``at``
    (:func:`fold`)."""
    if table is None:
        if not isinstance(event, TableCreated):
            raise ValueError(f"stream {stored.stream_id} does not begin with TableCreated")
        return table_from_created(event)
    return fold(table, event, stored.version, at)


def table_from_created(created: TableCreated) -> Table:
    """The empty table a ``TableCreated`` event describes."""
    options = codec.options_from_map(created.preset, dict(created.options))
    return Table(
        table_id=created.table_id,
        game=g.new_table(options, created.seat_count),
        version=1,
        visibility=created.visibility,
        host_player_id=created.host_player_id,
        name=created.name,
    )
