"""``president operator-key``: the operator's signing key file, made once, and its public key.

The table services sign receipts and feed heads with the key in the file
(``PRESIDENT_SIGNING_KEY_FILE``); the gateways publish its public key
(``PRESIDENT_OPERATOR_KEYS``). The command makes the file if there is none
and keeps it otherwise (``president run`` makes its own the same way), then
prints the line the gateways need, so its output can go into a ``.env``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from president.hosting.signatures import BadKeyFile, OperatorKeys, Signer

VARIABLE = "PRESIDENT_OPERATOR_KEYS"


def _published(text: str) -> list[str]:
    """The keys published so far (64 hex digits each, comma-separated); ValueError if not."""
    keys = [part.strip().lower() for part in text.split(",") if part.strip()]
    OperatorKeys.from_hex(keys)
    return keys


def operator_key(
    path: Path = typer.Argument(
        ..., metavar="FILE", help="The private key file (PEM, PKCS #8): made if missing, else read."
    ),
    published: str = typer.Option(
        "",
        "--published",
        metavar="HEX,HEX",
        help=f"The keys the gateways publish now ({VARIABLE}): listed after this one, "
        "so an old key stays published when you rotate.",
    ),
) -> None:
    """Make the operator's signing key in FILE if there is none, and print its public key.

    Prints a comment with the key's id and whether it was made, then the line
    PRESIDENT_OPERATOR_KEYS=<this key>[,<the --published keys>] for the gateways.
    """
    try:
        earlier = _published(published)
    except ValueError as error:
        typer.echo(f"--published: {error}", err=True)
        raise typer.Exit(2) from None
    try:
        signer, made = Signer.kept_at(path)
    except BadKeyFile as error:
        typer.echo(
            f"{error}: give the path of a new file, or of a key this command made.", err=True
        )
        raise typer.Exit(2) from None
    current = signer.public_key.hex()
    keys = [current, *(key for key in earlier if key != current)]
    typer.echo(f"# operator signing key {signer.key_id} ({'made now' if made else 'kept'}): {path}")
    typer.echo(f"{VARIABLE}={','.join(keys)}")
    if earlier and earlier[0] != current:
        typer.echo(
            f"The gateways do not publish this key first yet: give them the {VARIABLE} line "
            "above and restart them before the table services sign with it.",
            err=True,
        )


def register(app: typer.Typer) -> None:
    """Add ``operator-key`` to the app."""
    app.command("operator-key")(operator_key)
