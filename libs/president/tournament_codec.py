"""A tournament's events to stored JSON and back: the one translation of its stream.

Each event is stored with the type ``president.tournament.<EventName>`` and a
payload of canonical JSON (UTF-8, keys sorted, no spaces): times as ISO 8601
in UTC, a round's secret as hex, sets as sorted lists, a bot's seat as
``null``. ``decode(type, payload)`` gives the event back exactly, so a
tournament folded from its stream is the tournament its service decided on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from president.tournament.commands import TournamentSettings
from president.tournament.events import (
    Entered,
    EntrantRetired,
    EntrantsInvited,
    EntryWithdrawn,
    RoundDrawCommitted,
    RoundRevealed,
    RoundSeated,
    TableResultRecorded,
    TableSettled,
    TournamentCancelled,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
)
from president.tournament.port import DrawEntrant, DrawRequest, Seating

#: Every stored tournament event's type starts so; the event's class name follows.
TYPE_PREFIX = "president.tournament."

Json = dict[str, Any]


class NotATournamentEvent(ValueError):
    """A stored type or payload that is no tournament event."""


def type_name(event: TournamentEvent | type[TournamentEvent]) -> str:
    """The type an event is stored under."""
    kind = event if isinstance(event, type) else type(event)
    return TYPE_PREFIX + kind.__name__


def encode(event: TournamentEvent) -> bytes:
    """The stored payload of ``event``: canonical JSON."""
    fields = _ENCODE[type(event)](event)
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def decode(type_: str, payload: bytes) -> TournamentEvent:
    """The event stored as ``type_`` with ``payload`` (NotATournamentEvent if none)."""
    decoder = _DECODE.get(type_.removeprefix(TYPE_PREFIX))
    if decoder is None or not type_.startswith(TYPE_PREFIX):
        raise NotATournamentEvent(f"{type_!r} is not a tournament event")
    try:
        fields = json.loads(payload)
        return decoder(fields)
    except (ValueError, KeyError, TypeError) as error:
        raise NotATournamentEvent(f"{type_} payload unreadable: {error}") from None


def _time(value: datetime) -> str:
    return value.isoformat()


def settings_fields(settings: TournamentSettings) -> Json:
    """The settings as JSON fields."""
    return {
        "name": settings.name,
        "preset": settings.preset,
        "format": settings.format,
        "rounds": settings.rounds,
        "table_size": settings.table_size,
        "capacity": settings.capacity,
        "opens_at": _time(settings.opens_at),
        "closes_at": _time(settings.closes_at),
        "starts_at": _time(settings.starts_at),
        "public": settings.public,
        "guests_allowed": settings.guests_allowed,
        "first_draw": settings.first_draw,
        "options": [[name, value] for name, value in settings.options],
    }


def settings_of(fields: Json) -> TournamentSettings:
    """The settings of :func:`settings_fields`."""
    return TournamentSettings(
        name=str(fields["name"]),
        preset=str(fields["preset"]),
        format=str(fields["format"]),
        rounds=int(fields["rounds"]),
        table_size=int(fields["table_size"]),
        capacity=int(fields["capacity"]),
        opens_at=datetime.fromisoformat(fields["opens_at"]),
        closes_at=datetime.fromisoformat(fields["closes_at"]),
        starts_at=datetime.fromisoformat(fields["starts_at"]),
        public=bool(fields["public"]),
        guests_allowed=bool(fields["guests_allowed"]),
        first_draw=str(fields["first_draw"]),
        options=tuple((str(name), str(value)) for name, value in fields["options"]),
    )


def _request_fields(request: DrawRequest) -> Json:
    return {
        "tournament_id": request.tournament_id,
        "round": request.round,
        "method": request.method,
        "table_size": request.table_size,
        "entrants": [[e.account_id, e.points, e.rating_milli] for e in request.entrants],
        "met_before": sorted(sorted(pair) for pair in request.met_before),
    }


def _request_of(fields: Json) -> DrawRequest:
    return DrawRequest(
        tournament_id=str(fields["tournament_id"]),
        round=int(fields["round"]),
        method=str(fields["method"]),
        table_size=int(fields["table_size"]),
        entrants=tuple(DrawEntrant(str(a), int(p), int(r)) for a, p, r in fields["entrants"]),
        met_before=frozenset(frozenset(str(a) for a in pair) for pair in fields["met_before"]),
    )


def _seating_of(tables: list[list[str | None]]) -> Seating:
    return tuple(tuple(None if a is None else str(a) for a in table) for table in tables)


def _places_of(places: list[int]) -> tuple[int, ...]:
    return tuple(int(p) for p in places)


_ENCODE: dict[type, Callable[[Any], Json]] = {
    TournamentCreated: lambda e: {
        "tournament_id": e.tournament_id,
        "host": e.host,
        "settings": settings_fields(e.settings),
    },
    EntrantsInvited: lambda e: {"accounts": list(e.accounts)},
    TournamentCancelled: lambda e: {},
    Entered: lambda e: {
        "account_id": e.account_id,
        "guest": e.guest,
        "rating_milli": e.rating_milli,
    },
    EntryWithdrawn: lambda e: {"account_id": e.account_id},
    EntrantRetired: lambda e: {"account_id": e.account_id, "from_round": e.from_round},
    RoundDrawCommitted: lambda e: {
        "round_no": e.round_no,
        "fingerprint": e.fingerprint,
        "request": _request_fields(e.request),
    },
    RoundSeated: lambda e: {
        "round_no": e.round_no,
        "seating": [list(table) for table in e.seating],
    },
    TableResultRecorded: lambda e: {
        "round_no": e.round_no,
        "table": e.table,
        "places": list(e.places),
    },
    TableSettled: lambda e: {
        "round_no": e.round_no,
        "table": e.table,
        "places": list(e.places),
        "departed": sorted(e.departed),
    },
    RoundRevealed: lambda e: {"round_no": e.round_no, "secret": e.secret.hex()},
    TournamentFinished: lambda e: {"ranking": list(e.ranking)},
}

_DECODE: dict[str, Callable[[Json], TournamentEvent]] = {
    "TournamentCreated": lambda f: TournamentCreated(
        str(f["tournament_id"]), str(f["host"]), settings_of(f["settings"])
    ),
    "EntrantsInvited": lambda f: EntrantsInvited(tuple(str(a) for a in f["accounts"])),
    "TournamentCancelled": lambda f: TournamentCancelled(),
    "Entered": lambda f: Entered(str(f["account_id"]), bool(f["guest"]), int(f["rating_milli"])),
    "EntryWithdrawn": lambda f: EntryWithdrawn(str(f["account_id"])),
    "EntrantRetired": lambda f: EntrantRetired(str(f["account_id"]), int(f["from_round"])),
    "RoundDrawCommitted": lambda f: RoundDrawCommitted(
        int(f["round_no"]), str(f["fingerprint"]), _request_of(f["request"])
    ),
    "RoundSeated": lambda f: RoundSeated(int(f["round_no"]), _seating_of(f["seating"])),
    "TableResultRecorded": lambda f: TableResultRecorded(
        int(f["round_no"]), int(f["table"]), _places_of(f["places"])
    ),
    "TableSettled": lambda f: TableSettled(
        int(f["round_no"]),
        int(f["table"]),
        _places_of(f["places"]),
        frozenset(int(s) for s in f["departed"]),
    ),
    "RoundRevealed": lambda f: RoundRevealed(int(f["round_no"]), bytes.fromhex(f["secret"])),
    "TournamentFinished": lambda f: TournamentFinished(tuple(str(a) for a in f["ranking"])),
}
