"""``president reasons``: the reference page of every refusal's reason, made from the code."""

from __future__ import annotations

import typer

from president.cli.reference_page import register_page
from president.servicekit.reasons import PAGE, page


def register(app: typer.Typer) -> None:
    register_page(
        app,
        "reasons",
        PAGE,
        page,
        "Print every reason a refusal carries: its status, meaning and retry (docs/errors.md).",
    )
