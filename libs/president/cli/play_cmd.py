"""``president scenario run`` and ``president play``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from president.play.offline import play_game
from president.rules import game as g
from president.rules.cards import names
from president.rules.options import PRESETS, OptionError, Options, options_for
from president.rules.render import event_to_text
from president.rules.roles import roles
from president.rules.round import RoundEnded, RoundStarted
from president.rules.scenario import ScenarioError, mismatches, run_scenario

scenario_app = typer.Typer(help="Rules scenarios (conformance/FORMAT.md).", no_args_is_help=True)


@scenario_app.command("run")
def scenario_run(
    file: Path = typer.Argument(..., help="A scenario JSON file."),
    check: bool = typer.Option(False, "--check", help="Also compare with the file's expect."),
) -> None:
    """Print the trace of a scenario: one JSON object per action."""
    try:
        scenario = json.loads(file.read_text())
        if not isinstance(scenario, dict):
            raise ScenarioError("a scenario is a JSON object")
        trace = run_scenario(scenario)
    except (OSError, json.JSONDecodeError, ScenarioError) as error:
        typer.echo(f"{file}: {error}", err=True)
        raise typer.Exit(2) from None
    for line in trace:
        sys.stdout.write(json.dumps(line) + "\n")
    if check:
        problems = mismatches(trace, scenario.get("expect", []))
        for problem in problems:
            typer.echo(problem, err=True)
        if problems:
            raise typer.Exit(1)


def play(
    preset: str = typer.Option("classic", help=f"One of {', '.join(PRESETS)}."),
    players: int = typer.Option(0, help="Seats (0: the preset's usual count)."),
    seed: int = typer.Option(0, help="Seed of the deal secrets: same seed, same game."),
    rounds: int = typer.Option(0, help="Stop after this many rounds (0: play to the game's end)."),
    option: list[str] = typer.Option([], "--option", "-o", help="NAME=VALUE, repeatable."),
    db: str | None = typer.Option(
        None,
        "--db",
        metavar="URL",
        help="Record the game in this event store (sqlite:///file.db or postgresql://...), "
        "through the table service's code, for `president audit`.",
    ),
) -> None:
    """Bots play a game at a local table; the log is printed for a person to read.

    With --db the table is hosted on the event store, every round committed,
    dealt and revealed, so the recorded game can be audited.
    """
    try:
        overrides = dict(_parse_override(text) for text in option)
        options = options_for(preset, overrides)
    except OptionError as error:
        typer.echo(str(error), err=True)
        raise typer.Exit(2) from None
    count = players or max(options.min_players, min(4, options.max_players))
    limit = rounds or None
    if limit is None and options.game_end == "unlimited":
        limit = 5
    seat_names = [f"Bot {seat + 1}" for seat in range(count)]

    if db is not None:
        _play_recorded(db, options, count, seed, limit, seat_names)
        return

    def show(event: g.GameEvent, table: g.GameState) -> None:
        for line in event_lines(event, seat_names, options.preset):
            typer.echo(line)

    try:
        _, records = play_game(options, count, seed=seed, rounds=limit, listener=show)
    except OptionError as error:
        typer.echo(str(error), err=True)
        raise typer.Exit(2) from None
    typer.echo(f"\n{len(records)} rounds played. Deal fingerprints:")
    for record in records:
        typer.echo(
            f"  round {record.round_no}: {record.fingerprint} (secret {record.secret.hex()})"
        )


def event_lines(event: g.GameEvent, seat_names: list[str], preset: str) -> list[str]:
    """The lines ``president play`` prints for one event (none for some)."""
    if isinstance(event, RoundStarted):
        lines = [f"\n== Round {event.round_no} =="]
        for seat in event.players:
            lines.append(f"  {seat_names[seat]} is dealt {' '.join(names(event.hands[seat]))}")
        return lines
    table_text = g.describe_game_event(event, seat_names)
    text = table_text or "  " + (event_to_text(event, seat_names) or "")  # type: ignore[arg-type]
    lines = [text] if text.strip() else []
    if isinstance(event, RoundEnded):
        titles = roles(preset, event.standings)
        for seat in event.standings:
            lines.append(
                f"  {seat_names[seat]:>6}: {titles[seat]:<15} +{event.points[seat]} "
                f"= {event.totals[seat]}"
            )
    return lines


def _play_recorded(
    url: str,
    options: Options,
    players: int,
    seed: int,
    rounds: int | None,
    seat_names: list[str],
) -> None:
    """``president play --db``: the game through TableHost into the store, then its log."""
    from sqlalchemy.exc import SQLAlchemyError

    from president import codec
    from president.hosting import events as ev
    from president.hosting.streams import stream_id
    from president.play.recorded import record_bot_game, seeded_host
    from president.store import EventStore, StoreError, migrate

    try:
        migrate(url)
        store = EventStore.from_url(url)
    except (ValueError, StoreError, SQLAlchemyError) as error:
        typer.echo(f"--db {url}: {str(error).splitlines()[0]}", err=True)
        raise typer.Exit(2) from None
    try:
        host, clock = seeded_host(store, seed)
        try:
            table_id = record_bot_game(host, options, players, rounds=rounds, clock=clock)
        except OptionError as error:
            typer.echo(str(error), err=True)
            raise typer.Exit(2) from None
        fingerprints: dict[tuple[int, int], str] = {}
        secrets: list[tuple[int, int, str]] = []
        for stored in store.read_stream(stream_id(table_id)):
            event = codec.decode(stored.type, stored.payload)
            if isinstance(event, ev.DealCommitted):
                fingerprints[event.game_no, event.round_no] = event.fingerprint
            elif isinstance(event, ev.DealRevealed):
                secrets.append((event.game_no, event.round_no, event.secret_hex))
            elif not isinstance(event, ev.SERVICE_EVENT_TYPES):
                for line in event_lines(event, seat_names, options.preset):
                    typer.echo(line)
    finally:
        store.close()
    typer.echo(f"\n{len(secrets)} rounds played. Deal fingerprints:")
    for game_no, round_no, secret_hex in secrets:
        typer.echo(
            f"  round {round_no}: {fingerprints.get((game_no, round_no), '?')} "
            f"(secret {secret_hex})"
        )
    typer.echo(f"\nTable {table_id} is recorded in the event store.")
    typer.echo(f"Check it: president audit verify --db {url} --table {table_id}")


def _parse_override(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep:
        raise OptionError(f"--option takes NAME=VALUE, not {text!r}")
    try:
        return name.strip(), json.loads(value)
    except json.JSONDecodeError:
        return name.strip(), value


def register(app: typer.Typer) -> None:
    """Add ``scenario`` and ``play`` to the app."""
    app.add_typer(scenario_app, name="scenario")
    app.command("play")(play)
