"""The cluster's hosts: Linux network namespaces on a bridge this module creates and removes.

Each host is a namespace ``prescl-<name>`` with one veth into the bridge
``prescl-br`` and a private address in 10.77.0.0/24 (nothing outside the
namespaces gets an address). A partition is a pair of blackhole routes, one
in each host: packets between the two are dropped silently on the
connections already open (TCP retransmits, then gives up or resumes at the
heal), and a new connection is refused at once (``EINVAL``), as after an
ICMP unreachable. This kernel has no packet-filter or qdisc modules to drop
more faithfully (no iptables, nft or ``tc prio``), so that is the one
difference from a real switch that fails: new connections fail fast.

Needs root and ``ip`` (iproute2) with ``ip netns``. :func:`remove_all`
removes every namespace and link of ours, and the processes in them, also
after a run that was killed (``make cluster-chaos-clean``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

PREFIX = "prescl-"
BRIDGE = f"{PREFIX}br"
SUBNET = "10.77.0"


def addresses(names: Iterable[str]) -> dict[str, str]:
    """Each host's private address, in the order named."""
    return {name: f"{SUBNET}.{number}" for number, name in enumerate(names, start=10)}


class NetworkUnavailable(RuntimeError):
    """What the harness needs and this machine lacks, said in a sentence."""


def require() -> None:
    """Refuse clearly when the harness cannot build its hosts here."""
    if os.geteuid() != 0:
        raise NetworkUnavailable(
            "make cluster-chaos needs root: it creates network namespaces, veth pairs and a "
            "bridge (run it as root on a Linux machine, or in CI as root)"
        )
    if shutil.which("ip") is None:
        raise NetworkUnavailable(
            "make cluster-chaos needs `ip` from iproute2 (apt-get install iproute2)"
        )
    probe = f"{PREFIX}probe"
    made = subprocess.run(
        ["ip", "netns", "add", probe], check=False, capture_output=True, text=True
    )
    if made.returncode != 0:
        raise NetworkUnavailable(
            f"`ip netns add` failed here ({made.stderr.strip()}): make cluster-chaos needs a "
            "Linux kernel with network namespaces and the right to create them"
        )
    subprocess.run(["ip", "netns", "del", probe], check=False, capture_output=True)


def _ip(*args: str, namespace: str | None = None) -> None:
    command = ["ip", *(["-n", namespace] if namespace else []), *args]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()}")


@dataclass
class Network:
    """The hosts by name, each with its address; partitions as blackhole routes."""

    hosts: dict[str, str] = field(default_factory=dict)
    #: The blackhole routes in place: (host, the address it cannot reach).
    cut: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def create(cls, names: Iterable[str]) -> Network:
        remove_all()
        network = cls()
        _ip("link", "add", BRIDGE, "type", "bridge")
        _ip("link", "set", BRIDGE, "up")
        for name, address in addresses(names).items():
            namespace = f"{PREFIX}{name}"
            _ip("netns", "add", namespace)
            veth = f"{PREFIX}{address.rsplit('.', 1)[1]}"
            _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace)
            _ip("link", "set", veth, "master", BRIDGE, "up")
            _ip("addr", "add", f"{address}/24", "dev", "eth0", namespace=namespace)
            _ip("link", "set", "eth0", "up", namespace=namespace)
            _ip("link", "set", "lo", "up", namespace=namespace)
            network.hosts[name] = address
        return network

    def namespace(self, host: str) -> str:
        return f"{PREFIX}{host}"

    def run_in(self, host: str) -> list[str]:
        """The command prefix that runs a program on ``host``."""
        return ["ip", "netns", "exec", self.namespace(host)]

    def partition(self, side: Iterable[str], other: Iterable[str]) -> None:
        """Cut every host of ``side`` from every host of ``other``, both ways."""
        others = list(other)
        for a in side:
            for b in others:
                self._cut(a, self.hosts[b])
                self._cut(b, self.hosts[a])

    def isolate(self, host: str) -> None:
        """Cut ``host`` from every other host."""
        self.partition([host], [h for h in self.hosts if h != host])

    def heal(self) -> None:
        """Remove every cut."""
        for host, address in list(self.cut):
            with contextlib.suppress(RuntimeError):
                _ip("route", "del", "blackhole", f"{address}/32", namespace=self.namespace(host))
            self.cut.discard((host, address))

    def _cut(self, host: str, address: str) -> None:
        if (host, address) not in self.cut:
            _ip("route", "add", "blackhole", f"{address}/32", namespace=self.namespace(host))
            self.cut.add((host, address))

    def pids(self, host: str) -> list[int]:
        """The processes running on ``host``."""
        return pids(self.namespace(host))

    def remove(self) -> None:
        remove_all()


def _ours() -> list[str]:
    listed = subprocess.run(
        ["ip", "netns", "list"], check=False, capture_output=True, text=True
    ).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith(PREFIX)]


def pids(namespace: str) -> list[int]:
    listed = subprocess.run(
        ["ip", "netns", "pids", namespace], check=False, capture_output=True, text=True
    ).stdout
    return [int(pid) for pid in listed.split()]


def remove_all() -> None:
    """Kill the processes in our namespaces, then delete the namespaces and the bridge."""
    namespaces = _ours()
    for namespace in namespaces:
        for pid in pids(namespace):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)  # a stopped process cannot die of SIGKILL late
                os.kill(pid, signal.SIGKILL)
    if namespaces:
        time.sleep(0.3)
    for namespace in namespaces:
        subprocess.run(["ip", "netns", "del", namespace], check=False, capture_output=True)
    subprocess.run(["ip", "link", "del", BRIDGE], check=False, capture_output=True)


if __name__ == "__main__":  # make cluster-chaos-clean
    remove_all()
    print(f"removed every {PREFIX}* namespace and the bridge {BRIDGE}")
