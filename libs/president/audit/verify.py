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

- who caused each command (:mod:`president.audit.actors`), the times and
  every timeout against its deadline (:mod:`president.audit.clock`), and the
  data the chain hashes without reading it: metadata keys, canonical payloads,
  and the unhashed command columns (:mod:`president.audit.integrity`), and
  each command's digest, recomputed from its events (:mod:`president.audit.digests`);
- the hashes players kept, from anchors or receipts
  (:mod:`president.audit.receipts`).

The report names the first bad event (stream, version, type, and what is wrong
in words). A round whose secret is not revealed yet is fine when it is the
last round of the log ("in progress") and its game goes on; once the game has
ended it is a discrepancy (read live, within a moment of the round's end, a
warning); a round that ended unrevealed while a later round was committed is
a discrepancy. The walk is pure: it reads the events it is given (and the
time it is read, if given) and does no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from president import codec
from president.audit.actors import check_command_actor, check_same_actor, check_service_actor
from president.audit.chain import Anchors, chain_break, check_not_cut_off
from president.audit.clock import TimeCheck
from president.audit.commands import command_for, command_groups
from president.audit.deals import DealLedger
from president.audit.digests import DigestCheck, own_command
from president.audit.explain import command_words, difference, event_words, missing_words
from president.audit.integrity import (
    check_canonical,
    check_command_columns,
    check_metadata,
    metadata_clean,
    unblinded_prefix,
    unblinded_warning,
)
from president.audit.receipts import HeldReceipt, ReceiptFile, agreeing, receipt_anchors
from president.audit.reports import Discrepancy, Found, TableReport, short_type
from president.audit.reveal_order import check_reveal_order
from president.hosting.events import (
    SERVICE_EVENT_TYPES,
    ChatPosted,
    DealCommitted,
    DealRevealed,
    DealSecretLost,
    HostChanged,
    ReactionShown,
    SeatMuted,
    TableClosed,
    TableCreated,
    TableEvent,
)
from president.hosting.input_rules import (
    chat_problem,
    reaction_problem,
    stored_command_id_problem,
)
from president.hosting.projection import Table, fold, table_from_created
from president.hosting.seat_rates import over_rate
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules import round as rnd
from president.rules.errors import Rejected
from president.rules.options import OptionError
from president.store import StoredEvent
from president.store.columns import CommandColumns


def verify_table(
    events: Sequence[StoredEvent],
    *,
    anchors: Mapping[int, str] | None = None,
    receipts: Sequence[ReceiptFile] = (),
    columns: Sequence[CommandColumns] | None = None,
    now: datetime | None = None,
) -> TableReport:
    """Re-check one table's stream, in version order; the report names the first bad event.

    ``anchors`` maps versions to event hashes a player kept (every published
    event carries its hash): a stored event whose hash differs, or a log
    shorter than a kept version, is a discrepancy. Without them, a log that an
    insider rewrote consistently from some event on (legal plays, every hash
    recomputed) cannot be told from the real one. ``receipts`` are the hashes
    players and spectators kept of the changes they received
    (:mod:`president.audit.receipts`): they are kept hashes too, and the report
    names the receipt that shows a departure. ``columns`` are the rows'
    unhashed command columns (:func:`president.store.columns.read_audited_stream`),
    checked against the hashed metadata when given. ``now`` is when the log is
    read: a round that ended without its reveal is then a warning saying how
    long ago, until the reveal's grace has passed (without ``now``: the log is
    complete, and a game that ended with a round unrevealed is a discrepancy).
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
    kept = dict(anchors or {})
    shown_by: dict[int, HeldReceipt] = {}
    if receipts:
        from_receipts, shown_by = receipt_anchors(events, receipts)
        kept.update(from_receipts)
    matching = agreeing(events, receipts) if receipts else {}
    walk = _TableWalk(events, Anchors(events, kept, shown_by, matching), now)
    found: list[Found] = []
    try:
        walk.run()
    except Found as error:
        found.append(error)
    found.extend(walk.deals.losses)  # a lost secret is a finding, never a pass
    try:
        check_command_columns(events, columns)
    except Found as error:
        found.append(error)
    if found:
        first = min(found, key=lambda item: item.discrepancy.version)
        return walk.report(first.discrepancy)
    return walk.report(None)


@dataclass
class _TableWalk:
    """One table's log, walked command by command; raises :class:`Found` at the first bad event."""

    events: Sequence[StoredEvent]
    anchors: Anchors
    now: datetime | None
    game: g.GameState | None = None
    table: Table | None = None
    times: TimeCheck | None = None
    deals: DealLedger = field(default_factory=DealLedger)
    digests: DigestCheck = field(default_factory=DigestCheck)
    command_ids: dict[str, int] = field(default_factory=dict)
    games: int = 0
    game_ended: StoredEvent | None = None
    metadata_clean: bool = False
    """Every event's metadata has exactly the keys it should (checked at once, for speed)."""
    unblinded: int = 0
    """Events at the start of the log without a blinding value (written before them)."""
    warnings: list[str] = field(default_factory=list)

    # -- the walk --------------------------------------------------------------
    def run(self) -> None:
        events = self.events
        self.unblinded = unblinded_prefix(events)
        self.metadata_clean = metadata_clean(events, self.unblinded)
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
        self.warnings.extend(self.deals.check_last_reveal(events, self.game_ended, self.now))
        unblinded = unblinded_warning(events, self.unblinded)
        if unblinded is not None:
            self.warnings.append(unblinded)

    def _group(self, start: int, end: int, partial: bool) -> None:
        events = self.events
        group = events[start:end]
        first_stored = group[0]
        self.anchors.check(group)
        if not self.metadata_clean:
            for index, event in enumerate(group, start):
                check_metadata(event, blinded=index >= self.unblinded)
        actor = check_same_actor(group)
        command_id = first_stored.metadata["command_id"]
        if not isinstance(command_id, str) or not command_id or not actor:
            raise Found(first_stored, "its metadata has no command id or no actor")
        id_problem = stored_command_id_problem(command_id)
        if id_problem is not None:
            raise Found(
                first_stored,
                f"its command id ({len(command_id)} characters) is one the table service "
                f"refuses: {id_problem}",
            )
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
                message = codec.parse(event.type, event.payload)
            except codec.NotAnEvent:
                raise Found(
                    event, f"a {short_type(event.type)} is not an event of a table's log"
                ) from None
            except Exception as error:  # any unreadable payload is a finding
                raise Found(event, f"its payload cannot be read: {error}") from None
            check_canonical(event, message)
            try:
                decoded.append(codec.from_message(message))
            except Exception as error:  # any unreadable payload is a finding
                raise Found(event, f"its payload cannot be read: {error}") from None
        first = decoded[0]
        game, table, times = self.game, self.table, self.times
        if game is None or table is None or times is None:
            self._created(group, decoded, actor)
            return
        at = times.time_of(first_stored)
        for event in group[1:]:
            times.time_of(event)
        if isinstance(first, SERVICE_EVENT_TYPES):
            self._service(group, decoded, table, actor, at)
            times.follow(self.table or table, group[-1].version, at)
            return
        command = command_for(first, game)
        if command is None:
            raise Found(
                first_stored,
                f"a {type(first).__name__} event cannot begin a command: "
                "it only ever follows from one",
            )
        check_command_actor(first_stored, command, table, actor)
        if isinstance(command, rnd.Timeout):
            times.check_timeout(first_stored, at)
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
                    f"the {command_words(command)} ends before it"
                    + missing_words(stored, command, game),
                )
            expected = produced[index]
            if type(stored) is not type(expected) or stored != expected:
                raise Found(group[index], difference(stored, expected))
        self.digests.check(group, command, actor, game)
        if len(produced) > len(decoded) and not partial:
            missing = produced[len(decoded)]
            raise Found(
                group[-1],
                f"the rules also give {event_words(missing)} after this event, which the log lacks",
            )
        if partial:
            return
        self.game = g.evolve_all(game, produced)
        self.table = _with_game(table, self.game, group[-1].version)
        times.follow(self.table, group[-1].version, at)
        for position, produced_event in enumerate(produced):
            kind = type(produced_event)
            if kind is rnd.RoundStarted:
                self.deals.dealt(first_stored)
            elif kind is rnd.RoundEnded:
                self.deals.ended(group[position].version)
            elif kind is g.GameStarted:
                self.games += 1
                self.game_ended = None
            elif kind is g.GameEnded or kind is g.GameInterrupted:
                self.game_ended = group[position]

    # -- table creation and the service events ---------------------------------
    def _created(
        self, group: Sequence[StoredEvent], decoded: Sequence[TableEvent], actor: str
    ) -> None:
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
            table = table_from_created(created)
        except OptionError as error:
            raise Found(first_stored, f"its options are not valid: {error}") from None
        if actor not in (created.host_player_id, "server"):
            raise Found(
                first_stored,
                f"the table is created by {actor!r}, who is neither its host "
                f"{created.host_player_id!r} nor the server",
            )
        self.digests.check(group, None, actor, table.game)
        self.game, self.table, self.times = table.game, table, TimeCheck(table)
        self.times.time_of(first_stored)

    def _service(
        self,
        group: Sequence[StoredEvent],
        decoded: Sequence[TableEvent],
        table: Table,
        actor: str,
        at: datetime,
    ) -> None:
        first = decoded[0]
        game = table.game
        check_service_actor(group[0], first, table, actor)
        if isinstance(first, ReactionShown):
            for stored, event in zip(group, decoded, strict=True):
                if not isinstance(event, ReactionShown):
                    raise Found(stored, "a reaction is a command of its own")
                _check_reaction(stored, event, game)
                _check_rate(stored, event, table, at)
                table = fold(table, event, stored.version, at)
            self.digests.check(group, own_command(first, table), actor, game)
            self.table = table
            return
        if len(group) > 1:
            raise Found(group[1], f"a {short_type(group[0].type)} event is a command of its own")
        if isinstance(first, DealCommitted):
            self.deals.committed(group[0], first, game)
        elif isinstance(first, DealRevealed):
            self.deals.revealed(group[0], first, game)
        elif isinstance(first, DealSecretLost):
            self.deals.lost(group[0], first)
        elif isinstance(first, HostChanged):
            _check_host_change(group[0], first, game)
        elif isinstance(first, ChatPosted):
            _check_chat(group[0], first, table)
            _check_rate(group[0], first, table, at)
        elif isinstance(first, SeatMuted):
            _check_mute(group[0], first, table)
        elif isinstance(first, TableClosed):
            if any(s.occupied and not s.is_bot and not s.leaving for s in game.seats):
                raise Found(group[0], "the table closed while a person still sat at it")
        elif isinstance(first, TableCreated):
            raise Found(group[0], "a table is created once, at version 1")
        self.digests.check(group, own_command(first, table), actor, game)
        # The table service's events (the host's handover, a closing) change the table
        # as the projection folds them: the actor check follows them through it.
        self.table = fold(table, first, group[0].version, at)

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
            warnings=tuple(self.warnings) if problem is None else (),
        )

    def _good_before(self, problem: Discrepancy) -> int:
        first = self.events[0].version if self.events else 1
        return max(0, min(problem.version - first, len(self.events)))


def _check_host_change(stored: StoredEvent, event: HostChanged, game: g.GameState) -> None:
    """The host role goes to a person seated at the table who has not left."""
    seat = next((s for s in game.seats if s.player == event.player_id), None)
    if seat is None or seat.is_bot or seat.leaving:
        raise Found(stored, "the host role goes to someone who is not a person seated here")


def _check_reaction(stored: StoredEvent, event: ReactionShown, game: g.GameState) -> None:
    """A reaction comes from a seat where a person sits, and names a reaction the API takes
    (:func:`president.hosting.input_rules.reaction_problem`, the gateway's own rule)."""
    if event.seat >= len(game.seats) or not game.seats[event.seat].occupied:
        raise Found(stored, f"a reaction from seat {event.seat}, where nobody sits")
    if game.seats[event.seat].is_bot:
        raise Found(
            stored, f"a reaction from seat {event.seat}, where a bot sits: bots never react"
        )
    problem = reaction_problem(event.reaction)
    if problem is not None:
        raise Found(
            stored,
            f"a reaction code ({len(event.reaction)} characters) the API refuses: {problem}",
        )


def _check_rate(
    stored: StoredEvent, event: ReactionShown | ChatPosted, table: Table, at: datetime
) -> None:
    """A seat's reactions (chat messages) keep their rate at their stored times
    (:mod:`president.hosting.seat_rates`, the rule the table service decides with)."""
    over = over_rate(event, table.reaction_times, table.chat_times, at)
    if over is not None:
        rate, wait = over
        raise Found(
            stored,
            f"seat {event.seat} has more than {rate.burst} {rate.what} within "
            f"{rate.window.total_seconds():g} seconds of stored time (the API refuses it "
            f"{rate.reason}, for {wait.total_seconds():g} s more)",
        )


def _check_chat(stored: StoredEvent, event: ChatPosted, table: Table) -> None:
    """A chat message comes from a seat whose person the host has not muted, and holds a
    text the API takes (:func:`president.hosting.input_rules.chat_problem`, the gateway's
    own rule). (Its actor, the person seated there, is checked with every actor.)"""
    seat = table.game.seats[event.seat]
    if seat.player in table.muted:
        raise Found(stored, f"a chat message from seat {event.seat}, whose person the host muted")
    problem = chat_problem(event.text)
    if problem is not None:
        raise Found(
            stored, f"a chat message ({len(event.text)} characters) the API refuses: {problem}"
        )


def _check_mute(stored: StoredEvent, event: SeatMuted, table: Table) -> None:
    """The host mutes (unmutes) the person seated there, not a bot nor themselves, and only
    when that changes something."""
    seats = table.game.seats
    occupant = seats[event.seat] if event.seat < len(seats) else None
    if occupant is None or occupant.is_bot or occupant.player != event.player_id:
        raise Found(
            stored, f"it mutes {event.player_id!r}, who is not the person in seat {event.seat}"
        )
    if event.player_id == table.host_player_id:
        raise Found(stored, "the host mutes their own seat")
    if (event.player_id in table.muted) == event.muted:
        raise Found(
            stored, f"{event.player_id!r} is {'muted' if event.muted else 'unmuted'} already"
        )


def _with_game(table: Table, game: g.GameState, version: int) -> Table:
    """``dataclasses.replace(table, game=game, version=version)``, four times as fast.

    The walk makes one per command; it copies every field of the projection
    (those added later too) and changes the two a command changes.
    """
    moved = object.__new__(Table)
    fields = moved.__dict__
    fields.update(table.__dict__)
    fields["game"] = game
    fields["version"] = version
    return moved
