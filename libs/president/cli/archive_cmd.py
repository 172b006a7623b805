"""``president audit archive``: keep a copy of the public commitment feed, from NATS.

Reads the feed's JetStream stream (:mod:`president.servicekit.feed_stream`),
which anyone allowed to read it can, without the event store: the entries
after the last one the file holds, each linked to the one before it (the
feed's chain), appended to the file as JSON lines. Run it now and then; the
file is the evidence ``president audit verify --commitments FILE`` checks the
store's rounds against. Exits 0 having kept what is new, 1 when the stream
departs from the file (its chain does not continue the file's), 2 for input
that cannot be read.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats
import typer
from nats.errors import Error as NatsError
from rich.console import Console
from rich.markup import escape

from president.audit import commitments
from president.cli.audit_cmd import _fail
from president.servicekit.feed_stream import FeedStreamError, FeedSubjects, read_entries
from president.servicekit.nats import Subjects
from president.servicekit.nats import servers as nats_servers
from president.store.commitments import FeedEntry, verify_feed

_DEFAULT_STREAM = FeedSubjects.beside(Subjects()).stream


def archive_command(
    nats_url: str = typer.Option(
        "nats://127.0.0.1:4222", "--nats", metavar="URL", help="The NATS server of the feed."
    ),
    stream: str = typer.Option(
        _DEFAULT_STREAM, "--stream", metavar="NAME", help="The feed's JetStream stream."
    ),
    file: Path = typer.Option(
        ..., "--file", metavar="FILE", help="The archive: JSON lines, created or extended."
    ),
) -> None:
    """Append the commitment feed's new entries, read from NATS, to an archive file."""
    console = Console(highlight=False, soft_wrap=True)
    try:
        kept = commitments.load_archive(file) if file.exists() else []
    except (OSError, ValueError) as error:
        _fail(f"--file: {error}")
    after = kept[-1].seq if kept else 0
    try:
        new = asyncio.run(_read(nats_url, FeedSubjects(stream, ""), after))
    except FeedStreamError as error:
        _fail(f"--stream: {error}")
    except (OSError, TimeoutError, NatsError) as error:
        _fail(f"--nats: cannot read the feed from {nats_url}: {error or type(error).__name__}")
    broken = verify_feed([*kept[-1:], *new])
    if broken is not None:
        index, reason = broken
        console.print(
            f"[bold red]FAILED[/]: entry {[*kept[-1:], *new][index].seq} of the stream "
            f"{escape(stream)}: {escape(reason)}; the archive {escape(str(file))} is left as it was"
        )
        raise typer.Exit(1)
    with file.open("a", encoding="utf-8") as out:
        out.write(commitments.archive_lines(new))
    total = len(kept) + len(new)
    console.print(
        f"Kept {len(new)} new entr{'y' if len(new) == 1 else 'ies'} in {escape(str(file))}: "
        f"{total} in all" + (f", through entry {new[-1].seq}." if new else ".")
    )


async def _read(url: str, subjects: FeedSubjects, after: int) -> list[FeedEntry]:
    client = await nats.connect(
        nats_servers(url),
        name="president-audit-archive",
        connect_timeout=5,
        allow_reconnect=False,
        max_reconnect_attempts=1,  # (0 would be: try for ever)
        reconnect_time_wait=0.5,
        error_cb=_quiet,  # the failure is said once, by the command
    )
    try:
        return [entry async for entry in read_entries(client.jetstream(), subjects, after)]
    finally:
        await client.close()


async def _quiet(_error: Exception) -> None:
    return None


def register(audit: typer.Typer) -> None:
    """Add ``archive`` to the ``audit`` group."""
    audit.command("archive")(archive_command)
