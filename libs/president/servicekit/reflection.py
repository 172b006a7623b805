"""What server reflection describes: only the services a server serves, and the error details.

grpc's reflection answers from the process's whole descriptor pool by default,
so a gateway (which also imports the internal ``table.proto`` and
``scoring.proto`` to call those services) would describe them to anyone who
asks, by file or by symbol. :func:`served_pool` holds just the served
services' files and what they import, with any service a file defines but this
server does not serve taken out (the gateway imports ``players.proto`` for its
messages, not for the internal ``PlayersService``); it adds ``google/rpc``'s
status and error details, so a client such as grpcurl can read the
``ErrorInfo`` and ``RetryInfo`` in an error's details.

Reflection is served under both names clients ask for: ``grpc.reflection.v1``
and the older ``v1alpha`` (grpcio-reflection implements only ``v1alpha``; the
two protocols are the same messages under another package, field for field,
so one servicer answers both).
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, text_format
from google.protobuf.descriptor import FileDescriptor
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health
from grpc_reflection.v1alpha import reflection, reflection_pb2
from grpc_reflection.v1alpha._async import ReflectionServicer

#: The current name of the reflection service (``v1alpha`` is its older name).
V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"
#: Files every server describes beside its services: what an error's details hold.
ERROR_FILES = (status_pb2.DESCRIPTOR, error_details_pb2.DESCRIPTOR)


def enable_reflection(server: grpc.aio.Server, service_names: Iterable[str]) -> None:
    """Serve reflection (v1 and v1alpha) on ``server``: the named services, health and
    reflection, from :func:`served_pool` (nothing else the process imports)."""
    served = [*service_names, health.SERVICE_NAME, reflection.SERVICE_NAME, V1_SERVICE_NAME]
    servicer = ReflectionServicer(served, pool=_MethodsToo(served_pool(served)))
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": handler})
            for name in (reflection.SERVICE_NAME, V1_SERVICE_NAME)
        ]
    )


def served_pool(service_names: Iterable[str]) -> descriptor_pool.DescriptorPool:
    """A descriptor pool of the named services' files and their imports (from the default
    pool), each file without the services not named; a name the default pool does not
    know (health, reflection v1alpha) brings its file too, reflection v1 its file
    (:func:`_v1_reflection_file`); and :data:`ERROR_FILES`."""
    names = set(service_names)
    default = descriptor_pool.Default()
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(proto: descriptor_pb2.FileDescriptorProto) -> None:
        if proto.name in added:
            return
        for dependency in proto.dependency:
            add(_proto_of(default.FindFileByName(dependency)))
        kept = [service for service in proto.service if f"{proto.package}.{service.name}" in names]
        del proto.service[:]
        proto.service.extend(kept)
        pool.Add(proto)
        added.add(proto.name)

    for name in sorted(names):
        try:
            add(_proto_of(default.FindServiceByName(name).file))
        except KeyError:
            continue
    if V1_SERVICE_NAME in names:
        add(_v1_reflection_file())
    for file in ERROR_FILES:
        add(_proto_of(file))
    return pool


def _proto_of(file: FileDescriptor) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    return proto


def _v1_reflection_file() -> descriptor_pb2.FileDescriptorProto:
    """``grpc/reflection/v1/reflection.proto``: ``v1alpha``'s file under the v1 package
    (what the two protocols differ by)."""
    proto = _proto_of(descriptor_pool.Default().FindFileByName(reflection_pb2.DESCRIPTOR.name))
    old, new = proto.package, V1_SERVICE_NAME.rsplit(".", 1)[0]
    text = (
        text_format.MessageToString(proto)
        .replace(f'"{old}', f'"{new}')
        .replace(f'".{old}.', f'".{new}.')
    )
    v1 = text_format.Parse(text, descriptor_pb2.FileDescriptorProto())
    v1.name = "grpc/reflection/v1/reflection.proto"
    return v1


class _MethodsToo:
    """A pool whose ``FindFileContainingSymbol`` also finds a method's file (the upb pool
    finds messages, enums and services, not methods, so ``grpcurl describe
    Service.Method`` got "Symbol not found"); everything else is the pool's own."""

    def __init__(self, pool: descriptor_pool.DescriptorPool) -> None:
        self._pool = pool

    def FindFileContainingSymbol(self, name: str) -> FileDescriptor:
        try:
            return self._pool.FindFileContainingSymbol(name)
        except KeyError:
            return self._pool.FindMethodByName(name).containing_service.file

    def __getattr__(self, name: str) -> object:
        return getattr(self._pool, name)
