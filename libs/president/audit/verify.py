"""The auditor's walk of one table's stored log: :func:`verify_table`.

It takes one table's stream (``table-<id>``), in version order, and re-checks
it from nothing but the log itself, DEAL.md and the rules engine:

- the hash chain and the hashes a player kept (:mod:`president.audit.chain`);
- every round's committed deal, its deal and its reveal
  (:mod:`president.audit.deals`);
- every command: the stored events are grouped by command id, the command each
  group implies is rebuilt (:mod:`president.audit.commands`), run through
  :func:`president.rules.game.decide` on the table as replayed so far, and the
  events the rules give must equal the stored group exactly. So a play the
  rules refuse, a wrong next seat, a wrong automatic give in the exchange,
  wrong places, points, totals or game result are all found, at the event
  where they are (in words: :mod:`president.audit.explain`).

The report names the first bad event (stream, version, type, and what is wrong
in words). A round whose secret is not revealed yet is fine when it is the
last round of the log ("in progress"); a round that ended unrevealed while a
later round was committed is a discrepancy. The walk is pure: it reads the
events it is given and does no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from president import codec
from president.audit.chain import chain_break, check_anchors, check_not_cut_off
from president.audit.commands import command_for, command_groups
from president.audit.deals import DealLedger
from president.audit.explain import command_words, difference, event_words
from president.audit.reports import Discrepancy, Found, TableReport, short_type
from president.audit.reveal_order import check_reveal_order
from president.hosting.events import (
    SERVICE_EVENT_TYPES,
    DealCommitted,
    DealRevealed,
    ReactionShown,
    TableCreated,
    TableEvent,
)
from president.hosting.projection import table_from_created
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules import round as rnd
from president.rules.errors import Rejected
from president.rules.options import OptionError
from president.store import StoredEvent


def verify_table(
    events: Sequence[StoredEvent], *, anchors: Mapping[int, str] | None = None
) -> TableReport:
    """Re-check one table's stream, in version order; the report names the first bad event.

    ``anchors`` maps versions to event hashes a player kept (every published
    event carries its hash): a stored event whose hash differs, or a log
    shorter than a kept version, is a discrepancy. Without them, a log that an
    insider rewrote consistently from some event on (legal plays, every hash
    recomputed) cannot be told from the real one.
    """
    if not events:
        return TableReport(
            stream_id="",
            events=0,
            events_verified=0,
            rounds=(),
            games=0,
            problem=Discrepancy("", 0, "", "the log is empty"),
        )
    walk = _TableWalk(events, anchors or {})
    try:
        walk.run()
    except Found as found:
        return walk.report(found.discrepancy)
    return walk.report(None)


@dataclass
class _TableWalk:
    """One table's log, walked command by command; raises :class:`Found` at the first bad event."""

    events: Sequence[StoredEvent]
    anchors: Mapping[int, str]
    game: g.GameState | None = None
    deals: DealLedger = field(default_factory=DealLedger)
    command_ids: dict[str, int] = field(default_factory=dict)
    games: int = 0

    # -- the walk --------------------------------------------------------------
    def run(self) -> None:
        events = self.events
        self.deals.scan_reveals(events)
        limit, broken = chain_break(events)
        for start, end in command_groups(events):
            if start >= limit:
                break
            partial = end > limit
            self._group(start, min(end, limit), partial)
        if broken is not None:
            raise broken
        check_reveal_order(events)
        check_not_cut_off(events, self.anchors)

    def _group(self, start: int, end: int, partial: bool) -> None:
        events = self.events
        group = events[start:end]
        first_stored = group[0]
        anchors = self.anchors
        if anchors:
            check_anchors(group, anchors)
        command_id = first_stored.metadata.get("command_id")
        if not isinstance(command_id, str) or not command_id:
            raise Found(first_stored, "it has no command id in its metadata")
        earlier = self.command_ids.get(command_id)
        if earlier is not None:
            raise Found(
                first_stored,
                f"its command id {command_id!r} was already used by the command at version "
                f"{earlier}: a command is stored once",
            )
        self.command_ids[command_id] = first_stored.version
        decoded: list[TableEvent] = []
        for event in group:
            try:
                decoded.append(codec.decode(event.type, event.payload))
            except codec.NotAnEvent:
                raise Found(
                    event, f"a {short_type(event.type)} is not an event of a table's log"
                ) from None
            except Exception as error:  # any unreadable payload is a finding
                raise Found(event, f"its payload cannot be read: {error}") from None
        first = decoded[0]
        game = self.game
        if game is None:
            self._created(group, decoded)
            return
        if isinstance(first, SERVICE_EVENT_TYPES):
            self._service(group, decoded, game)
            return
        command = command_for(first, game)
        if command is None:
            raise Found(
                first_stored,
                f"a {type(first).__name__} event cannot begin a command: "
                "it only ever follows from one",
            )
        if isinstance(first, rnd.RoundStarted):
            self.deals.check_deal(first_stored, first, game)
        try:
            produced = g.decide(game, command)
        except Rejected as error:
            code = error.code.value
            raise Found(
                first_stored,
                f"the rules refuse this {command_words(command)}: {error.reason} ({code})",
            ) from None
        except (OptionError, ValueError, IndexError, TypeError) as error:
            raise Found(
                first_stored, f"the rules cannot apply this {command_words(command)}: {error}"
            ) from None
        for index, stored in enumerate(decoded):
            if index >= len(produced):
                raise Found(
                    group[index],
                    "the rules give no such event here: "
                    f"the {command_words(command)} ends before it",
                )
            expected = produced[index]
            if type(stored) is not type(expected) or stored != expected:
                raise Found(group[index], difference(stored, expected))
        if len(produced) > len(decoded) and not partial:
            missing = produced[len(decoded)]
            raise Found(
                group[-1],
                f"the rules also give {event_words(missing)} after this event, which the log lacks",
            )
        if partial:
            return
        self.game = g.evolve_all(game, produced)
        for position, produced_event in enumerate(produced):
            kind = type(produced_event)
            if kind is rnd.RoundStarted:
                self.deals.dealt(first_stored)
            elif kind is rnd.RoundEnded:
                self.deals.ended(group[position].version)
            elif kind is g.GameStarted:
                self.games += 1

    # -- table creation and the service events ---------------------------------
    def _created(self, group: Sequence[StoredEvent], decoded: Sequence[TableEvent]) -> None:
        first_stored = group[0]
        created = decoded[0]
        if first_stored.version != 1:
            raise Found(
                first_stored,
                f"the log starts at version {first_stored.version}: the events before it "
                "are missing",
            )
        if not isinstance(created, TableCreated):
            raise Found(first_stored, "a table's log must begin with TableCreated")
        if len(group) > 1:
            raise Found(group[1], "the table's creation is a command of its own")
        if first_stored.stream_id != stream_id(created.table_id):
            raise Found(
                first_stored,
                f"it creates table {created.table_id!r}, but it is stored in stream "
                f"{first_stored.stream_id!r}",
            )
        try:
            self.game = table_from_created(created).game
        except OptionError as error:
            raise Found(first_stored, f"its options are not valid: {error}") from None

    def _service(
        self, group: Sequence[StoredEvent], decoded: Sequence[TableEvent], game: g.GameState
    ) -> None:
        first = decoded[0]
        if isinstance(first, ReactionShown):
            for stored, event in zip(group, decoded, strict=True):
                if not isinstance(event, ReactionShown):
                    raise Found(stored, "a reaction is a command of its own")
                _check_reaction(stored, event, game)
            return
        if len(group) > 1:
            raise Found(group[1], f"a {short_type(group[0].type)} event is a command of its own")
        if isinstance(first, DealCommitted):
            self.deals.committed(group[0], first, game)
        elif isinstance(first, DealRevealed):
            self.deals.revealed(group[0], first, game)
        else:
            raise Found(group[0], "a table is created once, at version 1")

    # -- the report ------------------------------------------------------------
    def report(self, problem: Discrepancy | None) -> TableReport:
        events = self.events
        return TableReport(
            stream_id=events[0].stream_id if events else "",
            events=len(events),
            events_verified=len(events) if problem is None else self._good_before(problem),
            rounds=self.deals.round_reports(problem),
            games=self.games,
            problem=problem,
        )

    def _good_before(self, problem: Discrepancy) -> int:
        first = self.events[0].version if self.events else 1
        return max(0, min(problem.version - first, len(self.events)))


def _check_reaction(stored: StoredEvent, event: ReactionShown, game: g.GameState) -> None:
    """A reaction comes from a seat where someone sits, and names a reaction."""
    if event.seat >= len(game.seats) or not game.seats[event.seat].occupied:
        raise Found(stored, f"a reaction from seat {event.seat}, where nobody sits")
    if not event.reaction.strip():
        raise Found(stored, "a reaction with no reaction code")
