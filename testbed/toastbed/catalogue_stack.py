"""The processes of a catalogue run: the tracker and the VoD server with T titles ingested, and B set-top
boxes, each one `toast-client serve` with its own save dir, ports, uplink and disk quota. Warm titles are
placed in a box's save dir before it starts, as the service holds a title it watched on an earlier evening
(titles.json, titles/ID/title.torrent, the title's file): no byte of them crosses the network, so they count
neither as the evening's traffic nor as push.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import report
from .catalogue_scenario import CatalogueScenario
from .catalogue_workload import title_name, zipf_cdf
from .host import Processes, RunError, free_port, help_text, http_get, wait_port

MIB = 1 << 20
SHM = Path("/dev/shm")
SHM_PREFIX = "toast-testbed-store-"
MEMORY_SPARE = 4 << 30  # what the boxes and everything else on the machine keep besides a store in memory


def memory_available() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def store_place(work: Path, store_bytes: int) -> Path:
    """Where the server's store goes: a tmpfs (/dev/shm) when the store fits in memory with room to spare,
    else the run's directory. Ingest makes every block file durable (an fsync each, about 80 for a 60 MB
    title: half its time on this machine's disk, more beside other work) and a testbed store needs none of
    that; reads come from memory either way. Stores of runs whose process is gone are removed first."""
    if SHM.is_dir():
        for old in SHM.glob(SHM_PREFIX + "*"):
            pid = old.name[len(SHM_PREFIX):].split("-")[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                shutil.rmtree(old, ignore_errors=True)
        if memory_available() > store_bytes + MEMORY_SPARE and shutil.disk_usage(SHM).free > 2 * store_bytes:
            return SHM / f"{SHM_PREFIX}{os.getpid()}-{work.resolve().as_posix().replace('/', '_')[-80:]}"
    return work / "disks"


def make_title(path: Path, size: int, key: str) -> None:
    """Incompressible, deterministic content: SHAKE-128 of the title's key, one MiB at a time (several
    times faster than random.randbytes, so 30 titles of 60 MB take seconds)."""
    with open(path, "wb") as f:
        block, left = 0, size
        while left:
            n = min(left, MIB)
            f.write(hashlib.shake_128(f"{key}/{block}".encode()).digest(n))
            left -= n
            block += 1


@dataclass
class CatalogueTitle:
    rank: int
    name: str
    media: Path
    torrent: Path
    info_hash: str = ""
    file: str = ""
    torrent_url: str = ""


class CatalogueStack:
    """Tracker + VoD server (4-disk RDA store) with every title of the catalogue ingested."""

    def __init__(self, s: CatalogueScenario, bins: dict, work: Path, procs: Processes,
                 server_config: dict | None = None, operator_peers: list[str] | None = None):
        self.s, self.bins, self.work, self.procs = s, bins, work, procs
        # Written into every title's torrent: the boxes ask these peers only when the others cannot deliver.
        self.operator_peers = list(operator_peers or [])
        self.host = "127.0.0.1"
        self.tracker_port = free_port()
        self.server_port = free_port()
        self.server_config = dict(server_config or {})
        self.titles = [CatalogueTitle(r, title_name(r), work / "media" / title_name(r),
                                      work / "torrents" / f"{title_name(r)}.torrent")
                       for r in range(1, s.titles + 1)]
        self.ingest_seconds = 0.0
        self.server_proc = None
        # Two replicas of each block, with 10% to spare.
        self.store = store_place(work, int(2.2 * s.titles * s.title_bytes))

    @property
    def store_in_memory(self) -> bool:
        return self.store.is_relative_to(SHM)

    def remove_store(self) -> None:
        shutil.rmtree(self.store, ignore_errors=True)

    @property
    def server_url(self) -> str:
        return f"http://{self.host}:{self.server_port}"

    @property
    def tracker_url(self) -> str:
        return f"http://{self.host}:{self.tracker_port}"

    def start(self, before_serve=None) -> None:
        """Tracker, titles, ingest, then the server; `before_serve()` may return config fields the server
        gets that ingest does not need (the push window, set once ingest's length is known)."""
        s, w = self.s, self.work
        (w / "media").mkdir(parents=True, exist_ok=True)
        (w / "torrents").mkdir(exist_ok=True)
        disks = [str(self.store / f"d{i}") for i in range(4)]
        for d in disks:
            Path(d).mkdir(parents=True, exist_ok=True)
        config = {"listen": f"{self.host}:{self.server_port}", "disks": disks, "policy": "rda",
                  "public_url": self.server_url, "placement_seed": s.random_seed, "log_level": "warn",
                  **self.server_config}
        (w / "server.json").write_text(json.dumps(config, indent=2))
        (w / "tracker.json").write_text(json.dumps({"rate_limit": {"exempt": ["127.0.0.0/8", "::1"]}}))
        self.procs.start("tracker", [str(self.bins["tracker"]), "--listen", f"{self.host}:{self.tracker_port}",
                                     "--config", str(w / "tracker.json")], role="tracker")
        started = time.monotonic()
        # Ingest takes a lock on the store, so titles go in one at a time; making the next title's file
        # while the previous one is ingested keeps both cores busy.
        with ThreadPoolExecutor(max_workers=1) as maker:
            pending = maker.submit(make_title, self.titles[0].media, s.title_bytes,
                                   f"{s.random_seed}/{self.titles[0].name}")
            for i, t in enumerate(self.titles):
                pending.result()
                if i + 1 < len(self.titles):
                    nxt = self.titles[i + 1]
                    pending = maker.submit(make_title, nxt.media, s.title_bytes, f"{s.random_seed}/{nxt.name}")
                self._ingest(t)
        self.ingest_seconds = time.monotonic() - started
        if before_serve is not None:
            config.update(before_serve())
            (w / "server.json").write_text(json.dumps(config, indent=2))
        check = subprocess.run([str(self.bins["server"]), "--config", str(w / "server.json"), "check"],
                               capture_output=True, text=True, timeout=120)
        if check.returncode != 0:
            raise RunError("the VoD server refuses its config (" + str(w / "server.json") + "): " +
                           (check.stderr.strip() or check.stdout.strip()))
        self.server_proc = self.procs.start("server", [str(self.bins["server"]), "--config",
                                                       str(w / "server.json"), "serve"], role="server")
        if not wait_port(self.host, self.server_port, 20) or not wait_port(self.host, self.tracker_port, 20):
            raise RunError("the VoD server or the tracker did not start; see logs in " + str(self.procs.log_dir))
        self._read_catalog()

    def _ingest(self, t: CatalogueTitle) -> None:
        s = self.s
        ingest = subprocess.run([str(self.bins["server"]), "--config", str(self.work / "server.json"), "ingest",
                                 t.name, str(t.media), "--torrent", str(t.torrent), "--bitrate", str(s.bitrate),
                                 "--piece-size", str(s.piece_size), "--announce", self.tracker_url + "/announce",
                                 *[a for p in self.operator_peers for a in ("--operator-peer", p)]],
                                capture_output=True, text=True, timeout=600)
        if ingest.returncode != 0:
            raise RunError(f"ingest of {t.name} failed: " + ingest.stderr.strip())

    def _read_catalog(self) -> None:
        deadline = time.monotonic() + 20
        while True:
            catalog = json.loads(http_get(self.server_url + "/catalog"))
            by_name = {e["name"]: e for e in catalog.get("titles", [])}
            if all(t.name in by_name for t in self.titles) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        for t in self.titles:
            e = by_name.get(t.name)
            if not e or not e.get("torrent") or not e.get("info_hash"):
                raise RunError(f"the server's /catalog has no torrent for {t.name}")
            t.info_hash, t.file = e["info_hash"], e["file"]
            t.torrent_url = self.server_url + e["torrent"]

    def metrics(self) -> tuple[dict[str, float], float] | None:
        """Title body bytes the VoD server sent, per title, and the tracker's bytes; None when unreachable."""
        try:
            text = http_get(self.server_url + "/metrics", timeout=2)
            tracker = report.prometheus_sum(http_get(self.tracker_url + "/metrics", timeout=2),
                                            "toast_tracker_bytes_sent_total")
        except OSError:
            return None
        return per_title_bytes(text), tracker

    def save_push_plan(self, path: Path) -> bool:
        """The server's whole push plan (GET /push/plan) as it stands, for reading beside the report."""
        try:
            path.write_text(http_get(self.server_url + "/push/plan", timeout=10))
        except OSError:
            return False
        return True


def per_title_bytes(text: str) -> dict[str, float]:
    """toast_http_bytes_sent_total by its title label."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("toast_http_bytes_sent_total{"):
            labels, _, value = line.rpartition(" ")
            key = labels.split('title="', 1)[-1].split('"', 1)[0]
            out[key] = out.get(key, 0.0) + float(value)
    return out


@dataclass
class Box:
    index: int
    name: str
    dir: Path
    uplink_bps: int
    warm: list[int]
    probe: bool = False
    api_port: int = 0
    listen_port: int = 0
    proc: subprocess.Popen | None = None
    upload_total: int = 0                       # bytes uploaded, every title together (polled)
    upload_samples: list = field(default_factory=list)  # (evening seconds, upload_total)
    push_bytes: int = 0                         # fetched by assignment since the box started (its status)
    titles_held: int = 0
    _seen: dict = field(default_factory=dict)   # title id -> last bytes_uploaded polled

    @property
    def save_dir(self) -> Path:
        return self.dir / "data"

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def absorb_status(self, status: dict) -> None:
        """Adds what each title uploaded since the last poll; a title evicted since keeps what was counted."""
        seen = {}
        for t in status.get("titles", []):
            up = int(t.get("bytes_uploaded", 0))
            seen[t["id"]] = up
            self.upload_total += max(0, up - self._seen.get(t["id"], 0))
        self._seen = seen
        self.titles_held = len(seen)
        push = status.get("push") or {}  # null without --push-quota
        self.push_bytes = max(self.push_bytes, int(push.get("push_bytes", 0) or 0))


def place_warm(box: Box, titles: list[CatalogueTitle], now_ms: int) -> None:
    """The box's warm titles as the service keeps titles it watched: titles/ID/title.torrent, the title's
    file (a hard link to the source: no copy, and libtorrent never writes a piece it has), and titles.json
    with the first-drawn title watched most recently (an hour apart)."""
    entries = []
    for k, t in enumerate(titles):
        d = box.save_dir / "titles" / t.info_hash
        d.mkdir(parents=True)
        (d / "title.torrent").write_bytes(t.torrent.read_bytes())
        os.link(t.media, d / t.file)
        watched = now_ms - (k + 1) * 3_600_000
        entries.append({"id": t.info_hash, "name": t.name, "added": watched, "last_watched": watched})
    box.save_dir.mkdir(parents=True, exist_ok=True)
    (box.save_dir / "titles.json").write_text(json.dumps({"version": 1, "titles": entries}, indent=2) + "\n")


def demand_forecast(s: CatalogueScenario, lambda_peak: float) -> dict:
    """The operator's forecast of each title's demand, sessions per hour: the workload's expected arrival rate
    over the evening (the peak rate times the profile's mean) split by the Zipf weights. What last evenings
    taught the operator, not this evening's draws."""
    prof = s.profile
    mean_shape = sum((x1 - x0) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in zip(prof, prof[1:]))
    per_hour = lambda_peak * mean_shape * 3600
    cdf = zipf_cdf(s.titles, s.zipf_alpha)
    return {"titles": {title_name(i + 1): round(per_hour * (c - (cdf[i - 1] if i else 0.0)), 6)
                       for i, c in enumerate(cdf)}}


def server_extra(s: CatalogueScenario, lambda_peak: float, work: Path, evening_unix: int) -> dict:
    """What the VoD server is told of the catalogue's demand and of push: a demand forecast for the
    popularity cache and the push planner, and push's section with its window on the evening's clock."""
    extra = {}
    if s.cache == "popularity" or s.push is not None:
        path = work / "forecast.json"
        path.write_text(json.dumps(demand_forecast(s, lambda_peak), indent=1))
        extra["demand"] = {"forecast": str(path)}
    if s.push is not None:
        own = {k: v for k, v in s.push.items() if k not in ("quota", "rate", "window")}
        start, end = s.push["window"]
        extra["push"] = {"rate": s.push["rate"], "box_quota": s.push["quota"], "box_upload": s.uplink,
                         "peak_viewers_pct": s.peak_viewers_pct, "refresh": "10s", **own,
                         "window": {"unix": [evening_unix + int(start), evening_unix + int(-(-end // 1))]}}
    return extra


def client_problem(s: CatalogueScenario, client: Path) -> str:
    """Why this toast-client cannot run the scenario, or "": the cache policies and push are options of
    newer builds of `serve`, and picker/choker other than the service's own need options too."""
    needs = []
    if s.cache == "popularity":
        needs.append(("cache \"popularity\"", "--cache"))
    if s.push is not None:
        needs += [("push", "--push-quota"), ("push", "--push-rate"), ("push", "--box-id")]
    if s.picker != "adaptive":
        needs.append((f"picker \"{s.picker}\"", "--picker"))
    if s.choker != "nearest":
        needs.append((f"choker \"{s.choker}\"", "--choker"))
    missing = [(what, opt) for what, opt in needs if not serve_supports(client, opt)]
    if not missing:
        return ""
    return ("this toast-client's serve has no " + ", ".join(dict.fromkeys(opt for _, opt in missing)) +
            f" (needed for {', '.join(dict.fromkeys(what for what, _ in missing))}): build a client that has "
            "them, or run the scenario without")


def serve_supports(client: Path, option: str) -> bool:
    """Whether `toast-client serve --help` lists `option` as a whole word."""
    text = help_text(client, "serve")
    return option + " " in text or option + "=" in text


def box_argv(s: CatalogueScenario, client: Path, box: Box, stack: CatalogueStack) -> list[str]:
    argv = [str(client), "serve", "--save-dir", str(box.save_dir), "--api", f"127.0.0.1:{box.api_port}",
            "--listen", f"127.0.0.1:{box.listen_port}", "--upload-limit", str(box.uplink_bps),
            "--disk-quota", str(s.titles * s.title_bytes if box.probe else s.quota_bytes),
            "--server", stack.server_url]
    if "--log-level" not in s.extra_client_args:
        argv += ["--log-level", "warn"]
    if serve_supports(client, "--cache"):
        # "none" is the app's doing (it removes each title after watching it): the box keeps its own policy.
        argv += ["--cache", "lru" if s.cache == "none" else s.cache]
    if s.push is not None and not box.probe:  # the probe box holds every title: nothing to push to it
        argv += ["--push-quota", str(s.push["quota"]), "--push-rate", str(s.push["rate"]),
                 "--box-id", box.name]
    if s.picker != "adaptive":
        argv += ["--picker", s.picker]
    if s.choker != "nearest":
        argv += ["--choker", s.choker]
    return argv + list(s.extra_client_args)


def api_call(base: str, method: str, path: str, body: dict | None = None,
             timeout: float = 30.0) -> tuple[int, dict]:
    """One control-API request; (HTTP status, JSON answer), status 0 when the box did not answer."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"{}")
        except ValueError:
            return e.code, {}
    except (OSError, ValueError) as e:
        return 0, {"error": str(e)}


def start_boxes(s: CatalogueScenario, bins: dict, procs: Processes, stack: CatalogueStack,
                boxes: list[Box]) -> None:
    """Places each box's warm titles, starts every box, and waits until each answers its control API."""
    now_ms = int(time.time() * 1000)
    by_rank = {t.rank: t for t in stack.titles}
    for b in boxes:
        b.api_port, b.listen_port = free_port(), b.listen_port or free_port()
        b.dir.mkdir(parents=True)
        place_warm(b, [by_rank[r] for r in b.warm], now_ms)
        b.proc = procs.start(b.name, box_argv(s, bins["client"], b, stack), role="probe" if b.probe else "client")
    deadline = time.monotonic() + 60 + 0.5 * len(boxes)
    for b in boxes:
        while not wait_port("127.0.0.1", b.api_port, 0.5):
            if b.proc.poll() is not None or time.monotonic() > deadline:
                log = (procs.log_dir / f"{b.name}.log")
                tail = log.read_text(errors="replace")[-600:] if log.exists() else ""
                raise RunError(f"{b.name} did not start (exit {b.proc.poll()}): {tail.strip()}")


def wait_warm(boxes: list[Box], titles: list[CatalogueTitle], timeout: float, stop=None) -> float:
    """Waits until every box has checked its warm titles and holds each whole (a box may hold others too:
    titles pushed to it); returns the seconds it took."""
    started = time.monotonic()
    ids = {t.rank: t.info_hash for t in titles}
    pending = [b for b in boxes if b.warm]
    while pending:
        still = []
        for b in pending:
            status, doc = api_call(b.api, "GET", "/api/status", timeout=10)
            held = {t["id"]: t for t in doc.get("titles", [])} if status == 200 else {}
            ready = all(ids[r] in held and not held[ids[r]].get("checking")
                        and held[ids[r]].get("pieces_had") == held[ids[r]].get("pieces") for r in b.warm)
            if not ready:
                still.append(b)
        pending = still
        if not pending:
            break
        if stop is not None and stop.is_set():
            raise KeyboardInterrupt
        if time.monotonic() - started > timeout:
            raise RunError(f"{len(pending)} boxes had not checked their warm titles after {timeout:.0f} s "
                           f"(first: {pending[0].name})")
        time.sleep(1.0)
    return time.monotonic() - started
