"""``president settings``: the reference page of every setting, made from the code."""

from __future__ import annotations

import typer

from president.cli.reference_page import register_page
from president.servicekit.config.reference import PAGE, page


def register(app: typer.Typer) -> None:
    register_page(
        app,
        "settings",
        PAGE,
        page,
        "Print every PRESIDENT_* variable, its default and its meaning (docs/settings.md).",
    )
