"""``president reasons``: the reference page of every refusal's reason, made from the code."""

from __future__ import annotations

from pathlib import Path

import typer

from president.servicekit.reasons import PAGE, page


def reasons_command(
    write: bool = typer.Option(
        False, "--write", help=f"Write the page to {PAGE} (under --root) instead of printing it."
    ),
    root: Path = typer.Option(
        Path("."), "--root", metavar="DIR", help="The repository's root (with --write)."
    ),
) -> None:
    """Print every reason a refusal carries: its status, meaning and retry (docs/errors.md)."""
    text = page()
    if not write:
        typer.echo(text, nl=False)
        return
    target = root / PAGE
    target.write_text(text)
    typer.echo(f"wrote {target}")


def register(app: typer.Typer) -> None:
    app.command("reasons")(reasons_command)
