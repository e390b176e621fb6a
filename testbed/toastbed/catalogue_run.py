"""A catalogue run: the tracker and the VoD server with every title, B long-lived boxes with their warm
titles, then the evening's sessions driven through each box's control API as its app would (add the title
from the server's /catalog, play, read the playback URL as a player, stop at the watch's end), while idle
boxes keep seeding within their quota. Results come from the server's metrics (sampled every second), the
boxes' status (polled) and stats files, and the players; catalogue_report turns them into the report.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import catalogue_report, host, player, report, resources
from .catalogue_scenario import CatalogueScenario, shape
from .catalogue_stack import (Box, CatalogueStack, api_call, client_problem, server_extra, start_boxes,
                              wait_warm)
from .catalogue_workload import Workload
from .host import Processes, RunError, binaries, free_port

# Each box's /api/status (its upload, by title) every 5 s: a status costs the box about 0.1 ms a title (3 ms
# for 30 titles, measured), so polling every second would add a quarter of a core's percent to a 30-title box.
BOX_POLL_SECONDS = 5.0


@dataclass
class SessionRecord:
    index: int
    box: int
    title: int
    planned_start_s: float
    watch_s: float
    seek: list | None = None          # [after_s, to_s]
    started_s: float | None = None    # evening seconds: the app's add request
    play_s: float | None = None       # the play request
    stop_s: float | None = None       # the stop answered
    held_before: bool = False         # the box held the title (whole or in part) when the session began
    played_s: float = 0.0
    startup_ms: float | None = None   # the player: play request to the first media byte
    seek_ms: list = field(default_factory=list)
    player_stalls: int = 0
    player_stall_s: float = 0.0
    box_stalls: int = 0
    box_stall_s: float = 0.0
    box_startup_ms: float | None = None
    box_seek_ms: list = field(default_factory=list)
    bytes_from_peers: int = 0
    bytes_from_server: int = 0
    error: str = ""


class Evening:
    """The sessions on one asyncio loop in a thread of their own; box API calls go to a thread pool."""

    def __init__(self, s: CatalogueScenario, w: Workload, boxes: list[Box], stack: CatalogueStack):
        self.s, self.w, self.boxes, self.stack = s, w, boxes, stack
        self.records = [SessionRecord(i, x.box, x.title, x.start_s, x.watch_s,
                                      [w.seeks[i].at_s, w.seeks[i].to_s] if w.seeks[i] else None)
                        for i, x in enumerate(w.sessions)]
        self.t0 = 0.0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="box-api",
                                       initializer=host.raise_this_thread)
        self.priority_note: str | None = None
        self.done = threading.Event()
        self.active = 0

    def now(self) -> float:
        return time.monotonic() - self.t0

    def start(self) -> None:
        self.t0 = time.monotonic()
        self.thread = threading.Thread(target=self._main, name="evening", daemon=True)
        self.thread.start()

    def cancel(self) -> None:
        if self.loop is not None and not self.done.is_set():
            self.loop.call_soon_threadsafe(self._cancel_all)
        if self.thread is not None:
            self.thread.join(60)
        self.pool.shutdown(wait=False, cancel_futures=True)

    def _cancel_all(self) -> None:
        for task in asyncio.all_tasks(self.loop):
            task.cancel()

    def _main(self) -> None:
        self.priority_note = host.raise_this_thread()
        self.loop = asyncio.new_event_loop()
        try:
            self.loop.run_until_complete(self._all())
        except asyncio.CancelledError:
            pass
        finally:
            self.loop.close()
            self.done.set()

    async def _all(self) -> None:
        locks = [asyncio.Lock() for _ in self.boxes]
        await asyncio.gather(*(self._session(r, locks[r.box]) for r in self.records), return_exceptions=True)

    async def _api(self, box: Box, method: str, path: str, body: dict | None = None):
        return await asyncio.get_running_loop().run_in_executor(self.pool, api_call, box.api, method, path, body)

    async def _session(self, r: SessionRecord, lock: asyncio.Lock) -> None:
        await asyncio.sleep(max(0.0, r.planned_start_s - self.now()))
        async with lock:  # a box whose previous session ran late starts this one when it ends
            self.active += 1
            try:
                await self._watch(r)
            except asyncio.CancelledError:
                r.error = r.error or "cancelled at the time limit"
                raise
            except Exception as e:  # noqa: BLE001 - a box's odd answer ends this session, not the evening
                r.error = r.error or f"{type(e).__name__}: {e}"
            finally:
                self.active -= 1

    async def _watch(self, r: SessionRecord) -> None:
        s, box = self.s, self.boxes[r.box]
        title = self.stack.titles[r.title - 1]
        r.started_s = self.now()
        status, before = await self._api(box, "POST", "/api/titles", {"url": title.torrent_url})
        if status not in (200, 201):
            r.error = f"add answered {status}: {before.get('error', '')}"
            return
        r.held_before = status == 200
        tid = before["id"]
        r.play_s = self.now()
        play_requested = time.monotonic()
        status, answer = await self._api(box, "POST", f"/api/titles/{tid}/play")
        if status != 200:
            r.error = f"play answered {status}: {answer.get('error', '')}"
            return
        try:
            result = await player.play(answer["url"], bitrate_bps=s.bitrate, title_bytes=s.title_bytes,
                                       buffer_s=s.player_buffer, watch_s=r.watch_s,
                                       seek=tuple(r.seek) if r.seek else None, since=play_requested)
        finally:
            status, after = await self._api(box, "POST", f"/api/titles/{tid}/stop")
            r.stop_s = self.now()
        if not result.ok:
            r.error = "player: " + result.error
        if status != 200:
            r.error = r.error or f"stop answered {status}: {after.get('error', '')}"
            after = {}
        r.played_s = result.played_s
        r.startup_ms = result.startup_ms
        r.seek_ms = result.seek_ms
        r.player_stalls, r.player_stall_s = result.stalls, result.stall_s
        for key in ("bytes_from_peers", "bytes_from_server"):
            setattr(r, key, max(0, int(after.get(key, 0)) - int(before.get(key, 0))))
        r.box_stalls = max(0, int(after.get("stalls", 0)) - int(before.get("stalls", 0)))
        summary, _ = await asyncio.get_running_loop().run_in_executor(
            self.pool, report.read_stats, box.save_dir / "titles" / tid / "stats.jsonl")
        if summary:
            r.box_stall_s = float(summary.get("stall_seconds", 0.0))
            r.box_startup_ms = summary.get("startup_ms")
            r.box_seek_ms = list(summary.get("seek_ms") or [])
        if s.cache == "none":
            await self._api(box, "DELETE", f"/api/titles/{tid}")


class Poller:
    """Samples on threads: the server's and tracker's bytes every second, and every box's status (the probe
    box's too) every BOX_POLL_SECONDS, spread over that period."""

    def __init__(self, stack: CatalogueStack, boxes: list[Box]):
        self.stack, self.boxes = stack, boxes
        self.metrics: list[tuple[float, dict, float]] = []  # (monotonic, VoD bytes per title, tracker bytes)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._metrics_loop, name="metrics", daemon=True),
                         threading.Thread(target=self._box_loop, name="box-status", daemon=True)]
        self.started = False

    def start(self) -> None:
        self.started = True
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        """The last samples: the server's, and every box's (the upload between the last poll and the end)."""
        self._stop.set()
        if not self.started:  # the run failed before the evening
            return
        for t in self._threads:
            t.join(15)
        self.sample_metrics()
        for b in self.boxes:
            self.poll_box(b)

    def sample_metrics(self) -> None:
        m = self.stack.metrics()
        if m is not None:
            self.metrics.append((time.monotonic(), m[0], m[1]))

    def _metrics_loop(self) -> None:
        host.raise_this_thread()
        next_at = time.monotonic()
        while not self._stop.is_set():
            self.sample_metrics()
            next_at += 1.0
            self._stop.wait(max(0.0, next_at - time.monotonic()))

    def _box_loop(self) -> None:
        host.raise_this_thread()
        boxes = self.boxes
        gap = BOX_POLL_SECONDS / max(1, len(boxes))
        while not self._stop.is_set():
            for b in boxes:
                self.poll_box(b)
                if self._stop.wait(gap):
                    return

    @staticmethod
    def poll_box(b: Box) -> None:
        status, doc = api_call(b.api, "GET", "/api/status", timeout=5)
        if status == 200:
            b.absorb_status(doc)
            b.upload_samples.append((time.monotonic(), b.upload_total))


def stop_many(procs: Processes, boxes: list[Box], grace: float = 20.0) -> list[str]:
    """SIGTERM to every box at once, then SIGKILL to any still there after `grace`; returns the boxes that
    had to be killed."""
    live = [b for b in boxes if b.proc is not None and b.proc.poll() is None]
    for b in live:
        try:
            os.killpg(b.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    killed = []
    for b in live:
        try:
            b.proc.wait(max(0.1, deadline - time.monotonic()))
        except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: the box did not stop in time
            killed.append(b.name)
            os.killpg(b.proc.pid, signal.SIGKILL)
            b.proc.wait(5)
    return killed


def wait_for_evening(s: CatalogueScenario, evening_unix: int, boxes: list[Box], notes: list, timings: dict,
                     progress, stop) -> None:
    """Until the evening's planned start (the push window's clock): the night, boxes idle and fetching their
    assignments when the window opens before the evening."""
    late = time.time() - evening_unix
    if late > 0:
        notes.append(f"the boxes were ready {late:.0f} s after the evening's planned start: the push window ran "
                     "that much earlier on the evening's clock")
    timings["evening_wait_s"] = round(max(0.0, -late), 1)
    last = 0.0
    while time.time() < evening_unix:
        if stop is not None and stop.is_set():
            raise KeyboardInterrupt
        if time.monotonic() - last >= 5:
            last = time.monotonic()
            pushed = sum(b.push_bytes for b in boxes if not b.probe)
            progress(f"[catalogue] t={time.time() - evening_unix:5.0f}s before the evening, push fetched "
                     f"{pushed / 1e6:.1f} MB")
        time.sleep(min(0.5, max(0.0, evening_unix - time.time())))


def disk_needed(s: CatalogueScenario, w: Workload) -> int:
    """The titles, the server's store (two replicas of each block) and every session's copy, with 10% more."""
    return int((3 * s.titles + len(w.sessions)) * s.title_bytes * 1.1)



def run_catalogue(s: CatalogueScenario, bins: dict, out: Path, progress=print,
                  stop: threading.Event | None = None, keep_data: bool = False) -> dict:
    """Runs the catalogue scenario; returns the report dict. Ctrl-C or `stop` stops every process and
    raises KeyboardInterrupt."""
    problem = client_problem(s, bins["client"])
    if problem:
        raise RunError(problem)
    w = s.workload()
    work = out / "catalogue"
    if work.exists():
        shutil.rmtree(work)
    (work / "logs").mkdir(parents=True)
    free = shutil.disk_usage(work).free
    if free < disk_needed(s, w):
        raise RunError(f"{s.name}: needs about {disk_needed(s, w) / 1e9:.1f} GB on {out}, "
                       f"{free / 1e9:.1f} GB are free")
    (work / "sessions.json").write_text(json.dumps(w.to_json(), indent=1))
    sampler = resources.Sampler()
    procs = Processes(work / "logs", sampler)
    boxes = [Box(i, f"box{i:03d}", work / f"box{i:03d}", w.uplinks_bps[i], w.warm[i]) for i in range(s.boxes)]
    operator_peers = []
    if s.probe_box:
        # Its upload is on the operator's side of the bill, so the boxes treat it as the operator's peer: the
        # torrents name it, and a box asks it only for what the other boxes cannot deliver in time.
        probe = Box(s.boxes, "probe", work / "probe", s.uplink, list(range(1, s.titles + 1)), probe=True,
                    listen_port=free_port())
        boxes.append(probe)
        operator_peers.append(f"127.0.0.1:{probe.listen_port}")
    stack = CatalogueStack(s, bins, work, procs, operator_peers=operator_peers)
    evening = Evening(s, w, [b for b in boxes if not b.probe], stack)
    poller = Poller(stack, boxes)
    notes, interrupted, timings = [], False, {}
    limit = s.derived_time_limit()
    # Push's window is on the evening's clock, and the server must know it when it starts, before the boxes
    # do: the evening is planned to start a generous boot time (the boxes' start and their warm titles' check)
    # and the night (a push window before the evening) after the server, and waits for that moment when the
    # boxes are ready sooner.
    evening_unix = [0]

    def before_serve() -> dict:
        evening_unix[0] = int(time.time() + 15 + 0.4 * len(boxes) + s.night_seconds) + 1
        return server_extra(s, w.lambda_peak, work, evening_unix[0])
    try:
        sampler.start()
        stack.start(before_serve)
        timings["ingest_s"] = round(stack.ingest_seconds, 1)
        timings["store"] = "tmpfs" if stack.store_in_memory else "disk"
        progress(f"[catalogue] {s.titles} titles ingested in {stack.ingest_seconds:.1f} s (store on "
                 f"{timings['store']}); starting {len(boxes)} boxes")
        started = time.monotonic()
        start_boxes(s, bins, procs, stack, boxes)
        timings["boxes_start_s"] = round(time.monotonic() - started, 1)
        timings["warm_check_s"] = round(wait_warm(boxes, stack.titles, 300 + 2 * len(boxes), stop), 1)
        progress(f"[catalogue] {len(boxes)} boxes up in {timings['boxes_start_s']:.1f} s, warm titles checked "
                 f"in {timings['warm_check_s']:.1f} s")
        if s.push is not None:
            poller.start()  # the night's push traffic is measured too
            wait_for_evening(s, evening_unix[0], boxes, notes, timings, progress, stop)
            if not stack.save_push_plan(work / "push_plan.json"):
                notes.append("the server's /push/plan did not answer at the evening's start")
        progress(f"[catalogue] the evening starts ({len(w.sessions)} sessions)")
        if s.push is None:
            poller.start()
        evening.start()
        last = 0.0
        while not evening.done.is_set():
            now = evening.now()
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt
            if now > limit:
                notes.append(f"time limit of {limit:.0f} s reached with {evening.active} sessions running")
                break
            if now - last >= 5:
                last = now
                begun = sum(1 for r in evening.records if r.started_s is not None)
                sent = sum(poller.metrics[-1][1].values()) if poller.metrics else 0
                progress(f"[catalogue] t={now:5.0f}s sessions begun {begun}/{len(w.sessions)}, watching "
                         f"{evening.active}, VoD server sent {sent / 1e6:.1f} MB")
            time.sleep(0.2)
    except KeyboardInterrupt:
        interrupted = True
        notes.append("interrupted")
    finally:
        try:
            evening.cancel()
            end = evening.now() if evening.t0 else 0.0
            poller.stop()
            sampler.stop()
        finally:  # whatever failed above, no process and no store outlives the run
            killed = stop_many(procs, boxes)
            procs.stop_all()
            if not keep_data or stack.store_in_memory:
                stack.remove_store()
    if killed:
        notes.append(f"{len(killed)} boxes did not stop on SIGTERM within 20 s and were killed: "
                     + ", ".join(killed[:10]))
    left = [b.name for b in boxes if b.proc is not None and b.proc.poll() is None]
    if interrupted:
        raise KeyboardInterrupt
    if not keep_data:
        for d in [*work.glob("box*/data/titles"), work / "probe" / "data" / "titles", work / "media"]:
            shutil.rmtree(d, ignore_errors=True)
    r = catalogue_report.compute(
        s, w, records=[asdict(x) for x in evening.records], t0=evening.t0, end_s=end,
        metrics=poller.metrics,
        boxes=[{"index": b.index, "name": b.name, "uplink_bps": b.uplink_bps, "probe": b.probe, "warm": len(b.warm),
                "upload_samples": b.upload_samples, "push_bytes": b.push_bytes, "titles_held": b.titles_held}
               for b in boxes],
        res=sampler.report(), cpu_samples={t.name: t.cpu_samples for t in sampler.tracked})
    if evening.priority_note:
        notes.append(evening.priority_note)
    r["notes"] = notes + r["notes"]
    r["timings"] = timings
    r["boxes_left_running"] = left
    r["shape"] = shape(s, w)
    r["kind"] = "catalogue"
    return r


def describe(s: CatalogueScenario) -> str:
    """--dry-run: what runs, its shape, the session count, and how long."""
    w = s.workload()
    sh = shape(s, w)
    mix = ", ".join(f"{m['share'] * 100:g}% at {m['factor']:g}x" for m in s.uplink_mix)
    return "\n".join([
        f"{s.name}: catalogue of {s.titles} titles (Zipf {s.zipf_alpha:g}), {s.title_seconds:g} s at "
        f"{s.bitrate / 1e6:g} Mbps in {s.piece_size // 1024} KiB pieces; {s.boxes} boxes at {s.uplink / 1e6:g} Mbps "
        f"({mix}), disk quota {s.disk_quota} ({s.quota_bytes / 1e6:.0f} MB), {s.warm_titles} warm titles, cache "
        f"{s.cache}, push {'on' if s.push else 'off'}",
        f"sessions: {sh['sessions']} ({sh['sessions_per_box']:g} a box, {sh['sessions_dropped']} dropped), "
        f"{sh['watching_at_once_max']} watching at once at most (planned peak {sh['peak_viewers_planned']:g} = "
        f"{s.peak_viewers_pct:g}%), mean watch {sh['mean_watch_s']:g} s, seeks {s.seek_pct:g}%",
        f"shape: {sh['label']}; peak bound (planned) {sh['peak_bound_planned_pct']:g}%",
        f"about {(s.evening_seconds + s.title_seconds) / 60:.1f} minutes of evening and wind-down, time limit "
        f"{s.derived_time_limit():.0f} s",
    ])


def main(s: CatalogueScenario, args) -> int:
    """testbed/run for a catalogue scenario (run.main's arguments)."""
    import sys
    if args.print_sessions:
        print(json.dumps(s.workload().to_json(), indent=1))
        return 0
    if args.dry_run:
        print(describe(s))
        return 0
    try:
        if not args.out:
            raise RunError("--out DIR is required")
        bins = binaries(Path(args.bin_dir))
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        r = run_catalogue(s, bins, out, keep_data=args.keep_data)
    except RunError as e:
        print(f"testbed/run: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("testbed/run: interrupted; every process was stopped", file=sys.stderr)
        return 130
    r["scenario_config"] = s.to_json()
    r["wall_seconds"] = round(time.monotonic() - started, 1)
    (out / "report.json").write_text(json.dumps(r, indent=1))
    plots = catalogue_report.plot(r, out)
    (out / "report.md").write_text(catalogue_report.render_markdown(r, plots))
    print(catalogue_report.render_markdown(r, []).split("## Offload")[0])
    if r["sessions_completed"] < r["sessions"] or r["boxes_left_running"]:
        print(f"testbed/run: {r['sessions'] - r['sessions_completed']} of {r['sessions']} sessions did not "
              f"complete, {len(r['boxes_left_running'])} boxes left running; see {out / 'catalogue' / 'logs'}",
              file=sys.stderr)
        return 1
    return 0
