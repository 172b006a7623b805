"""Hypothesis strategies built from protobuf message descriptors, with nasty values.

:func:`messages` makes any message of ``protos/`` from its descriptor: every
string field from :data:`NASTY_TEXT` (Unicode digits, newlines, C0 and C1
controls, bidi overrides, zero-width and invisible characters, huge and
empty texts) mixed with the test's own ``known`` texts (a real table id,
card names, option names) so a request gets past its first check now and
then; every number field from the type's extremes, negatives and small
values; enums from their values and unknown ones; repeated and map fields
of a few items; nested messages to a bounded depth; each singular field set
or left unset (so ``optional`` fields are absent as often as present).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from hypothesis import strategies as st

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
UINT32 = (0, 2**32 - 1)
UINT64 = (0, 2**64 - 1)

#: Texts that have broken parsers and checks before (and their pieces).
NASTY_PIECES = [
    "",
    " ",
    "x\n",
    "\n",
    "\r\n",
    "\t",
    "\x00",
    "\x1b[31m",
    "\x9b31m",  # C1 CSI
    "\x85",  # C1 NEL
    "\x7f",
    "\u202e",  # right-to-left override
    "\u2067",  # right-to-left isolate
    "\u200b",  # zero-width space
    "\u200d",
    "\ufeff",
    "\u3164",  # Hangul filler
    "\u2800",
    "\u0301",  # a lone combining mark
    "\u2028",
    "²",
    "٣",
    "１２",
    "rounds:²",
    "target:١٢",
    "-1",
    "1e9",
    "NaN",
    "99999999999999999999",
    "../../etc/passwd",
    "a.b",
    "*",
    ">",
    "%s%n",
    "' OR 1=1 --",
    "🂡",
    "Ａ",
    "true",
    "null",
]


def nasty_text(known: Sequence[str] = ()) -> st.SearchStrategy[str]:
    """Nasty texts, arbitrary Unicode, huge ones, and the caller's known good values."""
    pieces = st.sampled_from(NASTY_PIECES + list(known))
    joined = st.lists(pieces, min_size=1, max_size=4).map("".join)
    huge = st.builds(lambda piece, n: piece * n, pieces, st.sampled_from([200, 2_000, 5_000]))
    anything = st.text(max_size=60)
    choices = [joined, pieces, anything, huge]
    if known:
        choices.append(st.sampled_from(list(known)))
    return st.one_of(*choices)


def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    edges = [value for value in (low, high, -1, 0, 1, 2, 3, 7, 64, 1000) if low <= value <= high]
    return st.one_of(st.sampled_from(edges), st.integers(low, high))


_NUMBERS = {
    FieldDescriptor.TYPE_INT32: INT32,
    FieldDescriptor.TYPE_SINT32: INT32,
    FieldDescriptor.TYPE_SFIXED32: INT32,
    FieldDescriptor.TYPE_INT64: INT64,
    FieldDescriptor.TYPE_SINT64: INT64,
    FieldDescriptor.TYPE_SFIXED64: INT64,
    FieldDescriptor.TYPE_UINT32: UINT32,
    FieldDescriptor.TYPE_FIXED32: UINT32,
    FieldDescriptor.TYPE_UINT64: UINT64,
    FieldDescriptor.TYPE_FIXED64: UINT64,
}


def _scalar(field: FieldDescriptor, known: Sequence[str], depth: int) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return nasty_text(known)
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=64)
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind in _NUMBERS:
        return _integers(*_NUMBERS[kind])
    if kind in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return st.floats(allow_nan=True, allow_infinity=True, width=32)
    if kind == FieldDescriptor.TYPE_ENUM:
        values = [value.number for value in field.enum_type.values]
        return st.one_of(st.sampled_from(values), _integers(*INT32))  # open enums: unknown too
    if kind == FieldDescriptor.TYPE_MESSAGE:
        return messages(field.message_type, known, depth + 1)
    raise AssertionError(f"no strategy for field {field.full_name}")  # pragma: no cover


def messages(
    descriptor: Descriptor, known: Sequence[str] = (), depth: int = 0
) -> st.SearchStrategy[Message]:
    """Messages of ``descriptor``'s type, each field nasty or absent (nested up to depth 3)."""
    cls = GetMessageClass(descriptor)
    if depth > 3:
        return st.just(cls())
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for field in descriptor.fields:
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            key, value = (
                field.message_type.fields_by_name["key"],
                field.message_type.fields_by_name["value"],
            )
            parts[field.name] = st.dictionaries(
                _scalar(key, known, depth), _scalar(value, known, depth), max_size=3
            )
        elif field.is_repeated:
            parts[field.name] = st.lists(_scalar(field, known, depth), max_size=4)
        else:
            parts[field.name] = st.none() | _scalar(field, known, depth)
    return st.fixed_dictionaries(parts).map(lambda values: _build(cls, values))


def _build(cls: type[Message], values: dict[str, Any]) -> Message:
    message = cls()
    for name, value in values.items():
        if value is None:
            continue
        field = message.DESCRIPTOR.fields_by_name[name]
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            target = getattr(message, name)
            for key, item in value.items():
                if field.message_type.fields_by_name["value"].message_type is not None:
                    target[key].CopyFrom(item)
                else:
                    target[key] = item
        elif field.is_repeated:
            getattr(message, name).extend(value)
        elif field.message_type is not None:
            getattr(message, name).CopyFrom(value)
        else:
            setattr(message, name, value)
    return message
