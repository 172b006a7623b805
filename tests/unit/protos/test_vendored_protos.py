"""``protos/`` carries what a client in any language needs to read an error's details:
Google's ``google/rpc`` status and error details, vendored with their licence, the very
files the servers build their details from (googleapis-common-protos) and reflection
describes."""

from __future__ import annotations

from pathlib import Path

import grpc_tools
import pytest
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FileDescriptor
from google.rpc import error_details_pb2, status_pb2
from grpc_tools import protoc

PROTOS = Path(__file__).resolve().parents[3] / "protos"
VENDORED = {
    "google/rpc/status.proto": status_pb2,
    "google/rpc/error_details.proto": error_details_pb2,
}


def compiled(tmp_path: Path, name: str) -> descriptor_pb2.FileDescriptorProto:
    out = tmp_path / "set.pb"
    include = Path(grpc_tools.__file__).parent / "_proto"
    assert protoc.main(["protoc", f"-I{PROTOS}", f"-I{include}", f"-o{out}", name]) == 0
    return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]


def proto_of(file: FileDescriptor) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    return proto


@pytest.mark.parametrize("name", sorted(VENDORED))
def test_the_vendored_file_is_the_one_the_servers_use(tmp_path: Path, name: str) -> None:
    text = (PROTOS / name).read_text()
    assert "Copyright" in text and "Apache License, Version 2.0" in text
    assert without_json_names(compiled(tmp_path, name)) == proto_of(VENDORED[name].DESCRIPTOR)


def without_json_names(
    proto: descriptor_pb2.FileDescriptorProto,
) -> descriptor_pb2.FileDescriptorProto:
    """protoc's descriptor without the json_name it fills in (``CopyToProto`` leaves it out)."""

    def clear(message: descriptor_pb2.DescriptorProto) -> None:
        for field in message.field:
            field.ClearField("json_name")
        for nested in message.nested_type:
            clear(nested)

    for message in proto.message_type:
        clear(message)
    return proto


def test_the_error_details_clients_read_are_there(tmp_path: Path) -> None:
    messages = {m.name for m in compiled(tmp_path, "google/rpc/error_details.proto").message_type}
    assert {"ErrorInfo", "RetryInfo", "BadRequest"} <= messages
    assert [m.name for m in compiled(tmp_path, "google/rpc/status.proto").message_type] == [
        "Status"
    ]
