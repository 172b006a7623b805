"""``president audit``: verify stored table logs, and replay a table's game.

``verify`` re-checks every table of an event store (or one) with
:func:`president.audit.verify_table` and exits 1 naming the first bad event
(with ``--receipts``, also which events the players' receipts prove);
``replay`` prints a table's game round by round, or each round as a rules
scenario with its trace (``--json``). A bad URL or a database without the
store's schema exits 2 with one line; a receipt or archived feed entry the
operator's key (``--operator-key``) did not sign exits 3, naming it: forged
evidence accuses no log.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from president import audit
from president.audit.commitments import ArchivedFeed, forged_words, load_archive, unsigned_entry
from president.audit.receipts import unsigned
from president.audit.terminal import visible
from president.hosting import events as ev
from president.hosting.signatures import OperatorKeys
from president.hosting.streams import STREAM_PREFIX, stream_id
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import names as cards_of
from president.rules.render import seat_name
from president.store import EventStore, StoredEvent, StoreError
from president.store.columns import CommandColumns, read_audited_stream
from president.store.engine import create_store_engine, normalise_url
from president.store.schema import events as events_table

audit_app = typer.Typer(
    help="Audit stored table logs: the deals, exchanges, plays and scores of every round.",
    no_args_is_help=True,
)

_DB_HELP = "The event store: sqlite:///path/to/store.db or postgresql://user@host/dbname."
_PROGRESS_MIN_EVENTS = 20_000
FORGED_EXIT = 3
"""The exit code of forged evidence: a receipt or archived entry the operator did not sign."""


class _BadInput(Exception):
    """Input a person typed wrong, or a store that cannot be read: one line, exit code 2."""


def _fail(message: str) -> NoReturn:
    typer.echo(message, err=True)
    raise typer.Exit(2)


# --------------------------------------------------------------------------- the store
def open_store(url: str) -> EventStore:
    """Open an existing event store for reading; a clear :class:`_BadInput` if it cannot be."""
    try:
        parsed = normalise_url(make_url(url))
    except (ValueError, ArgumentError) as error:
        raise _BadInput(f"--db {url!r} is not a database URL the store reads: {error}") from None
    if parsed.drivername.startswith("sqlite"):
        path = Path(parsed.database or "")
        if not path.is_file():
            raise _BadInput(f"--db: there is no SQLite event store file at {path}")
    where = parsed.render_as_string(hide_password=True)
    probe = create_store_engine(parsed, poolclass=NullPool)
    try:
        with probe.connect():
            pass
    except SQLAlchemyError as error:
        reason = str(getattr(error, "orig", None) or error).strip().splitlines()[0]
        raise _BadInput(f"--db: cannot connect to {where}: {reason}") from None
    finally:
        probe.dispose()
    try:
        return EventStore.from_url(parsed)
    except StoreError as error:
        raise _BadInput(
            f"--db: {where} holds no event store at this code's schema ({error})"
        ) from None
    except SQLAlchemyError as error:
        raise _BadInput(f"--db: cannot read {where}: {str(error).splitlines()[0]}") from None


def table_streams(store: EventStore, table_id: str | None = None) -> list[tuple[str, int]]:
    """The stream ids of the store's tables (or of one table) and their event counts."""
    column = events_table.c.stream_id
    query = select(column, func.count()).group_by(column).order_by(column)
    if table_id is None:
        query = query.where(column.like(STREAM_PREFIX + "%"))
    else:
        query = query.where(column == stream_id(table_id))
    connection = store.engine.connect().execution_options(sqlite_begin="DEFERRED")
    with connection, connection.begin():
        return [(str(row[0]), int(row[1])) for row in connection.execute(query)]


def read_tables(store: EventStore, streams: list[tuple[str, int]]) -> Iterator[list[StoredEvent]]:
    """Each table's events, one stream at a time, in version order."""
    for stream, _ in streams:
        yield store.read_stream(stream)


def read_audited_tables(
    store: EventStore, streams: list[tuple[str, int]]
) -> Iterator[tuple[list[StoredEvent], list[CommandColumns]]]:
    """Each table's events and its rows' unhashed command columns, one stream at a time."""
    for stream, _ in streams:
        yield read_audited_stream(store.engine, stream)


# --------------------------------------------------------------------------- verify
@audit_app.command("verify")
def verify(
    db: str = typer.Option(..., "--db", metavar="URL", help=_DB_HELP),
    table: str | None = typer.Option(None, "--table", metavar="ID", help="Only this table."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    anchor: list[str] = typer.Option(
        [],
        "--anchor",
        metavar="VERSION:HASH",
        help="A hash a player kept of an event they received (repeatable; with --table). "
        "Catches a log rewritten with recomputed hashes.",
    ),
    receipt_files: list[Path] = typer.Option(
        [],
        "--receipts",
        metavar="FILE",
        help="A receipts file a player or spectator exported (repeatable): says which "
        "events they prove, and where the log departs from them.",
    ),
    commitment_files: list[Path] = typer.Option(
        [],
        "--commitments",
        metavar="FILE",
        help="An archived copy of the public commitment feed (president audit archive; "
        "repeatable): every round the logs commit must be the one it published.",
    ),
    operator_key: list[str] = typer.Option(
        [],
        "--operator-key",
        metavar="HEX",
        help="The operator's public signing key, 64 hex digits (GetOperatorKeys; repeatable: "
        "retired keys too). Needed with --receipts and --commitments: only what it signed "
        "counts as evidence.",
    ),
) -> None:
    """Verify every table's log: deals, exchanges, plays, scores and the hash chain.

    Exits 0 when everything verifies, 1 naming the first bad event, 2 when
    the store cannot be read, 3 when a receipt or an archived feed entry was
    not signed by the operator's key (forged evidence, which accuses nobody).
    """
    console = Console(highlight=False, soft_wrap=True)
    try:
        receipts = [audit.load_receipts(path) for path in receipt_files]
        table = _receipts_table(receipts, table)
        anchors = _parse_anchors(anchor, table)
        archives = [_load_feed_archive(path) for path in commitment_files]
        keys = evidence_keys(operator_key, bool(receipts), bool(archives))
    except (_BadInput, audit.BadReceipts) as error:
        _fail(str(error))
    forged = _forged_evidence(receipts, table, archives, keys)
    if forged:
        console.print(f"[bold red]FORGED[/]: {escape(visible(forged))}")
        raise typer.Exit(FORGED_EXIT)
    try:
        store = open_store(db)
    except _BadInput as error:
        _fail(str(error))
    proved: list[StoredEvent] = []
    try:
        streams = table_streams(store, table)
        if table is not None and not streams:
            _fail(f"--table: the store has no table {table!r}")
        reports = _verify_streams(store, streams, anchors, receipts, archives, console, quiet)
        for archive in archives if table is None else []:
            problem = archive.missing_tables(stream for stream, _ in streams)
            if problem is not None:
                reports.append(_failed(audit.TableReport(problem.stream_id, 0, 0, (), 0), problem))
        if receipts and table is not None:
            proved = store.read_stream(stream_id(table))
    except SQLAlchemyError as error:
        _fail(f"--db: cannot read the store: {str(error).splitlines()[0]}")
    finally:
        store.close()
    summary = audit.summarise(reports)
    if table is not None and reports:
        _print_table(console, reports[0])
    else:
        _print_summary(console, reports, summary)
    for report in reports:
        for warning in report.warnings:
            where, said = escape(visible(report.stream_id)), escape(visible(warning))
            console.print(f"[yellow]warning[/]: {where}: {said}")
    if receipts and reports:
        _print_proof(console, proved, reports[0], receipts)
    if summary.first_problem is not None:
        console.print(f"[bold red]FAILED[/]: the first bad event is {_problem(summary)}")
        raise typer.Exit(1)
    console.print(
        f"[bold green]OK[/]: {summary.tables} table{'s' * (summary.tables != 1)}, "
        f"{summary.rounds_verified} rounds and {summary.events} events verified"
        + (
            f"; {summary.rounds_in_progress} round(s) in progress"
            if summary.rounds_in_progress
            else ""
        )
        + "."
    )


def evidence_keys(texts: list[str], receipts: bool, archives: bool) -> OperatorKeys:
    """The operator's keys ``--operator-key`` gives; required with receipts or archives."""
    try:
        keys = OperatorKeys.from_hex(texts)
    except ValueError as error:
        raise _BadInput(f"--operator-key: {error}") from None
    if (receipts or archives) and not keys:
        which = "--receipts" if receipts else "--commitments"
        raise _BadInput(
            f"{which} needs --operator-key HEX, the operator's published public key "
            "(GetOperatorKeys, or client.operator_keys()): only evidence the operator signed "
            "can show the log was rewritten"
        )
    return keys


def _forged_evidence(
    receipts: list[audit.ReceiptFile],
    table: str | None,
    archives: list[ArchivedFeed],
    keys: OperatorKeys,
) -> str:
    """The first receipt or archived entry the operator did not sign, in words ("": none)."""
    if receipts and table is not None:
        forged = unsigned(receipts, table, keys)
        if forged is not None:
            return forged.words()
    for archive in archives:
        found = unsigned_entry(archive.entries, keys)
        if found is not None:
            return forged_words(archive.source, *found)
    return ""


def _problem(summary: audit.AuditSummary) -> str:
    problem = summary.first_problem
    assert problem is not None
    return escape(
        visible(
            f"stream {problem.stream_id}, version {problem.version} ({problem.event_type}): "
            f"{problem.reason}"
        )
    )


def _receipts_table(receipts: list[audit.ReceiptFile], table: str | None) -> str | None:
    """The one table the receipts are of (and ``--table``, if given)."""
    named = {file.table_id for file in receipts if file.table_id}
    if table is not None:
        named.add(table)
    if len(named) > 1:
        raise _BadInput(
            f"--receipts: the files are of several tables ({', '.join(sorted(named))}): "
            "verify one table at a time"
        )
    if receipts and not named:
        raise _BadInput("--receipts: the files name no table: give --table")
    return next(iter(named), None)


def _print_proof(
    console: Console,
    events: list[StoredEvent],
    report: audit.TableReport,
    receipts: list[audit.ReceiptFile],
) -> None:
    """Which events the receipts prove, and where the log departs from them."""
    proof = audit.proven(events, receipts)
    holders = ", ".join(proof.holders)
    console.print(
        escape(f"Receipts: {proof.receipts} from {holders}; {proof.matching} match the log.")
    )
    if proof.proven_through:
        console.print(
            escape(
                f"They prove versions 1 to {proof.proven_through} as their holders saw them "
                "(each receipt proves its event and, by the hash chain, every event before it)."
            )
        )
    else:
        console.print("They prove no event of this log.")
    if proof.matching < proof.receipts and report.problem is not None:
        console.print(escape(visible(f"The log departs from them: {report.problem}")))


def _parse_anchors(texts: list[str], table: str | None) -> dict[int, str]:
    if texts and table is None:
        raise _BadInput("--anchor needs --table: kept hashes belong to one table's log")
    anchors: dict[int, str] = {}
    for text in texts:
        version, sep, digest = text.partition(":")
        if not sep or not version.strip().isdigit() or len(digest.strip()) != 64:
            raise _BadInput(f"--anchor takes VERSION:HASH (a 64-digit hex hash), not {text!r}")
        anchors[int(version)] = digest.strip().lower()
    return anchors


def _load_feed_archive(path: Path) -> ArchivedFeed:
    try:
        return ArchivedFeed(load_archive(path), str(path))
    except OSError as error:
        raise _BadInput(f"--commitments {path}: cannot read it ({error.strerror})") from None
    except ValueError as error:
        raise _BadInput(f"--commitments: {error}") from None


def _verify_streams(
    store: EventStore,
    streams: list[tuple[str, int]],
    anchors: dict[int, str],
    receipts: list[audit.ReceiptFile],
    archives: list[ArchivedFeed],
    console: Console,
    quiet: bool,
) -> list[audit.TableReport]:
    total = sum(count for _, count in streams)
    show_progress = not quiet and console.is_terminal and total >= _PROGRESS_MIN_EVENTS
    reports: list[audit.TableReport] = []
    now = datetime.now(UTC)

    def check(events: list[StoredEvent], columns: list[CommandColumns]) -> audit.TableReport:
        report = audit.verify_table(
            events, anchors=anchors, receipts=receipts, columns=columns, now=now
        )
        for archive in archives:
            problem = archive.check_chain() or archive.check_log(events)
            if report.ok and problem is not None:
                return _failed(report, problem)
        return report

    if not show_progress:
        for events, rows in read_audited_tables(store, streams):
            reports.append(check(events, rows))
        return reports
    bar = (
        TextColumn("[bold]verifying"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("events"),
        TimeRemainingColumn(),
    )
    with Progress(*bar, console=console, transient=True) as progress:
        task = progress.add_task("verify", total=total)
        for events, rows in read_audited_tables(store, streams):
            reports.append(check(events, rows))
            progress.advance(task, len(events))
    return reports


def _failed(report: audit.TableReport, problem: audit.Discrepancy) -> audit.TableReport:
    """``report`` failed at ``problem``, found by the archived feed."""
    verified = max(0, min(report.events, problem.version - 1))
    return replace(report, problem=problem, events_verified=verified, warnings=())


def _print_table(console: Console, report: audit.TableReport) -> None:
    table, stream = escape(visible(report.table_id)), escape(visible(report.stream_id))
    console.print(
        f"Table [bold]{table}[/] (stream {stream}): "
        f"{report.events} events, {report.games} game{'s' * (report.games != 1)}."
    )
    if report.rounds:
        rounds = Table("game", "round", "status", "committed", "dealt", "revealed", "fingerprint")
        for item in report.rounds:
            colour = {audit.VERIFIED: "green", audit.IN_PROGRESS: "yellow"}.get(item.status, "red")
            rounds.add_row(
                str(item.game_no),
                str(item.round_no),
                f"[{colour}]{item.status}[/]",
                f"v{item.committed_at}",
                f"v{item.dealt_at}" if item.dealt_at else "-",
                f"v{item.revealed_at}" if item.revealed_at else "-",
                item.fingerprint[:16] + "…",
            )
        console.print(rounds)


def _print_summary(
    console: Console, reports: list[audit.TableReport], summary: audit.AuditSummary
) -> None:
    if not reports:
        console.print("The store has no tables.")
        return
    overview = Table("tables", "verified", "bad", "rounds verified", "in progress", "events")
    overview.add_row(
        str(summary.tables),
        str(summary.tables_ok),
        str(summary.tables - summary.tables_ok),
        str(summary.rounds_verified),
        str(summary.rounds_in_progress),
        str(summary.events),
    )
    console.print(overview)
    bad = [report for report in reports if report.problem is not None]
    for report in bad[:20]:
        console.print(f"  [red]bad[/] {escape(visible(str(report.problem)))}")
    if len(bad) > 20:
        console.print(f"  … and {len(bad) - 20} more bad tables")


# --------------------------------------------------------------------------- replay
@audit_app.command("replay")
def replay(
    db: str = typer.Option(..., "--db", metavar="URL", help=_DB_HELP),
    table: str = typer.Option(..., "--table", metavar="ID", help="The table to replay."),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="One JSON object per round: the round as a rules scenario "
        "(conformance/FORMAT.md) and its trace.",
    ),
) -> None:
    """Print a table's game round by round, with each deal's fingerprint and secret.

    Only the part of the log that verifies is replayed; a bad log exits 1
    after it, naming the first bad event.
    """
    try:
        store = open_store(db)
    except _BadInput as error:
        _fail(str(error))
    try:
        events = store.read_stream(stream_id(table))
    except SQLAlchemyError as error:
        _fail(f"--db: cannot read the store: {str(error).splitlines()[0]}")
    finally:
        store.close()
    if not events:
        _fail(f"--table: the store has no table {table!r}")
    report = audit.verify_table(events)
    good = events[: report.events_verified]
    if as_json:
        verified = {(r.game_no, r.round_no) for r in report.rounds if r.status == audit.VERIFIED}
        for item in audit.round_scenarios(good):
            if report.problem is not None and (item.game_no, item.round_no) not in verified:
                continue  # a round the bad event belongs to
            sys.stdout.write(json.dumps(item.to_json()) + "\n")
    else:
        _print_replay(good, report)
    if report.problem is not None:
        typer.echo(visible(f"The log stops verifying here: {report.problem}"), err=True)
        raise typer.Exit(1)


def _print_replay(events: list[StoredEvent], report: audit.TableReport) -> None:
    from president.cli.play_cmd import event_lines
    from president.hosting.seat_views import seat_of

    def echo(line: str) -> None:
        typer.echo(visible(line))

    echo(f"Table {report.table_id} (stream {report.stream_id}): {report.events} events.")
    commitment: ev.DealCommitted | None = None
    for item in audit.replay_events(events):
        event = item.event
        names = audit.seat_names(item.game)
        version = item.stored.version
        if isinstance(event, ev.TableCreated):
            echo(f"Created: {event.preset}, {event.seat_count} seats ({item.stored.time}).")
        elif isinstance(event, ev.DealCommitted):
            commitment = event
        elif isinstance(event, ev.DealRevealed):
            echo(f"  Secret (version {version}): {event.secret_hex}")
        elif isinstance(event, ev.DealSecretLost) and item.game.phase == g.GamePhase.DEALING:
            echo(
                f"  Secret LOST by the operator before the deal (version {version}): "
                "that commitment is withdrawn, the round committed afresh"
            )
        elif isinstance(event, ev.DealSecretLost):
            echo(f"  Secret LOST by the operator (version {version}): this deal cannot be checked")
        elif isinstance(event, ev.ReactionShown):
            echo(f"  {seat_name(event.seat, names)} reacts: {event.reaction}")
        elif isinstance(event, ev.ChatPosted):
            echo(f"  {seat_name(event.seat, names)} says: {event.text}")
        elif isinstance(event, ev.SeatMuted):
            verb = "mutes" if event.muted else "unmutes"
            echo(f"  The host {verb} {seat_name(event.seat, names)} ({event.player_id})")
        elif isinstance(event, ev.TableClosed):
            echo(f"  The table closed (version {version}): {event.reason}")
        elif isinstance(event, ev.SeatPresence):
            away = "connected" if event.connected else "disconnected"
            echo(f"  {seat_name(event.seat, names)} {away} (gateway {event.gateway})")
        elif isinstance(event, ev.HostChanged):
            seat = seat_of(item.game, event.player_id)
            host = names[seat] if seat is not None else "another player"
            echo(f"  {host} is now the host" + (" (the host left)" if event.automatic else ""))
        else:
            lines = event_lines(event, names, item.game.options.preset)
            if isinstance(event, rnd.CardsGiven) and lines:
                lines[0] = f"{lines[0].rstrip('.')} ({' '.join(cards_of(event.cards))})."
            if lines and lines[0].startswith("\n== Round") and commitment is not None:
                lines[0] = f"\n== Game {commitment.game_no}, round {commitment.round_no} =="
                order = " ".join(str(seat) for seat in commitment.deal_order)
                lines.insert(
                    1,
                    f"  Deal fingerprint: {commitment.fingerprint} (deal order {order})",
                )
            for line in lines:
                echo(line)
            if isinstance(event, g.GameEnded | g.GameInterrupted):
                echo("")
    verified = "verified" if report.ok else "verified up to the bad event"
    echo(
        f"\n{report.rounds_verified} round(s) {verified}"
        + (f", {report.rounds_in_progress} in progress" if report.rounds_in_progress else "")
        + "."
    )


def register(app: typer.Typer) -> None:
    """Add ``audit`` (verify, replay) to the app."""
    app.add_typer(audit_app, name="audit")
