"""Shared pieces of the server's capacity benchmarks: the thesis's parameters and their scaling, emulated
stores, a toast-server process, and toast-loadgen runs.

Scaling (labelled in every report): the disk model N = D*t_b*r_d / (t_a*r_d + r_c*t_b) is unchanged when r_c
and r_d are divided by the same factor (fewer bytes to move, same N) and when t_a and t_b are multiplied by the
same factor (shorter runs, same N). The benchmarks keep the thesis's ratios and shrink both.
"""

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

# The RDA paper's array (seed 000 §4; thesis ch. 4): 8 SATA disks, t_a 17 ms, r_d 525 Mbps, DVD streams of
# 6 Mbps read in 5 s time slices.
PAPER = {"disks": 8, "t_a": 0.017, "r_d": 525e6, "r_c": 6e6, "t_b": 5.0}


@dataclass
class Scale:
    time: float = 0.2    # t_a and t_b are multiplied by this
    bytes: float = 64.0  # r_c and r_d are divided by this

    def label(self):
        return f"time x{self.time:g}, bytes /{self.bytes:g}"


def model_streams(disks, t_a, r_d, r_c, t_b, stripe=1):
    """The thesis's N (seed 002 §3.1)."""
    return disks * t_b * r_d / (t_a * stripe * r_d + r_c * t_b)


def snapshot_binaries(build_dir, work_dir, names=("toast-server", "toast-loadgen")):
    """Copies the binaries a run uses, so rebuilding during a long run cannot mix versions. Returns paths."""
    os.makedirs(os.path.join(work_dir, "bin"), exist_ok=True)
    out = []
    for name in names:
        src = os.path.join(build_dir, "server", name)
        if not os.access(src, os.X_OK):
            sys.exit(f"{name} not found in {build_dir}/server; build first (cmake --build {build_dir})")
        dst = os.path.join(work_dir, "bin", name)
        shutil.copy2(src, dst)
        out.append(dst)
    return out


def stop_on_sigterm():
    """SIGTERM and SIGHUP unwind like Ctrl-C, so servers started in `with Server(...)` are stopped."""
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(*args):
    print(*args, file=sys.stderr, flush=True)


@dataclass
class StoreSpec:
    disks: int
    t_a: float          # seconds, already scaled
    r_d: float          # bits/s, already scaled
    r_c: float          # bits/s, already scaled
    t_b: float          # seconds, already scaled
    policy: str = "naive"
    queue: str = ""     # disk queue order, when the server has the option
    full_seek: float = 0.0  # seconds; 0: no seek model
    extra: dict = field(default_factory=dict)  # more config fields
    faults: dict = field(default_factory=dict)  # disk index -> fault object (thesis §4.3 stutter model)
    # Admission control is on by default in the server; the capacity benchmarks measure the disks, so it is off
    # here unless `extra` sets "admission" or this says to keep the server's default.
    server_admission: bool = False

    def config(self, root, port):
        disks = []
        for d in range(self.disks):
            emulate = {"t_a": f"{self.t_a * 1e6:.3f}us", "r_d": int(round(self.r_d))}
            if self.full_seek > 0:
                emulate["full_seek"] = f"{self.full_seek * 1e6:.3f}us"
            disk = {"path": os.path.join(root, f"d{d}"), "emulate": emulate}
            if d in self.faults:
                disk["fault"] = self.faults[d]
            disks.append(disk)
        cfg = {"listen": f"127.0.0.1:{port}", "policy": self.policy, "time_slice": f"{self.t_b * 1e3:.3f}ms",
               "default_bitrate": int(round(self.r_c)), "disks": disks, "log_level": "warn",
               "max_connections": 8192}
        if self.queue:
            cfg["disk_order"] = self.queue
        if not self.server_admission:
            cfg["admission"] = {"enabled": False}
        cfg.update(self.extra)
        return cfg


class Store:
    """A directory of emulated disks with `count` titles of `rounds` time slices each."""

    def __init__(self, server_bin, root, spec, count, rounds, media_bytes=None):
        self.server_bin = server_bin
        self.root = root
        self.spec = spec
        self.count = count
        self.rounds = rounds
        self.config_path = os.path.join(root, "server.json")
        self.media_bytes = media_bytes

    def create(self):
        if os.path.exists(self.root):
            shutil.rmtree(self.root)
        os.makedirs(self.root)
        for d in range(self.spec.disks):
            os.makedirs(os.path.join(self.root, f"d{d}"))
        self.write_config(0)
        slice_bytes = int(self.spec.r_c * self.spec.t_b / 8)
        size = self.media_bytes or slice_bytes * self.rounds
        media = os.path.join(self.root, "media.bin")
        with open(media, "wb") as f:
            f.write(os.urandom(size))
        started = time.time()
        for i in range(self.count):
            self.ingest(f"t{i:04d}", media)
        log(f"  ingested {self.count} titles of {size} bytes in {time.time() - started:.0f} s")

    def ingest(self, name, media, *extra):
        out = subprocess.run([self.server_bin, "--config", self.config_path, "ingest", name, media,
                              "--torrent", os.path.join(self.root, "last.torrent"), *extra],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"ingest {name} failed: {out.stderr.strip()}")
        return out.stdout

    def write_config(self, port):
        with open(self.config_path, "w") as f:
            json.dump(self.spec.config(self.root, port), f, indent=1)

    def manifests(self):
        mdir = os.path.join(self.root, "d0", "manifests")
        out = {}
        for name in sorted(os.listdir(mdir)):
            if name.endswith(".json"):
                with open(os.path.join(mdir, name)) as f:
                    m = json.load(f)
                out[m["title"]] = m
        return out

    def title_disks(self):
        """For each title, the disk its first replica of every block is on (naive: the title's disk)."""
        return {t: m["blocks"][0]["replicas"][0]["disk"] for t, m in self.manifests().items()}


class Server:
    """toast-server serving a Store; stopped (SIGTERM, then SIGKILL) on exit."""

    def __init__(self, store):
        self.store = store
        self.port = free_port()
        self.proc = None

    def __enter__(self):
        self.store.write_config(self.port)
        self.log = open(os.path.join(self.store.root, "server.log"), "w")
        self.proc = subprocess.Popen([self.store.server_bin, "--config", self.store.config_path, "serve"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 15
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"toast-server exited: see {self.log.name}")
                time.sleep(0.1)
        raise RuntimeError("toast-server did not start listening")

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def metrics(self):
        import urllib.request
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            return r.read().decode()


def loadgen(loadgen_bin, server, titles, bitrate, t_b, args, work_dir):
    """Runs toast-loadgen; returns (trial results, summary or None)."""
    titles_file = os.path.join(work_dir, "titles.txt")
    with open(titles_file, "w") as f:
        for t in titles:
            f.write((t if isinstance(t, str) else f"{t[0]} {t[1]}") + "\n")
    cmd = [loadgen_bin, "--server", f"127.0.0.1:{server.port}", "--titles-file", titles_file,
           "--bitrate", str(int(round(bitrate))), "--time-slice", f"{t_b * 1e3:.3f}ms", *args]
    out = subprocess.run(cmd, capture_output=True, text=True)
    for line in out.stderr.splitlines():
        log("    " + line)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"toast-loadgen failed ({out.returncode}): {out.stderr.strip()}")
    trials, summary = [], None
    for line in out.stdout.splitlines():
        obj = json.loads(line)
        if "max_viewers" in obj:
            summary = obj
        else:
            trials.append(obj)
    return trials, summary


def balanced_order(title_disks, disks):
    """Titles ordered round-robin over their disks, so the first N of them load every disk equally."""
    by_disk = [sorted(t for t, d in title_disks.items() if d == k) for k in range(disks)]
    out = []
    for i in range(max(len(b) for b in by_disk)):
        for b in by_disk:
            if i < len(b):
                out.append(b[i])
    per_disk = min(len(b) for b in by_disk)
    return out, per_disk * disks


def median(values):
    return statistics.median(values) if values else float("nan")


def load_average():
    return os.getloadavg()[0]
