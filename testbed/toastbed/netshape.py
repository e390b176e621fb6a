"""Network shaping for a run: each client in its own network namespace, joined to the "server host" (the root
namespace) by a veth pair on one bridge; `tbf` limits the bandwidth towards each client, `netem` adds delay
when the kernel has it. Client upload limits themselves come from the client, as in the thesis.

Addresses are in 10.213.0.0/16 (or another /16 a caller names) and exist only inside namespaces and the bridge
this module creates and deletes.
"""

from __future__ import annotations

import re
import secrets
import subprocess

SUBNET_PREFIX = "10.213"
HOST_IP = f"{SUBNET_PREFIX}.0.1"


class ShapingError(RuntimeError):
    pass


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    if check and r.returncode != 0:
        raise ShapingError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r


def _tc(*args: str, netns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    argv = (["ip", "netns", "exec", netns] if netns else []) + ["tc", *args]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    if check and r.returncode != 0:
        raise ShapingError(f"tc {' '.join(args)}: {r.stderr.strip()}")
    return r


def has_netem() -> bool:
    """True if the kernel accepts a netem qdisc (tried on the loopback of a throw-away namespace)."""
    ns = "toastbed-probe-" + secrets.token_hex(3)
    try:
        if _ip("netns", "add", ns, check=False).returncode != 0:
            return False
        return _tc("qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms", netns=ns, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        _ip("netns", "del", ns, check=False)


def client_ip(index: int, prefix: str = SUBNET_PREFIX) -> str:
    n = index + 2
    return f"{prefix}.{n // 256}.{n % 256}"


class Network:
    """The bridge and one namespace per client; teardown() removes everything it created."""

    def __init__(self, clients: int, download_limit_bps: int = 0, delay_ms: float = 0.0,
                 prefix: str = SUBNET_PREFIX, names: str = "tb"):
        """`prefix` ("10.213"): the /16 the bridge (PREFIX.0.1) and the clients take their addresses from;
        `names` starts every namespace and link name (two letters: link names have at most 15)."""
        self.prefix = prefix
        self.host_ip = f"{prefix}.0.1"
        self.tag = names + secrets.token_hex(2)
        self.bridge = f"{names}br{self.tag[len(names):]}"
        self.clients = clients
        self.download_limit_bps = download_limit_bps
        self.delay_ms = delay_ms
        self.namespaces: list[str] = []
        self.created_bridge = False

    def namespace(self, index: int) -> str:
        return f"{self.tag}c{index}"

    def setup(self) -> None:
        # Two runs with namespaces would put the same address on two bridges, and their routes would fight.
        if _ip("-o", "addr", "show", "to", self.host_ip, check=False).stdout.strip():
            raise ShapingError(f"{self.host_ip} is already in use: another namespaced testbed run is going on")
        try:
            _ip("link", "add", self.bridge, "type", "bridge")
            self.created_bridge = True
            _ip("addr", "add", f"{self.host_ip}/16", "dev", self.bridge)
            _ip("link", "set", self.bridge, "up")
            for i in range(self.clients):
                self._add_client(i)
        except (ShapingError, OSError, subprocess.SubprocessError):
            self.teardown()
            raise

    def _add_client(self, i: int) -> None:
        ns = self.namespace(i)
        host_end, ns_end = f"{self.tag}h{i}", f"{self.tag}n{i}"
        _ip("netns", "add", ns)
        self.namespaces.append(ns)
        _ip("link", "add", host_end, "type", "veth", "peer", "name", ns_end)
        _ip("link", "set", ns_end, "netns", ns)
        _ip("link", "set", host_end, "master", self.bridge)
        _ip("link", "set", host_end, "up")
        _ip("-n", ns, "addr", "add", f"{client_ip(i, self.prefix)}/16", "dev", ns_end)
        _ip("-n", ns, "link", "set", ns_end, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        if self.download_limit_bps:
            # Traffic towards the client leaves the bridge through the host end of its veth.
            _tc("qdisc", "add", "dev", host_end, "root", "tbf", "rate", f"{self.download_limit_bps}bit",
                "burst", "32kb", "latency", "50ms")
        if self.delay_ms > 0:
            _tc("qdisc", "add", "dev", ns_end, "root", "netem", "delay", f"{self.delay_ms}ms", netns=ns)

    def blackhole(self, index: int, on: bool) -> None:
        """Drops every packet to and from client `index` (a zero-length pfifo on both ends of its veth: the
        packets are lost as on a dead link, the sockets see no error), or lets them through again."""
        host_end, ns_end, ns = f"{self.tag}h{index}", f"{self.tag}n{index}", self.namespace(index)
        if on:
            _tc("qdisc", "replace", "dev", host_end, "root", "pfifo", "limit", "0")
            _tc("qdisc", "replace", "dev", ns_end, "root", "pfifo", "limit", "0", netns=ns)
            return
        _tc("qdisc", "del", "dev", ns_end, "root", netns=ns)
        _tc("qdisc", "del", "dev", host_end, "root")
        if self.download_limit_bps:
            _tc("qdisc", "add", "dev", host_end, "root", "tbf", "rate", f"{self.download_limit_bps}bit",
                "burst", "32kb", "latency", "50ms")

    def bytes_towards_clients(self) -> list[int]:
        """Bytes the host end of each client's veth has sent (what reached the client, through its tbf)."""
        out = []
        for i in range(len(self.namespaces)):
            r = _tc("-s", "qdisc", "show", "dev", f"{self.tag}h{i}", check=False)
            m = re.search(r"Sent (\d+) bytes", r.stdout)
            out.append(int(m.group(1)) if m else 0)
        return out

    def teardown(self) -> None:
        for ns in self.namespaces:
            _ip("netns", "del", ns, check=False)  # deletes the veth pair with it
        self.namespaces = []
        if self.created_bridge:
            _ip("link", "del", self.bridge, check=False)
            self.created_bridge = False
