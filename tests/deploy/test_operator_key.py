"""``president operator-key``: makes the operator's signing key once, keeps it, and prints
the line the gateways need; bad input is refused and changes nothing."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from president.cli.main import app
from president.hosting.signatures import OperatorKeys, Signer, receipt_bytes

VARIABLE = "PRESIDENT_OPERATOR_KEYS"


def published_line(output: str) -> str:
    (line,) = [line for line in output.splitlines() if line.startswith(f"{VARIABLE}=")]
    return line.removeprefix(f"{VARIABLE}=")


def test_key_command_makes_the_key_once_and_prints_its_public_key(tmp_path: Path) -> None:
    runner = CliRunner()
    key_file = tmp_path / "keys" / "operator-key.pem"
    first = runner.invoke(app, ["operator-key", str(key_file)])
    assert first.exit_code == 0, first.output
    signer = Signer.from_file(key_file)
    assert f"operator signing key {signer.key_id} (made now)" in first.stdout
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    published = published_line(first.stdout)
    signature = signer.sign_receipt("table-t", 7, "ab" * 32)
    keys = OperatorKeys.from_hex(published.split(","))
    assert keys.signed(
        receipt_bytes("table-t", 7, "ab" * 32), signature.key_id, signature.signature
    )
    again = runner.invoke(app, ["operator-key", str(key_file), "--published", published])
    assert "(kept)" in again.stdout and published_line(again.stdout) == published
    rotated = runner.invoke(
        app, ["operator-key", str(tmp_path / "k2.pem"), "--published", published]
    )
    assert published_line(rotated.stdout).split(",")[1:] == [published]
    assert "do not publish this key first yet" in rotated.stderr


def test_key_command_refuses_bad_input_and_changes_nothing(tmp_path: Path) -> None:
    runner = CliRunner()
    not_a_key = tmp_path / "notes.pem"
    not_a_key.write_text("hello")
    done = runner.invoke(app, ["operator-key", str(not_a_key)])
    assert done.exit_code == 2 and "not a PEM private key" in done.stderr
    assert not_a_key.read_text() == "hello"
    fresh = tmp_path / "fresh.pem"
    done = runner.invoke(app, ["operator-key", str(fresh), "--published", "abc"])
    assert done.exit_code == 2 and "is not an Ed25519 public key" in done.stderr
    assert not fresh.exists()
