"""A small network of namespaces for the real-network checks: hosts on a switch (a bridge inside a namespace
of its own, so nothing touches the root namespace), and home routers that masquerade a LAN behind their WAN
address with nftables and may forward a port to a box behind them. Every namespace this creates carries the
lab's tag and is deleted by teardown(), which also runs when setting up fails half way.

    lab = Lab("nl")
    lab.switch("wan", "10.216.0.0/24")
    op = lab.host("op", "wan", "10.216.0.2")
    router = lab.router("r1", "wan", "10.216.0.11", lan="192.168.1.0/24")
    home = lab.host_behind("home1", router, "192.168.1.2")
    lab.forward(router, 6881, "192.168.1.2")
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import subprocess
from dataclasses import dataclass


class LabError(RuntimeError):
    pass


def _run(argv: list[str], check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    if check and r.returncode != 0:
        raise LabError(f"{' '.join(argv)}: {(r.stderr or r.stdout).strip()}")
    return r


def why_not_available() -> str:
    """"" when this machine can build a lab (root, network namespaces, nftables), otherwise why not."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    probe = f"nlprobe{secrets.token_hex(2)}"
    r = _run(["ip", "netns", "add", probe], check=False)
    try:
        if r.returncode != 0:
            return "cannot create a network namespace here: " + r.stderr.strip()
        nft = _run(["ip", "netns", "exec", probe, "nft", "add", "table", "ip", "probe"], check=False)
        if nft.returncode != 0:
            return "nftables is missing or refused (scripts/install-deps.sh installs nftables): " + \
                (nft.stderr or nft.stdout).strip()
    except FileNotFoundError as e:
        return f"missing tool: {e.filename}"
    finally:
        _run(["ip", "netns", "del", probe], check=False)
    return ""


@dataclass
class Router:
    ns: str
    wan_ip: str
    wan_if: str
    lan_ip: str
    lan_prefix: int


class Lab:
    def __init__(self, prefix: str = "nl"):
        self.tag = prefix + secrets.token_hex(2)  # short: link names have at most 15 characters
        self.namespaces: list[str] = []
        self.switches: dict[str, tuple[str, int]] = {}  # name -> (namespace, prefix length)
        self._links = 0

    # -- building blocks --
    def _ns(self, name: str) -> str:
        ns = f"{self.tag}{name}"
        _run(["ip", "netns", "add", ns])
        self.namespaces.append(ns)
        _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        return ns

    def _veth(self, a_ns: str, b_ns: str) -> tuple[str, str]:
        self._links += 1
        a, b = f"{self.tag}a{self._links}", f"{self.tag}b{self._links}"
        _run(["ip", "link", "add", a, "netns", a_ns, "type", "veth", "peer", "name", b, "netns", b_ns])
        return a, b

    def exec(self, ns: str, argv: list[str]) -> list[str]:
        """`argv` to run inside `ns`."""
        return ["ip", "netns", "exec", ns, *argv]

    # -- topology --
    def switch(self, name: str, cidr: str) -> None:
        ns = self._ns("sw" + name)
        _run(["ip", "-n", ns, "link", "add", "br0", "type", "bridge"])
        _run(["ip", "-n", ns, "link", "set", "br0", "up"])
        self.switches[name] = (ns, ipaddress.ip_network(cidr).prefixlen)

    def host(self, name: str, switch: str, ip: str) -> str:
        """A namespace with one interface, `ip`, on `switch`; returns the namespace."""
        sw_ns, plen = self.switches[switch]
        ns = self._ns(name)
        self._plug(ns, sw_ns, ip, plen)
        return ns

    def _plug(self, ns: str, sw_ns: str, ip: str, plen: int) -> str:
        inside, port = self._veth(ns, sw_ns)
        _run(["ip", "-n", sw_ns, "link", "set", port, "master", "br0", "up"])
        _run(["ip", "-n", ns, "addr", "add", f"{ip}/{plen}", "dev", inside])
        _run(["ip", "-n", ns, "link", "set", inside, "up"])
        return inside

    def router(self, name: str, switch: str, wan_ip: str, lan: str) -> Router:
        """A home router: WAN `wan_ip` on `switch`, the first address of `lan` on its LAN side, forwarding and
        masquerading whatever leaves the LAN through its WAN address (nftables)."""
        sw_ns, plen = self.switches[switch]
        ns = self._ns(name)
        wan_if = self._plug(ns, sw_ns, wan_ip, plen)
        net = ipaddress.ip_network(lan)
        r = Router(ns, wan_ip, wan_if, str(next(net.hosts())), net.prefixlen)
        _run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1"])
        self.nft(r, "add table ip nat")
        self.nft(r, "add chain ip nat post { type nat hook postrouting priority srcnat ; }")
        self.nft(r, "add chain ip nat pre { type nat hook prerouting priority dstnat ; }")
        self.nft(r, f"add rule ip nat post oifname {wan_if} masquerade")
        return r

    def host_behind(self, name: str, router: Router, ip: str) -> str:
        """A box on `router`'s LAN at `ip`, its default route through the router."""
        ns = self._ns(name)
        inside, lan_if = self._veth(ns, router.ns)
        _run(["ip", "-n", router.ns, "addr", "add", f"{router.lan_ip}/{router.lan_prefix}", "dev", lan_if])
        _run(["ip", "-n", router.ns, "link", "set", lan_if, "up"])
        _run(["ip", "-n", ns, "addr", "add", f"{ip}/{router.lan_prefix}", "dev", inside])
        _run(["ip", "-n", ns, "link", "set", inside, "up"])
        _run(["ip", "-n", ns, "route", "add", "default", "via", router.lan_ip])
        return ns

    def nft(self, router: Router, rule: str) -> None:
        _run(["ip", "netns", "exec", router.ns, "nft", *rule.split()])

    def forward(self, router: Router, port: int, to_ip: str) -> None:
        """Port forwarding: TCP to the router's WAN address and `port` goes to `to_ip`, same port."""
        self.nft(router, f"add rule ip nat pre ip daddr {router.wan_ip} tcp dport {port} dnat to {to_ip}:{port}")

    def teardown(self) -> None:
        for ns in reversed(self.namespaces):
            _run(["ip", "netns", "del", ns], check=False)  # its links go with it
        self.namespaces = []

    def __enter__(self) -> "Lab":
        return self

    def __exit__(self, *exc) -> None:
        self.teardown()


def leftovers(prefix: str) -> list[str]:
    """Namespaces whose names start with `prefix` (what a lab that did not tear down would leave)."""
    names = _run(["ip", "netns", "list"], check=False).stdout.split()
    return [n for n in names if n.startswith(prefix)]
