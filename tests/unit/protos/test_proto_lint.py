"""The protos follow buf's STANDARD and COMMENTS lint rules.

``make lint`` (part of ``make test``) also runs the real ``buf lint`` (npm's
``@bufbuild/buf``, ``tools/buf/``) with ``protos/buf.yaml``; this test checks the same
rules from the compiled descriptors, so a failure names the rule in our words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

PROTOS = Path(__file__).resolve().parents[3] / "protos"
#: Our own protos (``protos/google/rpc/`` is vendored as Google wrote it).
FILES = sorted(str(p.relative_to(PROTOS)) for p in (PROTOS / "president").rglob("*.proto"))
PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")


def _descriptors(tmp_path: Path) -> list[descriptor_pb2.FileDescriptorProto]:
    import grpc_tools

    out = tmp_path / "set.pb"
    include = Path(grpc_tools.__file__).parent / "_proto"
    code = protoc.main(
        [
            "protoc",
            f"-I{PROTOS}",
            f"-I{include}",
            "--include_source_info",
            f"--descriptor_set_out={out}",
            *FILES,
        ]
    )
    assert code == 0
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return list(files.file)


def _comments(proto: descriptor_pb2.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    return {
        tuple(location.path): location.leading_comments.strip()
        for location in proto.source_code_info.location
    }


def test_every_proto_follows_the_standard_rules(tmp_path: Path) -> None:
    problems: list[str] = []
    for proto in _descriptors(tmp_path):
        name = proto.name
        comments = _comments(proto)
        package_dir = proto.package.replace(".", "/")
        if not re.fullmatch(r"president\.[a-z]+\.v\d+", proto.package):
            problems.append(f"{name}: package {proto.package} is not president.<area>.v<N>")
        if Path(name).parent.as_posix() != package_dir:
            problems.append(f"{name}: directory does not match package {proto.package}")
        for index, message in enumerate(proto.message_type):
            path = (4, index)
            if not PASCAL.match(message.name):
                problems.append(f"{name}: message {message.name} is not PascalCase")
            if not comments.get(path):
                problems.append(f"{name}: message {message.name} has no comment")
            for field_index, field in enumerate(message.field):
                if not SNAKE.match(field.name):
                    problems.append(f"{name}: field {message.name}.{field.name} is not snake_case")
                if not comments.get((*path, 2, field_index)):
                    problems.append(f"{name}: field {message.name}.{field.name} has no comment")
        for index, enum in enumerate(proto.enum_type):
            prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"
            if not comments.get((5, index)):
                problems.append(f"{name}: enum {enum.name} has no comment")
            if enum.value[0].name != prefix + "UNSPECIFIED" or enum.value[0].number != 0:
                problems.append(f"{name}: enum {enum.name} must start with {prefix}UNSPECIFIED = 0")
            for value_index, value in enumerate(enum.value):
                if not UPPER.match(value.name) or not value.name.startswith(prefix):
                    problems.append(f"{name}: enum value {value.name} lacks prefix {prefix}")
                if not comments.get((5, index, 2, value_index)):
                    problems.append(f"{name}: enum value {value.name} has no comment")
        for index, service in enumerate(proto.service):
            if not service.name.endswith("Service"):
                problems.append(f"{name}: service {service.name} does not end in Service")
            if not comments.get((6, index)):
                problems.append(f"{name}: service {service.name} has no comment")
            for method_index, method in enumerate(service.method):
                if not comments.get((6, index, 2, method_index)):
                    problems.append(f"{name}: rpc {method.name} has no comment")
                for kind, type_name in (
                    ("Request", method.input_type),
                    ("Response", method.output_type),
                ):
                    short = type_name.rsplit(".", 1)[-1]
                    allowed = {f"{method.name}{kind}", f"{service.name}{method.name}{kind}"}
                    if short not in allowed:
                        problems.append(f"{name}: rpc {method.name} {kind.lower()} is {short}")
    assert problems == []


@pytest.mark.parametrize("path", FILES)
def test_each_file_declares_proto3(path: str) -> None:
    assert 'syntax = "proto3";' in (PROTOS / path).read_text()
