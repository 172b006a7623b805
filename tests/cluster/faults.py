"""The faults between machines, each a function that strikes the running deployment and
returns once the fault is over (the cut healed, the process resumed, the standby promoted)."""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import nats

from president.servicekit.nats import servers
from tests.cluster.deployment import (
    CLIENT_HOST,
    GATEWAY_HOSTS,
    NATS_HOSTS,
    STREAM,
    TABLE_HOSTS,
    Deployment,
)

#: How long a cut or a pause lasts by default: over three of the leases' lifetimes (3 s).
FAULT_SECONDS = 10.0


@dataclass
class Fault:
    name: str
    #: Strikes, and returns once the fault is over (it lasts the seconds given, if it lasts).
    strike: Callable[[Deployment, float], None]
    #: PostgreSQL with a synchronous standby.
    synchronous_postgres: bool = False
    #: Processes whose wall clock runs off by so many seconds, from their start.
    skews: dict[str, int] = field(default_factory=dict)
    #: Losses this fault makes by design (asynchronous replication): OK'd plays missing
    #: from the store, and JetStream and scoring holding what the store lost, are printed
    #: but do not fail the run; duplicates, disorder, the audit and stuck tables still do.
    loses_by_design: bool = False


async def _stream_leader(url: str) -> str:
    client = await nats.connect(servers(url), connect_timeout=3)
    try:
        info = await client.jetstream().stream_info(STREAM)
        return info.cluster.leader if info.cluster and info.cluster.leader else NATS_HOSTS[0]
    finally:
        await client.close()


async def _lease_holders(url: str) -> collections.Counter[str]:
    client = await nats.connect(servers(url), connect_timeout=3)
    try:
        kv = await client.jetstream().key_value(f"{STREAM}_TABLE_LEASES")
        holders: collections.Counter[str] = collections.Counter()
        for key in await kv.keys():
            entry = await kv.get(key)
            holders[(entry.value or b"").decode()] += 1
        return holders
    finally:
        await client.close()


def lease_holder(deployment: Deployment) -> str:
    """The table replica's host that holds the most table leases."""
    holders = asyncio.run(_lease_holders(deployment.nats_url))
    by_address = {deployment.address(h, "table"): h for h in TABLE_HOSTS}
    ranked = [by_address[a] for a, _ in holders.most_common() if a in by_address]
    return ranked[0] if ranked else TABLE_HOSTS[0]


def nats_partitioned(deployment: Deployment, seconds: float) -> None:
    """The events stream's leader cut from the other two NATS servers (the services still
    reach all three), then healed."""
    leader = asyncio.run(_stream_leader(deployment.nats_url))
    print(f"   cutting {leader} (the stream's leader) from the other NATS servers", flush=True)
    deployment.network.partition([leader], [h for h in NATS_HOSTS if h != leader])
    time.sleep(seconds)
    deployment.network.heal()


def holder_isolated(deployment: Deployment, seconds: float) -> None:
    """The lease holder cut from every other host (NATS, PostgreSQL, gateways), healed."""
    host = lease_holder(deployment)
    print(f"   cutting {host} (holds the most leases) from every host", flush=True)
    deployment.network.isolate(host)
    time.sleep(seconds)
    deployment.network.heal()


def holder_cut_from_nats(deployment: Deployment, seconds: float) -> None:
    """The lease holder cut from the three NATS servers only (it still reaches PostgreSQL,
    the gateways and the other replica), then healed."""
    host = lease_holder(deployment)
    print(f"   cutting {host} (holds the most leases) from the NATS servers", flush=True)
    deployment.network.partition([host], NATS_HOSTS)
    time.sleep(seconds)
    deployment.network.heal()


def holder_cut_from_postgres(deployment: Deployment, seconds: float) -> None:
    """The lease holder cut from PostgreSQL only (primary and standby; it still reaches
    NATS, the gateways and the other replica), then healed."""
    assert deployment.postgres is not None
    host = lease_holder(deployment)
    print(f"   cutting {host} (holds the most leases) from PostgreSQL", flush=True)
    deployment.network.partition([host], deployment.postgres.hosts)
    time.sleep(seconds)
    deployment.network.heal()


def holder_paused(deployment: Deployment, seconds: float) -> None:
    """The lease holder SIGSTOPped past its lease (the zombie holder), then SIGCONTed."""
    host = lease_holder(deployment)
    print(f"   SIGSTOP of table-{host} (holds the most leases)", flush=True)
    deployment.signal(f"table-{host}", signal.SIGSTOP)
    time.sleep(seconds)
    deployment.signal(f"table-{host}", signal.SIGCONT)


def nats_truncated(deployment: Deployment, seconds: float) -> None:
    """The events stream's leader killed (SIGKILL), every message block of its streams (the
    events, the commitment feed, the lease bucket) cut to half its length (as Jepsen's NATS
    2.12.1 analysis did: the writes it had acknowledged and not yet fsynced, and more), and
    started again ``seconds`` later on what is left."""
    leader = asyncio.run(_stream_leader(deployment.nats_url))
    print(f"   kill -9 of {leader} (the stream's leader), its message blocks cut", flush=True)
    deployment.stop_one(leader, kill=True)
    blocks = sorted((deployment.workdir / leader / "jetstream").glob("*/streams/*/msgs/*.blk"))
    cut = 0
    for block in blocks:
        size = block.stat().st_size
        os.truncate(block, size // 2)
        cut += size - size // 2
    print(f"   {len(blocks)} blocks, {cut} bytes cut", flush=True)
    time.sleep(seconds)
    deployment.restart(leader)


def gateway_cut(deployment: Deployment, seconds: float) -> None:
    """The first gateway cut from the clients' host (it still reaches every service) for
    twice the fault's time: longer than a table may stand still, so its clients must find
    the connection dead (their pings go unanswered), move to the other gateway their
    target names and resume there, not wait for the heal."""
    host = GATEWAY_HOSTS[0]
    print(f"   cutting {host} from the clients for {2 * seconds:g} s", flush=True)
    deployment.network.partition([host], [CLIENT_HOST])
    time.sleep(2 * seconds)
    deployment.network.heal()


#: A table replica 30 s behind, the timer and the first gateway 30 s ahead: the timer is
#: 60 s ahead of the events that replica stamps, and the gateway's tokens come from 30 s
#: in the future of the other gateway's clock.
SKEWS = {"table-table1": -30, "timer-svc": 30, "gateway-gw1": 30}


def skewed_clocks(deployment: Deployment, seconds: float) -> None:
    """The clocks run off from the start (:data:`SKEWS`); at the strike the first gateway
    is cut from the clients, so its clients bring its tokens to the other gateway."""
    print(f"   clocks off: {SKEWS}; cutting gw1 from the clients for {seconds:g} s", flush=True)
    deployment.network.partition([GATEWAY_HOSTS[0]], [CLIENT_HOST])
    time.sleep(seconds)
    deployment.network.heal()


#: How long the standby is held behind before the primary dies (see ``fail_over``).
STANDBY_BEHIND_SECONDS = 1.5


def postgres_failover(deployment: Deployment, seconds: float) -> None:
    """The standby held 1.5 s behind, then kill -9 of the primary and the standby promoted;
    the old primary stays away."""
    assert deployment.postgres is not None
    deployment.postgres.fail_over(standby_behind=STANDBY_BEHIND_SECONDS)


FAULTS = [
    Fault("nats leader partitioned", nats_partitioned),
    Fault("nats leader truncated", nats_truncated),
    Fault("lease holder isolated", holder_isolated),
    Fault("holder cut from nats", holder_cut_from_nats),
    Fault("holder cut from postgres", holder_cut_from_postgres),
    Fault("lease holder SIGSTOP", holder_paused),
    Fault("gateway cut from clients", gateway_cut),
    Fault("clocks skewed 30 s", skewed_clocks, skews=SKEWS),
    Fault("postgres failover async", postgres_failover, loses_by_design=True),
    Fault("postgres failover sync", postgres_failover, synchronous_postgres=True),
]


async def _replication(url: str) -> list[str]:
    client = await nats.connect(servers(url), connect_timeout=3)
    problems = []
    try:
        js = client.jetstream()
        for name in (STREAM, f"{STREAM}_COMMITMENTS", f"KV_{STREAM}_TABLE_LEASES"):
            try:
                info = await js.stream_info(name)
            except Exception as error:
                problems.append(f"{name}: {error!r}")
                continue
            copies = 1 + len(info.cluster.replicas or []) if info.cluster else 1
            if info.config.num_replicas != len(NATS_HOSTS) or copies != len(NATS_HOSTS):
                problems.append(
                    f"{name} is kept {info.config.num_replicas} times ({copies} copies), "
                    f"not {len(NATS_HOSTS)}"
                )
        return problems
    finally:
        await client.close()


def replication_problems(deployment: Deployment, wait: float = 15.0) -> list[str]:
    """What is not kept once per NATS server: the events stream, the commitment feed, the
    lease bucket (each a sentence; none when all three are)."""
    deadline = time.monotonic() + wait
    while True:
        problems = asyncio.run(_replication(deployment.nats_url))
        if not problems or time.monotonic() > deadline:
            return problems
        time.sleep(0.5)
