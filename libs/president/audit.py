"""The auditor's check of a stored table log: every deal, exchange, play and score.

:func:`verify_table` takes one table's stream (``table-<id>``), in version
order, and re-checks it from nothing but the log itself, DEAL.md and the rules
engine:

- the hash chain (:func:`president.store.verify_chain`), and optionally hashes
  a player kept of the events they received (``anchors``), which also catch a
  log rewritten from some event on with every hash recomputed;
- for every round, the ``DealCommitted`` event before the cards: its deal
  order, hand size, jokers and options are what the rules give for the table
  at that moment; the ``DealRevealed`` event after the round: the secret
  matches the fingerprint, and the deal it re-creates (DEAL.md) is exactly the
  hands and set-aside cards of ``RoundStarted``;
- every command: the stored events are grouped by command id, the command each
  group implies is rebuilt (``CardsPlayed`` -> ``PlayCards``, ``Passed`` ->
  ``Pass``, ...), run through :func:`president.rules.game.decide` on the table
  as replayed so far, and the events the rules give must equal the stored
  group exactly. So a play the rules refuse, a wrong next seat, a wrong
  automatic give in the exchange, wrong places, points, totals or game result
  are all found, at the event where they are.

The report names the first bad event (stream, version, type, and what is wrong
in words). A round whose secret is not revealed yet is fine when it is the
last round of the log ("in progress"); a round that ended unrevealed while a
later round was committed is a discrepancy.

:func:`round_scenarios` turns each stored round into a rules scenario of
conformance/FORMAT.md, so the round can be re-run by anyone's engine. The
module is pure: it reads events it is given and does no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from google.protobuf.message import Message

from president import codec
from president.deal import DEAL_VERSION, hands_by_seat, verify_fingerprint
from president.deal import fingerprint as deal_fingerprint
from president.events.v1 import events_pb2 as pb
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import names
from president.rules.errors import Rejected
from president.rules.options import OptionError, options_for
from president.rules.render import event_to_dict, event_to_text
from president.rules.scenario import run_scenario
from president.store import StoredEvent, verify_chain

STREAM_PREFIX = "table-"
"""Every table's stream id is this prefix and the table id."""

VERIFIED = "verified"
"""Round status: dealt from its committed secret, every command checked, secret revealed."""
IN_PROGRESS = "in progress"
"""Round status: the last round of the log, its secret not revealed yet."""
FAILED = "failed"
"""Round status: the round in which the first bad event is."""

_HEX_SECRET = re.compile(r"[0-9a-f]{64}")
_HEX_FINGERPRINT = _HEX_SECRET
_PREFIX = pb.DESCRIPTOR.package + "."
_DEAL_REVEALED = _PREFIX + "DealRevealed"

AnyEvent = g.GameEvent | Message
Command = g.GameCommand | rnd.Command


# --------------------------------------------------------------------------- reports
@dataclass(frozen=True)
class Discrepancy:
    """The first bad event of a stream and what is wrong with it, in words."""

    stream_id: str
    version: int
    event_type: str
    reason: str

    def __str__(self) -> str:
        return f"{self.stream_id} version {self.version} ({self.event_type}): {self.reason}"


@dataclass(frozen=True)
class RoundReport:
    """One round of a table as the audit found it."""

    game_no: int
    round_no: int
    fingerprint: str
    status: str
    committed_at: int
    """Version of the ``DealCommitted`` event."""
    dealt_at: int | None = None
    """Version of the ``RoundStarted`` event (None: not dealt yet)."""
    ended_at: int | None = None
    """Version of the ``RoundEnded`` event (None: still being played)."""
    revealed_at: int | None = None
    """Version of the ``DealRevealed`` event (None: not revealed yet)."""
    secret_hex: str | None = None


@dataclass(frozen=True)
class TableReport:
    """What :func:`verify_table` found for one table's stream."""

    stream_id: str
    events: int
    """Events in the stream."""
    events_verified: int
    """Events checked and found good, before the first bad one (all when ``ok``)."""
    rounds: tuple[RoundReport, ...]
    games: int
    problem: Discrepancy | None = None

    @property
    def table_id(self) -> str:
        """The table's id (the stream id without ``table-``)."""
        return self.stream_id.removeprefix(STREAM_PREFIX)

    @property
    def ok(self) -> bool:
        """True when every event verified."""
        return self.problem is None

    @property
    def rounds_verified(self) -> int:
        """Rounds dealt from their committed secret, fully checked and revealed."""
        return sum(1 for item in self.rounds if item.status == VERIFIED)

    @property
    def rounds_in_progress(self) -> int:
        """Rounds not revealed yet (only ever the last one of a good log)."""
        return sum(1 for item in self.rounds if item.status == IN_PROGRESS)


@dataclass(frozen=True)
class AuditSummary:
    """Totals over many tables, and the first bad event among them."""

    tables: int
    tables_ok: int
    rounds_verified: int
    rounds_in_progress: int
    events: int
    events_verified: int
    first_problem: Discrepancy | None

    @property
    def ok(self) -> bool:
        """True when every table verified."""
        return self.first_problem is None


def summarise(reports: Sequence[TableReport]) -> AuditSummary:
    """Add up table reports; the first problem is that of the first bad table given."""
    return AuditSummary(
        tables=len(reports),
        tables_ok=sum(1 for report in reports if report.ok),
        rounds_verified=sum(report.rounds_verified for report in reports),
        rounds_in_progress=sum(report.rounds_in_progress for report in reports),
        events=sum(report.events for report in reports),
        events_verified=sum(report.events_verified for report in reports),
        first_problem=next((r.problem for r in reports if r.problem is not None), None),
    )


# --------------------------------------------------------------------------- helpers
def short_type(type_name: str) -> str:
    """``president.events.v1.CardsPlayed`` -> ``CardsPlayed``."""
    return type_name.rsplit(".", 1)[-1]


def command_groups(events: Sequence[StoredEvent]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` index ranges of consecutive events that share a command id."""
    start = 0
    count = len(events)
    while start < count:
        command_id = events[start].metadata.get("command_id")
        end = start + 1
        while end < count and events[end].metadata.get("command_id") == command_id:
            end += 1
        yield start, end
        start = end


def decode(event: StoredEvent) -> AnyEvent:
    """A stored event as an engine event, or its message for the service events."""
    return codec.decode(event.type, event.payload)


def _cards(mask: int) -> str:
    return " ".join(names(mask)) or "no cards"


def _what(command: Command) -> str:
    """The command in words, for 'the rules refuse this ...'."""
    if isinstance(command, rnd.PlayCards):
        return f"play of {_cards(command.cards)} by seat {command.seat}"
    if isinstance(command, rnd.Pass):
        return f"pass by seat {command.seat}"
    if isinstance(command, rnd.ReturnCards):
        return f"return of {_cards(command.cards)} by seat {command.seat}"
    if isinstance(command, rnd.Timeout):
        return "timeout"
    if isinstance(command, g.DealRound):
        return "deal"
    if isinstance(command, g.SitDown):
        return f"sitting down of {command.player!r} at seat {command.seat}"
    if isinstance(command, g.Leave):
        return f"leaving of seat {command.seat}"
    if isinstance(command, g.StartGame):
        return "start of a game"
    if isinstance(command, g.PlayAgain):
        return "new game (play again)"
    if isinstance(command, g.NextRound):
        return "next round"
    if isinstance(command, g.EndGame):
        return "end of the game"
    return "return to the lobby"


_FIELD_WORDS = {
    "cards": "the cards",
    "seat": "the seat",
    "next_to_act": "the next seat to act",
    "trick_version": "the trick version",
    "skipped": "the skipped seats",
    "same_or_nothing": "same-or-nothing",
    "leader": "the leader",
    "winner": "the trick's winner",
    "giver": "the giver",
    "receiver": "the receiver",
    "automatic": "automatic",
    "active": "the revolution",
    "penalised": "the penalty for going out with 2s",
    "standings": "the places",
    "points": "the points",
    "totals": "the running totals",
    "game_over": "whether the game is over",
    "winners": "the winners",
    "stopped": "stopped",
    "players": "the players",
    "hands": "the hands",
    "set_aside": "the cards set aside",
    "previous_standings": "the previous places",
    "scores": "the scores",
    "must_include": "the card the first play must include",
    "round_no": "the round number",
    "game_no": "the game number",
    "moved_from": "the seat moves",
    "options": "the options",
}
_PER_SEAT = {"points", "totals", "scores"}


def _plain(event: AnyEvent) -> dict[str, Any]:
    if isinstance(event, Message):
        return {}
    if type(event) in _ROUND_EVENT_TYPES:
        return event_to_dict(event)  # type: ignore[arg-type]
    return dict(event._asdict())


def _value(name: str, value: Any) -> str:
    if value is None:
        return "nobody"
    if isinstance(value, list) and name in ("cards", "set_aside", "must_include"):
        return " ".join(value) or "no cards"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return str(value)


def _sentence(event: AnyEvent) -> str:
    if isinstance(event, Message):
        return short_type(codec.type_name(event))
    text = (
        event_to_text(event)  # type: ignore[arg-type]
        if type(event) in _ROUND_EVENT_TYPES
        else g.describe_game_event(event, [])
    )
    name = type(event).__name__
    return f"{name} ({text.rstrip('.')})" if text else name


def difference(stored: AnyEvent, expected: AnyEvent) -> str:
    """How a stored event differs from the one the rules give, in words."""
    if type(stored) is not type(expected):
        return f"the log has {_sentence(stored)} here, but the rules give {_sentence(expected)}"
    if (
        isinstance(stored, rnd.CardsGiven)
        and isinstance(expected, rnd.CardsGiven)
        and stored.automatic
        and expected.automatic
        and stored.cards != expected.cards
    ):
        return (
            f"seat {expected.giver} must give their strongest cards, "
            f"{_cards(expected.cards)}, but the log gives {_cards(stored.cards)}"
        )
    mine, theirs = _plain(stored), _plain(expected)
    parts = []
    for name, value in mine.items():
        other = theirs.get(name)
        if value == other:
            continue
        words = _FIELD_WORDS.get(name, name.replace("_", " "))
        if (
            name in _PER_SEAT
            and isinstance(value, list)
            and isinstance(other, list)
            and len(value) == len(other)
        ):
            seats = [
                f"seat {seat} has {a} in the log, {b} by the rules"
                for seat, (a, b) in enumerate(zip(value, other, strict=True))
                if a != b
            ]
            parts.append(f"{words} differ: " + "; ".join(seats))
        elif name == "options":
            changed = sorted(k for k in value if value.get(k) != (other or {}).get(k))
            parts.append(f"{words} differ ({', '.join(changed)})")
        else:
            parts.append(
                f"{words} is {_value(name, value)} in the log, "
                f"but the rules give {_value(name, other)}"
            )
    return "; ".join(parts) if parts else "it differs from what the rules give"


_ROUND_EVENT_TYPES = {
    rnd.RoundStarted,
    rnd.CardsGiven,
    rnd.PlayStarted,
    rnd.CardsPlayed,
    rnd.Passed,
    rnd.TrickClosed,
    rnd.RevolutionChanged,
    rnd.PlayerWentOut,
    rnd.RoundEnded,
    rnd.TimedOut,
}


def command_for(first: AnyEvent, game: g.GameState) -> Command | None:
    """The command a group of stored events starting with ``first`` implies (None: none)."""
    kind = type(first)
    if kind is rnd.CardsPlayed:
        return rnd.PlayCards(first.seat, first.cards)  # type: ignore[union-attr]
    if kind is rnd.Passed:
        return rnd.Pass(first.seat)  # type: ignore[union-attr]
    if kind is rnd.CardsGiven:
        if first.automatic:  # type: ignore[union-attr]
            return None
        return rnd.ReturnCards(first.giver, first.cards)  # type: ignore[union-attr]
    if kind is rnd.TimedOut:
        return rnd.Timeout()
    if kind is rnd.RoundStarted:
        return g.DealRound(first.hands, first.set_aside)  # type: ignore[union-attr]
    if kind is g.SeatTaken:
        return g.SitDown(first.seat, first.player, first.is_bot, first.display_name)  # type: ignore[union-attr]
    if kind is g.SeatLeft:
        return g.Leave(first.seat, first.removed)  # type: ignore[union-attr]
    if kind is g.GameStarted:
        return g.PlayAgain() if game.phase == g.GamePhase.GAME_OVER else g.StartGame()
    if kind is g.NextRoundStarted or kind is g.SeatsChanged:
        return g.NextRound()
    if kind is g.GameEnded:
        return g.EndGame()
    if kind is g.ReturnedToLobby:
        return g.BackToLobby()
    return None


# --------------------------------------------------------------------------- the audit
class _Found(Exception):
    """The first bad event (raised inside the audit, caught by ``verify_table``)."""

    def __init__(self, event: StoredEvent, reason: str) -> None:
        super().__init__(reason)
        self.discrepancy = Discrepancy(
            event.stream_id, event.version, short_type(event.type), reason
        )


@dataclass
class _Round:
    game_no: int
    round_no: int
    fingerprint: str
    deal_order: tuple[int, ...]
    hand_size: int | None
    jokers: bool
    committed_at: int
    dealt: StoredEvent | None = None
    deal_checked: bool = False
    ended_at: int | None = None
    revealed_at: int | None = None
    secret_hex: str | None = None

    @property
    def key(self) -> tuple[int, int]:
        return self.game_no, self.round_no

    def where(self) -> str:
        return f"round {self.round_no} of game {self.game_no}"

    def report(self, status: str) -> RoundReport:
        return RoundReport(
            game_no=self.game_no,
            round_no=self.round_no,
            fingerprint=self.fingerprint,
            status=status,
            committed_at=self.committed_at,
            dealt_at=self.dealt.version if self.dealt is not None else None,
            ended_at=self.ended_at,
            revealed_at=self.revealed_at,
            secret_hex=self.secret_hex,
        )


@dataclass
class _Audit:
    events: Sequence[StoredEvent]
    anchors: Mapping[int, str]
    game: g.GameState | None = None
    pending: _Round | None = None
    rounds: list[_Round] = field(default_factory=list)
    command_ids: dict[str, int] = field(default_factory=dict)
    reveals: dict[tuple[int, int], list[str]] = field(default_factory=dict)
    games: int = 0

    # -- the walk --------------------------------------------------------------
    def run(self) -> None:
        events = self.events
        self._scan_reveals()
        chain_error = verify_chain(events)
        limit = chain_error.index if chain_error is not None else len(events)
        for start, end in command_groups(events):
            if start >= limit:
                break
            partial = end > limit
            self._group(start, min(end, limit), partial)
        if chain_error is not None:
            raise _Found(events[chain_error.index], chain_error.reason)
        last_kept = max(self.anchors, default=0)
        if last_kept > len(events):
            raise _Found(
                events[-1],
                f"the log ends at version {events[-1].version}, but a hash was kept for "
                f"version {last_kept}: events were cut off the end of the log",
            )

    def _scan_reveals(self) -> None:
        """Secrets revealed anywhere in the log, so a deal is checked where it is dealt."""
        for event in self.events:
            if event.type != _DEAL_REVEALED:
                continue
            try:
                revealed = pb.DealRevealed.FromString(event.payload)
            except Exception:  # a bad payload is reported where it is
                continue
            key = (revealed.game_no, revealed.round_no)
            self.reveals.setdefault(key, []).append(revealed.secret_hex)

    def _group(self, start: int, end: int, partial: bool) -> None:
        events = self.events
        group = events[start:end]
        first_stored = group[0]
        anchors = self.anchors
        if anchors:
            for event in group:
                kept = anchors.get(event.version)
                if kept is not None and kept != event.hash:
                    raise _Found(
                        event,
                        f"its hash {event.hash[:12]}… differs from the hash {kept[:12]}… kept "
                        "for this version: the log was rewritten from this event on",
                    )
        command_id = first_stored.metadata.get("command_id")
        if not isinstance(command_id, str) or not command_id:
            raise _Found(first_stored, "it has no command id in its metadata")
        earlier = self.command_ids.get(command_id)
        if earlier is not None:
            raise _Found(
                first_stored,
                f"its command id {command_id!r} was already used by the command at version "
                f"{earlier}: a command is stored once",
            )
        self.command_ids[command_id] = first_stored.version
        decoded: list[AnyEvent] = []
        for event in group:
            try:
                decoded.append(codec.decode(event.type, event.payload))
            except Exception as error:  # any unreadable payload is a finding
                raise _Found(event, f"its payload cannot be read: {error}") from None
        first = decoded[0]
        game = self.game
        if game is None:
            self._created(group, decoded)
            return
        if isinstance(first, Message):
            self._service(group, decoded, game)
            return
        command = command_for(first, game)
        if command is None:
            raise _Found(
                first_stored,
                f"a {type(first).__name__} event cannot begin a command: "
                "it only ever follows from one",
            )
        if isinstance(first, rnd.RoundStarted):
            self._check_deal(first_stored, first, game)
        try:
            produced = g.decide(game, command)
        except Rejected as error:
            code = error.code.value
            raise _Found(
                first_stored, f"the rules refuse this {_what(command)}: {error.reason} ({code})"
            ) from None
        except (OptionError, ValueError, IndexError, TypeError) as error:
            raise _Found(
                first_stored, f"the rules cannot apply this {_what(command)}: {error}"
            ) from None
        for index, stored in enumerate(decoded):
            if index >= len(produced):
                raise _Found(
                    group[index],
                    f"the rules give no such event here: the {_what(command)} ends before it",
                )
            expected = produced[index]
            if type(stored) is not type(expected) or stored != expected:
                raise _Found(group[index], difference(stored, expected))
        if len(produced) > len(decoded) and not partial:
            missing = produced[len(decoded)]
            raise _Found(
                group[-1],
                f"the rules also give {_sentence(missing)} after this event, which the log lacks",
            )
        if partial:
            return
        self.game = g.evolve_all(game, produced)
        for position, produced_event in enumerate(produced):
            kind = type(produced_event)
            if kind is rnd.RoundStarted:
                assert self.pending is not None
                self.pending.dealt = first_stored
            elif kind is rnd.RoundEnded and self.pending is not None:
                self.pending.ended_at = group[position].version
            elif kind is g.GameStarted:
                self.games += 1

    # -- table creation and the service events ---------------------------------
    def _created(self, group: Sequence[StoredEvent], decoded: Sequence[AnyEvent]) -> None:
        first_stored = group[0]
        created = decoded[0]
        if first_stored.version != 1:
            raise _Found(
                first_stored,
                f"the log starts at version {first_stored.version}: the events before it "
                "are missing",
            )
        if not isinstance(created, pb.TableCreated):
            raise _Found(first_stored, "a table's log must begin with TableCreated")
        if len(group) > 1:
            raise _Found(group[1], "the table's creation is a command of its own")
        expected_stream = STREAM_PREFIX + created.table_id
        if first_stored.stream_id != expected_stream:
            raise _Found(
                first_stored,
                f"it creates table {created.table_id!r}, but it is stored in stream "
                f"{first_stored.stream_id!r}",
            )
        try:
            options = codec.options_from_map(created.preset, created.options)
            self.game = g.new_table(options, created.seat_count)
        except OptionError as error:
            raise _Found(first_stored, f"its options are not valid: {error}") from None

    def _service(
        self, group: Sequence[StoredEvent], decoded: Sequence[AnyEvent], game: g.GameState
    ) -> None:
        first = decoded[0]
        if isinstance(first, pb.ReactionShown):
            for stored, event in zip(group, decoded, strict=True):
                if not isinstance(event, pb.ReactionShown):
                    raise _Found(stored, "a reaction is a command of its own")
                self._reaction(stored, event, game)
            return
        if len(group) > 1:
            raise _Found(group[1], f"a {short_type(group[0].type)} event is a command of its own")
        if isinstance(first, pb.DealCommitted):
            self._committed(group[0], first, game)
        elif isinstance(first, pb.DealRevealed):
            self._revealed(group[0], first, game)
        elif isinstance(first, pb.TableCreated):
            raise _Found(group[0], "a table is created once, at version 1")
        else:
            raise _Found(
                group[0], f"a {short_type(group[0].type)} is not an event of a table's log"
            )

    @staticmethod
    def _reaction(stored: StoredEvent, event: pb.ReactionShown, game: g.GameState) -> None:
        if event.seat >= len(game.seats) or not game.seats[event.seat].occupied:
            raise _Found(stored, f"a reaction from seat {event.seat}, where nobody sits")
        if not event.reaction.strip():
            raise _Found(stored, "a reaction with no reaction code")

    def _committed(self, stored: StoredEvent, event: pb.DealCommitted, game: g.GameState) -> None:
        key = (event.game_no, event.round_no)
        previous = self.pending
        if previous is not None:
            if previous.ended_at is not None:
                raise _Found(
                    stored,
                    f"{previous.where()} ended at version {previous.ended_at} but its secret "
                    "was never revealed, and a new deal is committed",
                )
            if previous.dealt is not None:
                raise _Found(
                    stored,
                    f"a new deal is committed while {previous.where()} is still being played",
                )
            if previous.key == key and previous.fingerprint != event.fingerprint:
                raise _Found(
                    stored,
                    f"{previous.where()} was already committed at version "
                    f"{previous.committed_at} with another fingerprint: a dealer that commits "
                    "twice could pick the deal it likes",
                )
            self.rounds.remove(previous)  # committed, never dealt: replaced
            self.pending = None
        if game.phase != g.GamePhase.DEALING:
            raise _Found(
                stored,
                f"a deal is committed while the table is not waiting for one "
                f"(the table is {game.phase.replace('_', ' ')})",
            )
        expected_key = (game.game_no, game.round_no + 1)
        if key != expected_key:
            raise _Found(
                stored,
                f"it commits round {event.round_no} of game {event.game_no}, but the next "
                f"round is round {expected_key[1]} of game {expected_key[0]}",
            )
        if event.deal_version != DEAL_VERSION:
            raise _Found(
                stored,
                f"deal version {event.deal_version!r}: this audit checks {DEAL_VERSION!r} deals",
            )
        if not _HEX_FINGERPRINT.fullmatch(event.fingerprint):
            raise _Found(stored, "its fingerprint is not 64 lowercase hex digits")
        order = g.deal_order(game)
        stored_order = tuple(event.deal_order)
        if stored_order != order:
            raise _Found(
                stored,
                f"the deal order is {list(stored_order)}, but the rules deal this round "
                f"in the order {list(order)} (deal_extras {game.options.deal_extras})",
            )
        if event.players != len(order):
            raise _Found(
                stored,
                f"it deals to {event.players} players, but {len(order)} players sit at the table",
            )
        if event.jokers != game.options.jokers:
            raise _Found(stored, "whether jokers are in the deck differs from the table's options")
        limit = g.hand_size(game)
        if event.hand_size != (limit or 0):
            wanted = f"{limit} cards each" if limit else "no hand-size limit"
            raise _Found(
                stored, f"it deals with hand size {event.hand_size}, but the rules give {wanted}"
            )
        try:
            options = codec.options_from_map(game.options.preset, event.options)
        except OptionError as error:
            raise _Found(stored, f"its options are not valid: {error}") from None
        if options != game.options:
            raise _Found(stored, "its options differ from the table's options")
        track = _Round(
            game_no=event.game_no,
            round_no=event.round_no,
            fingerprint=event.fingerprint,
            deal_order=order,
            hand_size=limit,
            jokers=event.jokers,
            committed_at=stored.version,
        )
        self.pending = track
        self.rounds.append(track)

    def _check_deal(
        self, stored: StoredEvent, started: rnd.RoundStarted, game: g.GameState
    ) -> None:
        """Before the deal is replayed: it was committed, and it is the committed deal."""
        pending = self.pending
        if pending is None or pending.dealt is not None:
            raise _Found(stored, "this round was dealt without a committed deal before it")
        if pending.key != (game.game_no, game.round_no + 1):
            raise _Found(
                stored,
                f"the deal committed at version {pending.committed_at} is for "
                f"{pending.where()}, not for round {game.round_no + 1} of game {game.game_no}",
            )
        if g.deal_order(game) != pending.deal_order:
            raise _Found(
                stored, f"the table changed since the deal was committed at {pending.committed_at}"
            )
        for secret_hex in self.reveals.get(pending.key, ()):
            secret = _secret(secret_hex)
            if secret is None or not verify_fingerprint(secret, pending.fingerprint):
                continue  # reported where it is revealed
            self._compare_deal(stored, started, pending, secret, game)
            pending.deal_checked = True
            return

    @staticmethod
    def _compare_deal(
        stored: StoredEvent,
        started: rnd.RoundStarted,
        pending: _Round,
        secret: bytes,
        game: g.GameState,
    ) -> None:
        dealt = hands_by_seat(
            secret, pending.deal_order, jokers=pending.jokers, hand_size=pending.hand_size
        )
        expected = dealt.masks(len(game.seats))
        hands = started.hands
        if len(hands) != len(expected):
            raise _Found(stored, f"it deals {len(hands)} hands to a table of {len(expected)} seats")
        for seat, (have, want) in enumerate(zip(hands, expected, strict=True)):
            if have != want:
                raise _Found(
                    stored,
                    f"seat {seat}'s dealt hand is not the committed deal: the log gives "
                    f"{_cards(have & ~want)} that the revealed secret did not deal to this seat, "
                    f"and lacks {_cards(want & ~have)}",
                )
        aside = dealt.set_aside_mask
        if started.set_aside != aside:
            raise _Found(
                stored,
                f"the cards set aside are {_cards(started.set_aside)}, but the committed deal "
                f"sets aside {_cards(aside)}",
            )

    def _revealed(self, stored: StoredEvent, event: pb.DealRevealed, game: g.GameState) -> None:
        key = (event.game_no, event.round_no)
        where = f"round {event.round_no} of game {event.game_no}"
        pending = self.pending
        if pending is None or pending.key != key:
            done = next((r for r in self.rounds if r.key == key and r.revealed_at), None)
            if done is not None:
                raise _Found(stored, f"{where} was already revealed at version {done.revealed_at}")
            raise _Found(stored, f"it reveals {where}, but no deal of that round awaits its reveal")
        if pending.dealt is None:
            raise _Found(stored, f"it reveals {where}, which was never dealt")
        if pending.ended_at is None:
            raise _Found(
                stored,
                f"the secret of {where} is revealed before the round ended: "
                "anyone could have seen every hand",
            )
        secret = _secret(event.secret_hex)
        if secret is None:
            raise _Found(stored, "the revealed secret is not 64 lowercase hex digits (32 bytes)")
        if not verify_fingerprint(secret, pending.fingerprint):
            raise _Found(
                stored,
                f"the revealed secret does not match the fingerprint committed at version "
                f"{pending.committed_at}: it has fingerprint {deal_fingerprint(secret)}, "
                f"the commitment {pending.fingerprint}",
            )
        if not pending.deal_checked:  # pragma: no cover - the look-ahead checked it
            dealt = pending.dealt
            started = codec.decode(dealt.type, dealt.payload)
            assert isinstance(started, rnd.RoundStarted)
            self._compare_deal(dealt, started, pending, secret, game)
        pending.revealed_at = stored.version
        pending.secret_hex = event.secret_hex
        self.pending = None

    # -- the report ------------------------------------------------------------
    def report(self, problem: Discrepancy | None) -> TableReport:
        rounds = []
        for track in self.rounds:
            if track.revealed_at is not None:
                status = VERIFIED
            elif problem is not None and track is self.pending:
                status = FAILED
            else:
                status = IN_PROGRESS
            rounds.append(track.report(status))
        events = self.events
        return TableReport(
            stream_id=events[0].stream_id if events else "",
            events=len(events),
            events_verified=len(events) if problem is None else self._good_before(problem),
            rounds=tuple(rounds),
            games=self.games,
            problem=problem,
        )

    def _good_before(self, problem: Discrepancy) -> int:
        first = self.events[0].version if self.events else 1
        return max(0, min(problem.version - first, len(self.events)))


def _secret(secret_hex: str) -> bytes | None:
    if not _HEX_SECRET.fullmatch(secret_hex):
        return None
    return bytes.fromhex(secret_hex)


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
    audit = _Audit(events, anchors or {})
    try:
        audit.run()
    except _Found as found:
        return audit.report(found.discrepancy)
    return audit.report(None)


# --------------------------------------------------------------------------- replay
@dataclass(frozen=True)
class ReplayedEvent:
    """One stored event of a replay, decoded, with the table after it."""

    stored: StoredEvent
    event: AnyEvent
    game: g.GameState


def replay_events(events: Sequence[StoredEvent]) -> Iterator[ReplayedEvent]:
    """Decode and fold a table's events in order (no checks: verify the log first)."""
    game: g.GameState | None = None
    for stored in events:
        event = decode(stored)
        if isinstance(event, pb.TableCreated):
            options = codec.options_from_map(event.preset, event.options)
            game = g.new_table(options, event.seat_count)
        elif not isinstance(event, Message) and game is not None:
            game = g.evolve(game, event)
        if game is not None:
            yield ReplayedEvent(stored, event, game)


def seat_names(game: g.GameState) -> list[str]:
    """A name for each seat: the display name, else the player id, else ``Seat N``."""
    return [
        seat.display_name or seat.player or f"Seat {index}" for index, seat in enumerate(game.seats)
    ]


@dataclass(frozen=True)
class RoundScenario:
    """A stored round as a rules scenario (conformance/FORMAT.md).

    The scenario's seats are the round's players, in table order: scenario
    seat ``k`` is table seat ``seats[k]`` (empty seats are left out).
    """

    table_id: str
    game_no: int
    round_no: int
    seats: tuple[int, ...]
    fingerprint: str | None
    secret_hex: str | None
    scenario: dict[str, Any]
    ended: rnd.RoundEnded | None
    """The stored ``RoundEnded`` in scenario seats (None: the round did not end)."""

    def trace(self) -> list[dict[str, Any]]:
        """The scenario's trace, by :func:`president.rules.scenario.run_scenario`."""
        return run_scenario(self.scenario)

    def to_json(self) -> dict[str, Any]:
        """The scenario with its trace and where it comes from, as one JSON-ready object."""
        return {
            "table": self.table_id,
            "game": self.game_no,
            "round": self.round_no,
            "seats": list(self.seats),
            "fingerprint": self.fingerprint,
            "secret": self.secret_hex,
            "scenario": self.scenario,
            "trace": self.trace(),
        }


def _option_overrides(options: Any) -> dict[str, Any]:
    defaults = options_for(options.preset).to_dict()
    return {
        name: value
        for name, value in options.to_dict().items()
        if name != "preset" and defaults.get(name) != value
    }


def round_scenarios(events: Sequence[StoredEvent]) -> list[RoundScenario]:
    """Every dealt round of a table's stream as a scenario (verify the log first)."""
    scenarios: list[RoundScenario] = []
    table_id = events[0].stream_id.removeprefix(STREAM_PREFIX) if events else ""
    fingerprint: str | None = None
    current: dict[str, Any] | None = None
    game_no = 0
    for start, end in command_groups(events):
        first = decode(events[start])
        if isinstance(first, pb.DealCommitted):
            fingerprint = first.fingerprint
            game_no = first.game_no
            continue
        if isinstance(first, pb.DealRevealed):
            for item in reversed(scenarios):
                if (item.game_no, item.round_no) == (first.game_no, first.round_no):
                    index = scenarios.index(item)
                    scenarios[index] = replace(item, secret_hex=first.secret_hex)
                    break
            continue
        if isinstance(first, rnd.RoundStarted):
            players = first.players
            where = {seat: index for index, seat in enumerate(players)}
            standings = [where[s] for s in first.previous_standings if s in where]
            scenario: dict[str, Any] = {
                "name": f"table {table_id}, game {game_no}, round {first.round_no}",
                "preset": first.options.preset,
                "options": _option_overrides(first.options),
                "hands": [" ".join(names(first.hands[seat])) for seat in players],
                "round": first.round_no,
                "previous_standings": standings if first.round_no > 1 else None,
                "scores": [first.scores[seat] for seat in players],
                "actions": [],
            }
            if first.set_aside:
                scenario["set_aside"] = " ".join(names(first.set_aside))
            current = {"where": where, "scenario": scenario, "players": players}
            scenarios.append(
                RoundScenario(
                    table_id, game_no, first.round_no, players, fingerprint, None, scenario, None
                )
            )
            continue
        if current is None:
            continue
        where = current["where"]
        action = _action(first, where)
        if action is not None:
            current["scenario"]["actions"].append(action)
        for index in range(start, end):
            event = first if index == start else decode(events[index])
            if isinstance(event, rnd.RoundEnded):
                mapped = _mapped_result(event, current["players"], where)
                scenarios[-1] = replace(scenarios[-1], ended=mapped)
                current = None
                break
    return scenarios


def _action(first: AnyEvent, where: Mapping[int, int]) -> str | None:
    if isinstance(first, rnd.CardsPlayed):
        return f"{where[first.seat]} play {_cards(first.cards)}"
    if isinstance(first, rnd.Passed):
        return f"{where[first.seat]} pass"
    if isinstance(first, rnd.CardsGiven) and not first.automatic:
        return f"{where[first.giver]} give {_cards(first.cards)}"
    if isinstance(first, rnd.TimedOut):
        return "timeout"
    return None


def _mapped_result(
    ended: rnd.RoundEnded, players: Sequence[int], where: Mapping[int, int]
) -> rnd.RoundEnded:
    return rnd.RoundEnded(
        standings=tuple(where[seat] for seat in ended.standings),
        points=tuple(ended.points[seat] for seat in players),
        totals=tuple(ended.totals[seat] for seat in players),
        game_over=ended.game_over,
        winners=tuple(where[seat] for seat in ended.winners),
    )
