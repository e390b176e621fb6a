"""testbed/drills --out DIR: fault drills on a live swarm (a benchmark, not a test).

Each drill runs its own small swarm (the testbed's launcher: tracker, VoD server with a 4-disk RDA store, viewers
in network namespaces on one bridge), injects one fault at --fault-at seconds for --fault-seconds, and measures:
  stalls         every viewer's stalls (count and seconds), from their stats files;
  bytes lost     bytes of the title missing or different in each viewer's copy at the end (checked by SHA-256
                 against the title, then byte by byte): must be 0;
  service back   from the fault's end to the first correct answer of the faulted service (a Range read of the
                 title from the VoD server, byte-checked, or an announce to the tracker);
  viewer back    from the fault's end to the affected viewers' first new bytes (all viewers still downloading
                 for server-side faults, the faulted viewer for viewer faults), or for the tracker's outage to
                 the first peer of the viewer that arrived during it; stats lines come once a second.
Writes DIR/drills.json and DIR/report.md, prints the table. Needs root (namespaces, tc, tmpfs). Exit status 0
when every viewer completed with 0 bytes lost in every drill, 1 otherwise, 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from . import host, netshape, report, run, scenario as scen
from .drill_checks import bytes_lost, latest_record, received, tail, torrent_info_hash, tracker_whole
from .drill_faults import (DRILLS, SERVER_DRILLS, TRACKER_DRILLS, VIEWER_DRILLS, DrillError, end_fault, manifest,
                           start_fault)
from .drill_report import table, write_report


# Small and short: 8 viewers 2 s apart, a 40 s title in 39 pieces, no seed beside the server (a seed would
# hide the server's faults), every viewer in its own namespace (the network drill needs its own link).
SCENARIO = {"name": "drills", "clients": 8, "arrival": "uniform", "arrival_interval": "2s", "behavior": "stream",
            "picker": "hybrid", "inorder_window": "10s", "upload_limit": "2Mbps", "title_seconds": "40s",
            "bitrate": "2Mbps", "piece_size": "256KiB", "seed": False, "random_seed": 1, "shaping": True}
PROBE_BYTES = 64 * 1024
# Not the testbed's 10.213/16 and "tb" names: a drill round takes a while, and the CI's shaping check (which
# looks for leftover "tb" namespaces) may run meanwhile.
SUBNET_PREFIX = "10.214"
# The tracker-kill-one drill's announce interval (the trackers' `interval`): short, so that the drill can watch
# for one whole interval after the restart, by which every running viewer must have announced to it again.
TRACKER_INTERVAL_S = 15


@dataclass
class Viewer:
    index: int
    cdir: Path
    argv: list[str]
    netns: str
    proc: subprocess.Popen | None = None
    stats_files: list[Path] = field(default_factory=list)
    exit_codes: list[int] = field(default_factory=list)

    @property
    def stats(self) -> Path:
        return self.stats_files[-1]


class Drill:
    """One swarm, one fault; run() returns the drill's row."""

    def __init__(self, name: str, s: scen.Scenario, bins: dict, work: Path, fault_at: float, fault_seconds: float,
                 progress=print):
        self.name, self.s, self.bins, self.fault_at, self.fault_seconds = name, s, bins, fault_at, fault_seconds
        if name == "block-rot":
            # Bit rot is not transient: the damage comes once the first viewer's first pieces were read (and
            # checked) from the block, and every later arrival takes its first pieces from the server.
            self.fault_at = 1.5
        if name in TRACKER_DRILLS:
            # The viewers already in the swarm keep their peers; the one arriving during the outage has none.
            self.fault_at = max(0.0, scen.arrival_times(s)[-1] - 1)
        self.nodes = 3 if name == "node-kill" else 1
        self.trackers = 2 if name == "tracker-kill-one" else 1
        self.progress = progress
        self.work = work
        self.notes: list[str] = []
        self.target = s.clients - 1  # the last viewer: still downloading when the fault comes
        self.pieces = -(-s.title_bytes // s.piece_size)
        self.rng = random.Random(s.random_seed)
        self.mounted: Path | None = None
        self.offline: list[int] = []
        self.filler: Path | None = None

    # -- probes ---------------------------------------------------------------------------------------------
    def probe_server(self, block: tuple[int, int] | None = None) -> bool:
        """A Range read of the title (inside `block` when given) that returns exactly the title's bytes."""
        lo, hi = block or (0, len(self.title_data))
        start = self.rng.randrange(lo, max(lo + 1, hi - PROBE_BYTES))
        end = min(start + PROBE_BYTES, hi) - 1
        req = urllib.request.Request(f"{self.stack.server_url}/titles/{self.stack.title}",
                                     headers={"Range": f"bytes={start}-{end}"})
        try:
            with urllib.request.urlopen(req, timeout=1.0) as r:
                body = r.read()
                return r.status == 206 and body == self.title_data[start:end + 1]
        except (OSError, urllib.error.URLError, ValueError):
            return False

    def probe_tracker(self) -> bool:
        """An announce the tracker answers with a peer list (not a failure)."""
        q = urllib.parse.urlencode({"info_hash": self.info_hash, "peer_id": b"-DR0001-drillprobe00", "port": 9,
                                    "uploaded": 0, "downloaded": 0, "left": 0, "compact": 1})
        try:
            with urllib.request.urlopen(f"http://{self.stack.host}:{self.stack.tracker_port}/announce?{q}",
                                        timeout=1.0) as r:
                body = r.read()
                return r.status == 200 and body.startswith(b"d") and b"failure reason" not in body
        except (OSError, urllib.error.URLError, ValueError):
            return False

    def tracker_whole(self) -> bool:
        """The first tracker's swarm holds every viewer still running."""
        try:
            stats = json.loads(host.http_get(f"http://{self.stack.host}:{self.stack.tracker_port}/stats"))
        except (OSError, ValueError):
            return False
        known = stats["totals"]["seeders"] + stats["totals"]["leechers"]
        running = sum(1 for v in self.viewers if v.proc.poll() is None)
        return running > 0 and known >= running

    def admin(self, disk: int, fault: dict) -> None:
        req = urllib.request.Request(f"http://127.0.0.1:{self.admin_port}/admin/disks/{disk}/fault",
                                     data=json.dumps(fault).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            if r.status != 200:
                raise DrillError(f"admin fault on disk {disk}: HTTP {r.status}")

    def metric(self, name: str) -> float:
        try:
            return report.prometheus_sum(host.http_get(f"http://127.0.0.1:{self.admin_port}/metrics"), name)
        except OSError:
            return float("nan")

    def restart(self, v: Viewer) -> None:
        stats = v.cdir / f"stats.{len(v.stats_files) + 1}.jsonl"
        argv = list(v.argv)
        argv[argv.index("--stats") + 1] = str(stats)
        v.stats_files.append(stats)
        v.proc = self.procs.start(f"client{v.index:03d}-run{len(v.stats_files)}", argv, netns=v.netns,
                                  role="client")

    # -- the run --------------------------------------------------------------------------------------------
    def run(self) -> dict:
        s, work = self.s, self.work
        if work.exists():
            shutil.rmtree(work)
        (work / "logs").mkdir(parents=True)
        self.procs = host.Processes(work / "logs")
        self.network = netshape.Network(s.clients, prefix=SUBNET_PREFIX, names="td")
        self.admin_port = host.free_port()
        # The tracker keeps its swarms in a state file, saved at its default interval, as an operator's would.
        tracker_config = {"state_file": str(work / "tracker.state")}
        if self.name == "tracker-kill-one":
            # /stats (what tracker_whole reads) answers only admin_allow: the host's address on the bridge.
            tracker_config.update(interval=TRACKER_INTERVAL_S, min_interval=min(5, TRACKER_INTERVAL_S),
                                  admin_allow=["127.0.0.0/8", "::1", self.network.host_ip])
        self.stack = run.Stack(s, self.bins, work, self.procs, self.network.host_ip,
                               {"admin_listen": f"127.0.0.1:{self.admin_port}"},
                               tracker_config, nodes=self.nodes, trackers=self.trackers)
        arrivals = scen.arrival_times(s)
        fault_end_at = self.fault_at + self.fault_seconds
        limit = max(arrivals[-1], fault_end_at) + s.title_seconds * 2 + 60
        self.viewers: list[Viewer] = []
        row = {"drill": self.name, "what": DRILLS[self.name]}
        t_fault_end = None
        fault_started = fault_ended = False
        service_back = viewer_back = None
        pending: dict[int, int] = {}  # affected viewer -> bytes received when the fault ended
        back: dict[int, float] = {}
        probes_in_fault = [0, 0]  # ok, tried
        last_probe = 0.0
        try:
            self.network.setup()
            self.stack.start()
            self.title_data = self.stack.media.read_bytes()
            self.info_hash = torrent_info_hash(self.stack.torrent)
            block_size = self.block_size()
            # The corruption drills read across the damaged 4 KiB (the middle of a block); the others read
            # anywhere in the title.
            size = len(self.title_data)
            damaged = {"block-corrupt": (size - 1) // block_size * block_size, "block-rot": 0}.get(self.name)
            self.probed_block = None
            if damaged is not None:
                middle = damaged + min(block_size, size - damaged) // 2
                self.probed_block = (middle - PROBE_BYTES // 2, middle + PROBE_BYTES // 2 + 4096)
            t0 = time.monotonic()
            last_progress = 0.0
            while True:
                now = time.monotonic() - t0
                for i, at in enumerate(arrivals):
                    if len(self.viewers) == i and now >= at:
                        self.start_viewer(i)
                if not fault_started and now >= self.fault_at:
                    fault_started = True
                    start_fault(self)
                    self.progress(f"[{self.name}] t={now:5.1f}s fault on")
                if fault_started and not fault_ended and self.name in SERVER_DRILLS and now - last_probe >= 0.5:
                    last_probe = now
                    probes_in_fault[1] += 1
                    probes_in_fault[0] += self.probe_server(self.probed_block)
                if fault_started and not fault_ended and now >= fault_end_at:
                    fault_ended = True
                    end_fault(self)
                    t_fault_end = time.monotonic()
                    self.progress(f"[{self.name}] t={now:5.1f}s fault off")
                    pending = {i: b for i, b in self.affected().items() if i not in back}
                if fault_ended:
                    since = time.monotonic() - t_fault_end
                    if service_back is None and since < 60:
                        if self.name in SERVER_DRILLS and self.probe_server(self.probed_block):
                            service_back = time.monotonic() - t_fault_end
                        elif self.name == "tracker-kill" and self.probe_tracker():
                            service_back = time.monotonic() - t_fault_end
                        elif self.name == "tracker-kill-one" and self.tracker_whole():
                            service_back = time.monotonic() - t_fault_end
                    for i, base in list(pending.items()):
                        if self.name == "tracker-kill-one":
                            break  # measured from its arrival, below
                        rec = latest_record(self.viewers[i].stats)
                        # The viewer that joined during the tracker's outage fetches from the server meanwhile:
                        # what it lacks is peers.
                        if ((rec or {}).get("peers", 0) > 0 if self.name in TRACKER_DRILLS
                                else received(rec) > base):
                            back[i] = time.monotonic() - t_fault_end
                            del pending[i]
                    if self.name == "client-enospc":
                        v = self.viewers[self.target]
                        if v.proc.poll() is not None and v.proc.returncode != 0 and len(v.stats_files) == 1:
                            v.exit_codes.append(v.proc.returncode)
                            self.notes.append(f"viewer {self.target} exited with status {v.proc.returncode} "
                                              f"({tail(work / 'logs' / f'client{self.target:03d}.log', 2)}); "
                                              "started again on the same save dir")
                            self.restart(v)
                            pending[self.target] = 0
                if self.name == "tracker-kill-one" and self.target not in back and len(self.viewers) > self.target:
                    # With the other tracker up, the viewer arriving during the outage finds peers at once.
                    if (latest_record(self.viewers[self.target].stats) or {}).get("peers", 0) > 0:
                        back[self.target] = now - arrivals[self.target]
                        pending.pop(self.target, None)
                running = sum(1 for v in self.viewers if v.proc.poll() is None)
                watching = (self.name == "tracker-kill-one" and service_back is None and fault_ended
                            and time.monotonic() - t_fault_end < TRACKER_INTERVAL_S + 2)
                if len(self.viewers) == s.clients and running == 0 and fault_ended and not watching:
                    break
                if now > limit:
                    self.notes.append(f"time limit of {limit:.0f} s reached with {running} viewers still running")
                    break
                if now - last_progress >= 10:
                    last_progress = now
                    self.progress(f"[{self.name}] t={now:5.0f}s viewers {len(self.viewers)}/{s.clients}, "
                                  f"running {running}")
                time.sleep(0.1)
        finally:
            for v in self.viewers:
                if v.proc is not None:
                    self.procs.stop(v.proc)
            checksum_failures = self.metric("toast_disk_checksum_failures_total")
            fallbacks = self.metric("toast_replica_fallbacks_total")
            self.procs.stop_all()
            self.network.teardown()
        if self.name in SERVER_DRILLS:
            self.notes.append(f"server probes during the fault: {probes_in_fault[0]}/{probes_in_fault[1]} correct")
        if self.name in SERVER_DRILLS or self.name == "baseline":
            self.notes.append(f"server checksum failures {checksum_failures:g}, replica fallbacks {fallbacks:g}")
        for i in pending:
            self.notes.append(f"viewer {i} received nothing after the fault ended")
        if back:
            viewer_back = max(back.values())
        if self.name == "tracker-kill-one":
            row["whole_within_interval"], note = tracker_whole(service_back, TRACKER_INTERVAL_S)
            self.notes.append(note)
        row.update(self.results())
        if self.name == "client-kill":
            row_notes_resume(self)
        row["service_back_s"] = None if service_back is None else round(service_back, 2)
        row["viewer_back_s"] = None if viewer_back is None else round(viewer_back, 2)
        row["affected"] = sorted(set(back) | set(pending))
        row["notes"] = self.notes
        return row

    def start_viewer(self, i: int) -> None:
        cdir = self.work / f"client{i:03d}"
        cdir.mkdir()
        if self.name == "client-enospc" and i == self.target:
            data = cdir / "data"
            data.mkdir()
            size = self.s.title_bytes + (1 << 20)
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(data)], check=True,
                           capture_output=True, timeout=20)
            self.mounted = data
        ip = netshape.client_ip(i, SUBNET_PREFIX)
        argv = run.client_argv("toast", self.s, self.stack, self.bins, cdir, i, ip)
        v = Viewer(i, cdir, argv, self.network.namespace(i), stats_files=[cdir / "stats.jsonl"])
        v.proc = self.procs.start(f"client{i:03d}", argv, netns=v.netns, role="client")
        self.viewers.append(v)

    def affected(self) -> dict[int, int]:
        """Viewers whose recovery counts, with the bytes each had received when the fault ended: the faulted
        viewer for viewer drills, the viewer that arrived during the tracker's outage, every viewer still
        downloading for the server's faults."""
        out = {}
        for v in self.viewers:
            rec = latest_record(v.stats)
            if self.name in VIEWER_DRILLS or self.name in TRACKER_DRILLS:
                if v.index == self.target:
                    out[v.index] = 0 if self.name == "client-kill" else received(rec)
            elif self.name != "baseline" and v.proc.poll() is None and (rec or {}).get("pieces_had", 0) < self.pieces:
                out[v.index] = received(rec)
        return out

    def block_size(self) -> int:
        return int(manifest(self)["block_size"])

    def results(self) -> dict:
        stalls = stall_s = 0.0
        completed = lost = 0
        per_viewer = []
        for v in self.viewers:
            st = sst = wasted = 0.0
            done = False
            startup = None
            for f in v.stats_files:
                summary, lines = report.read_stats(f)
                rec = summary or (lines[-1] if lines else {})
                st += rec.get("stalls", 0)
                sst += rec.get("stall_seconds", 0.0)
                wasted += rec.get("bytes_server_wasted", 0)
                startup = rec.get("startup_ms") if startup is None else startup
                done = bool(rec.get("completed", False)) and summary is not None
            copy_lost = bytes_lost(v.cdir / "data" / self.stack.title, self.title_data)
            stalls, stall_s, lost = stalls + st, stall_s + sst, lost + copy_lost
            completed += done
            exits = v.exit_codes + ([v.proc.returncode] if v.proc.returncode is not None else [])
            per_viewer.append({"viewer": v.index, "stalls": st, "stall_seconds": round(sst, 2),
                               "bytes_lost": copy_lost, "completed": done, "exit_codes": exits,
                               "server_wasted_bytes": int(wasted), "startup_ms": startup})
            if copy_lost:
                self.notes.append(f"viewer {v.index}: {copy_lost} bytes of its copy differ from the title")
        if self.mounted is not None:
            subprocess.run(["umount", str(self.mounted)], capture_output=True, timeout=20)
            self.mounted = None
        wasted = sum(p["server_wasted_bytes"] for p in per_viewer)
        startups = [p["startup_ms"] for p in per_viewer if p["startup_ms"] is not None]
        self.notes.append(f"viewers' wasted server bytes {wasted}, startup median "
                          + (f"{statistics.median(startups):.0f} ms" if startups else "-"))
        return {"viewers": len(self.viewers), "completed": completed, "stalls": int(stalls),
                "stall_seconds": round(stall_s, 2), "bytes_lost": lost, "per_viewer": per_viewer}

    def cleanup(self) -> None:
        if self.mounted is not None:
            subprocess.run(["umount", str(self.mounted)], capture_output=True, timeout=20)
        run.drop_data(self.work)


def row_notes_resume(d: Drill) -> None:
    """How much of its copy the restarted viewer kept: its first stats line after the restart."""
    v = d.viewers[d.target]
    before = (getattr(d, "before_kill", None) or {}).get("pieces_had", 0)
    _, lines = report.read_stats(v.stats)
    after = lines[0].get("pieces_had", 0) if lines else 0
    d.notes.append(f"viewer {d.target} had {before} pieces at the kill, {after} in its first stats line after "
                   "the restart")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="testbed/drills", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="output directory (required unless --dry-run)")
    ap.add_argument("--bin-dir", default=str(run.REPO / "build"), help="CMake build directory (default: build/)")
    ap.add_argument("--only", default="", help="comma-separated drills (default: all): " + ", ".join(DRILLS))
    ap.add_argument("--clients", type=int, default=SCENARIO["clients"], help="viewers per swarm (default 8)")
    ap.add_argument("--title-seconds", type=float, default=40.0, help="the title's length (default 40)")
    ap.add_argument("--fault-at", type=float, default=None,
                    help="seconds after the first arrival (default: 2 s after the last viewer arrives)")
    ap.add_argument("--fault-seconds", type=float, default=5.0, help="how long each fault lasts (default 5)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each drill (default 1; medians over them)")
    ap.add_argument("--keep-data", action="store_true", help="keep the viewers' copies and the server's store")
    ap.add_argument("--dry-run", action="store_true", help="check the arguments, print the plan, run nothing")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(DRILLS)
    unknown = [n for n in names if n not in DRILLS]
    problems = []
    if unknown:
        problems.append(f"unknown drill(s) {', '.join(unknown)}; known: {', '.join(DRILLS)}")
    if args.clients < 2:
        problems.append(f"--clients {args.clients}: a swarm needs at least 2 viewers")
    if not 4 <= args.title_seconds <= 3600:
        problems.append(f"--title-seconds {args.title_seconds:g}: expected 4..3600")
    if not 0.5 <= args.fault_seconds <= 120:
        problems.append(f"--fault-seconds {args.fault_seconds:g}: expected 0.5..120")
    s = scen.from_dict({**SCENARIO, "clients": args.clients, "title_seconds": args.title_seconds})
    arrivals = scen.arrival_times(s)
    fault_at = arrivals[-1] + 2 if args.fault_at is None else args.fault_at
    if not 0 <= fault_at < arrivals[-1] + s.title_seconds - args.fault_seconds:
        problems.append(f"--fault-at {fault_at:g}: the fault must end while the last viewer still plays "
                        f"(before {arrivals[-1] + s.title_seconds:g} s)")
    if not 1 <= args.repeat <= 20:
        problems.append(f"--repeat {args.repeat}: expected 1..20")
    if not args.dry_run and not args.out:
        problems.append("--out DIR is required")
    if problems:
        for p in problems:
            print(f"testbed/drills: {p}", file=sys.stderr)
        return 2
    plan = [f"{len(names)} drill(s) x {args.repeat} run(s), one swarm each: {s.clients} viewers "
            f"{s.arrival_interval:g} s apart, a {s.title_seconds:g} s title, the fault at {fault_at:g} s for "
            f"{args.fault_seconds:g} s"]
    plan += [f"  {n}: {DRILLS[n]}" for n in names]
    print("\n".join(plan))
    if args.dry_run:
        return 0
    run.stop_on_signals()
    try:
        if os.geteuid() != 0:
            raise DrillError("needs root: the viewers run in network namespaces, the disk drill mounts a tmpfs")
        bins = host.binaries(Path(args.bin_dir))
    except (DrillError, host.RunError) as e:
        print(f"testbed/drills: {e}", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[dict]] = {n: [] for n in names}
    try:
        for rep in range(args.repeat):
            # Each round its own title and placement (seed + round); the drills in the same order each round.
            sr = dataclasses.replace(s, random_seed=s.random_seed + rep)
            for n in names:
                d = Drill(n, sr, bins, out / (n if args.repeat == 1 else f"{n}-{rep + 1}"), fault_at,
                          args.fault_seconds)
                try:
                    runs[n].append(d.run())
                finally:
                    if not args.keep_data:
                        d.cleanup()
                print(table([runs[n][-1]]).splitlines()[-1], *runs[n][-1]["notes"], sep="\n    ")
                write_report(out, s, fault_at, args.fault_seconds, runs)  # what is done so far survives a stop
    except (DrillError, host.RunError, netshape.ShapingError) as e:
        print(f"testbed/drills: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("testbed/drills: interrupted; every process was stopped", file=sys.stderr)
        return 130
    rows = write_report(out, s, fault_at, args.fault_seconds, runs)
    print("\n" + table(rows))
    bad = [r["drill"] for r in rows if r["bytes_lost"] or r["completed"] < r["viewers"]]
    bad += [n for n in names if any(r.get("whole_within_interval") is False for r in runs[n])]
    if bad:
        print(f"testbed/drills: lost bytes, unfinished viewers or a tracker not whole within one announce "
              f"interval in: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # progress lines show up as they happen, also in a log file
    sys.exit(main())
