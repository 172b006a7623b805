"""Each stored command's digest is its own: recomputed from the log, never chosen.

The table service keeps with a command's events the digest of the command
(:mod:`president.hosting.retries`), to refuse a retry with other content. The
digest covers the command's kind, its actor and the fields its events hold
(:func:`president.hosting.commands.digest_terms`), so the audit rebuilds the
command from its stored events and recomputes it: a digest that is not the
command's own (chosen bytes: data hidden in the hashed log, or another
command's) is refused, on every event of the command, as is a digest on what
the table service writes without one (a table's creation, a deal's commitment
or reveal).

A log stored before this definition carries digests of the first format
(:func:`president.hosting.commands.legacy_digest_of`: Python's ``repr`` of the
command). They are recomputed too, from the command rebuilt as it was sent:
the trick version a play or pass answered, and the timer key a timeout named,
were in it, and the log does not keep them, so each is tried as none and as
the table's (the only two the rules take); a seat's display name as stored
and as none. From a log's first digest of the current format on, every
digest must be of it (the table service never goes back).
"""

from __future__ import annotations

from collections.abc import Sequence

from president.audit.reports import Found
from president.hosting.commands import (
    Chat,
    Close,
    HandOverHost,
    MuteSeat,
    PassHost,
    React,
    SetPresence,
    TableCommand,
    digest_of,
    legacy_digest_of,
)
from president.hosting.events import (
    ChatPosted,
    HostChanged,
    ReactionShown,
    SeatMuted,
    SeatPresence,
    TableClosed,
    TableEvent,
)
from president.hosting.projection import Table
from president.hosting.retries import DIGEST
from president.rules import game as g
from president.rules import round as rnd
from president.store import StoredEvent


def own_command(event: TableEvent, table: Table) -> TableCommand | None:
    """The table's own command a stored service event begins (None: the table service
    writes it by itself, with no digest: a creation, a deal's commitment, reveal or loss)."""
    if isinstance(event, ReactionShown):
        return React(event.seat, event.reaction)
    if isinstance(event, ChatPosted):
        return Chat(event.seat, event.text)
    if isinstance(event, SeatMuted):
        return MuteSeat(event.seat, event.muted)
    if isinstance(event, SeatPresence):
        return SetPresence(event.seat, event.connected, event.gateway)
    if isinstance(event, TableClosed):
        return Close(event.reason)
    if isinstance(event, HostChanged):
        if event.automatic:
            return PassHost(event)
        seats = table.game.seats
        seat = next((i for i, s in enumerate(seats) if s.player == event.player_id), None)
        return HandOverHost(seat) if seat is not None and not seats[seat].is_bot else None
    return None


class DigestCheck:
    """Checks each command's digest in a log's order (it remembers the format in use)."""

    def __init__(self) -> None:
        self.current_since: int | None = None
        """The version of the log's first digest of the current format (None: none yet)."""

    def check(
        self,
        group: Sequence[StoredEvent],
        command: TableCommand | None,
        actor: str,
        game: g.GameState,
    ) -> None:
        """Every event of ``group`` (one command, sent by ``actor`` to ``game`` as it was
        before it) carries no digest, or ``command``'s own (None: a command the table
        service writes by itself, which carries none)."""
        first = group[0]
        kept = first.metadata.get(DIGEST)
        if kept is not None:
            self._check_own(first, kept, command, actor, game)
        for event in group[1:]:
            if event.metadata.get(DIGEST) != kept:
                raise Found(
                    event,
                    "its command digest differs from that of the command it belongs to: "
                    "data hidden in the hashed log",
                )

    def _check_own(
        self,
        first: StoredEvent,
        kept: object,
        command: TableCommand | None,
        actor: str,
        game: g.GameState,
    ) -> None:
        if command is None:
            raise Found(
                first,
                "it carries a command digest, but the table service writes none on what it "
                "does by itself: data hidden in the hashed log",
            )
        if kept == digest_of(command, actor):
            if self.current_since is None:
                self.current_since = first.version
            return
        legacy = self.current_since is None and isinstance(kept, str)
        if legacy and kept in _legacy_digests(command, actor, game):
            return
        words = (
            ""
            if self.current_since is None
            else (
                f" (nor one of the first format, which no event after version "
                f"{self.current_since} may carry)"
            )
        )
        raise Found(
            first,
            f"its command digest is not that of its own command, recomputed from the log{words}: "
            "chosen bytes (data hidden in the hashed log) or another command's digest",
        )


def _legacy_digests(command: TableCommand, actor: str, game: g.GameState) -> set[str]:
    """The digests of the first format ``command`` may have had, as it was sent."""
    state = game.round
    sent: list[TableCommand] = [command]
    if isinstance(command, rnd.PlayCards | rnd.Pass | rnd.Timeout) and state is not None:
        if isinstance(command, rnd.Timeout):
            sent.append(rnd.Timeout(state.timer_key))
        else:
            sent.append(command._replace(version=state.trick_version))
    elif isinstance(command, g.SitDown) and command.display_name == command.player:
        sent.append(command._replace(display_name=""))
    return {legacy_digest_of(item, actor) for item in sent}
