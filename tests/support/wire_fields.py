"""Serialized protobuf messages read field by field, as the bytes carry them.

Protobuf libraries agree on a message whose singular fields each come once.
When one comes twice, Python's and protobuf-es merge the two (sub-messages
field by field), while protobufjs, the library ``@grpc/proto-loader`` builds
on, keeps the last one only. :func:`fields_sent_twice` finds such fields at
every depth, and members of one ``oneof`` sent together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from google.protobuf.descriptor import Descriptor

VARINT, FIXED64, DELIMITED, FIXED32 = 0, 1, 2, 5


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def fields(data: bytes) -> Iterator[tuple[int, int, bytes]]:
    """Each field of a serialized message in the order it comes: its number, its wire type,
    and for a length-delimited one its bytes (else ``b""``)."""
    at = 0
    while at < len(data):
        tag, at = _varint(data, at)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == VARINT:
            _, at = _varint(data, at)
            yield number, wire_type, b""
        elif wire_type == FIXED64:
            at += 8
            yield number, wire_type, b""
        elif wire_type == FIXED32:
            at += 4
            yield number, wire_type, b""
        elif wire_type == DELIMITED:
            length, at = _varint(data, at)
            if at + length > len(data):
                raise ValueError(f"field {number} runs past the message's end")
            yield number, wire_type, data[at : at + length]
            at += length
        else:
            raise ValueError(f"field {number} has wire type {wire_type} (groups are not used)")
    if at != len(data):
        raise ValueError("the last field runs past the message's end")


def fields_sent_twice(data: bytes, descriptor: Descriptor, path: str = "") -> list[str]:
    """The singular fields that ``data`` (a serialized ``descriptor`` message) carries more
    than once, as dotted paths (``view.round``), at every depth; and the ``oneof`` groups
    with more than one member set. Empty when each comes at most once."""
    counts: Counter[str] = Counter()
    found: list[str] = []
    oneofs: dict[str, set[str]] = {}
    elements: Counter[str] = Counter()
    for number, wire_type, value in fields(data):
        field = descriptor.fields_by_number.get(number)
        if field is None:
            found.append(f"{path}#{number} (unknown)")
            continue
        name = f"{path}{field.name}"
        if field.is_repeated:
            index = elements[name]
            elements[name] += 1
            where = f"{name}[{index}]."
        else:
            counts[name] += 1
            where = f"{name}."
        if field.containing_oneof is not None:
            oneofs.setdefault(f"{path}{field.containing_oneof.name}", set()).add(field.name)
        if field.message_type is not None and wire_type == DELIMITED:
            found += fields_sent_twice(value, field.message_type, where)
    found += [name for name, count in counts.items() if count > 1]
    found += [
        f"{group} ({', '.join(sorted(names))})" for group, names in oneofs.items() if len(names) > 1
    ]
    return found
