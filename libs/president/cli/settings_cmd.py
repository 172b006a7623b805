"""``president settings``: the reference page of every setting, made from the code."""

from __future__ import annotations

from pathlib import Path

import typer

from president.servicekit.config.reference import PAGE, page


def settings_command(
    write: bool = typer.Option(
        False, "--write", help=f"Write the page to {PAGE} (under --root) instead of printing it."
    ),
    root: Path = typer.Option(
        Path("."), "--root", metavar="DIR", help="The repository's root (with --write)."
    ),
) -> None:
    """Print every PRESIDENT_* variable, its default and its meaning (docs/settings.md)."""
    text = page()
    if not write:
        typer.echo(text, nl=False)
        return
    target = root / PAGE
    target.write_text(text)
    typer.echo(f"wrote {target}")


def register(app: typer.Typer) -> None:
    app.command("settings")(settings_command)
