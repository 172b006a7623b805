"""A gRPC (or HTTP) health probe for container health checks.

::

    python -m president.servicekit.healthcheck HOST:PORT [SERVICE] [--timeout SECONDS]
    python -m president.servicekit.healthcheck http://HOST:PORT/PATH [--timeout SECONDS]

Asks the standard health service (``grpc.health.v1.Health/Check``) at
``HOST:PORT`` about ``SERVICE`` (default ``""``: the whole server), or, given
a URL, GETs it and wants a 200 (the web edge's ``/readyz``), and prints
one line. Exits 0 when the answer is SERVING and 1 otherwise: not serving,
unknown service, nothing listening, no answer in time, or bad arguments.
Docker reads exit code 1 as "unhealthy" and reserves 2, so the probe never
exits 2, not even for a usage error.
"""

from __future__ import annotations

import ssl
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from president.servicekit.channels import probe_channel
from president.servicekit.tls import TlsSettings

DEFAULT_TIMEOUT_SECONDS = 3.0
USAGE = (
    "usage: python -m president.servicekit.healthcheck HOST:PORT [SERVICE] [--timeout SECONDS]"
    " | URL [--timeout SECONDS]"
)


@dataclass(frozen=True)
class Probe:
    """What to ask: the server's address, the service name and how long to wait."""

    address: str
    service: str = ""
    timeout: float = DEFAULT_TIMEOUT_SECONDS


class UsageError(ValueError):
    """The command line cannot be understood; the message says why."""


def parse_args(argv: Sequence[str]) -> Probe:
    """``HOST:PORT [SERVICE] [--timeout SECONDS]`` into a :class:`Probe`."""
    positional: list[str] = []
    timeout = DEFAULT_TIMEOUT_SECONDS
    items = list(argv)
    while items:
        item = items.pop(0)
        if item in ("-h", "--help"):
            raise UsageError(USAGE)
        if item == "--timeout" or item.startswith("--timeout="):
            raw = item.partition("=")[2] if "=" in item else (items.pop(0) if items else "")
            try:
                timeout = float(raw)
            except ValueError:
                raise UsageError(f"--timeout takes a number of seconds, not {raw!r}") from None
            if not 0 < timeout <= 300:
                raise UsageError(f"--timeout must be above 0 and at most 300 seconds, not {raw}")
        elif item.startswith("--"):
            raise UsageError(f"unknown option {item!r}; {USAGE}")
        else:
            positional.append(item)
    if not 1 <= len(positional) <= 2:
        raise UsageError(USAGE)
    address = positional[0]
    if address.startswith(("http://", "https://")):
        if len(positional) != 1:
            raise UsageError(f"an HTTP probe takes no service name; {USAGE}")
        return Probe(address=address, timeout=timeout)
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"the address is HOST:PORT with a port from 1 to 65535, not {address!r}")
    service = positional[1] if len(positional) == 2 else ""
    return Probe(address=address, service=service, timeout=timeout)


def check_http(probe: Probe) -> tuple[bool, str]:
    """GET the URL once; whether it answered 200, and a one-line description.

    Over https the certificate is not verified: the probe runs beside the
    server on loopback, where the name in a public certificate never matches.
    """
    context = ssl._create_unverified_context() if probe.address.startswith("https") else None
    try:
        with urllib.request.urlopen(probe.address, timeout=probe.timeout, context=context) as got:
            return got.status == 200, f"HTTP {got.status}: {probe.address}"
    except urllib.error.HTTPError as error:
        return False, f"HTTP {error.code}: {probe.address}"
    except (OSError, ValueError) as error:
        return False, f"UNREACHABLE: {probe.address}: {error}"


def check(probe: Probe) -> tuple[bool, str]:
    """Ask the health service once; whether it is SERVING, and a one-line description."""
    if probe.address.startswith(("http://", "https://")):
        return check_http(probe)
    target = f"{probe.address} service={probe.service or '(server)'}"
    options = [("grpc.enable_http_proxy", 0), ("grpc.enable_retries", 0)]
    # The TLS this process is configured with: a gateway's own door when it has a certificate
    # of its own (PRESIDENT_TLS_CERT), else the internal mutual TLS when configured.
    tls = TlsSettings.from_env()
    with probe_channel(probe.address, tls, tls.public, options) as channel:
        stub: Any = health_pb2_grpc.HealthStub(channel)
        try:
            response = stub.Check(
                health_pb2.HealthCheckRequest(service=probe.service), timeout=probe.timeout
            )
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else None
            if code == grpc.StatusCode.NOT_FOUND:
                return False, f"UNKNOWN SERVICE: {target} has no health status for that service"
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                return False, f"NO ANSWER: {target} did not answer within {probe.timeout:g} s"
            if code == grpc.StatusCode.UNAVAILABLE:
                return False, f"UNREACHABLE: {target}: nothing answers gRPC there"
            if code == grpc.StatusCode.UNIMPLEMENTED:
                return False, f"NO HEALTH SERVICE: {target} does not implement grpc.health.v1"
            name = code.name if isinstance(code, grpc.StatusCode) else "ERROR"
            details = error.details() if isinstance(error, grpc.Call) else str(error)
            return False, f"{name}: {target}: {' '.join(str(details or '').split())}"
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
    return response.status == health_pb2.HealthCheckResponse.SERVING, f"{status}: {target}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the probe; print one line; return the exit code (0 serving, 1 anything else)."""
    try:
        probe = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"healthcheck: {error}", file=sys.stderr)
        return 1
    serving, line = check(probe)
    print(line, file=sys.stdout if serving else sys.stderr)
    return 0 if serving else 1


if __name__ == "__main__":
    sys.exit(main())
