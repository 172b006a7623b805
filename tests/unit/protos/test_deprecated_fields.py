"""Dead fields are marked ``[deprecated = true]`` and their comments say what to use instead;
a comment that calls a field dead ("no longer", "never set", "not read") carries the mark."""

from __future__ import annotations

import re
from pathlib import Path

from google.protobuf import descriptor_pb2

from tests.unit.protos.test_proto_lint import _comments, _descriptors

DEAD = re.compile(r"\b(no longer|never set|not read|deprecated)\b", re.I)
FIELD = 2  # DescriptorProto.field
MESSAGE = 4  # FileDescriptorProto.message_type
NESTED = 3  # DescriptorProto.nested_type


def fields(
    message: descriptor_pb2.DescriptorProto, path: tuple[int, ...], name: str
) -> list[tuple[str, tuple[int, ...], descriptor_pb2.FieldDescriptorProto]]:
    found = [
        (f"{name}.{field.name}", (*path, FIELD, index), field)
        for index, field in enumerate(message.field)
    ]
    for index, nested in enumerate(message.nested_type):
        found += fields(nested, (*path, NESTED, index), f"{name}.{nested.name}")
    return found


def test_dead_fields_are_deprecated_and_say_what_to_use(tmp_path: Path) -> None:
    problems = []
    marked = []
    for proto in _descriptors(tmp_path):
        comments = _comments(proto)
        for index, message in enumerate(proto.message_type):
            for name, path, field in fields(message, (MESSAGE, index), message.name):
                comment = comments.get(path, "")
                deprecated = field.options.deprecated
                if deprecated:
                    marked.append(name)
                if bool(DEAD.search(comment)) != deprecated:
                    problems.append(f"{name}: deprecated={deprecated}, comment {comment!r}")
                elif deprecated and not re.search(r"\b(Use|use)\b", comment):
                    problems.append(f"{name}: deprecated, but its comment names no replacement")
    assert not problems, "\n".join(problems)
    assert {"CreateTableResponse.token", "SpectateRequest.auditor"} <= set(marked)
