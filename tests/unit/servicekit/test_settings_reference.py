"""Settings are read in one place, and their reference page is what the code declares.

``docs/settings.md`` is generated (``president settings --write``): it must equal what the
declarations make now, and name every ``PRESIDENT_*`` variable the code mentions. Only the
settings' loader reads the environment; the launcher and the CLI hand theirs to the
processes they start.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from president.cli.main import app
from president.servicekit.config import KEEPALIVE, Settings
from president.servicekit.config.gateway import GatewaySettings, Limit
from president.servicekit.config.reference import PAGE, every_variable, page
from president.servicekit.config.table import TableSettings
from president.servicekit.config.web import WebSettings

ROOT = Path(__file__).resolve().parents[3]
LIBS = ROOT / "libs" / "president"
#: Where the environment may be read: the loader, and the processes that start others.
READERS = {
    LIBS / "servicekit" / "config" / "fields.py",
    LIBS / "servicekit" / "launcher.py",
    LIBS / "cli" / "run_cmd.py",
}
#: Names that look like variables but are values (the events stream's default name).
NOT_VARIABLES = {"PRESIDENT_EVENTS"}


def _mentioned() -> dict[str, Path]:
    """Every ``PRESIDENT_*`` string the code holds, and a file that holds it."""
    found: dict[str, Path] = {}
    for path in sorted(LIBS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for name in re.findall(r"\bPRESIDENT_[A-Z0-9_]*[A-Z0-9]\b", node.value):
                    found.setdefault(name, path)
    return found


def test_the_committed_page_is_what_the_code_makes() -> None:
    committed = (ROOT / PAGE).read_text()
    assert committed == page(), "docs/settings.md is stale: run `president settings --write`"


def test_the_command_prints_the_page_and_writes_it(tmp_path: Path) -> None:
    runner = CliRunner()
    printed = runner.invoke(app, ["settings"])
    assert printed.exit_code == 0 and printed.output == page()
    (tmp_path / PAGE.parent).mkdir()
    written = runner.invoke(app, ["settings", "--write", "--root", str(tmp_path)])
    assert written.exit_code == 0
    assert (tmp_path / PAGE).read_text() == page()


def test_every_variable_the_code_mentions_is_on_the_page() -> None:
    listed = {variable.name for _, variable in every_variable()}
    mentioned = _mentioned()
    assert len(mentioned) > 60, "the scan found too little"
    missing = {
        name: str(path.relative_to(ROOT))
        for name, path in mentioned.items()
        if name not in listed
        and name not in NOT_VARIABLES
        # a sentence naming a variable's family: PRESIDENT_RATE_<CLASS>, ..._STREAMS_*
        and not any(other.startswith(name + "_") for other in listed)
    }
    assert not missing, f"read but not declared as settings: {missing}"
    names = [variable.name for _, variable in every_variable()]
    assert len(names) == len(set(names)), "a variable is listed twice"


def test_only_the_loader_reads_the_environment() -> None:
    readers = set()
    for path in sorted(LIBS.rglob("*.py")):
        source = path.read_text()
        if re.search(r"\bos\.environ\b|\bgetenv\(", source):
            readers.add(path)
    assert readers <= READERS, sorted(str(path.relative_to(ROOT)) for path in readers - READERS)


def _calls_at_import(tree: ast.AST) -> Iterator[ast.Call]:
    """The calls a module makes when imported: outside any function body."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.Call):
            yield node
        yield from _calls_at_import(node)


def test_nothing_reads_settings_at_import() -> None:
    found = []
    for path in sorted(LIBS.rglob("*.py")):
        for call in _calls_at_import(ast.parse(path.read_text())):
            name = ast.unparse(call.func)
            if name.endswith("from_env") or name in ("port_range", "free_port"):
                found.append(f"{path.relative_to(ROOT)}:{call.lineno} {name}")
    assert not found, found


def test_a_service_reads_its_groups_and_the_common_settings_at_once() -> None:
    environ = {
        "PRESIDENT_HOST": "10.0.0.7",
        "PRESIDENT_GATEWAY_ROLE": "Audience",
        "PRESIDENT_AUDIENCE_HTTP_PORT": "8090",
        "PRESIDENT_AUDIENCE_LAG_MS": "125",
        "PRESIDENT_RATE_READ_PEER": "off",
        "PRESIDENT_LIMITS_SCALE": "",  # empty: the default
        "PRESIDENT_INTERNAL_TLS_CA": "ca.pem",
        "PRESIDENT_INTERNAL_TLS_CERT": "service.pem",
        "PRESIDENT_INTERNAL_TLS_KEY": "service-key.pem",
        "PRESIDENT_TABLE_LEASE_SECONDS": "5",
    }
    gateway = GatewaySettings.from_env(environ)
    assert gateway.common.host == "10.0.0.7" and gateway.role == "audience"
    assert gateway.door.port == 8090 and gateway.audience.lag_seconds == 0.125
    assert gateway.limits.rates.read_peer is None
    assert gateway.limits.rates.read == Limit(120, 10) and gateway.limits.scale == 1.0
    assert gateway.common.tls.client_cert == "service.pem"  # its own pair by default
    assert gateway.leases.seconds == 5.0
    table = TableSettings.from_env(environ)
    assert table.leases == gateway.leases and table.common == gateway.common
    assert Settings.from_env({}) == Settings() and WebSettings.from_env({}) == WebSettings()


def test_the_ping_interval_sets_both_ends_of_every_channel() -> None:
    pinging = Settings.from_env({"PRESIDENT_GRPC_PING_MS": "2000"}).keepalive
    assert dict(pinging.client_options())["grpc.keepalive_time_ms"] == 2000
    assert dict(pinging.server_options())["grpc.http2.min_ping_interval_without_data_ms"] == 1000
    assert Settings().keepalive == KEEPALIVE


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("PRESIDENT_AUDIENCE_LAG_MS", "soon", "a number of milliseconds"),
        ("PRESIDENT_AUDIENCE_HTTP_PORT", "8090", "PRESIDENT_GATEWAY_ROLE=audience"),
        ("PRESIDENT_STREAMS_PER_PEER", "0", "at least 1"),
        ("PRESIDENT_GATEWAY_MAX_STREAMS_PER_CONNECTION", "0", "at least 1"),
        ("PRESIDENT_AUDIENCE_ALLOWED_ORIGINS", "*", "never '*'"),
        ("PRESIDENT_STREAM_MAX_AGE_SECONDS", "60", "at least 600"),
        ("PRESIDENT_GRPC_PING_MS", "500", "1000 or more"),
    ],
)
def test_a_bad_value_stops_the_service_with_a_sentence(
    variable: str, value: str, says: str
) -> None:
    with pytest.raises(SystemExit, match=re.escape(says)):
        GatewaySettings.from_env({variable: value})
