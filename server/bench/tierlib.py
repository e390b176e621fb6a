"""A tier of toast-server nodes for the benchmarks (docs/server-storage.md "A tier of nodes"): K nodes on
127.0.0.1, each with its own emulated disks, every title ingested on every node (each writes its share), all
started and stopped together. Built on benchlib's StoreSpec (one node's disks) and its Server/loadgen
conventions."""

import json
import os
import shutil
import signal
import socket
import subprocess
import time

import benchlib
from benchlib import log


class TierStore:
    """K nodes' disks and configs under `root`, with `count` titles of `rounds` time slices each."""

    def __init__(self, server_bin, root, spec, nodes, count, rounds, placement="block", replicas=2):
        self.server_bin = server_bin
        self.root = root
        self.spec = spec  # one node's disks (benchlib.StoreSpec); its extra config goes to every node
        self.nodes = nodes
        self.count = count
        self.rounds = rounds
        self.placement = placement
        self.replicas = min(replicas, nodes)
        self.ports = [benchlib.free_port() for _ in range(nodes)]

    def node_dir(self, n):
        return os.path.join(self.root, f"n{n}")

    def config_path(self, n):
        return os.path.join(self.node_dir(n), "server.json")

    def tier(self, n):
        return {"self": f"n{n}", "replicas": self.replicas, "placement": self.placement,
                "nodes": [{"id": f"n{i}", "url": f"http://127.0.0.1:{p}"} for i, p in enumerate(self.ports)]}

    def write_configs(self):
        for n in range(self.nodes):
            cfg = self.spec.config(self.node_dir(n), self.ports[n])
            cfg.pop("public_url", None)
            cfg["tier"] = self.tier(n)
            with open(self.config_path(n), "w") as f:
                json.dump(cfg, f, indent=1)

    def create(self, media_bytes=None, block_size=None):
        if os.path.exists(self.root):
            shutil.rmtree(self.root)
        for n in range(self.nodes):
            for d in range(self.spec.disks):
                os.makedirs(os.path.join(self.node_dir(n), f"d{d}"))
        self.write_configs()
        slice_bytes = int(self.spec.r_c * self.spec.t_b / 8)
        size = media_bytes or slice_bytes * self.rounds
        media = os.path.join(self.root, "media.bin")
        with open(media, "wb") as f:
            f.write(os.urandom(size))
        extra = ["--block-size", str(block_size), "--piece-size", str(block_size)] if block_size else []
        started = time.time()
        for i in range(self.count):
            for n in range(self.nodes):
                out = subprocess.run([self.server_bin, "--config", self.config_path(n), "ingest", f"t{i:04d}", media,
                                      *extra], capture_output=True, text=True)
                if out.returncode != 0:
                    raise RuntimeError(f"ingest t{i:04d} on node {n} failed: {out.stderr.strip()}")
        log(f"  ingested {self.count} titles of {size} bytes on {self.nodes} nodes in {time.time() - started:.0f} s")


class Tier:
    """Every node of a TierStore serving; stopped (SIGTERM, then SIGKILL) on exit. Quacks like benchlib.Server
    for benchlib.loadgen (its first node), and loadgen_servers() names them all."""

    def __init__(self, store):
        self.store = store
        self.procs = []
        self.port = store.ports[0]

    def __enter__(self):
        self.store.write_configs()
        self.logs = []
        for n in range(self.store.nodes):
            log_file = open(os.path.join(self.store.node_dir(n), "server.log"), "w")
            self.logs.append(log_file)
            self.procs.append(subprocess.Popen([self.store.server_bin, "--config", self.store.config_path(n),
                                                "serve"], stdout=log_file, stderr=subprocess.STDOUT))
        deadline = time.time() + 20
        for n, port in enumerate(self.store.ports):
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                        break
                except OSError:
                    if self.procs[n].poll() is not None or time.time() > deadline:
                        self.__exit__()
                        raise RuntimeError(f"node {n} did not start: see {self.logs[n].name}")
                    time.sleep(0.1)
        time.sleep(2 * 1.0)  # two status polls: every node knows the others' room
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in self.logs:
            f.close()

    def cpu_seconds(self):
        """Each node's CPU time so far (user + system), in seconds."""
        return [process_cpu_seconds(p.pid) for p in self.procs]

    def loadgen_servers(self):
        return [arg for port in self.store.ports[1:] for arg in ("--server", f"127.0.0.1:{port}")]


def process_cpu_seconds(pid):
    """A process's CPU time (user + system) in seconds; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class MachineBusy:
    """The machine's busy share (all cores, every process) between start() and share()."""

    def __init__(self):
        self.start()

    @staticmethod
    def _sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]

    def start(self):
        self.t0 = self._sample()

    def share(self):
        total, idle = self._sample()
        dt = total - self.t0[0]
        return 1 - (idle - self.t0[1]) / dt if dt else 0.0
