"""Use cases raise refusals (:class:`~president.servicekit.errors.ServiceError`, with a
transport-neutral :class:`~president.servicekit.errors.Code`); only the entrypoints and
the adapters that speak gRPC know gRPC, and turn a refusal into its status there."""

from __future__ import annotations

import ast
from pathlib import Path

import grpc

from president.servicekit.errors import Code, ServiceError, from_refusal, to_refusal
from president.servicekit.grpc_errors import code_of, grpc_code

ROOT = Path(__file__).resolve().parents[3] / "libs" / "president"

#: The modules that speak gRPC: servers' entrypoints (handlers, interceptors, start-up),
#: clients of other services, the public client library, and servicekit's plumbing.
TRANSPORT = {
    "client/*",
    "servicekit/channels.py",
    "servicekit/command_stream.py",
    "servicekit/grpc_errors.py",
    "servicekit/healthcheck.py",
    "servicekit/launcher.py",
    "servicekit/malformed.py",
    "servicekit/metrics.py",
    "servicekit/reflection.py",
    "servicekit/server.py",
    "servicekit/table_client.py",
    "servicekit/tls.py",
    "services/*/bootstrap.py",
    "services/*/handlers.py",
    "services/scoring/ratings_handlers.py",
    "services/gateway/api/*",
    "services/gateway/limits/admission.py",
    "services/gateway/streams/wire.py",
    "services/gateway/upstream/*",
    "services/table/dealer_client.py",
    "services/web/*",
}


def imports_grpc(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            alias.name == "grpc" or alias.name.startswith("grpc.") for alias in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "grpc":
            return True
    return False


def test_only_the_entrypoints_and_adapters_import_grpc() -> None:
    speaking = {
        path.relative_to(ROOT).as_posix()
        for path in ROOT.rglob("*.py")
        if "/v1/" not in path.as_posix() and imports_grpc(path)
    }
    outside = sorted(name for name in speaking if not any(Path(name).match(p) for p in TRANSPORT))
    assert not outside, f"use cases that build gRPC codes themselves: {outside}"


def test_every_code_is_grpcs_and_back() -> None:
    for code in Code:
        assert code_of(grpc_code(code)) is code
        assert grpc_code(code).value[0] == code.value
    assert code_of(grpc.StatusCode.OK) is Code.UNKNOWN  # OK is never a refusal


def test_a_refusal_as_a_message_and_back() -> None:
    refusal = ServiceError(Code.ABORTED, "STALE", "the table moved on", {"version": "7"})
    again = from_refusal(to_refusal(refusal))
    assert (again.status, again.reason, again.message, again.metadata) == (
        Code.ABORTED,
        "STALE",
        "the table moved on",
        {"version": "7"},
    )
