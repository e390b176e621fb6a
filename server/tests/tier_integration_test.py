#!/usr/bin/python3
"""A tier of three toast-server nodes on 127.0.0.1 (docs/server-storage.md "A tier of nodes"), end to end
with real programs:

  - every node answers every byte of the title (the blocks it does not hold relayed), and a stock BitTorrent
    client (aria2, using the torrent's url-list: every node a web seed) and a toast-client both get the
    title byte for byte;
  - a node killed while a toast-client streams costs it no stall and no byte (the other holder of each
    block answers);
  - with two trackers in the torrent's announce-list, a tracker killed mid-run does not stop a newcomer from
    finding its peer through the other one;
  - `verify` reads the other nodes' share and names a node that is down.

Every process is stopped at the end (also on failure); every wait is bounded. Usage:
  tier_integration_test.py --bin-dir BUILD
"""

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

BIN = None  # set by main()
TITLE_BYTES = 6 * 1024 * 1024 + 12345
BITRATE = 4_000_000  # 12.6 s of playback
PIECE = 64 * 1024
BLOCK = 256 * 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def last_record(path):
    try:
        with open(path) as f:
            lines = [line for line in f.read().splitlines() if line.strip()]
    except OSError:
        return None
    try:
        return json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:  # a line being written
        return json.loads(lines[-2]) if len(lines) > 1 else None


def title_bytes_sent(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("toast_http_bytes_sent_total{"))


class Procs:
    def __init__(self, logs):
        self.logs = logs
        self.all = []

    def start(self, name, argv):
        with open(os.path.join(self.logs, name + ".log"), "wb") as out:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        self.all.append(p)
        return p

    @staticmethod
    def kill(p, sig=signal.SIGKILL):
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                return
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)

    def stop_all(self):
        for p in reversed(self.all):
            self.kill(p, signal.SIGTERM)


class TierTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="toast-tier-")
        cls.procs = Procs(cls.dir)
        try:
            cls.build()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def build(cls):
        cls.media = os.path.join(cls.dir, "movie.bin")
        with open(cls.media, "wb") as f:
            f.write(os.urandom(TITLE_BYTES))
        with open(cls.media, "rb") as f:
            cls.data = f.read()
        cls.ports = [free_port() for _ in range(3)]
        cls.trackers = [free_port() for _ in range(2)]
        nodes = [{"id": f"n{i}", "url": f"http://127.0.0.1:{p}"} for i, p in enumerate(cls.ports)]
        cls.configs = []
        for i, port in enumerate(cls.ports):
            disks = [os.path.join(cls.dir, f"n{i}", f"d{d}") for d in range(2)]
            for d in disks:
                os.makedirs(d)
            cfg = {"listen": f"127.0.0.1:{port}", "disks": disks, "log_level": "warn",
                   "tier": {"self": f"n{i}", "nodes": nodes, "relay_timeout": "1s", "status_interval": "500ms"}}
            path = os.path.join(cls.dir, f"n{i}.json")
            with open(path, "w") as f:
                json.dump(cfg, f)
            cls.configs.append(path)
        cls.torrent = os.path.join(cls.dir, "movie.torrent")
        for i, path in enumerate(cls.configs):
            out = subprocess.run([BIN["server"], "--config", path, "ingest", "movie", cls.media,
                                  "--torrent", cls.torrent + f".{i}", "--bitrate", str(BITRATE),
                                  "--piece-size", str(PIECE), "--block-size", str(BLOCK),
                                  "--announce", f"http://127.0.0.1:{cls.trackers[0]}/announce",
                                  "--announce", f"http://127.0.0.1:{cls.trackers[1]}/announce"],
                                 capture_output=True, text=True, timeout=120)
            assert out.returncode == 0, out.stderr
        torrents = []
        for i in range(3):
            with open(cls.torrent + f".{i}", "rb") as f:
                torrents.append(f.read())
        assert torrents[0] == torrents[1] == torrents[2], "the nodes wrote different torrents"
        shutil.copy(cls.torrent + ".0", cls.torrent)
        cls.nodes = [None] * 3
        for i in range(3):
            cls.start_node(i)
        cls.tracker_procs = [None, None]
        tracker_cfg = os.path.join(cls.dir, "tracker.json")
        with open(tracker_cfg, "w") as f:
            json.dump({"rate_limit": {"exempt": ["127.0.0.0/8"]}, "interval": "5s", "min_interval": "1s"}, f)
        for t in range(2):
            cls.start_tracker(t)

    @classmethod
    def start_node(cls, i):
        cls.nodes[i] = cls.procs.start(f"node{i}-{time.monotonic_ns()}",
                                       [BIN["server"], "--config", cls.configs[i], "serve"])
        assert wait_port(cls.ports[i]), f"node {i} did not start"

    @classmethod
    def start_tracker(cls, t):
        cls.tracker_procs[t] = cls.procs.start(f"tracker{t}-{time.monotonic_ns()}",
                                               [BIN["tracker"], "--listen", f"127.0.0.1:{cls.trackers[t]}",
                                                "--config", os.path.join(cls.dir, "tracker.json")])
        assert wait_port(cls.trackers[t]), f"tracker {t} did not start"

    @classmethod
    def tearDownClass(cls):
        cls.procs.stop_all()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def client(self, name, extra=(), save=None):
        save = save or os.path.join(self.dir, name)
        os.makedirs(save, exist_ok=True)
        stats = os.path.join(self.dir, name + ".jsonl")
        p = self.procs.start(name, [BIN["client"], "stream", self.torrent, "--save-dir", save,
                                    "--listen", f"127.0.0.1:{free_port()}", "--stats", stats,
                                    "--log-level", "warn", *extra])
        return p, save, stats

    def saved(self, save):
        with open(os.path.join(save, "movie"), "rb") as f:
            return f.read()

    # ---------------------------------------------------------------------------------------------------------
    def test_1_every_node_serves_every_byte(self):
        for port in self.ports:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/titles/movie", timeout=10) as r:
                self.assertEqual(r.read(), self.data)
            req = urllib.request.Request(f"http://127.0.0.1:{port}/titles/movie",
                                         headers={"Range": f"bytes={BLOCK - 100}-{3 * BLOCK + 99}"})
            with urllib.request.urlopen(req, timeout=10) as r:
                self.assertEqual(r.status, 206)
                self.assertEqual(r.read(), self.data[BLOCK - 100:3 * BLOCK + 100])
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ports[1]}/catalog", timeout=10) as r:
            entry = json.load(r)["titles"][0]
        self.assertEqual(entry["urls"], [f"http://127.0.0.1:{p}/titles/movie" for p in self.ports])

    def test_2_a_stock_client_gets_the_title_from_the_web_seeds(self):
        if not shutil.which("aria2c"):
            self.skipTest("aria2c not installed (scripts/install-deps.sh installs it)")
        out = os.path.join(self.dir, "aria2")
        run = subprocess.run(["aria2c", "--seed-time=0", "--enable-dht=false", "--bt-enable-lpd=false",
                              "--enable-peer-exchange=false", "--follow-torrent=mem", "--summary-interval=0",
                              "--console-log-level=warn", "--bt-stop-timeout=60", "-d", out, self.torrent],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-2000:])
        with open(os.path.join(out, "movie"), "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), hashlib.sha256(self.data).hexdigest())

    def test_3_a_toast_client_streams_from_the_tier(self):
        p, save, stats = self.client("client-plain")
        self.assertEqual(p.wait(90), 0)
        summary = last_record(stats)
        self.assertEqual(summary["event"], "summary")
        self.assertEqual(summary["stalls"], 0)
        self.assertEqual(self.saved(save), self.data)

    def test_4_a_node_killed_mid_stream_costs_no_stall(self):
        p, save, stats = self.client("client-kill")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            rec = last_record(stats)
            if rec and rec["playhead"] >= TITLE_BYTES // 4:
                break
            time.sleep(0.1)
        # The node was one the client was asking: it had sent title bytes before it died.
        self.assertGreater(title_bytes_sent(self.ports[1]), 0)
        self.procs.kill(self.nodes[1])
        try:
            self.assertEqual(p.wait(90), 0)
            summary = last_record(stats)
            self.assertEqual(summary["stalls"], 0, summary)
            self.assertEqual(self.saved(save), self.data)
        finally:
            self.start_node(1)

    def test_5_a_killed_tracker_does_not_stop_newcomers(self):
        # A seed holding the whole title, announced to both trackers.
        seed_dir = os.path.join(self.dir, "seed")
        os.makedirs(seed_dir)
        os.link(self.media, os.path.join(seed_dir, "movie"))
        seed, _, _ = self.client("seed", ["--behavior", "seed"], save=seed_dir)
        time.sleep(3)  # its first announce to both
        self.procs.kill(self.tracker_procs[0])
        started = time.monotonic()
        p, save, stats = self.client("newcomer")
        first_peer = None
        while p.poll() is None and time.monotonic() - started < 60:
            rec = last_record(stats)
            if first_peer is None and rec and rec["peers"] > 0:
                first_peer = time.monotonic() - started
            time.sleep(0.05)
        self.assertEqual(p.wait(90), 0)
        self.assertIsNotNone(first_peer, "the newcomer never had a peer")
        print(f"newcomer's first peer {first_peer:.2f} s after it started, tracker 0 down", file=sys.stderr)
        self.assertLess(first_peer, 10.0)
        summary = last_record(stats)
        self.assertGreater(summary["bytes_from_peers"], 0)
        self.assertEqual(self.saved(save), self.data)
        self.procs.kill(seed, signal.SIGTERM)
        self.start_tracker(0)

    def test_6_verify_reads_the_other_nodes(self):
        ok = subprocess.run([BIN["server"], "--config", self.configs[0], "verify"], capture_output=True, text=True,
                            timeout=120)
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        self.assertIn("on 2 other nodes", ok.stdout)
        self.procs.kill(self.nodes[2])
        try:
            bad = subprocess.run([BIN["server"], "--config", self.configs[0], "verify"], capture_output=True,
                                 text=True, timeout=120)
            self.assertEqual(bad.returncode, 1, bad.stdout)
            self.assertIn(f"on node n2 (http://127.0.0.1:{self.ports[2]})", bad.stdout)
        finally:
            self.start_node(2)


def main():
    global BIN
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    args, rest = ap.parse_known_args()
    b = os.path.abspath(args.bin_dir)
    BIN = {"server": f"{b}/server/toast-server", "tracker": f"{b}/tracker/toast-tracker",
           "client": f"{b}/client/toast-client"}
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
