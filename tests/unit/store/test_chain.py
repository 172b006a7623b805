"""The hash chain alone, without a database: what ``verify_chain`` catches."""

from __future__ import annotations

import dataclasses
import hashlib

from hypothesis import given
from hypothesis import strategies as st

from president.store import GENESIS_HASH, Position, StoredEvent, event_hash, verify_chain
from president.store.chain import canonical_bytes


def chain(payloads: list[bytes], stream_id: str = "table-1") -> list[StoredEvent]:
    """A valid stream of events with these payloads."""
    built: list[StoredEvent] = []
    previous = GENESIS_HASH
    for version, payload in enumerate(payloads, start=1):
        metadata = {"actor": "p1", "command_id": f"c{version}", "time": "2026-11-30T12:00:00Z"}
        digest = event_hash(stream_id, version, "test.v1.E", payload, metadata, previous)
        built.append(
            StoredEvent(
                stream_id=stream_id,
                version=version,
                type="test.v1.E",
                payload=payload,
                metadata=metadata,
                position=Position(0, version),
                hash=digest,
                previous_hash=previous,
            )
        )
        previous = digest
    return built


def test_a_valid_chain_verifies() -> None:
    assert verify_chain(chain([b"a", b"b", b"c"])) is None
    assert verify_chain([]) is None


def test_a_suffix_verifies_from_its_first_events_link() -> None:
    assert verify_chain(chain([b"a", b"b", b"c"])[1:]) is None


def test_the_hash_is_sha256_of_the_documented_bytes() -> None:
    data = canonical_bytes("t", 1, "x", b"\x00", {"b": 1, "a": "é"}, GENESIS_HASH)
    fields = [b"t", b"1", b"x", b"\x00", '{"a":"é","b":1}'.encode(), GENESIS_HASH.encode()]
    expected = b"president-event-v1" + b"".join(
        len(field).to_bytes(8, "big") + field for field in fields
    )
    assert data == expected
    assert event_hash("t", 1, "x", b"\x00", {"a": "é", "b": 1}, GENESIS_HASH) == (
        hashlib.sha256(expected).hexdigest()
    )


def test_field_boundaries_are_unambiguous() -> None:
    one = event_hash("ab", 1, "c", b"", {}, GENESIS_HASH)
    other = event_hash("a", 1, "bc", b"", {}, GENESIS_HASH)
    assert one != other


def test_a_changed_event_is_named() -> None:
    events = chain([b"a", b"b", b"c"])
    events[1] = dataclasses.replace(events[1], payload=b"B")

    error = verify_chain(events)
    assert error is not None
    assert (error.stream_id, error.version, error.index) == ("table-1", 2, 1)
    assert "changed" in error.reason
    assert "stream 'table-1', event version 2" in str(error)


def test_a_changed_event_with_a_recomputed_hash_breaks_the_next_link() -> None:
    events = chain([b"a", b"b", b"c"])
    forged = dataclasses.replace(events[1], payload=b"B")
    forged = dataclasses.replace(
        forged,
        hash=event_hash(
            forged.stream_id,
            forged.version,
            forged.type,
            forged.payload,
            forged.metadata,
            forged.previous_hash,
        ),
    )
    events[1] = forged

    error = verify_chain(events)
    assert error is not None
    assert error.version == 3
    assert "previous hash" in error.reason


def test_a_removed_event_is_named() -> None:
    events = chain([b"a", b"b", b"c"])
    del events[1]

    error = verify_chain(events)
    assert error is not None
    assert (error.version, error.index) == (3, 1)


def test_an_inserted_event_is_named() -> None:
    events = chain([b"a", b"b", b"c"])
    stranger = chain([b"x", b"y"])[1]
    events.insert(2, stranger)

    error = verify_chain(events)
    assert error is not None
    assert error.index == 2


def test_reordered_events_are_named() -> None:
    events = chain([b"a", b"b", b"c"])
    events[1], events[2] = events[2], events[1]

    error = verify_chain(events)
    assert error is not None
    assert error.index == 1


def test_a_first_event_must_start_from_genesis() -> None:
    events = chain([b"a", b"b"])
    events[0] = dataclasses.replace(events[0], previous_hash="1" * 64)

    error = verify_chain(events)
    assert error is not None
    assert error.version == 1


def test_events_of_another_stream_are_named() -> None:
    events = chain([b"a", b"b"])
    events[1] = chain([b"a", b"b"], stream_id="table-2")[1]

    error = verify_chain(events)
    assert error is not None
    assert "another stream" in error.reason


@given(
    payloads=st.lists(st.binary(max_size=20), min_size=1, max_size=6),
    data=st.data(),
)
def test_any_change_to_any_field_of_any_event_is_caught(
    payloads: list[bytes], data: st.DataObject
) -> None:
    events = chain(payloads)
    index = data.draw(st.integers(0, len(events) - 1))
    target = events[index]
    changes = {
        "payload": target.payload + b"!",
        "type": target.type + "X",
        "metadata": {**target.metadata, "actor": "someone else"},
        "stream_id": "table-other",
        "previous_hash": "f" * 64,
        "hash": "e" * 64,
    }
    field = data.draw(st.sampled_from(sorted(changes)))
    events[index] = dataclasses.replace(target, **{field: changes[field]})

    error = verify_chain(events)
    assert error is not None
    assert error.index in (index, index + 1)
