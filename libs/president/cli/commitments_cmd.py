"""``president audit commitments``: the public commitment feed, checked against the tables' logs.

Reads the feed of an event store (every round's fingerprint as it was
published when committed), checks its hash chain and any archived copies
(``--archive``), and compares every table's ``DealCommitted`` with the entry
published for it (:func:`president.audit.commitments.check_feed`), and that
no entry is back-dated (:func:`president.audit.commitments.backdated`). Exits 0
when they agree, 1 naming the first discrepancy, 2 for input that cannot be
read, 3 for an archived entry ``--operator-key`` did not sign (forged).
``--export FILE`` writes the feed (or one ``--day``) for anyone to archive.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from sqlalchemy.exc import SQLAlchemyError

from president.audit import commitments
from president.cli.audit_cmd import (
    _DB_HELP,
    FORGED_EXIT,
    _BadInput,
    _fail,
    evidence_keys,
    open_store,
    table_streams,
)
from president.store.commitments import read_feed


def commitments_command(
    db: str = typer.Option(..., "--db", metavar="URL", help=_DB_HELP),
    day: str | None = typer.Option(None, "--day", metavar="YYYY-MM-DD", help="Only this day."),
    archive: list[Path] = typer.Option(
        [],
        "--archive",
        metavar="FILE",
        help="A copy of the feed someone archived (JSON lines: president audit archive, or "
        "--export): the feed must still hold it.",
    ),
    export: Path | None = typer.Option(
        None, "--export", metavar="FILE", help="Write the feed (or the day) to FILE, JSON lines."
    ),
    operator_key: list[str] = typer.Option(
        [],
        "--operator-key",
        metavar="HEX",
        help="The operator's public signing key (GetOperatorKeys; repeatable): every "
        "archived entry must carry its signature, or the archive is forged (exit 3).",
    ),
) -> None:
    """Check the commitment feed's chain, archived copies, and every table's commitments."""
    console = Console(highlight=False, soft_wrap=True)
    try:
        archives = [(str(path), commitments.load_archive(path)) for path in archive]
        keys = evidence_keys(operator_key, False, False)
    except (OSError, ValueError) as error:
        _fail(f"--archive: {error}")
    except _BadInput as error:
        _fail(str(error))
    for source, entries in archives if keys else []:
        found = commitments.unsigned_entry(entries, keys)
        if found is not None:
            words = commitments.forged_words(source, *found)
            console.print(f"[bold red]FORGED[/]: {escape(words)}")
            raise typer.Exit(FORGED_EXIT)
    try:
        store = open_store(db)
    except _BadInput as error:
        _fail(str(error))
    try:
        feed = read_feed(store.engine, day)
        streams = sorted({entry.commitment.stream_id for entry in feed})
        if day is None:
            streams = [stream for stream, _ in table_streams(store)]
        logs = [store.read_stream(stream) for stream in streams]
    except SQLAlchemyError as error:
        _fail(f"--db: cannot read the commitment feed: {str(error).splitlines()[0]}")
    finally:
        store.close()
    if export is not None:
        export.write_text(commitments.archive_lines(feed), encoding="utf-8")
        console.print(f"Wrote {len(feed)} entries to {escape(str(export))}.")
    problem = commitments.check_feed(feed, logs, archives) or commitments.backdated(feed)
    if problem is not None:
        console.print(f"[bold red]FAILED[/]: {escape(str(problem))}")
        if archives and not keys:
            console.print(
                "The archives' signatures were not checked: give --operator-key to tell a "
                "forged archive from a rewritten feed."
            )
        raise typer.Exit(1)
    for missing in commitments.unpublished(feed, logs) if day is None else []:
        console.print(f"[yellow]warning[/]: {escape(missing)}")
    days = sorted({entry.commitment.day for entry in feed})
    console.print(
        f"[bold green]OK[/]: {len(feed)} commitments"
        + (f" from {days[0]} to {days[-1]}" if days else "")
        + f", {len(archives)} archived cop{'y' if len(archives) == 1 else 'ies'}, "
        f"{len(logs)} table log(s) agree."
    )


def register(audit: typer.Typer) -> None:
    """Add ``commitments`` to the ``audit`` group."""
    audit.command("commitments")(commitments_command)
