"""The small parts the services share: input checks, stream batching, NATS message ids."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from president.servicekit import checks
from president.servicekit.batching import take_ready
from president.servicekit.errors import Code, ServiceError
from president.servicekit.nats import hash_in, message_id, version_in


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
    assert caught.value.status == Code.INVALID_ARGUMENT
    assert caught.value.reason == reason


def test_valid_inputs_pass_through() -> None:
    assert checks.table_id("table-1_A") == "table-1_A"
    assert checks.reaction("thumbs_up") == "thumbs_up"
    checks.round_number(1, 1)


async def test_take_ready_takes_what_is_queued_already_and_sees_the_end() -> None:
    queue: asyncio.Queue[int | None] = asyncio.Queue()
    assert take_ready(1, queue) == ([1], False)  # a lone item goes at once
    for item in (2, 3):
        queue.put_nowait(item)
    assert take_ready(1, queue) == ([1, 2, 3], False)
    assert queue.empty()
    for item in (5, None, 6):
        queue.put_nowait(item)
    assert take_ready(4, queue) == ([4, 5], True)  # the end stops it; what follows stays
    assert queue.get_nowait() == 6


def test_a_message_id_names_its_event_version_and_hash() -> None:
    headers = {"Nats-Msg-Id": message_id("table-abc", 42, "0123456789abcdef" * 4)}
    assert version_in(headers) == 42
    assert hash_in(headers) == "0123456789abcdef"
    assert version_in({"Nats-Msg-Id": "table-a:b:7"}) == 7
    assert (version_in({"Nats-Msg-Id": "table-a:7"}), hash_in({"Nats-Msg-Id": "table-a:7"})) == (
        7,
        "",
    )
    for unreadable in (None, {}, {"Nats-Msg-Id": "table-abc"}, {"Nats-Msg-Id": "x:-1"}):
        assert version_in(unreadable) is None
