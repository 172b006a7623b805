"""``president audit verify`` / ``replay`` and ``president play --db``, as a person runs them."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from president import audit
from president.cli.main import app
from president.hosting import events as ev
from president.hosting.blinding import BLIND
from president.hosting.signatures import Signer
from president.hosting.streams import stream_id
from president.rules import round as rnd
from president.store import EventStore, migrate
from tests.support.recorded_games import (
    decoded,
    kept_receipts,
    record,
    record_with_people,
    rewrite_message,
    rewrite_metadata,
)

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    migrate(url)
    return url


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def recorded(db: str, preset: str = "house", **kwargs: object) -> str:
    with EventStore.from_url(db) as store:
        return record(store, preset, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- verify
def test_verify_exits_0_when_every_table_verifies(db: str) -> None:
    recorded(db, "house")
    recorded(db, "classic")
    with EventStore.from_url(db) as store:
        record_with_people(store)
    code, out, err = invoke("audit", "verify", "--db", db)
    assert code == 0, out + err
    assert "OK: 3 tables, 9 rounds and" in out
    assert err == ""


def test_verify_one_table_lists_its_rounds(db: str) -> None:
    table_id = recorded(db, "club", rounds=2)
    code, out, _ = invoke("audit", "verify", "--db", db, "--table", table_id, "--quiet")
    assert code == 0, out
    assert f"Table {table_id}" in out
    assert out.count("verified") >= 3  # two rounds and the OK line
    assert "OK: 1 table, 2 rounds" in out


def test_verify_exits_1_naming_the_first_bad_event(db: str) -> None:
    good = recorded(db, "classic", rounds=1)
    bad = recorded(db, "house", rounds=2)
    with EventStore.from_url(db) as store:
        version = next(
            event.version for event, item in decoded(store, bad) if isinstance(item, rnd.RoundEnded)
        )

        def change(message: Any) -> None:
            message.totals[0] += 5

        rewrite_message(store.engine, stream_id(bad), version, change)
    code, out, _ = invoke("audit", "verify", "--db", db)
    assert code == 1
    assert (
        f"FAILED: the first bad event is stream table-{bad}, version {version} (RoundEnded)" in out
    )
    assert "running totals differ: seat 0 has" in out
    code, out, _ = invoke("audit", "verify", "--db", db, "--table", good)
    assert code == 0, out
    code, out, _ = invoke("audit", "verify", "--db", db, "--table", bad)
    assert code == 1
    assert "failed" in out and f"version {version} (RoundEnded)" in out


def test_verify_with_kept_hashes(db: str) -> None:
    table_id = recorded(db, "house", rounds=1)
    with EventStore.from_url(db) as store:
        events = store.read_stream(stream_id(table_id))
    last = events[-1]
    code, out, _ = invoke(
        "audit",
        "verify",
        "--db",
        db,
        "--table",
        table_id,
        "--anchor",
        f"{last.version}:{last.hash}",
    )
    assert code == 0, out
    wrong = "0" * 64
    code, out, _ = invoke(
        "audit", "verify", "--db", db, "--table", table_id, "--anchor", f"{last.version}:{wrong}"
    )
    assert code == 1
    assert f"version {last.version} ({audit.short_type(last.type)})" in out
    assert "rewritten" in out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--db", "nonsense"], "not a database URL"),
        (["--db", "mysql://u@h/db"], "unsupported database URL scheme"),
        (["--db", "sqlite:////no/such/dir/store.db"], "no SQLite event store file"),
        (["--db", "postgresql://postgres@127.0.0.1:1/nothing"], "cannot connect"),
    ],
)
def test_verify_a_bad_url_exits_2_with_one_line(args: list[str], words: str) -> None:
    code, out, err = invoke("audit", "verify", *args)
    assert code == 2
    assert out == ""
    assert words in err
    assert err.count("\n") == 1


def test_verify_a_database_without_the_schema_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    code, _, err = invoke("audit", "verify", "--db", f"sqlite:///{path}")
    assert code == 2
    assert "holds no event store" in err and err.count("\n") == 1


def test_verify_an_unknown_table_exits_2(db: str) -> None:
    code, _, err = invoke("audit", "verify", "--db", db, "--table", "nope")
    assert code == 2
    assert "no table 'nope'" in err


def test_verify_an_anchor_needs_a_table(db: str) -> None:
    code, _, err = invoke("audit", "verify", "--db", db, "--anchor", "3:" + "0" * 64)
    assert code == 2
    assert "--anchor needs --table" in err


# --------------------------------------------------------------------------- replay
def test_replay_prints_the_game_round_by_round(db: str) -> None:
    table_id = recorded(db, "house", rounds=2)
    with EventStore.from_url(db) as store:
        events = store.read_stream(stream_id(table_id))
    report = audit.verify_table(events)
    code, out, err = invoke("audit", "replay", "--db", db, "--table", table_id)
    assert code == 0, out + err
    assert "Game 1 starts with 4 players." in out
    for item in report.rounds:
        assert f"== Game 1, round {item.round_no} ==" in out
        assert f"Deal fingerprint: {item.fingerprint}" in out
        assert f"Secret (version {item.revealed_at}): {item.secret_hex}" in out
    assert "Bot 1 is dealt" in out and "gives 2 cards to" in out
    assert "Round over: 1." in out
    assert "2 round(s) verified." in out


def test_replay_json_is_one_scenario_per_round_that_reproduces_the_stored_outcome(
    db: str, tmp_path: Path
) -> None:
    with EventStore.from_url(db) as store:
        table_id = record_with_people(store, seed=3)
        ended = [item for _, item in decoded(store, table_id) if isinstance(item, rnd.RoundEnded)]
    code, out, err = invoke("audit", "replay", "--db", db, "--table", table_id, "--json")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["round"] for line in lines] == [1, 2, 3]
    for line, stored in zip(lines, ended, strict=True):
        assert {"scenario", "trace", "fingerprint", "secret", "seats"} <= set(line)
        scenario = line["scenario"]
        assert all(
            re.fullmatch(r"\d+ (play|give) .+|\d+ pass|timeout", a) for a in scenario["actions"]
        )
        # Re-run the emitted scenario with the scenario command itself.
        path = tmp_path / f"round{line['round']}.json"
        path.write_text(json.dumps(scenario))
        result = runner.invoke(app, ["scenario", "run", str(path)])
        assert result.exit_code == 0, result.stderr
        trace = [json.loads(text) for text in result.stdout.splitlines()]
        assert trace == line["trace"]
        seats = line["seats"]
        last = trace[-1]
        assert [seats[s] for s in last["standings"]] == list(stored.standings)
        assert [last["points"][k] for k in range(len(seats))] == [stored.points[s] for s in seats]
        assert [last["totals"][k] for k in range(len(seats))] == [stored.totals[s] for s in seats]
    assert any("timeout" in line["scenario"]["actions"] for line in lines)


def test_replay_of_a_bad_log_stops_at_the_bad_event(db: str) -> None:
    table_id = recorded(db, "club", rounds=2)
    with EventStore.from_url(db) as store:
        version = next(
            event.version
            for event, item in decoded(store, table_id)
            if isinstance(item, ev.DealRevealed)
        )

        def change(message: Any) -> None:
            message.secret_hex = "cd" * 32

        rewrite_message(store.engine, stream_id(table_id), version, change)
    code, out, err = invoke("audit", "replay", "--db", db, "--table", table_id)
    assert code == 1
    assert "== Game 1, round 1 ==" in out and "round 2" not in out
    assert f"version {version} (DealRevealed)" in err
    code, out, _ = invoke("audit", "replay", "--db", db, "--table", table_id, "--json")
    assert code == 1 and out == ""


def test_replay_an_unknown_table_exits_2(db: str) -> None:
    code, _, err = invoke("audit", "replay", "--db", db, "--table", "nope")
    assert code == 2 and "no table 'nope'" in err


# --------------------------------------------------------------------------- play --db
def test_play_db_records_a_game_that_audit_verifies(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new' / 'play.db'}"
    (tmp_path / "new").mkdir()
    code, out, err = invoke("play", "--preset", "classic", "--seed", "11", "--db", url)
    assert code == 0, out + err
    golden = Path(__file__).parents[2] / "unit" / "rules" / "golden" / "classic-4p-seed11.log"
    assert out.startswith(golden.read_text())  # the same game as without --db
    match = re.search(r"president audit verify --db (\S+) --table (\w+)", out)
    assert match is not None and match.group(1) == url
    code, verified, _ = invoke("audit", "verify", "--db", url, "--table", match.group(2))
    assert code == 0, verified
    assert "OK: 1 table, 8 rounds" in verified


def test_play_db_with_a_bad_url_exits_2() -> None:
    code, _, err = invoke("play", "--db", "nonsense://")
    assert code == 2 and err.count("\n") == 1


def test_the_progress_bar_shows_only_on_a_terminal(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from rich.console import Console

    from president.cli import audit_cmd

    recorded(db, "house", rounds=1)
    monkeypatch.setattr(audit_cmd, "_PROGRESS_MIN_EVENTS", 1)
    with EventStore.from_url(db) as store:
        streams = audit_cmd.table_streams(store)
        for terminal, quiet, shown in (
            (True, False, True),
            (True, True, False),
            (False, False, False),
        ):
            out = io.StringIO()
            console = Console(file=out, force_terminal=terminal, width=80)
            reports = audit_cmd._verify_streams(store, streams, {}, [], [], console, quiet)
            assert [report.ok for report in reports] == [True]
            assert ("verifying" in out.getvalue()) is shown


@pytest.mark.postgres
def test_play_db_and_verify_on_postgresql(postgres_url: str) -> None:
    code, out, err = invoke(
        "play", "--preset", "house", "--rounds", "2", "--seed", "4", "--db", postgres_url
    )
    assert code == 0, err
    match = re.search(r"--table (\w+)", out)
    assert match is not None
    code, out, _ = invoke("audit", "verify", "--db", postgres_url, "--table", match.group(1))
    assert code == 0, out
    assert "OK: 1 table, 2 rounds" in out


# --------------------------------------------------------------------------- receipts
OPERATOR = Signer.generate()
"""The operator's signing key in these tests (the table service's, in a stack)."""
WITH_KEY = ("--operator-key", OPERATOR.public_key.hex())


def test_verify_with_receipts_says_what_they_prove_and_where_the_log_departs(
    db: str, tmp_path: Path
) -> None:
    table_id = recorded(db, "house", rounds=1)
    with EventStore.from_url(db) as store:
        events = store.read_stream(stream_id(table_id))
    honest = kept_receipts(table_id, "alice", events, signer=OPERATOR).export(
        tmp_path / "alice.json"
    )
    code, out, err = invoke("audit", "verify", "--db", db, "--receipts", str(honest), *WITH_KEY)
    assert code == 0, out + err
    assert f"They prove versions 1 to {events[-1].version}" in out

    # Bob says he was shown another event 20: the operator signed no such receipt.
    data = json.loads(honest.read_text())
    data["holder"] = "bob"
    data["receipts"][19]["hash"] = "ab" * 32
    forged = tmp_path / "bob.json"
    forged.write_text(json.dumps(data))
    code, out, _ = invoke(
        "audit", "verify", "--db", db, "--receipts", str(honest), "--receipts", str(forged),
        *WITH_KEY,
    )  # fmt: skip
    assert code == 3, out
    assert "FORGED: bob's receipt of version 20" in out
    assert "was not signed by the operator's key" in out and "rewritten" not in out

    code, _, err = invoke(
        "audit", "verify", "--db", db, "--receipts", str(tmp_path / "no.json"), *WITH_KEY
    )
    assert code == 2 and "cannot read it" in err


def test_unsigned_receipts_and_other_keys_accuse_nobody(db: str, tmp_path: Path) -> None:
    table_id = recorded(db, "house", rounds=1)
    with EventStore.from_url(db) as store:
        events = store.read_stream(stream_id(table_id))
    unsigned = kept_receipts(table_id, "eve", events).export(tmp_path / "unsigned.json")
    code, out, _ = invoke("audit", "verify", "--db", db, "--receipts", str(unsigned), *WITH_KEY)
    assert code == 3 and "carries no signature" in out, out
    # Signed by a key of the forger's own, with a chain of its own.
    forger = Signer.generate()
    other = kept_receipts(table_id, "eve", events, signer=forger).export(tmp_path / "other.json")
    code, out, _ = invoke("audit", "verify", "--db", db, "--receipts", str(other), *WITH_KEY)
    assert code == 3 and "none of the keys given" in out, out
    # Moved to another table: the signature covers the table.
    data = json.loads(
        kept_receipts(table_id, "eve", events, signer=OPERATOR)
        .export(tmp_path / "x.json")
        .read_text()
    )
    data["table_id"] = "elsewhere"
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(data))
    code, out, _ = invoke("audit", "verify", "--db", db, "--receipts", str(moved), *WITH_KEY)
    assert code == 3 and "does not match its table" in out, out
    # Without the operator's key, receipts are no evidence at all.
    code, _, err = invoke("audit", "verify", "--db", db, "--receipts", str(unsigned))
    assert code == 2 and "--receipts needs --operator-key" in err


def test_signed_receipts_still_catch_a_rewritten_log(db: str, tmp_path: Path) -> None:
    table_id = recorded(db, "house", rounds=1)
    with EventStore.from_url(db) as store:
        events = store.read_stream(stream_id(table_id))
        honest = kept_receipts(table_id, "alice", events, signer=OPERATOR).export(
            tmp_path / "alice.json"
        )

        def reblind(_row: Any, metadata: dict[str, Any]) -> None:
            metadata[BLIND] = "0f" * 16  # a legal value: only the receipts tell

        rewrite_metadata(store.engine, stream_id(table_id), [12], reblind)
    code, out, _ = invoke("audit", "verify", "--db", db, "--receipts", str(honest), *WITH_KEY)
    assert code == 1, out
    assert "version 12" in out and "alice's receipt of version 12" in out
    assert "FORGED" not in out
