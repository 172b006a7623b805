"""Wires every command group into the app; each group lives in its own module."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add every command group to ``app``."""
    from president.cli import (
        archive_cmd,
        audit_cmd,
        commitments_cmd,
        operator_key_cmd,
        play_cmd,
        reasons_cmd,
        run_cmd,
        settings_cmd,
    )
    from president.cli.deal_cmd import register as register_deal

    play_cmd.register(app)
    register_deal(app)
    commitments_cmd.register(audit_cmd.audit_app)
    archive_cmd.register(audit_cmd.audit_app)
    audit_cmd.register(app)
    run_cmd.register(app)
    operator_key_cmd.register(app)
    settings_cmd.register(app)
    reasons_cmd.register(app)
