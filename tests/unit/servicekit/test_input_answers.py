"""Inputs that got the wrong answer: Unicode digits in game_end, a reaction with a trailing
newline, a table id with one, NO_SUCH_SEAT's status at the gateway, "a auditor token" (the
gateway's refusals are checked for it by tests/e2e/test_fuzz_inputs.py), and shown names with
C1 controls, bidi overrides or nothing visible at the gateway and the table service."""

from __future__ import annotations

import pytest

from president.game.v1 import game_pb2 as gpb
from president.rules.errors import ErrorCode
from president.rules.options import OptionError, options_for
from president.servicekit import names
from president.servicekit.checks import bot_level, reaction
from president.servicekit.errors import STATUS_OF_CODE, Code, ServiceError, from_domain, to_refusal
from president.servicekit.grpc_errors import to_status
from president.servicekit.nats import valid_table_id
from president.services.gateway.api.handlers import REFUSED_STATUS
from president.services.gateway.calls import checks as gateway_checks
from president.services.table.commands import translate


@pytest.mark.parametrize("game_end", ["rounds:²", "target:١٢", "rounds:³3"])
def test_unicode_digits_in_game_end_are_an_option_error(game_end: str) -> None:
    with pytest.raises(OptionError) as refused:  # was a ValueError: INTERNAL
        options_for("classic", {"game_end": game_end})
    assert from_domain(refused.value).status == Code.INVALID_ARGUMENT


@pytest.mark.parametrize("text", ["x\n", "smile\n", "\n"])
def test_a_reaction_with_a_newline_is_refused(text: str) -> None:
    with pytest.raises(ServiceError) as refused:
        reaction(text)
    assert refused.value.reason == "INVALID_REACTION"
    assert reaction("smile") == "smile"


def test_a_table_id_with_a_trailing_newline_is_not_valid() -> None:
    assert valid_table_id("t1") and not valid_table_id("t1\n")


def test_no_such_seat_has_one_status_wherever_it_comes_from() -> None:
    # AddBot's comes from the rules (STATUS_OF_CODE), RemoveSeat's from the gateway.
    assert REFUSED_STATUS["NO_SUCH_SEAT"] == STATUS_OF_CODE[ErrorCode.NO_SUCH_SEAT]


#: Names the players service refused and the gateway and the table service took: a C1
#: control (CSI, the start of a terminal escape), bidi overrides and isolates, zero-width
#: characters, invisible-only names (Hangul fillers, a blank Braille pattern, a lone
#: combining mark), a line separator.
BAD_NAMES = [
    "Ann\x9b31m",
    "A\x85nn",
    "Ann\u202eevil",
    "\u2067Ann",
    "A\u200bnn",
    "\u200b",
    "\u3164\u3164",
    "\u2800",
    "\u0301",
    "Ann\u2028Bob",
]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_the_gateway_refuses_bad_display_and_table_names(name: str) -> None:
    for check, reason in (
        (gateway_checks.display_name, "INVALID_DISPLAY_NAME"),
        (gateway_checks.table_name, "INVALID_TABLE_NAME"),
    ):
        with pytest.raises(ServiceError) as refused:
            check(name)
        assert (refused.value.status, refused.value.reason) == (
            Code.INVALID_ARGUMENT,
            reason,
        )


@pytest.mark.parametrize("name", BAD_NAMES)
def test_the_table_service_refuses_a_seat_with_a_bad_display_name(name: str) -> None:
    command = gpb.Command(sit_down=gpb.SitDown(seat=1, player_id="p1", display_name=name))
    with pytest.raises(ServiceError) as refused:
        translate(command)
    assert refused.value.reason == "INVALID_DISPLAY_NAME"


def test_one_rule_of_shown_names_everywhere() -> None:
    assert gateway_checks.display_name is names.display_name
    assert gateway_checks.table_name is names.table_name
    assert names.display_name(" Ａnn ") == "Ann"  # NFKC, trimmed
    assert names.table_name("") == ""  # a table may have no name
    assert names.display_name("Zoë 🂡") == "Zoë 🂡"
    seat = translate(gpb.Command(sit_down=gpb.SitDown(seat=1, player_id="p1")))
    assert seat.command.display_name == ""  # type: ignore[attr-defined]  # a seat named by none


def test_a_refusal_quoting_a_huge_input_stays_within_the_trailer_limit() -> None:
    # A 10 KB bot level was quoted whole: its status outgrew gRPC's 16 KiB trailers, and the
    # caller got RESOURCE_EXHAUSTED without a reason (found by tests/e2e/test_fuzz_inputs.py).
    with pytest.raises(ServiceError) as refused:
        bot_level("\r\n" * 5_000)
    status = to_status(refused.value)
    assert refused.value.reason == "UNKNOWN_BOT_LEVEL"
    assert len(status.details) < 1_000 and status.details.endswith("…")
    assert len(to_refusal(refused.value).message) == len(status.details)
