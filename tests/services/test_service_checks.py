"""The input checks the services share."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest

from president.service import checks
from president.service.errors import ServiceError


@pytest.mark.parametrize(
    ("check", "reason"),
    [
        (lambda: checks.table_id(""), "INVALID_TABLE_ID"),
        (lambda: checks.table_id("a.b"), "INVALID_TABLE_ID"),
        (lambda: checks.table_id("x" * 65), "INVALID_TABLE_ID"),
        (lambda: checks.round_number(1, 0), "INVALID_ROUND"),
        (lambda: checks.reaction(""), "INVALID_REACTION"),
        (lambda: checks.reaction("Thumbs"), "INVALID_REACTION"),
    ],
)
def test_each_refusal_is_invalid_argument_with_its_reason(
    check: Callable[[], object], reason: str
) -> None:
    with pytest.raises(ServiceError) as caught:
        check()
    assert caught.value.status == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.reason == reason


def test_valid_inputs_pass_through() -> None:
    assert checks.table_id("table-1_A") == "table-1_A"
    assert checks.reaction("thumbs_up") == "thumbs_up"
    checks.round_number(1, 1)
