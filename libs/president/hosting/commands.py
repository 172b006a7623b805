"""Every command a hosted table takes, and how each is decided on the table.

The game's commands (:mod:`president.rules.game`, :mod:`president.rules.round`)
are decided by the rules engine. The table's own commands (a reaction, a chat
message, the host's mute, the host's handover, a presence report, moving on by
itself) are decided here, beside them, by the same :func:`decide`: all are appended, folded and
answered by the one path of :meth:`president.hosting.host.TableHost.decide_and_append`.

A command may stand for another on the table it meets (:func:`bind`):
``MoveOn`` becomes what the table does by itself
(:func:`president.hosting.move_on.move_on`), acted by the server or, for a
waiting bot's move, by that bot.

Each command's digest (:mod:`president.hosting.retries`) covers its kind and
the fields its events keep (:func:`digest_terms`), so an auditor recomputes it
from the log; a command stored before carries the digest of the first format
(:func:`legacy_digest_of`), and its retry still matches.
"""

from __future__ import annotations

from dataclasses import dataclass

from president.hosting.autoplay import bot_actor
from president.hosting.events import (
    ChatPosted,
    HostChanged,
    ReactionShown,
    SeatMuted,
    SeatPresence,
    TableClosed,
    TableEvent,
)
from president.hosting.host_role import handover
from president.hosting.move_on import move_on
from president.hosting.outcome import SERVER
from president.hosting.projection import Table
from president.hosting.retries import Term, command_digest, legacy_command_digest
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import names
from president.rules.errors import ErrorCode, Rejected


@dataclass(frozen=True)
class React:
    """Show a reaction from an occupied seat."""

    seat: int
    reaction: str

    def decide(self, table: Table) -> list[TableEvent]:
        seats = table.game.seats
        if not 0 <= self.seat < len(seats) or not seats[self.seat].occupied:
            raise Rejected(ErrorCode.NO_SUCH_SEAT, f"nobody sits in seat {self.seat}")
        return [ReactionShown(seat=self.seat, reaction=self.reaction)]

    def legacy_digest_subject(self) -> object:
        return ReactionShown(seat=self.seat, reaction=self.reaction)


@dataclass(frozen=True)
class Chat:
    """A chat message from a seat where a person sits whom the host has not muted (the
    text as the API took it: :func:`president.servicekit.checks.chat_text`)."""

    seat: int
    text: str

    def decide(self, table: Table) -> list[TableEvent]:
        seats = table.game.seats
        if not 0 <= self.seat < len(seats) or not seats[self.seat].occupied:
            raise Rejected(ErrorCode.NO_SUCH_SEAT, f"nobody sits in seat {self.seat}")
        if seats[self.seat].player in table.muted:
            raise Rejected(
                ErrorCode.SEAT_MUTED,
                "the host muted you at this table: your messages are not shown "
                "(the host may unmute you)",
            )
        return [ChatPosted(seat=self.seat, text=self.text)]

    def legacy_digest_subject(self) -> ChatPosted:
        return ChatPosted(seat=self.seat, text=self.text)


@dataclass(frozen=True)
class MuteSeat:
    """The host mutes (or unmutes) the person in ``seat``: their chat is refused at this
    table, in whatever seat, until unmuted (nothing when they are so already)."""

    seat: int
    muted: bool

    def decide(self, table: Table) -> list[TableEvent]:
        seats = table.game.seats
        occupant = seats[self.seat] if 0 <= self.seat < len(seats) else None
        if occupant is None or occupant.player is None or occupant.is_bot:
            raise Rejected(ErrorCode.CANNOT_MUTE, f"no person sits in seat {self.seat} to mute")
        if occupant.player == table.host_player_id:
            raise Rejected(ErrorCode.CANNOT_MUTE, "the host does not mute their own seat")
        if (occupant.player in table.muted) == self.muted:
            return []
        return [SeatMuted(self.seat, occupant.player, self.muted)]

    def legacy_digest_subject(self) -> object:
        return ("mute_seat", self.seat, self.muted)


@dataclass(frozen=True)
class HandOverHost:
    """The host hands the host role to the person in ``seat``."""

    seat: int

    def decide(self, table: Table) -> list[TableEvent]:
        changed: HostChanged = handover(table, self.seat)
        return [changed]

    def legacy_digest_subject(self) -> object:
        return ("hand_over_host", self.seat)


@dataclass(frozen=True)
class SetPresence:
    """A gateway replica reports a seat's person connected or not (nothing when the table
    already counts it so)."""

    seat: int
    connected: bool
    gateway: str

    def decide(self, table: Table) -> list[TableEvent]:
        already = (self.seat, self.gateway) in table.presence
        return (
            []
            if already == self.connected
            else [SeatPresence(self.seat, self.gateway, self.connected)]
        )

    def legacy_digest_subject(self) -> SeatPresence:
        return SeatPresence(self.seat, self.gateway, self.connected)


@dataclass(frozen=True)
class Close:
    """The table closes (what ``MoveOn`` becomes when nobody is left at it)."""

    reason: str

    def decide(self, table: Table) -> list[TableEvent]:
        return [TableClosed(self.reason)]

    def legacy_digest_subject(self) -> object:
        return TableClosed(self.reason)


@dataclass(frozen=True)
class MoveOn:
    """The server: the table waited too long after a round or a game, and moves on."""

    kind: str
    game_no: int
    round_no: int
    #: The wait's timer key (for the bots, the table version they waited on).
    timer_key: int = 0


@dataclass(frozen=True)
class PassHost:
    """The host role passes on by itself (what ``MoveOn`` becomes when the host stayed
    away: :func:`president.hosting.host_role.away_successor`)."""

    change: HostChanged

    def decide(self, table: Table) -> list[TableEvent]:
        return [self.change]

    def legacy_digest_subject(self) -> object:
        return self.change


OwnCommand = React | Chat | MuteSeat | HandOverHost | SetPresence | Close | PassHost
#: What a table takes: the game's commands and its own.
TableCommand = g.GameCommand | rnd.Command | OwnCommand | MoveOn
_OWN = (React, Chat, MuteSeat, HandOverHost, SetPresence, Close, PassHost)


def bind(table: Table, command: TableCommand, actor: str) -> tuple[TableCommand, str]:
    """The command ``command`` stands for on ``table``, and who acts it: itself and
    ``actor``, but for ``MoveOn`` the table's own step (STALE when it moved on)."""
    if not isinstance(command, MoveOn):
        return command, actor
    step = move_on(table, command.kind, command.game_no, command.round_no, command.timer_key)
    if isinstance(step, TableClosed):
        return Close(step.reason), SERVER
    if isinstance(step, HostChanged):
        return PassHost(step), SERVER
    if isinstance(step, rnd.PlayCards | rnd.Pass):
        return step, bot_actor(table.game, step.seat)
    return step, SERVER


def decide(table: Table, command: TableCommand) -> list[TableEvent]:
    """The events ``command`` appends to ``table`` (a Rejected refusal otherwise)."""
    if isinstance(command, _OWN):
        return command.decide(table)
    if isinstance(command, MoveOn):  # pragma: no cover - bound before it is decided
        raise TypeError("MoveOn is decided as the step it stands for (bind it first)")
    return list(g.decide(table.game, command))


def digest_terms(command: TableCommand) -> tuple[str, tuple[Term, ...]]:
    """What a command's digest covers: its kind and its fields, each of which its stored
    events hold (``docs/auditing.md``, "The command digest", lists them). Left out: the
    trick version a play or pass answers and the timer key a timeout names, conditions on
    when the command may run that the log does not keep (a retry naming another asks the
    same)."""
    match command:
        case rnd.PlayCards(seat, cards):
            return "play_cards", (seat, " ".join(names(cards)))
        case rnd.Pass(seat):
            return "pass", (seat,)
        case rnd.ReturnCards(seat, cards):
            return "return_cards", (seat, " ".join(names(cards)))
        case rnd.Timeout():
            return "timeout", ()
        case g.SitDown(seat, player, is_bot):
            return "sit_down", (seat, player, is_bot, command.seated_name())
        case g.Leave(seat, removed):
            return "leave", (seat, removed)
        case g.DealRound(hands, set_aside):
            return "deal_round", (" ".join(names(set_aside)), *(" ".join(names(h)) for h in hands))
        case React(seat, reaction):
            return "react", (seat, reaction)
        case Chat(seat, text):
            return "chat", (seat, text)
        case MuteSeat(seat, muted):
            return "mute_seat", (seat, muted)
        case HandOverHost(seat):
            return "hand_over_host", (seat,)
        case SetPresence(seat, connected, gateway):
            return "set_presence", (seat, connected, gateway)
        case Close(reason):
            return "close", (reason,)
        case PassHost(change):
            return "pass_host", (change.player_id, change.previous_player_id, change.automatic)
        case MoveOn():  # pragma: no cover - bound before it is digested
            raise TypeError("MoveOn is digested as the step it stands for (bind it first)")
    return _KINDS[type(command)], ()


_KINDS: dict[type, str] = {
    g.StartGame: "start_game",
    g.PlayAgain: "play_again",
    g.NextRound: "next_round",
    g.EndGame: "end_game",
    g.BackToLobby: "back_to_lobby",
}
"""The kinds of the commands without fields."""


def digest_of(command: TableCommand, actor: str) -> str:
    """The digest kept with the command's events (:func:`president.hosting.retries.command_digest`
    of :func:`digest_terms`)."""
    kind, fields = digest_terms(command)
    return command_digest(actor, kind, fields)


def legacy_digest_of(command: TableCommand, actor: str) -> str:
    """The digest of the first format, as events stored before :func:`digest_of` carry it
    (:func:`president.hosting.retries.legacy_command_digest`): a retry of such a command
    still matches."""
    subject = command.legacy_digest_subject() if isinstance(command, _OWN) else command
    return legacy_command_digest(subject, actor)
