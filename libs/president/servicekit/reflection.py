"""What server reflection describes: only the files of the services a server serves.

grpc's reflection answers from the process's whole descriptor pool by default,
so a gateway (which also imports the internal ``table.proto`` and
``scoring.proto`` to call those services) would describe them to anyone who
asks, by file or by symbol. :func:`served_pool` holds just the served
services' files and what they import.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from grpc_health.v1 import health
from grpc_reflection.v1alpha import reflection


def enable_reflection(server: grpc.aio.Server, service_names: Iterable[str]) -> None:
    """Serve reflection on ``server``: the named services, health and reflection, from
    :func:`served_pool` (nothing else the process imports)."""
    served = [*service_names, health.SERVICE_NAME, reflection.SERVICE_NAME]
    reflection.enable_server_reflection(served, server, pool=served_pool(served))


def served_pool(service_names: Iterable[str]) -> descriptor_pool.DescriptorPool:
    """A descriptor pool of the named services' files and their imports (from the default
    pool); a name the default pool does not know (health, reflection) brings its file too."""
    default = descriptor_pool.Default()
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(file: FileDescriptor) -> None:
        if file.name in added:
            return
        for dependency in file.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        pool.Add(proto)
        added.add(file.name)

    for name in service_names:
        try:
            add(default.FindServiceByName(name).file)
        except KeyError:
            continue
    return pool
