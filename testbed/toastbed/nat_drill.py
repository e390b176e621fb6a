"""testbed/nat-drill --bin-dir BUILD [--out DIR]: set-top boxes behind home routers, as libtorrent 2.0.8 lets
them reach each other.

The operator's host (VoD server and tracker) and an "outside" box sit on a switch standing for the Internet;
two home routers (network namespaces masquerading their LAN with nftables) each have one box behind them.
Every box runs as the README shows (`toast-client stream ... --listen 6881`). In each case one box holds the
title (a seed) and another streams it; the case says whether the viewer got the title from the seed, i.e.
whether a peer connection could be made. The tracker records a NATed box at its router's WAN address with
the box's own listen port, so a connection to it works only where the router forwards that port. Toast's
boxes speak TCP only (no uTP), so libtorrent's uTP hole punching (ut_holepunch) does not apply.

Each case starts a fresh tracker and the viewer only once the seed has finished announcing (a box the tracker
names nobody to asks again five times, about two seconds apart: ClientTuning::empty_announce_retries), so the seed
learns of the viewer only at its next regular announce, minutes later: within the case only the viewer can
open the connection, which is what decides whether a newcomer gets peers at once. (A NATed box that learns
of an outside one does connect out to it: the first case shows the connection going that way.)

Needs root, network namespaces and nftables (exit 77 without them). Exit 0 when every case came out as
expected, 1 otherwise. Every namespace is deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import host, netlab, run

SKIP = 77
BITRATE = 2_000_000
TITLE = 8 * BITRATE // 8
OP, OUT = "10.216.0.2", "10.216.0.3"
R1_WAN, R2_WAN = "10.216.0.11", "10.216.0.12"
HOME1, HOME2 = "192.168.1.2", "192.168.2.2"
PORT = 6881
# The seed's first announce and its retries while the tracker names nobody (5, about two seconds apart on
# this machine) are over.
SEED_SETTLE = 15.0

# (name, seed box, viewer box, forward the seed's port on its router, peers expected to carry the title)
CASES = [
    ("a NATed viewer, a seed outside", "out", "home1", False, True),
    ("a viewer outside, a NATed seed, no port forwarding", "home1", "out", False, False),
    ("two boxes behind two NATs, no port forwarding", "home1", "home2", False, False),
    ("a viewer outside, a NATed seed whose router forwards its port", "home1", "out", True, True),
    ("two boxes behind two NATs, the seed's port forwarded", "home1", "home2", True, True),
]


def summary(stats: Path) -> dict:
    lines = stats.read_text().strip().splitlines() if stats.exists() else []
    last = json.loads(lines[-1]) if lines else {}
    return last if last.get("event") == "summary" else {}


class Drill:
    def __init__(self, bins: dict, work: Path):
        self.bins, self.work = bins, work
        self.lab = netlab.Lab("nd")
        self.procs: list[subprocess.Popen] = []
        self.ns: dict[str, str] = {}
        self.routers: dict[str, netlab.Router] = {}
        self.forwarded: set[str] = set()

    def start(self, ns: str, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(self.work / f"{name}.log", "ab")
        p = subprocess.Popen(self.lab.exec(ns, argv), stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(p)
        return p

    @staticmethod
    def stop(p: subprocess.Popen) -> None:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)

    def setup(self) -> None:
        lab, w = self.lab, self.work
        lab.switch("wan", "10.216.0.0/24")
        self.ns["op"] = lab.host("op", "wan", OP)
        self.ns["out"] = lab.host("out", "wan", OUT)
        self.routers["home1"] = lab.router("r1", "wan", R1_WAN, "192.168.1.0/24")
        self.routers["home2"] = lab.router("r2", "wan", R2_WAN, "192.168.2.0/24")
        self.ns["home1"] = lab.host_behind("home1", self.routers["home1"], HOME1)
        self.ns["home2"] = lab.host_behind("home2", self.routers["home2"], HOME2)
        for d in ("d0", "d1", "d2", "d3"):
            (w / d).mkdir()
        host.make_title(w / "movie.bin", TITLE, 9)
        (w / "server.json").write_text(json.dumps({
            "listen": f"{OP}:8080", "disks": [str(w / f"d{i}") for i in range(4)], "policy": "rda",
            "public_url": f"http://{OP}:8080", "log_level": "warn"}))
        server = [str(self.bins["server"]), "--config", str(w / "server.json")]
        r = subprocess.run(server + ["ingest", "movie", str(w / "movie.bin"), "--bitrate", "2Mbps", "--announce",
                                     f"http://{OP}:6969/announce", "--torrent", str(w / "movie.torrent")],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise netlab.LabError("ingest failed: " + r.stderr)
        self.start(self.ns["op"], "server", server + ["serve"])

    def case(self, index: int, name: str, seed: str, viewer: str, forward: bool) -> dict:
        w = self.work
        if forward and seed not in self.forwarded:
            self.lab.forward(self.routers[seed], PORT, HOME1 if seed == "home1" else HOME2)
            self.forwarded.add(seed)
        # A fresh tracker: the seed announces before the viewer exists (see the module's docstring).
        tracker = self.start(self.ns["op"], f"tracker{index}", [str(self.bins["tracker"]), "--listen",
                                                                 "0.0.0.0:6969"])
        time.sleep(1.0)
        seed_dir = w / f"case{index}-seed"
        seed_dir.mkdir()
        (seed_dir / "movie").write_bytes((w / "movie.bin").read_bytes())
        client = [str(self.bins["client"]), "stream", str(w / "movie.torrent"), "--listen", str(PORT),
                  "--log-level", "warn"]
        s = self.start(self.ns[seed], f"case{index}-seed", client + [
            "--save-dir", str(seed_dir), "--stats", str(w / f"case{index}-seed.jsonl"), "--behavior", "seed"])
        time.sleep(SEED_SETTLE)
        stats = w / f"case{index}-viewer.jsonl"
        v = self.start(self.ns[viewer], f"case{index}-viewer", client + [
            "--save-dir", str(w / f"case{index}-viewer"), "--stats", str(stats)])
        try:
            rc = v.wait(60)
        except subprocess.TimeoutExpired:
            rc = None
            self.stop(v)
        self.stop(s)
        self.stop(tracker)
        sm = summary(stats)
        return {"case": name, "seed": seed, "viewer": viewer, "port_forwarded": forward, "exit": rc,
                "completed": bool(sm.get("completed")), "stalls": sm.get("stalls"),
                "bytes_from_peers": sm.get("bytes_from_peers", 0), "bytes_from_server": sm.get("bytes_from_server", 0)}

    def teardown(self) -> None:
        for p in reversed(self.procs):
            self.stop(p)
        self.lab.teardown()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="testbed/nat-drill", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", default=str(run.REPO / "build"), help="CMake build directory (default: build/)")
    ap.add_argument("--out", help="write report.json here (default: only print the table)")
    args = ap.parse_args(argv)
    try:
        bins = host.binaries(Path(args.bin_dir))
    except host.RunError as e:
        print(f"testbed/nat-drill: {e}", file=sys.stderr)
        return 2
    why = netlab.why_not_available()
    if why:
        print("skipped: " + why)
        return SKIP
    results, problems = [], []
    with tempfile.TemporaryDirectory(prefix="toast-nat-") as tmp:
        drill = Drill(bins, Path(tmp))
        try:
            drill.setup()
            for i, (name, seed, viewer, forward, expect) in enumerate(CASES):
                r = drill.case(i, name, seed, viewer, forward)
                r["peers_expected"] = expect
                got = r["bytes_from_peers"] >= TITLE // 2
                r["as_expected"] = got == expect and r["exit"] == 0 and r["completed"] and r["stalls"] == 0
                if not r["as_expected"]:
                    problems.append(f"{name}: {r}")
                results.append(r)
        except netlab.LabError as e:
            problems.append(str(e))
        finally:
            drill.teardown()
        left = netlab.leftovers(drill.lab.tag)
        if left:
            problems.append(f"left behind: {left}")
    print("| case | viewer got the title from the seed | bytes from peers | bytes from the server | stalls |")
    print("|---|---|---|---|---|")
    for r in results:
        print(f"| {r['case']} | {'yes' if r['bytes_from_peers'] >= TITLE // 2 else 'no'} | {r['bytes_from_peers']} "
              f"| {r['bytes_from_server']} | {r['stalls']} |")
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "report.json").write_text(json.dumps(results, indent=2))
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print("nat-drill OK: every case came out as libtorrent allows")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
