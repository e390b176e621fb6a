"""testbed/run SCENARIO.json --out DIR: one experiment end to end.

Starts the tracker, the VoD server with the title ingested, the optional seed (on the "server host": its upload
counts as server traffic, as in the thesis), then the clients on their arrival schedule; waits for them; stops
everything (also on Ctrl-C); writes DIR/report.json and DIR/report.md. Baselines named in the scenario run the
same scenario again with plain unicast viewers and with stock libtorrent streaming, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from . import credentials, netshape, report, resources, scenario as scen
from .host import Processes, RunError, binaries, free_port, http_get, make_title, supports_option, wait_port

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
STOCK_PEER = HERE / "stock_peer.py"
UNICAST = HERE / "unicast_client.py"
PY = "/usr/bin/python3"  # Debian's python: has python3-libtorrent and matplotlib


class Stack:
    """Tracker + VoD server (+ seed): the "server host" of one run."""

    def __init__(self, s: scen.Scenario, bins: dict, work: Path, procs: Processes, host: str = "127.0.0.1",
                 server_config: dict | None = None, tracker_config: dict | None = None, nodes: int = 1,
                 trackers: int = 1):
        """`server_config` and `tracker_config` add fields to the VoD server's and the tracker's configs (e.g. an
        `admin_listen` on loopback, a `state_file`). With `nodes` > 1 the VoD server is a tier of that many
        nodes (docs/server-storage.md "A tier of nodes"), each with 2 disks, the title ingested on every one,
        and `server_config` goes to node 0 only; with `trackers` > 1 the torrent's announce-list names that
        many trackers."""
        self.s, self.bins, self.work, self.procs, self.host = s, bins, work, procs, host
        self.server_config = dict(server_config or {})
        self.tracker_config = dict(tracker_config or {})
        self.tracker_ports = [free_port() for _ in range(max(1, trackers))]
        self.tracker_port = self.tracker_ports[0]
        self.node_ports = [free_port() for _ in range(max(1, nodes))]
        self.server_port = self.node_ports[0]
        self.server_procs: list[subprocess.Popen | None] = [None] * len(self.node_ports)
        self.tracker_procs: list[subprocess.Popen | None] = [None] * len(self.tracker_ports)
        self.title = "title"
        self.torrent = work / "title.torrent"
        self.media = work / "media" / self.title
        self.seed_stats = work / "seed.jsonl"
        self.seed_proc = None
        self.server_proc: subprocess.Popen | None = None
        self.tracker_proc: subprocess.Popen | None = None
        self.seed_endpoint = ""  # HOST:PORT of the server-host seed (its SSL one in an SSL swarm), once started
        # Passkeys (and certificates) for the seed and every viewer of a private swarm.
        self.creds: credentials.SwarmCredentials | None = None
        if s.private or s.ssl:
            self.creds = credentials.SwarmCredentials(work, ["seed"] + [client_name(i) for i in range(s.clients)],
                                                      s.ssl)

    @property
    def server_url(self) -> str:
        return f"http://{self.host}:{self.server_port}"

    def node_config(self, i: int) -> Path:
        """Node `i`'s config (node 0's is server.json, on the disks under disks/, as a single server's)."""
        return self.work / ("server.json" if i == 0 else f"server-n{i}.json")

    def write_server_configs(self) -> None:
        s, w = self.s, self.work
        tier = len(self.node_ports) > 1
        for i, port in enumerate(self.node_ports):
            root = w / ("disks" if i == 0 else f"disks-n{i}")
            disks = [str(root / f"d{d}") for d in range(2 if tier else 4)]
            for d in disks:
                Path(d).mkdir(parents=True, exist_ok=True)
            config = {"listen": f"{self.host}:{port}", "disks": disks, "policy": "rda",
                      "placement_seed": s.random_seed, "log_level": "warn", **(self.server_config if i == 0 else {})}
            if tier:
                config["tier"] = {"self": f"n{i}", "nodes": [{"id": f"n{k}", "url": f"http://{self.host}:{p}"}
                                                              for k, p in enumerate(self.node_ports)]}
            else:
                config["public_url"] = self.server_url
            self.node_config(i).write_text(json.dumps(config, indent=2))

    def start(self) -> None:
        s, w = self.s, self.work
        self.media.parent.mkdir(parents=True, exist_ok=True)
        make_title(self.media, s.title_bytes, s.random_seed)
        self.write_server_configs()
        # Every client of a loopback run shares 127.0.0.1, so the tracker's per-source rate limit (which
        # exempts nobody by default) would refuse a swarm's joins; exempt loopback, as a testbed should.
        (w / "tracker.json").write_text(json.dumps({"rate_limit": {"exempt": ["127.0.0.0/8", "::1"]},
                                                    **(self.creds.tracker_config() if self.creds else {}),
                                                    **self.tracker_config}))
        trackers = [self.start_tracker(index=t) for t in range(len(self.tracker_ports))]
        announce = [arg for p in self.tracker_ports for arg in ("--announce", f"http://{self.host}:{p}/announce")]
        for i in range(len(self.node_ports)):
            # Every node of a tier ingests the same file and writes the same torrent.
            ingest = subprocess.run([str(self.bins["server"]), "--config", str(self.node_config(i)), "ingest",
                                     self.title, str(self.media), "--torrent", str(self.torrent), "--bitrate",
                                     str(s.bitrate), "--piece-size", str(s.piece_size), *announce,
                                     *(self.creds.ingest_args() if self.creds else [])],
                                    capture_output=True, text=True, timeout=600)
            if ingest.returncode != 0:
                raise RunError(f"ingest on node {i} failed: " + ingest.stderr.strip())
        self.start_server()
        if (not all(wait_port(self.host, p, 20) for p in self.node_ports)
                or not all(wait_port(self.host, p, 20) for p in self.tracker_ports)
                or any(t.poll() is not None for t in trackers)):
            raise RunError("the VoD server or the tracker did not start; see logs in " + str(self.procs.log_dir))
        if s.seed:
            seed_port = free_port()
            self.seed_endpoint = f"{self.host}:{seed_port}"
            listen = f"{self.host}:{seed_port}"
            problem = seed_client_problem(s, self.bins)
            if problem:
                raise RunError(problem)
            if s.seed_client == "toast":
                # The operator's seed as Toast ships it: toast-client holding the whole title, serving the
                # viewer furthest along (the leader choker). It reads the title from a directory of its own
                # (a hard link, no copy).
                seed_dir = w / "seed"
                seed_dir.mkdir(exist_ok=True)
                os.link(self.media, seed_dir / self.media.name)
                argv = [str(self.bins["client"]), "stream", str(self.torrent), "--save-dir", str(seed_dir),
                        "--listen", listen, "--stats", str(self.seed_stats), "--behavior", "seed",
                        "--choker", "leader", "--log-level", "warn"]
                if self.creds:
                    argv += self.creds.client_args("seed")
                if s.ssl:
                    # Peers of an SSL torrent meet it on its SSL port: that is the operator's peer.
                    ssl_port = free_port()
                    argv += ["--ssl-listen", str(ssl_port)]
                    self.seed_endpoint = f"{self.host}:{ssl_port}"
                if s.seed_upload_limit:
                    argv += ["--upload-limit", str(s.seed_upload_limit)]
            else:
                argv = [PY, str(STOCK_PEER), "seed", str(self.torrent), "--save-dir", str(self.media.parent),
                        "--listen", listen, "--stats", str(self.seed_stats),
                        "--upload-limit", str(s.seed_upload_limit)]
            self.seed_proc = self.procs.start("seed", argv, role="seed")
            if not wait_port(self.host, seed_port, 20) or self.seed_proc.poll() is not None:
                raise RunError("the seed did not start; see logs in " + str(self.procs.log_dir))

    def start_tracker(self, name: str = "tracker", index: int = 0) -> subprocess.Popen:
        """Tracker `index` (again, under another log `name`, after a fault drill killed it). Each keeps its own
        state file when the tracker config names one."""
        config = self.work / "tracker.json"
        if index > 0:
            extra = dict(self.tracker_config)
            if "state_file" in extra:
                extra["state_file"] = f"{extra['state_file']}.{index}"
            config = self.work / f"tracker-{index}.json"
            config.write_text(json.dumps({"rate_limit": {"exempt": ["127.0.0.0/8", "::1"]},
                                          **(self.creds.tracker_config() if self.creds else {}), **extra}))
            name = name if name != "tracker" else f"tracker{index}"
        proc = self.procs.start(name, [str(self.bins["tracker"]), "--listen",
                                       f"{self.host}:{self.tracker_ports[index]}", "--config", str(config)],
                                role="tracker")
        self.tracker_procs[index] = proc
        if index == 0:
            self.tracker_proc = proc
        return proc

    def start_server(self, name: str = "server") -> subprocess.Popen:
        """The VoD server on the ingested store (again, under another log `name`, after a drill killed it):
        every node of a tier."""
        for i in range(len(self.node_ports)):
            self.start_node(i, name if i == 0 else f"{name}-n{i}")
        return self.server_proc

    def start_node(self, i: int, name: str) -> subprocess.Popen:
        proc = self.procs.start(name, [str(self.bins["server"]), "--config", str(self.node_config(i)), "serve"],
                                role="server")
        self.server_procs[i] = proc
        if i == 0:
            self.server_proc = proc
        return proc

    def server_bytes(self) -> float:
        """Title bytes the VoD server sent to its clients: on a tier, every node's, less what nodes relayed to
        each other (sent by one node and counted again by the node that passed them on)."""
        total = 0.0
        for port in self.node_ports:
            try:
                text = http_get(f"http://{self.host}:{port}/metrics")
            except OSError:
                continue
            total += (report.prometheus_sum(text, "toast_http_bytes_sent_total")
                      - report.prometheus_sum(text, "toast_tier_relayed_bytes_total"))
        return total

    def tracker_bytes(self) -> float:
        try:
            text = http_get(f"http://{self.host}:{self.tracker_port}/metrics")
        except OSError:
            return 0.0
        return report.prometheus_sum(text, "toast_tracker_bytes_sent_total")

    def stop_seed(self) -> float:
        if self.seed_proc is None:
            return 0.0
        self.procs.stop(self.seed_proc)
        summary, _ = report.read_stats(self.seed_stats)
        return float((summary or {}).get("bytes_uploaded", 0))


def seed_client_problem(s: scen.Scenario, bins: dict) -> str:
    """Why the scenario's seed cannot run with these binaries, or "": Toast's seed needs a toast-client that
    has the leader choker (the launcher also drives builds from before it)."""
    if s.seed and s.seed_client == "toast" and not supports_option(bins["client"], "leader:"):
        return (f"seed_client \"toast\" needs a toast-client with --choker leader, and {bins['client']} has none "
                "(use seed_client \"stock\" with it)")
    return ""


def client_name(index: int) -> str:
    return f"client{index:03d}"


def client_argv(kind: str, s: scen.Scenario, stack: Stack, bins: dict, cdir: Path, index: int,
                ip: str = "127.0.0.1") -> list[str]:
    stats = cdir / "stats.jsonl"
    port = free_port()
    listen = f"{ip}:{port}"
    if kind == "toast":
        argv = [str(bins["client"]), "stream", str(stack.torrent), "--save-dir", str(cdir / "data"), "--listen",
                listen, "--server", stack.server_url + "/titles/" + stack.title, "--stats", str(stats),
                "--picker", s.picker, "--inorder-window", f"{s.inorder_window}s", "--behavior", s.behavior,
                "--upload-limit", str(s.upload_limit), "--choker", s.choker, "--seed",
                str(s.random_seed + index)]
        if "--log-level" not in s.extra_client_args:
            argv += ["--log-level", "warn"]
        # The server-host seed is the operator's: the client counts only peers named so as server-side.
        if stack.seed_endpoint and supports_option(bins["client"], "--operator-peer"):
            argv += ["--operator-peer", stack.seed_endpoint]
        if s.download_limit:
            argv += ["--download-limit", str(s.download_limit)]
        if s.buffer_limit:
            argv += ["--buffer-limit", s.buffer_limit]
        if s.lookahead:
            value = s.lookahead if s.lookahead == "none" else f"{scen.parse_duration(s.lookahead)}s"
            argv += ["--lookahead", value]
        if stack.creds:
            argv += stack.creds.client_args(client_name(index))
        if s.ssl:
            argv += ["--ssl-listen", str(free_port())]
        return argv + list(s.extra_client_args)
    if kind == "stock":
        return [PY, str(STOCK_PEER), "stream", str(stack.torrent), "--save-dir", str(cdir / "data"), "--listen",
                listen, "--stats", str(stats), "--upload-limit", str(s.upload_limit), "--behavior", s.behavior,
                "--web-seed", stack.server_url + "/titles/" + stack.title]
    return [PY, str(UNICAST), stack.server_url + "/stream/" + stack.title, "--bitrate", str(s.bitrate),
            "--stats", str(stats)]


def playback_ended(stats: Path, title_bytes: int) -> bool:
    """True once the client's newest stats line shows its playhead at the end of the title."""
    try:
        with open(stats, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            lines = f.read().decode(errors="replace").strip().splitlines()
    except OSError:
        return False
    for raw in reversed(lines):
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            continue
        return int(rec.get("playhead", 0)) >= title_bytes
    return False


def disk_needed(s: scen.Scenario) -> int:
    """Bytes a run writes: every viewer's copy of the title, the title itself and the server's store (each
    block on two disks), with 5% to spare."""
    return int((s.clients + 3) * s.title_bytes * 1.05)


def check_disk(s: scen.Scenario, out: Path) -> None:
    """Refuses a run the disk cannot hold: viewers that hit ENOSPC mid-run fail, and so does everything else
    on the machine that writes there."""
    out.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(out).free
    need = disk_needed(s)
    if free < need:
        raise RunError(f"{s.name}: needs about {need / 1e9:.1f} GB on {out} ({s.clients} viewers x "
                       f"{s.title_bytes / 1e6:.0f} MB and the server's store), {free / 1e9:.1f} GB are free")


def drop_data(work: Path) -> None:
    """The title's copies (each viewer's, the server's store, the source file) once the report is made: a
    96-viewer run at the thesis's shape writes 11 GB. Stats, logs and reports stay."""
    for d in [*work.glob("client*/data"), work / "disks", work / "media"]:
        shutil.rmtree(d, ignore_errors=True)


def run_once(kind: str, s: scen.Scenario, bins: dict, out: Path, progress=print,
             stop: threading.Event | None = None, keep_data: bool = False) -> dict:
    """Runs the scenario with `kind` viewers ("toast", "stock" or "unicast"); returns the report dict.
    Ctrl-C, or `stop` being set (run-all's other threads), stops every process and raises KeyboardInterrupt.
    The title's copies are deleted at the end unless `keep_data`."""
    work = out / kind
    if work.exists():
        shutil.rmtree(work)
    check_disk(s, out)
    (work / "logs").mkdir(parents=True)
    sampler = resources.Sampler()
    procs = Processes(work / "logs", sampler)
    network = netshape.Network(s.clients, s.download_limit, s.delay_ms) if s.shaping else None
    stack = Stack(s, bins, work, procs, netshape.HOST_IP if network else "127.0.0.1")
    arrivals = scen.arrival_times(s)
    limit = s.time_limit or (arrivals[-1] + s.title_seconds * 3 + 60)
    clients: list[subprocess.Popen | None] = [None] * s.clients
    notes = []
    interrupted = False
    try:
        sampler.start()
        if network:
            network.setup()
        stack.start()
        t0 = time.monotonic()
        last_progress = 0.0
        last_end_check = 0.0
        while True:
            now = time.monotonic() - t0
            for i, at in enumerate(arrivals):
                if clients[i] is None and now >= at:
                    cdir = work / f"client{i:03d}"
                    cdir.mkdir()
                    ip = netshape.client_ip(i) if network else "127.0.0.1"
                    clients[i] = procs.start(f"client{i:03d}", client_argv(kind, s, stack, bins, cdir, i, ip),
                                             netns=network.namespace(i) if network else None, role="client")
            started = sum(1 for c in clients if c is not None)
            running = sum(1 for c in clients if c is not None and c.poll() is None)
            if started == s.clients and running == 0:
                break
            # Seeding viewers stay after playback, as in the thesis, until the last viewer's playback ends.
            if (s.behavior == "seed" and started == s.clients and now - last_end_check >= 1.0):
                last_end_check = now
                if all(c.poll() is not None or playback_ended(work / f"client{i:03d}" / "stats.jsonl",
                                                              s.title_bytes)
                       for i, c in enumerate(clients)):
                    break
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt
            if now > limit:
                notes.append(f"time limit of {limit:.0f} s reached with {running} clients still running")
                break
            if now - last_progress >= 5:
                progress(f"[{kind}] t={now:5.0f}s clients started {started}/{s.clients}, running {running}, "
                         f"VoD server sent {stack.server_bytes() / 1e6:.1f} MB")
                last_progress = now
            time.sleep(0.2)
    except KeyboardInterrupt:
        interrupted = True
        notes.append("interrupted by Ctrl-C")
    finally:
        sampler.stop()  # the last sample, before anything is stopped
        for c in clients:
            if c is not None:
                procs.stop(c)
        vod = stack.server_bytes()
        tracker = stack.tracker_bytes()
        seed = stack.stop_seed()
        procs.stop_all()
        shaped = None
        if network:
            shaped = network.bytes_towards_clients()
            network.teardown()
    summaries = [report.read_stats(work / f"client{i:03d}" / "stats.jsonl")[0] for i in range(s.clients)]
    if not keep_data:
        drop_data(work)
    r = report.compute(s, s.title_bytes, summaries, vod, seed, tracker, viewers_fetch=kind == "toast")
    report.add_resources(r, sampler.report())
    incomplete = r["clients"] - r["completed_clients"]
    if incomplete:
        notes.append(f"{incomplete} of {r['clients']} {kind} viewers did not complete (see {work / 'logs'}): "
                     "the reduction is not comparable")
    if kind == "toast" and s.seed and not supports_option(bins["client"], "--operator-peer"):
        notes.append("this toast-client has no --operator-peer: the server-host seed could not be named as the "
                     "operator's (such a client takes every seed for the operator's)")
    r["notes"] = notes
    r["kind"] = kind
    r["shape"] = scen.shape(s)
    if shaped is not None:
        r["shaping"] = {"namespaces": s.clients, "download_limit": s.download_limit, "delay_ms": s.delay_ms,
                        "bytes_towards_clients": shaped}
    if interrupted:
        raise KeyboardInterrupt
    return r


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP stop a run like Ctrl-C: every process stopped, nothing left behind. Ctrl-C itself
    is re-enabled too: a shell starting a job in the background (`&`) makes the job ignore SIGINT."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, interrupt)


def describe(s: scen.Scenario) -> str:
    """The scenario in a few lines: what runs, its dimensionless shape beside the thesis's, and how long."""
    sh = scen.shape(s)
    arrivals = scen.arrival_times(s)
    return "\n".join([
        f"{s.name}: {s.clients} {s.behavior} viewers ({s.arrival}, every {s.arrival_interval:g} s), picker "
        f"{s.picker}, upload {s.upload_limit / 1e6:g} Mbps, a {s.title_seconds:g} s title at {s.bitrate / 1e6:g} "
        f"Mbps in {sh['title_pieces']} pieces of {s.piece_size // 1024} KiB",
        f"shape: arrivals {sh['gap_piece_times']:g} piece-times apart (thesis 36), {sh['watching_at_once']} watching "
        f"and {sh['present_at_once']} present at once (thesis ~95), arrival span {sh['span_over_title']:g}x the "
        f"title (thesis 3.15x), upload / bitrate {sh['upload_over_bitrate']:g} (thesis 0.5, 0.75, 1)",
        f"        {sh['label']}",
        f"about {(arrivals[-1] + s.title_seconds) / 60:.1f} minutes of arrivals and playback per run"
        + (f", {len(s.baselines)} baseline run(s) after it" if s.baselines else ""),
    ])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="testbed/run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", help="scenario JSON file (see testbed/scenarios/)")
    ap.add_argument("--out", help="output directory for logs, stats and the report (required unless --dry-run)")
    ap.add_argument("--bin-dir", default=str(REPO / "build"), help="CMake build directory (default: build/)")
    ap.add_argument("--no-baselines", action="store_true", help="skip the scenario's baselines")
    ap.add_argument("--dry-run", action="store_true", help="validate the scenario, print its shape, run nothing")
    ap.add_argument("--keep-data", action="store_true",
                    help="keep every viewer's copy of the title (deleted after the report by default)")
    ap.add_argument("--print-sessions", action="store_true",
                    help="catalogue scenarios: print the generated sessions (sessions.json) and run nothing")
    args = ap.parse_args(argv)
    stop_on_signals()
    try:
        s = scen.load(args.scenario)
        if getattr(s, "type", "") == "catalogue":
            from . import catalogue_run  # it builds on this module
            return catalogue_run.main(s, args)
        if args.print_sessions:
            raise RunError("--print-sessions is for catalogue scenarios (\"type\": \"catalogue\")")
        if args.dry_run:
            print(describe(s))
            return 0
        if not args.out:
            raise RunError("--out DIR is required")
        bins = binaries(Path(args.bin_dir))
    except (scen.ScenarioError, RunError) as e:
        print(f"testbed/run: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    notes = []
    if s.delay_ms > 0 and not netshape.has_netem():
        notes.append(f"this kernel has no netem qdisc: the scenario's {s.delay_ms} ms delay was not added")
        s.delay_ms = 0
    started = time.monotonic()
    try:
        r = run_once("toast", s, bins, out, keep_data=args.keep_data)
        r["notes"] = notes + r["notes"]
        if not args.no_baselines and s.baselines:
            r["baselines"] = {}
            for kind in s.baselines:
                b = run_once("stock" if kind == "stock" else "unicast", s, bins, out, keep_data=args.keep_data)
                r["baselines"][kind] = {"server_bytes": b["server_bytes"], "reduction_pct": b["reduction_pct"],
                                        "stalls": b["stalls"]["count"], "stall_seconds": b["stalls"]["seconds"],
                                        "completed_clients": b["completed_clients"]}
    except (RunError, netshape.ShapingError, credentials.CredentialsError) as e:
        print(f"testbed/run: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("testbed/run: interrupted; every process was stopped", file=sys.stderr)
        return 130
    r["scenario_config"] = s.to_json()
    r["wall_seconds"] = round(time.monotonic() - started, 1)
    (out / "report.json").write_text(json.dumps(r, indent=2))
    plots = []
    if report.plot_bytes(r, out / "bytes_per_client.png"):
        plots.append("bytes_per_client.png")
    (out / "report.md").write_text(report.render_markdown(r, plots))
    print(report.render_markdown(r, []).split("## Clients")[0])
    if r["completed_clients"] < r["clients"]:
        print(f"testbed/run: {r['clients'] - r['completed_clients']} of {r['clients']} viewers did not complete; "
              f"see {out / 'toast' / 'logs'}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
