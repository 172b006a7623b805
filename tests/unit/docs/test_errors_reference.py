"""docs/errors.md lists every reason a refusal carries, and it is what the code makes.

The reasons are found in the code (``president.servicekit.reasons``); what each means
and whether to retry is one hand-kept table (``president.servicekit.reason_meanings``).
The table must name every reason found, and no reason the code no longer gives.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from president.cli.main import app
from president.rules.errors import ErrorCode
from president.servicekit.reason_meanings import HINT, MEANINGS
from president.servicekit.reasons import PAGE, page, passed_on, scan
from president.tournament.errors import Refusal

ROOT = Path(__file__).resolve().parents[3]
#: The reasons given as an expression: each passes on a reason made elsewhere (a rules
#: rejection, the tournament core's refusal, the gateway's own, a downstream service's).
PASSED_ON = {
    "error.reason",
    "error.reason.value",
    "error.code.value",
    "info.reason",
    "message.reason",
}


def test_every_reason_the_code_gives_has_a_meaning_and_a_retry() -> None:
    found = scan()
    missing = sorted(set(found) - set(MEANINGS))
    assert not missing, f"say what these mean in reason_meanings.MEANINGS: {missing}"


def test_every_meaning_is_of_a_reason_the_code_still_gives() -> None:
    unused = sorted(set(MEANINGS) - set(scan()))
    assert not unused, f"no code gives these reasons any more: {unused}"


def test_the_scan_reads_every_reason_but_those_passed_on() -> None:
    assert passed_on() == PASSED_ON


def test_a_reason_with_a_retry_hint_says_so_and_only_such_a_one() -> None:
    hinted = {reason for reason, found in scan().items() if found.hint}
    marked = {reason for reason, (_meaning, retry) in MEANINGS.items() if retry == HINT}
    assert hinted == marked
    assert {"RATE_LIMITED", "SERVER_BUSY", "STREAMS_FULL", "CHAT_RATE"} <= hinted


def test_the_scan_finds_each_kind_of_refusal_with_its_status() -> None:
    found = scan()
    statuses = {reason: set(f.statuses) for reason, f in found.items()}
    assert statuses["TABLE_NOT_FOUND"] == {"NOT_FOUND"}  # ServiceError, literal
    assert statuses["INVALID_TABLE_ID"] == {"INVALID_ARGUMENT"}  # a helper: checks.invalid
    assert statuses["INVALID_DISPLAY_NAME"] == {"INVALID_ARGUMENT"}  # by keyword, two deep
    assert statuses["READ_ONLY"] == {"PERMISSION_DENIED"}  # errors.denied
    assert statuses["TOKEN_MISSING"] == {"UNAUTHENTICATED"}
    assert statuses["RATE_LIMITED"] == {"RESOURCE_EXHAUSTED"}  # a module constant
    assert statuses["MALFORMED_REQUEST"] == {"INVALID_ARGUMENT"}
    assert statuses["UNKNOWN_METHOD"] == {"UNIMPLEMENTED"}  # the web edge's Connect error
    assert statuses["ORIGIN_NOT_ALLOWED"] == {"PERMISSION_DENIED"}
    assert statuses["TABLE_FULL"] == {"FAILED_PRECONDITION"}  # the gateway's Refused
    assert statuses["SEAT_TAKEN"] == {"ABORTED", "FAILED_PRECONDITION"}  # gateway and rules
    assert statuses["STALE"] == {"ABORTED"}
    assert statuses["NO_SUCH_TOURNAMENT"] == {"NOT_FOUND"}
    assert statuses["UPSTREAM_ERROR"] == {"the upstream's"}
    assert {code.value for code in ErrorCode} <= set(found)
    assert {refusal.value for refusal in Refusal} <= set(found)
    assert len(found) > 140


def test_the_scan_finds_a_new_reason_however_it_is_written(tmp_path: Path) -> None:
    package = tmp_path / "president"
    package.mkdir()
    (package / "errors.py").write_text(
        "def unavailable(reason, message):\n"
        "    return ServiceError(Code.UNAVAILABLE, reason, message)\n"
        "def later(why, *, reason):\n"
        "    return unavailable(reason, why)\n"
    )
    (package / "use.py").write_text(
        'BUSY = "NEW_BUSY"\n'
        "def run():\n"
        '    raise ServiceError(Code.NOT_FOUND, "NEW_LITERAL", "gone")\n'
        "def other():\n"
        '    raise unavailable("NEW_HELPER", "down")\n'
        "def third():\n"
        '    raise later("down", reason="NEW_KEYWORD")\n'
        "def fourth():\n"
        '    raise ServiceError(Code.RESOURCE_EXHAUSTED, BUSY, "wait", {RETRY_AFTER: "1"})\n'
        "def fifth(error):\n"
        "    raise ServiceError(Code.INTERNAL, error.why, 'no')\n"
    )
    found = scan(package)
    assert {reason: set(f.statuses) for reason, f in found.items() if reason.startswith("NEW")} == {
        "NEW_LITERAL": {"NOT_FOUND"},
        "NEW_HELPER": {"UNAVAILABLE"},
        "NEW_KEYWORD": {"UNAVAILABLE"},
        "NEW_BUSY": {"RESOURCE_EXHAUSTED"},
    }
    assert found["NEW_BUSY"].hint and not found["NEW_LITERAL"].hint
    assert passed_on(package) == {"error.why"}


def test_the_committed_page_is_what_the_code_makes() -> None:
    committed = (ROOT / PAGE).read_text()
    assert committed == page(), "docs/errors.md is stale: run `president reasons --write`"


def test_the_page_has_one_row_per_reason_with_status_meaning_and_retry() -> None:
    text = page()
    for reason, (meaning, _retry) in MEANINGS.items():
        assert f"| `{reason}` | " in text and meaning in text
    assert "| `RATE_LIMITED` | `RESOURCE_EXHAUSTED` | " in text
    assert text.count("after the hint |") == 5


def test_the_command_prints_the_page_and_writes_it(tmp_path: Path) -> None:
    runner = CliRunner()
    printed = runner.invoke(app, ["reasons"])
    assert printed.exit_code == 0 and printed.output == page()
    (tmp_path / PAGE.parent).mkdir()
    written = runner.invoke(app, ["reasons", "--write", "--root", str(tmp_path)])
    assert written.exit_code == 0
    assert (tmp_path / PAGE).read_text() == page()
