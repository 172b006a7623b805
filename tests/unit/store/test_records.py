"""Store values and URLs, without a database."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from president.events.v1 import events_pb2
from president.store import NewEvent, Position, normalise_url
from president.store.records import canonical_json


def test_positions_order_by_transaction_then_id() -> None:
    assert Position.START < Position(0, 1) < Position(0, 2) < Position(5, 1) < Position(6, 0)


@pytest.mark.parametrize("position", [Position(0, 0), Position(0, 17), Position(2**40, 9)])
def test_positions_parse_what_they_print(position: Position) -> None:
    assert Position.parse(str(position)) == position


@pytest.mark.parametrize("text", ["", "12", "1:2:3", "a:b", "-1:2"])
def test_bad_position_texts_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not an event store position"):
        Position.parse(text)


def test_a_new_event_copies_and_freezes_its_metadata() -> None:
    given = {"actor": "p1", "seats": [1, 2]}
    event = NewEvent("test.v1.E", b"", given)
    given["actor"] = "changed"

    assert event.metadata["actor"] == "p1"
    with pytest.raises(TypeError):
        event.metadata["actor"] = "x"  # type: ignore[index]


@pytest.mark.parametrize(
    ("metadata", "message"),
    [({"when": object()}, "plain JSON"), ({"x": float("nan")}, "plain JSON")],
)
def test_metadata_must_be_plain_json(metadata: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NewEvent("test.v1.E", b"", metadata)  # type: ignore[arg-type]


def test_a_new_event_needs_a_type_and_bytes() -> None:
    with pytest.raises(ValueError, match="type name has 1 to 200"):
        NewEvent("", b"")
    with pytest.raises(TypeError, match="payload is bytes"):
        NewEvent("test.v1.E", "text")  # type: ignore[arg-type]


def test_an_event_from_a_message_is_named_by_its_full_name() -> None:
    event = NewEvent.from_message(events_pb2.Passed(seat=3), {"actor": "p3"})

    assert event.type == "president.events.v1.Passed"
    assert events_pb2.Passed.FromString(event.payload).seat == 3
    assert event.metadata == {"actor": "p3"}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgres://u@h:5433/db", "postgresql+psycopg://u@h:5433/db"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("sqlite:///var/store.db", "sqlite+pysqlite:///var/store.db"),
    ],
)
def test_urls_are_normalised(given: str, expected: str) -> None:
    assert normalise_url(given).render_as_string(hide_password=False) == expected


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite://", "in a file"),
        ("sqlite:///:memory:", "in a file"),
        ("mysql://u@h/db", "unsupported database URL scheme 'mysql'"),
    ],
)
def test_unsupported_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        normalise_url(url)


_JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_JSON_VALUES = st.recursive(
    _JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12,
)


@given(st.dictionaries(st.text(), _JSON_VALUES, max_size=5))
def test_canonical_json_is_json_dumps_with_the_canonical_options(value: dict[str, Any]) -> None:
    """The encoder made once writes what ``json.dumps`` writes, for a mapping proxy too."""
    wanted = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    assert canonical_json(value) == wanted
    assert canonical_json(MappingProxyType(value)) == wanted


def test_canonical_json_refuses_what_is_not_plain_json() -> None:
    circular: dict[str, Any] = {}
    circular["self"] = circular
    for value in ({"x": float("nan")}, {"x": object()}, circular):
        with pytest.raises(ValueError, match="event metadata must be plain JSON"):
            canonical_json(value)
