"""Inputs that got the wrong answer: Unicode digits in game_end, a reaction with a trailing
newline, a table id with one, NO_SUCH_SEAT's status at the gateway, "a auditor token"."""

from __future__ import annotations

import grpc
import pytest

from president.rules.errors import ErrorCode
from president.rules.options import OptionError, options_for
from president.servicekit.checks import reaction
from president.servicekit.errors import STATUS_OF_CODE, ServiceError, from_domain
from president.servicekit.nats import valid_table_id
from president.services.gateway.handlers import REFUSED_STATUS


@pytest.mark.parametrize("game_end", ["rounds:²", "target:١٢", "rounds:³3"])
def test_unicode_digits_in_game_end_are_an_option_error(game_end: str) -> None:
    with pytest.raises(OptionError) as refused:  # was a ValueError: INTERNAL
        options_for("classic", {"game_end": game_end})
    assert from_domain(refused.value).status == grpc.StatusCode.INVALID_ARGUMENT


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
