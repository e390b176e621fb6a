"""A catalogue run's figures, from what the run sampled: the VoD server's (and tracker's) bytes every second,
the sessions as the players and the boxes saw them, each box's upload (polled) and CPU (sampled).

The bill: operators pay for the server's peak-hour bandwidth, the 95th percentile of its rate in 10 s bins
(nearest rank: the bins sorted, the one at ceil(0.95 n)). Unicast is what the same sessions would have cost
with every viewer streamed from the server: each session at the bitrate for the media time it played, from
its first byte. Both are binned alike over the evening, from its start to the last session's end.
"""

from __future__ import annotations

import math
import statistics

from .catalogue_workload import concurrency, title_name
from .report import percentile
from .resources import TICKS

BIN_SECONDS = 10.0
BILLING_PCT = 95.0


def nearest_rank(values: list[float], pct: float) -> float | None:
    """The pct-th percentile by nearest rank (burstable billing's): sorted ascending, the ceil(pct/100 x n)-th."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100.0 * len(ordered)) - 1)]


def cumulative_at(points: list[tuple[float, float]], t: float) -> float:
    """A counter sampled at `points` (time, value; ascending) at time t, linear between samples, flat before
    the first and after the last."""
    if not points:
        return 0.0
    if t <= points[0][0]:
        return points[0][1]
    for (ta, va), (tb, vb) in zip(points, points[1:]):
        if t <= tb:
            return va + (vb - va) * (t - ta) / (tb - ta) if tb > ta else vb
    return points[-1][1]


def bin_edges(end_s: float, width: float = BIN_SECONDS) -> list[float]:
    n = max(1, math.ceil(end_s / width - 1e-9))
    return [k * width for k in range(n + 1)]


def counter_bins(points: list[tuple[float, float]], edges: list[float]) -> list[float]:
    """Bytes per bin of a cumulative counter."""
    return [max(0.0, cumulative_at(points, b) - cumulative_at(points, a)) for a, b in zip(edges, edges[1:])]


def interval_bins(intervals: list[tuple[float, float]], bytes_per_s: float, edges: list[float]) -> list[float]:
    """Bytes per bin of sessions each sending `bytes_per_s` over [start, end)."""
    out = []
    for a, b in zip(edges, edges[1:]):
        out.append(sum(max(0.0, min(b, e) - max(a, s)) for s, e in intervals) * bytes_per_s)
    return out


def reduction(server: float, unicast: float) -> float | None:
    return None if unicast <= 0 else 100.0 * (1.0 - server / unicast)


def peak_figures(server_bins: list[float], unicast_bins: list[float], total_uplink_bps: float,
                 width: float = BIN_SECONDS) -> dict:
    """The billed peaks (bits/s), the peak reduction, and its bound: every box's upload over the peak's
    demand, at most 100%."""
    ps = nearest_rank([8 * b / width for b in server_bins], BILLING_PCT) or 0.0
    pu = nearest_rank([8 * b / width for b in unicast_bins], BILLING_PCT) or 0.0
    return {"peak_server_bps": ps, "peak_unicast_bps": pu, "peak_reduction_pct": reduction(ps, pu),
            "peak_bound_pct": min(100.0, 100.0 * total_uplink_bps / pu) if pu > 0 else None}


def subtract(intervals: list[tuple[float, float]], start: float, end: float) -> list[tuple[float, float]]:
    """[start, end) without the given intervals: a box's idle time."""
    out, at = [], start
    for s, e in sorted(intervals):
        if e <= at:
            continue
        if s > at:
            out.append((at, min(s, end)))
        at = max(at, e)
        if at >= end:
            break
    if at < end:
        out.append((at, end))
    return [(a, b) for a, b in out if b > a]


def overlap(intervals: list[tuple[float, float]], a: float, b: float) -> float:
    return sum(max(0.0, min(b, e) - max(a, s)) for s, e in intervals)


def idle_upload(samples: list[tuple[float, float]], idle: list[tuple[float, float]], uplink_bps: float,
                start: float, end: float) -> tuple[float, float, float]:
    """(bytes uploaded while idle, what the uplink allowed while idle, bytes uploaded in all) between the
    polls inside [start, end]: each poll interval's bytes split by its idle share."""
    up_idle = cap = total = 0.0
    pts = [(t, v) for t, v in samples if start - 1e-9 <= t <= end + 1e-9]
    for (ta, va), (tb, vb) in zip(pts, pts[1:]):
        if tb <= ta:
            continue
        share = overlap(idle, ta, tb) / (tb - ta)
        up_idle += (vb - va) * share
        total += vb - va
        cap += uplink_bps / 8.0 * overlap(idle, ta, tb)
    return up_idle, cap, total


def idle_cpu_pct(samples: list[tuple[float, int]], idle: list[tuple[float, float]]) -> float | None:
    """CPU of one process over the sample intervals wholly inside its idle time, % of one core."""
    ticks = seconds = 0.0
    for (ta, ca), (tb, cb) in zip(samples, samples[1:]):
        if tb > ta and overlap(idle, ta, tb) >= (tb - ta) - 1e-6:
            ticks += cb - ca
            seconds += tb - ta
    return 100.0 * ticks / TICKS / seconds if seconds >= 5 else None


def _spread(values: list) -> dict:
    v = [x for x in values if x is not None]
    if not v:
        return {"median": None, "p95": None, "max": None, "count": 0}
    return {"median": statistics.median(v), "p95": percentile(v, 95), "max": max(v), "count": len(v)}


def players_behind(records: list[dict]) -> str | None:
    """A run whose players stalled where the boxes did not measures the machine, not the boxes: a player
    that falls behind (the machine too busy to run it) reads its box later, so that session stays in the
    swarm longer and takes more from its peers and less from the server than it would have. A few seconds
    over an evening move nothing; past 1% of the time played the sessions' overrun starts to show."""
    player = sum(r["player_stalls"] for r in records)
    box = sum(r["box_stalls"] for r in records)
    player_s = sum(r["player_stall_s"] for r in records)
    box_s = sum(r["box_stall_s"] for r in records)
    played_s = sum(r["played_s"] for r in records)
    if player_s - box_s <= max(0.01 * played_s, 1.0):
        return None
    return (f"the players stalled {player} times ({player_s:.0f} s) where the boxes stalled {box} times "
            f"({box_s:.1f} s), of {played_s:.0f} s played: the players fell behind their boxes, so this run's "
            f"figures are the machine's, not the system's; run it with fewer runs beside it")


def compute(s, w, *, records: list[dict], t0: float, end_s: float, metrics: list, boxes: list[dict],
            res: dict, cpu_samples: dict) -> dict:
    """The report. `metrics`: (monotonic time, VoD bytes by title, tracker bytes), every second;
    `records`: SessionRecord dicts (evening seconds); `boxes`: index, name, uplink_bps, probe, upload_samples
    (monotonic time, cumulative upload), push_bytes; `cpu_samples`: process name -> (monotonic, ticks)."""
    notes = []
    bps = s.bitrate / 8.0
    # ---- the server's side, on the evening's clock: the VoD server, the tracker, the probe box ----
    probe_box = next((b for b in boxes if b["probe"]), None)
    probe = [(t - t0, v) for t, v in probe_box["upload_samples"]] if probe_box else []
    series = [(t - t0, sum(per.values()) + tracker + (cumulative_at(probe, t - t0) if probe else 0.0))
              for t, per, tracker in metrics]
    end = max([end_s] + [r["stop_s"] or 0 for r in records])
    edges = bin_edges(end)
    server_bins = counter_bins(series, edges)
    base = cumulative_at(series, 0.0)
    server_bytes = cumulative_at(series, end) - base
    # The night: a push window before the evening. Its bytes are the server's too, but off-peak: they count in
    # the bytes, not in the evening's billed peak (their own peak is given beside it).
    night = s.night_seconds
    night_bytes = base - cumulative_at(series, -night) if night else 0.0
    night_bins = counter_bins(series, [-night + k * BIN_SECONDS for k in range(int(night // BIN_SECONDS) + 1)])
    vod = [(t - t0, sum(per.values())) for t, per, _ in metrics]
    vod_bytes = cumulative_at(vod, end) - cumulative_at(vod, 0.0)
    probe_bytes = cumulative_at(probe, end) - cumulative_at(probe, 0.0) if probe else 0.0
    # ---- unicast for the same sessions ----
    played = [r for r in records if r["play_s"] is not None and r["played_s"] > 0]
    intervals = [(first_byte(r), first_byte(r) + r["played_s"]) for r in played]
    unicast_bins = interval_bins(intervals, bps, edges)
    unicast_bytes = sum(r["played_s"] for r in played) * bps
    viewers = [b for b in boxes if not b["probe"]]
    total_uplink = sum(b["uplink_bps"] for b in viewers)
    peaks = peak_figures(server_bins, unicast_bins, total_uplink)
    # ---- per title, by popularity rank ----
    per_title = []
    for rank in range(1, s.titles + 1):
        name = title_name(rank)
        sent = [(t - t0, per.get(name, 0.0)) for t, per, _ in metrics]
        srv = cumulative_at(sent, end) - cumulative_at(sent, 0.0)
        uni = sum(r["played_s"] for r in played if r["title"] == rank) * bps
        per_title.append({"rank": rank, "title": name, "sessions": sum(1 for r in records if r["title"] == rank),
                          "unicast_bytes": int(uni), "server_bytes": int(srv),
                          "offload_pct": reduction(srv, uni)})
    # ---- the boxes: idle upload, push, CPU ----
    up_idle = cap_idle = up_total = 0.0
    idle_cpu, box_rows, probe_row = [], [], None
    rows_by_name = {p["name"]: p for p in res.get("processes", [])}
    for b in boxes:
        own = [(r["started_s"], r["stop_s"] if r["stop_s"] is not None else end) for r in records
               if not b["probe"] and r["box"] == b["index"] and r["started_s"] is not None]
        idle = subtract(own, 0.0, end)
        ui, ci, ut = idle_upload([(t - t0, v) for t, v in b["upload_samples"]], idle, b["uplink_bps"], 0.0, end)
        cpu_idle = idle_cpu_pct([(t - t0, c) for t, c in cpu_samples.get(b["name"], [])], idle)
        p = rows_by_name.get(b["name"], {})
        row = {"box": b["name"], "uplink_bps": b["uplink_bps"], "warm_titles": b["warm"],
               "sessions": len(own), "idle_s": round(sum(e - a for a, e in idle), 1),
               "bytes_uploaded": int(ut), "bytes_uploaded_idle": int(ui),
               "idle_upload_used_pct": 100.0 * ui / ci if ci else None, "push_bytes": b["push_bytes"],
               "titles_held_at_end": b["titles_held"], "cpu_pct": p.get("cpu_pct"),
               "cpu_pct_idle": cpu_idle, "mem_private_peak_kb": p.get("mem_private_peak_kb"),
               "mem_private_median_kb": p.get("mem_private_median_kb")}
        if b["probe"]:  # never watches: idle all evening
            probe_row = row
            continue
        up_idle, cap_idle, up_total = up_idle + ui, cap_idle + ci, up_total + ut
        idle_cpu.append(cpu_idle)
        box_rows.append(row)
    # ---- sessions as the viewers saw them ----
    done = [r for r in records if not r["error"] and r["played_s"] >= r["watch_s"] - 0.5]
    errors = [r for r in records if r["error"]]
    if errors:
        notes.append(f"{len(errors)} of {len(records)} sessions did not end as planned; first: "
                     f"session {errors[0]['index']} ({errors[0]['error']})")
    late = [r["started_s"] - r["planned_start_s"] for r in records if r["started_s"] is not None]
    note = players_behind(records)
    if note:
        notes.append(note)
    out = {
        "scenario": s.name,
        "boxes": s.boxes,
        "titles": s.titles,
        "sessions": len(records),
        "sessions_completed": len(done),
        "sessions_dropped": w.dropped,
        "sessions_with_title_held": sum(1 for r in records if r["held_before"]),
        "sessions_started_late": sum(1 for x in late if x > 1.0),
        "watching_at_once_max": concurrency(intervals),
        "evening_seconds": round(end, 1),
        "unicast_bytes": int(unicast_bytes),
        "server_bytes": int(server_bytes),
        "night_seconds": night,
        "night_server_bytes": int(night_bytes),
        "night_peak_bps": max([8 * x / BIN_SECONDS for x in night_bins], default=0.0),
        "vod_server_bytes": int(vod_bytes),
        "probe_box_bytes": int(probe_bytes),
        "tracker_bytes": int(server_bytes - vod_bytes - probe_bytes),
        "reduction_pct": reduction(server_bytes + night_bytes, unicast_bytes),
        **peaks,
        "stalls": {"count": sum(r["box_stalls"] for r in records),
                   "seconds": round(sum(r["box_stall_s"] for r in records), 2)},
        "player_stalls": {"count": sum(r["player_stalls"] for r in records),
                          "seconds": round(sum(r["player_stall_s"] for r in records), 2)},
        "startup_ms": _ms(_spread([r["startup_ms"] for r in records])),
        "box_startup_ms": _ms(_spread([r["box_startup_ms"] for r in records])),
        "seek_ms": _ms(_spread([x for r in records for x in r["seek_ms"]])),
        "box_seek_ms": _ms(_spread([x for r in records for x in r["box_seek_ms"]])),
        "bytes_from_peers": sum(r["bytes_from_peers"] for r in records),
        "bytes_from_server": sum(r["bytes_from_server"] for r in records),
        "boxes_upload_bytes": int(up_total),
        "idle_upload_bytes": int(up_idle),
        "idle_upload_capacity_bytes": int(cap_idle),
        "idle_upload_used_pct": 100.0 * up_idle / cap_idle if cap_idle else None,
        "push_bytes": int(sum(b["push_bytes"] for b in viewers)),
        "box_resources": {
            "cpu_pct": _spread([r["cpu_pct"] for r in box_rows]),
            "cpu_pct_idle": _spread(idle_cpu),
            "mem_private_peak_mb": _spread([r["mem_private_peak_kb"] / 1024 for r in box_rows
                                            if r["mem_private_peak_kb"]]),
            "mem_private_median_mb": _spread([r["mem_private_median_kb"] / 1024 for r in box_rows
                                              if r["mem_private_median_kb"]]),
        },
        "probe_box": probe_row,
        "series": {"t_s": [round(t, 2) for t, _ in series],
                   "server_bytes": [int(v - base) for _, v in series]},
        "bins": {"width_s": BIN_SECONDS, "server_bps": [8 * b / BIN_SECONDS for b in server_bins],
                 "unicast_bps": [8 * b / BIN_SECONDS for b in unicast_bins]},
        "per_title": per_title,
        "per_box": box_rows,
        "per_session": records,
        "resources": res,
        "notes": notes,
    }
    return out


def first_byte(r: dict) -> float:
    """When a session's playback began, evening seconds: its play request plus the startup the player saw."""
    return r["play_s"] + (r["startup_ms"] or 0.0) / 1000.0


def _ms(d: dict) -> dict:
    return {k: (round(v, 1) if isinstance(v, float) else v) for k, v in d.items()}


# ---- report.md ----

def _pct(v) -> str:
    return "n/a" if v is None else f"{v:.1f}%"


def _mbps(v) -> str:
    return "n/a" if v is None else f"{v / 1e6:.2f} Mbps"


def _msf(v) -> str:
    return "n/a" if v is None else f"{v:.0f} ms"


def render_markdown(r: dict, plots: list[str]) -> str:
    sh = r["shape"]
    out = [f"# Toast catalogue report: {r['scenario']}", "",
           f"Shape: **{sh['label']}**. {sh['sessions']} sessions ({sh['sessions_dropped']} dropped: no idle box), "
           f"{sh['watching_at_once_max']} watching at once at most (planned peak {sh['peak_viewers_planned']:g}), "
           f"mean watch {sh['mean_watch_s']:g} s of {sh['title_seconds']:g} s, "
           f"upload / bitrate {sh['upload_over_bitrate_median']:g} median and "
           f"{sh['upload_over_bitrate_mean']:g} mean, {sh['warm_titles_mean']:g} warm titles a box, cache "
           f"{sh['cache']}, push {'on' if sh['push'] else 'off'}.", ""]
    if r.get("notes"):
        out += [f"> {n}" for n in r["notes"]] + [""]
    br = r["box_resources"]
    out += [
        "| metric | value |", "|---|---|",
        f"| **peak server bandwidth** (p95 of 10 s bins) | **{_mbps(r['peak_server_bps'])}** against unicast's "
        f"{_mbps(r['peak_unicast_bps'])}: **{_pct(r['peak_reduction_pct'])} below** "
        f"(peak bound {_pct(r['peak_bound_pct'])}: every box's upload over the peak's demand) |",
        f"| server bytes (VoD + tracker + probe box{'; + the night before' if r['night_seconds'] else ''}) | "
        f"{(r['server_bytes'] + r['night_server_bytes']) / 1e6:.1f} MB against unicast's "
        f"{r['unicast_bytes'] / 1e6:.1f} MB: **{_pct(r['reduction_pct'])} below** |",
        *([f"| the night before the evening ({r['night_seconds']:g} s, push) | {r['night_server_bytes'] / 1e6:.1f} MB "
           f"from the server, at most {_mbps(r['night_peak_bps'])} in a 10 s bin (not in the evening's peak) |"]
          if r["night_seconds"] else []),
        f"| sessions (completed, title already on the box, started late; most watching at once) | {r['sessions']} "
        f"({r['sessions_completed']}, {r['sessions_with_title_held']}, {r['sessions_started_late']}; "
        f"{r['watching_at_once_max']}) |",
        f"| stalls (the boxes' StreamWatcher) | {r['stalls']['count']} ({r['stalls']['seconds']:.1f} s); "
        f"as the players saw them {r['player_stalls']['count']} ({r['player_stalls']['seconds']:.1f} s) |",
        f"| startup median / p95 (play request to first media byte) | {_msf(r['startup_ms']['median'])} / "
        f"{_msf(r['startup_ms']['p95'])} (the boxes': {_msf(r['box_startup_ms']['median'])} / "
        f"{_msf(r['box_startup_ms']['p95'])}) |",
        f"| seeks: count, latency median / p95 | {r['seek_ms']['count']}, {_msf(r['seek_ms']['median'])} / "
        f"{_msf(r['seek_ms']['p95'])} |",
        f"| idle boxes' upload used (of uplink x idle time) | {_pct(r['idle_upload_used_pct'])} "
        f"({r['idle_upload_bytes'] / 1e6:.1f} MB of {r['boxes_upload_bytes'] / 1e6:.1f} MB uploaded) |",
        f"| push bytes (fetched by assignment) | {r['push_bytes'] / 1e6:.1f} MB |",
        f"| box CPU, % of one core, median / max (idle: median / max) | "
        f"{_two(br['cpu_pct'], '%')} ({_two(br['cpu_pct_idle'], '%')}) |",
        f"| box private memory, peak: median / max | {_two(br['mem_private_peak_mb'], ' MB')} |",
    ]
    p = r.get("probe_box")
    if p:
        out.append(f"| idle probe box holding all {r['titles']} titles: CPU, private memory peak, uploaded | "
                   f"{_num(p['cpu_pct_idle'], '%', 2)}, {_num((p['mem_private_peak_kb'] or 0) / 1024, ' MB', 1)}, "
                   f"{p['bytes_uploaded'] / 1e6:.1f} MB |")
    out.append("")
    res = r.get("resources", {})
    m = res.get("machine", {})
    if m.get("busy_pct_mean") is not None:
        out += [f"The machine ({res['cores']} cores) was {m['busy_pct_mean']:.0f}% busy on average over "
                f"{m['seconds']:.0f} s, {m['busy_pct_peak']:.0f}% in its busiest 5 s, "
                f"{m.get('saturated_seconds', 0):.0f} s saturated; this run's processes took "
                f"{m.get('run_share_pct', 0):.0f}% of all cores. CPU seconds by role: "
                + ", ".join(f"{k} {v:.0f}" for k, v in sorted(res.get("cpu_seconds_by_role", {}).items())) + ".", ""]
    out += ["## Offload by popularity rank", "", "| rank | title | sessions | unicast | server | offload |",
            "|---|---|---|---|---|---|"]
    for t in r["per_title"]:
        out.append(f"| {t['rank']} | {t['title']} | {t['sessions']} | {t['unicast_bytes'] / 1e6:.1f} MB | "
                   f"{t['server_bytes'] / 1e6:.1f} MB | {_pct(t['offload_pct'])} |")
    out.append("")
    for plot in plots:
        out += [f"![{plot.rsplit('.', 1)[0]}]({plot})", ""]
    return "\n".join(out)


def _two(d: dict, unit: str) -> str:
    if d.get("median") is None:
        return "n/a"
    return f"{d['median']:.2f}{unit} / {d['max']:.2f}{unit}"


def _num(v, unit: str, digits: int) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}{unit}"


def plot(r: dict, out_dir) -> list[str]:
    """rate.png (the server's rate beside unicast's, the billed peaks) and offload.png (by rank)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    files = []
    t, b = r["series"]["t_s"], r["series"]["server_bytes"]
    fig, ax = plt.subplots(figsize=(8, 3.8))
    since = -r.get("night_seconds", 0.0)
    keep = [i for i in range(len(t) - 1) if t[i + 1] > t[i] and t[i] >= since]
    rt = [(t[i] + t[i + 1]) / 2 for i in keep]
    rv = [8 * (b[i + 1] - b[i]) / (t[i + 1] - t[i]) / 1e6 for i in keep]
    ax.plot(rt, rv, lw=0.8, color="tab:blue", alpha=0.6, label="server, per second")
    w = r["bins"]["width_s"]
    centers = [w * (k + 0.5) for k in range(len(r["bins"]["server_bps"]))]
    ax.step(centers, [v / 1e6 for v in r["bins"]["server_bps"]], where="mid", color="tab:blue",
            label=f"server, {w:g} s bins")
    ax.step(centers, [v / 1e6 for v in r["bins"]["unicast_bps"]], where="mid", color="tab:red",
            label="unicast, same sessions")
    ax.axhline(r["peak_server_bps"] / 1e6, color="tab:blue", ls="--", lw=0.8)
    ax.axhline(r["peak_unicast_bps"] / 1e6, color="tab:red", ls="--", lw=0.8)
    ax.set_xlabel("seconds into the evening" + (" (before 0: the night's push)" if since < 0 else ""))
    ax.set_ylabel("Mbps")
    ax.set_title(f"{r['scenario']}: peak (p95) {_pct(r['peak_reduction_pct'])} below unicast, "
                 f"bytes {_pct(r['reduction_pct'])}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "rate.png", dpi=100)
    plt.close(fig)
    files.append("rate.png")
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ranks = [x["rank"] for x in r["per_title"]]
    ax.bar(ranks, [x["offload_pct"] if x["offload_pct"] is not None else 0 for x in r["per_title"]])
    ax.set_xlabel("title popularity rank")
    ax.set_ylabel("below unicast (%)")
    ax.set_title("offload by title", fontsize=9)
    fig.tight_layout()
    fig.savefig(out_dir / "offload.png", dpi=100)
    plt.close(fig)
    files.append("offload.png")
    return files
