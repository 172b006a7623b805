"""Entry point of the ``president`` command: one typer app, one module per command group."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="president",
    help="President table backend: play, check scenarios, deal and audit.",
    no_args_is_help=True,
    add_completion=False,
)


def _register() -> None:
    from president.cli import commands

    commands.register(app)


_register()

if __name__ == "__main__":
    app()
