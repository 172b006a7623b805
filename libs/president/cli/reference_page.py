"""A command that prints a reference page made from the code, or writes it into ``docs/``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import typer


def register_page(
    app: typer.Typer, name: str, path: Path, make: Callable[[], str], summary: str
) -> None:
    """Add ``president <name> [--write] [--root DIR]``: print ``make()``, or write it to
    ``path``."""

    def command(
        write: bool = typer.Option(
            False,
            "--write",
            help=f"Write the page to {path} (under --root) instead of printing it.",
        ),
        root: Path = typer.Option(
            Path("."), "--root", metavar="DIR", help="The repository's root (with --write)."
        ),
    ) -> None:
        text = make()
        if not write:
            typer.echo(text, nl=False)
            return
        target = root / path
        target.write_text(text)
        typer.echo(f"wrote {target}")

    command.__doc__ = summary
    app.command(name)(command)
