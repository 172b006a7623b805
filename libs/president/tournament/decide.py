"""``decide(state, command, now)``: a tournament's events for a command, or a refusal.

One guard stands in front of the handlers: the tournament exists (or, to
create it, does not), it is not over, and the actor has the right (the host or
the operator for the host's commands; the server for a round's steps). Each
handler then checks its own rules. A refusal raises
:class:`president.tournament.errors.TournamentRefused` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from president.rules.options import OptionError, options_for
from president.tournament.commands import (
    FIRST_DRAWS,
    FORMATS,
    OPERATOR,
    SERVER,
    CancelTournament,
    CreateTournament,
    Enter,
    FinishTournament,
    Invite,
    RecordResult,
    Retire,
    RevealRound,
    SeatRound,
    SettleTable,
    StartRound,
    TournamentCommand,
    TournamentSettings,
    Withdraw,
)
from president.tournament.draw import fingerprint
from president.tournament.errors import Refusal, TournamentRefused
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
from president.tournament.pairing import all_rounds_played, draw_request, drawable, rounds_remain
from president.tournament.port import Seating
from president.tournament.scoring import settled_places
from president.tournament.standings import standings
from president.tournament.state import RoundRecord, Tournament

Events = tuple[TournamentEvent, ...]

#: The largest tournament and the most rounds one may hold.
MAX_CAPACITY = 10_000
MAX_ROUNDS = 30

_HOSTS = (Invite, CancelTournament)
_SERVERS = (StartRound, SeatRound, RecordResult, SettleTable, RevealRound, FinishTournament)


def decide(state: Tournament | None, command: TournamentCommand, now: datetime) -> Events:
    """The events ``command`` causes at ``now`` (or :class:`TournamentRefused`)."""
    if isinstance(command, CreateTournament):
        return _create(state, command, now)
    if state is None:
        raise TournamentRefused(Refusal.NO_SUCH_TOURNAMENT, "there is no such tournament")
    if state.over:
        raise TournamentRefused(Refusal.TOURNAMENT_OVER, f"the tournament is {state.status}")
    if isinstance(command, _HOSTS) and command.actor not in (state.host, OPERATOR):
        raise TournamentRefused(Refusal.NOT_HOST, "only the tournament's host may change it")
    if isinstance(command, _SERVERS) and command.actor != SERVER:
        raise TournamentRefused(Refusal.NOT_SERVER, "only the tournament service runs the rounds")
    handler = _DECIDE[type(command)]
    events: Events = handler(state, command, now)
    return events


def _bad(sentence: str) -> TournamentRefused:
    return TournamentRefused(Refusal.BAD_SETTINGS, sentence)


def check_settings(settings: TournamentSettings, now: datetime) -> None:
    """Refuse (BAD_SETTINGS, with the rule broken) settings no tournament may have."""
    if not settings.name.strip():
        raise _bad("a tournament needs a name")
    if settings.format not in FORMATS:
        raise _bad(f"the format is one of {', '.join(FORMATS)}, not {settings.format!r}")
    if settings.first_draw not in FIRST_DRAWS:
        raise _bad(f"the first draw is one of {', '.join(FIRST_DRAWS)}")
    try:
        options = options_for(settings.preset, dict(settings.options))
    except OptionError as error:
        raise _bad(str(error)) from None
    if not options.min_players <= settings.table_size <= options.max_players:
        raise _bad(
            f"{settings.preset} tables seat {options.min_players} to {options.max_players},"
            f" not {settings.table_size}"
        )
    if not 1 <= settings.rounds <= MAX_ROUNDS:
        raise _bad(f"a tournament plays 1 to {MAX_ROUNDS} rounds")
    if not 2 <= settings.capacity <= MAX_CAPACITY:
        raise _bad(f"a tournament takes 2 to {MAX_CAPACITY} entrants")
    if not settings.opens_at < settings.closes_at:
        raise _bad("the entry window must close after it opens")
    if not settings.opens_at <= settings.starts_at:
        raise _bad("the entry window must open by the start")
    if settings.starts_at <= now:
        raise _bad("the start must be in the future")
    if settings.format == "elimination" and settings.closes_at > settings.starts_at:
        raise _bad("an elimination's entry must close by its start: nobody joins it late")


def _create(state: Tournament | None, command: CreateTournament, now: datetime) -> Events:
    if state is not None:
        raise TournamentRefused(Refusal.TOURNAMENT_EXISTS, "that tournament exists already")
    if not command.tournament_id:
        raise _bad("a tournament needs an id")
    check_settings(command.settings, now)
    return (TournamentCreated(command.tournament_id, command.actor, command.settings),)


def _invite(state: Tournament, command: Invite, now: datetime) -> Events:
    if not command.accounts or not all(command.accounts):
        raise _bad("name the accounts to invite")
    new = tuple(dict.fromkeys(a for a in command.accounts if a not in state.invited))
    return (EntrantsInvited(new),) if new else ()


def _cancel(state: Tournament, command: CancelTournament, now: datetime) -> Events:
    if state.started:
        raise TournamentRefused(
            Refusal.TOURNAMENT_STARTED, "a tournament under way is not called off"
        )
    return (TournamentCancelled(),)


def _enter(state: Tournament, command: Enter, now: datetime) -> Events:
    settings = state.settings
    entry = state.entrant(command.actor)
    if entry is not None:
        said = "you retired from this tournament" if entry.retired else "you have entered"
        raise TournamentRefused(Refusal.ALREADY_ENTERED, f"{said} already")
    window_open = settings.opens_at <= now < settings.closes_at
    if state.started and (settings.format == "elimination" or not window_open):
        raise TournamentRefused(
            Refusal.TOURNAMENT_STARTED, "the tournament has started: entries are closed"
        )
    if now < settings.opens_at:
        raise TournamentRefused(
            Refusal.NOT_YET_OPEN, f"entries open at {settings.opens_at.isoformat()}"
        )
    if now >= settings.closes_at:
        raise TournamentRefused(
            Refusal.ENTRY_CLOSED, f"entries closed at {settings.closes_at.isoformat()}"
        )
    if command.guest and not settings.guests_allowed:
        raise TournamentRefused(
            Refusal.GUESTS_NOT_ALLOWED, "this tournament takes named accounts only, not guests"
        )
    invited = command.actor in state.invited or command.actor == state.host
    if not settings.public and not invited:
        raise TournamentRefused(
            Refusal.NOT_INVITED, "this tournament is by invitation, and you have none"
        )
    if sum(not e.retired for e in state.entrants) >= settings.capacity:
        raise TournamentRefused(
            Refusal.TOURNAMENT_FULL, f"all {settings.capacity} places are taken"
        )
    return (Entered(command.actor, command.guest, command.rating_milli),)


def _withdraw(state: Tournament, command: Withdraw, now: datetime) -> Events:
    if state.entrant(command.actor) is None:
        raise TournamentRefused(Refusal.NOT_ENTERED, "you have not entered this tournament")
    if state.started:
        raise TournamentRefused(
            Refusal.TOURNAMENT_STARTED,
            "the tournament has started: retire instead, and a bot plays your seat",
        )
    return (EntryWithdrawn(command.actor),)


def _retire(state: Tournament, command: Retire, now: datetime) -> Events:
    entry = state.entrant(command.actor)
    if entry is None or entry.retired:
        raise TournamentRefused(Refusal.NOT_ENTERED, "you are not playing in this tournament")
    if not state.started:
        raise TournamentRefused(
            Refusal.NOT_STARTED, "the tournament has not started: withdraw your entry instead"
        )
    return (EntrantRetired(command.actor, _first_unscored_round(state, command.actor)),)


def _first_unscored_round(state: Tournament, account: str) -> int:
    """The round a retirement takes effect from: the round under way, unless the
    entrant's table in it already has its result (or they are not in it)."""
    last = state.rounds[-1]
    if last.secret is not None:
        return last.round_no + 1
    if last.seating is None:
        drawn = any(e.account_id == account for e in last.request.entrants)
        return last.round_no if drawn else last.round_no + 1
    for table, places in zip(last.seating, last.places, strict=True):
        if account in table:
            return last.round_no + 1 if places is not None else last.round_no
    return last.round_no + 1


def _start_round(state: Tournament, command: StartRound, now: datetime) -> Events:
    expected = len(state.rounds) + 1
    if command.round_no != expected:
        raise TournamentRefused(Refusal.WRONG_ROUND, f"the next round is round {expected}")
    if state.rounds and state.rounds[-1].secret is None:
        raise TournamentRefused(
            Refusal.ROUND_UNDER_WAY, f"round {expected - 1} is not over and revealed"
        )
    if not state.started and now < state.settings.starts_at:
        raise TournamentRefused(
            Refusal.TOO_EARLY, f"the tournament starts at {state.settings.starts_at.isoformat()}"
        )
    if all_rounds_played(state):
        raise TournamentRefused(Refusal.WRONG_ROUND, "every round has been played")
    if len(drawable(state)) < 2:
        raise TournamentRefused(
            Refusal.NOT_ENOUGH_ENTRANTS, "a round needs at least 2 entrants to draw"
        )
    if not command.fingerprint:
        raise TournamentRefused(
            Refusal.BAD_COMMITMENT, "a round is committed by its secret's fingerprint"
        )
    return (RoundDrawCommitted(command.round_no, command.fingerprint, draw_request(state)),)


def _current(state: Tournament, round_no: int) -> RoundRecord:
    if not state.rounds or state.rounds[-1].round_no != round_no:
        raise TournamentRefused(Refusal.WRONG_ROUND, f"round {round_no} is not the round under way")
    return state.rounds[-1]


def check_seating(record: RoundRecord, seating: Seating) -> None:
    """Refuse (BAD_SEATING) a seating that is not one of ``record``'s request: every
    entrant drawn seated once and nobody else, each table of ``table_size`` seats
    holding at least one entrant, and no more tables than the entrants need."""
    request = record.request
    size = request.table_size
    if any(len(table) != size for table in seating):
        raise TournamentRefused(Refusal.BAD_SEATING, f"every table has {size} seats")
    seated = [a for table in seating for a in table if a is not None]
    drawn = [e.account_id for e in request.entrants]
    if sorted(seated) != sorted(drawn):
        raise TournamentRefused(
            Refusal.BAD_SEATING, "the seating does not seat each entrant drawn exactly once"
        )
    needed = -(-len(drawn) // size)
    if len(seating) != needed or any(all(a is None for a in table) for table in seating):
        raise TournamentRefused(
            Refusal.BAD_SEATING, f"{len(drawn)} entrants sit at {needed} tables, none all bots"
        )


def _seat_round(state: Tournament, command: SeatRound, now: datetime) -> Events:
    record = _current(state, command.round_no)
    if record.seating is not None:
        raise TournamentRefused(Refusal.WRONG_ROUND, f"round {command.round_no} is seated")
    check_seating(record, command.seating)
    return (RoundSeated(command.round_no, command.seating),)


def _open_table(state: Tournament, round_no: int, table: int) -> tuple[str | None, ...]:
    record = _current(state, round_no)
    if record.seating is None or not 0 <= table < len(record.seating):
        raise TournamentRefused(Refusal.UNKNOWN_TABLE, f"round {round_no} has no table {table}")
    if record.places[table] is not None:
        raise TournamentRefused(
            Refusal.RESULT_RECORDED, f"table {table} of round {round_no} has its result"
        )
    return record.seating[table]


def _record(state: Tournament, command: RecordResult, now: datetime) -> Events:
    seats = _open_table(state, command.round_no, command.table)
    if sorted(command.places) != list(range(1, len(seats) + 1)):
        raise TournamentRefused(
            Refusal.BAD_RESULT, f"a result gives each of the {len(seats)} seats one place"
        )
    return (TableResultRecorded(command.round_no, command.table, tuple(command.places)),)


def _settle(state: Tournament, command: SettleTable, now: datetime) -> Events:
    seats = _open_table(state, command.round_no, command.table)
    if sorted(command.standing) != list(range(len(seats))) or not command.departed <= set(
        range(len(seats))
    ):
        raise TournamentRefused(
            Refusal.BAD_RESULT, f"a settlement ranks each of the {len(seats)} seats once"
        )
    minimum = options_for(state.settings.preset, dict(state.settings.options)).min_players
    staying = len(seats) - len(command.departed)
    if staying >= minimum:
        raise TournamentRefused(
            Refusal.BAD_RESULT,
            f"{staying} players are still seated, enough to finish: the table plays on",
        )
    places = settled_places(command.standing, command.departed)
    return (TableSettled(command.round_no, command.table, places, command.departed),)


def _reveal(state: Tournament, command: RevealRound, now: datetime) -> Events:
    record = _current(state, command.round_no)
    if record.secret is not None:
        raise TournamentRefused(Refusal.WRONG_ROUND, f"round {command.round_no} is revealed")
    if not record.scored:
        raise TournamentRefused(
            Refusal.RESULTS_MISSING, f"round {command.round_no} still has tables playing"
        )
    if not command.secret:
        raise TournamentRefused(Refusal.BAD_COMMITMENT, "a reveal carries the draw's secret")
    try:
        committed = fingerprint(command.secret, state.tournament_id, command.round_no)
    except (TypeError, ValueError):
        raise TournamentRefused(
            Refusal.BAD_COMMITMENT, "a draw's secret is 32 bytes (SEAT_DRAW.md)"
        ) from None
    if committed != record.fingerprint:
        raise TournamentRefused(
            Refusal.BAD_COMMITMENT,
            f"that secret is not the one round {command.round_no} committed to "
            "(its fingerprint differs)",
        )
    return (RoundRevealed(command.round_no, command.secret),)


def _finish(state: Tournament, command: FinishTournament, now: datetime) -> Events:
    if not state.started or state.rounds[-1].secret is None:
        raise TournamentRefused(
            Refusal.ROUNDS_REMAIN, "the tournament finishes once its last round is revealed"
        )
    if rounds_remain(state):
        raise TournamentRefused(Refusal.ROUNDS_REMAIN, "the tournament has rounds to play")
    return (TournamentFinished(tuple(s.account_id for s in standings(state))),)


_DECIDE: dict[type, Callable[[Tournament, Any, datetime], Events]] = {
    Invite: _invite,
    CancelTournament: _cancel,
    Enter: _enter,
    Withdraw: _withdraw,
    Retire: _retire,
    StartRound: _start_round,
    SeatRound: _seat_round,
    RecordResult: _record,
    SettleTable: _settle,
    RevealRound: _reveal,
    FinishTournament: _finish,
}
