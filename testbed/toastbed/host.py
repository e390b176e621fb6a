"""What a testbed run needs from the machine: free listening ports, its processes (each in its own process
group, all stopped together), the built executables, generated titles, and which options a binary knows."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

from . import resources


class RunError(RuntimeError):
    pass


_handed_out: set[int] = set()
_port_lock = threading.Lock()
_port_rng = random.Random()


def ephemeral_range(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> tuple[int, int]:
    """The range the kernel draws outgoing connections' source ports from (Linux's default if unreadable)."""
    try:
        low, high = (int(x) for x in Path(path).read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def listen_range(ephemeral: tuple[int, int]) -> tuple[int, int]:
    """Where the testbed's listening ports come from: below the ephemeral range, so that no outgoing
    connection on the machine (a run's own boxes open thousands) can take a port between the moment it is
    picked and the moment its process binds it. Above the range when too little room lies below it."""
    low, high = ephemeral
    if low - 1 - 10000 >= 4096:
        return 10000, low - 1
    if 65535 - (high + 1) >= 4096:
        return high + 1, 65535
    return 1024, 65535


def _bindable(port: int) -> bool:
    # A box listens on the port over TCP and uTP (UDP), a tracker over HTTP and UDP: both must be free.
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


def free_port() -> int:
    """A port nothing listens on, outside the kernel's ephemeral range, and never the same one twice in this
    process (run-all runs scenarios in parallel, and a port handed to a client that has not bound it yet
    looks free)."""
    low, high = listen_range(ephemeral_range())
    with _port_lock:
        for _ in range(1000):
            port = _port_rng.randint(low, high)
            if port not in _handed_out and _bindable(port):
                _handed_out.add(port)
                return port
    raise RunError(f"no free port found in {low}-{high}")


def wait_port(host: str, port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def http_get(url: str, timeout: float = 5.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


MEASURING_NICE = -10


def raise_this_thread(niceness: int = MEASURING_NICE) -> str | None:
    """Runs the calling thread ahead of the run's processes (on Linux each thread has its own nice value).
    The threads that measure (the players that stand for the TV sets, the control calls that stand for the
    box's app, the samplers) are then not the ones that fall behind on a saturated machine: what they report
    is the boxes' delivery, not the testbed's own lag. They never start processes, which would inherit it.
    Returns why it could not (raising a priority needs root or CAP_SYS_NICE), else None."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
    except OSError as e:
        return f"the measuring threads run at the run's own priority ({e.strerror} raising it to nice {niceness})"
    return None


class Processes:
    """Every process the run starts, each in its own process group, all stopped by stop_all()."""

    def __init__(self, log_dir: Path, sampler: resources.Sampler | None = None):
        self.log_dir = log_dir
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.sampler = sampler

    def start(self, name: str, argv: list[str], netns: str | None = None, role: str = "") -> subprocess.Popen:
        """`role` ("client", "server", ...) has the sampler follow the process's CPU and memory.
        `ip netns exec` execs the command in place, so the pid is the command's own."""
        if netns:
            argv = ["ip", "netns", "exec", netns] + argv
        out = open(self.log_dir / f"{name}.log", "wb")
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        self.procs.append((name, p))
        if role and self.sampler is not None:
            self.sampler.track(name, role, p.pid)
        return p

    def stop(self, p: subprocess.Popen, grace: float = 10.0) -> None:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                return
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)

    def stop_all(self) -> None:
        for _, p in reversed(self.procs):
            self.stop(p)


def binaries(bin_dir: Path) -> dict[str, Path]:
    found = {
        "server": bin_dir / "server" / "toast-server",
        "tracker": bin_dir / "tracker" / "toast-tracker",
        "client": bin_dir / "client" / "toast-client",
    }
    missing = [str(p) for p in found.values() if not p.exists()]
    if missing:
        raise RunError("missing executables (build first: cmake --build build): " + ", ".join(missing))
    return found


def make_title(path: Path, size: int, seed: int) -> None:
    rng = random.Random(seed)
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 1 << 20)
            f.write(rng.randbytes(n))
            left -= n


_help_cache: dict[tuple[str, ...], str] = {}


def help_text(binary: Path, *subcommand: str) -> str:
    """`binary [subcommand] --help`'s output, asked once per binary: the launcher drives builds from before and
    after an option was added. "" when the binary cannot run."""
    key = (str(binary), *subcommand)
    if key not in _help_cache:
        try:
            _help_cache[key] = subprocess.run([str(binary), *subcommand, "--help"], capture_output=True, text=True,
                                              timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            _help_cache[key] = ""
    return _help_cache[key]


def supports_option(binary: Path, option: str) -> bool:
    """Whether `binary --help` lists `option`."""
    return option in help_text(binary)
