"""Results of one run, computed only from the clients' stats files and the servers' metrics."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from .scenario import Scenario

_PROM_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$')


def prometheus_sum(text: str, name: str) -> float:
    """Sum of every sample of metric `name` (all label sets) in Prometheus text format."""
    total = 0.0
    for line in text.splitlines():
        m = _PROM_LINE.match(line.strip())
        if m and m.group(1) == name:
            total += float(m.group(3))
    return total


def read_stats(path: Path) -> tuple[dict | None, list[dict]]:
    """The summary line (or None if the client never wrote one) and the per-second lines of a stats file."""
    summary, lines = None, []
    try:
        text = path.read_text()
    except OSError:
        return None, []
    for raw in text.splitlines():
        raw = raw.strip()
        if not raw:
            continue
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if rec.get("event") == "summary":
            summary = rec
        else:
            lines.append(rec)
    return summary, lines


def percentile(values: list[float], pct: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * pct / 100.0
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def ceiling_pct(s: Scenario) -> float:
    """Best reduction the scenario allows: 1 - 1/N, and upload/bitrate for streamers uploading below the bitrate."""
    ceiling = (1.0 - 1.0 / s.clients) * 100.0
    if s.behavior == "stream" and s.upload_limit < s.bitrate:
        ceiling = min(ceiling, 100.0 * s.upload_limit / s.bitrate)
    return ceiling


def compute(s: Scenario, title_bytes: int, client_summaries: list[dict | None], vod_bytes: float,
            seed_bytes: float, tracker_bytes: float, viewers_fetch: bool = False) -> dict:
    """The report's numbers. `client_summaries` has one entry per client (None: no summary was written).
    `viewers_fetch`: the viewers are what fetches from the VoD server (toast-client), so what it sent beyond
    what they counted received is answers they stopped (a peer delivered the piece first) and is wasted."""
    n = len(client_summaries)
    unicast = title_bytes * n
    server = vod_bytes + seed_bytes + tracker_bytes
    rows, startups = [], []
    stall_count, stall_seconds, redundant, raced, uploaded, from_server, wasted = 0, 0.0, 0, 0, 0, 0, 0
    capacity = 0.0  # what the viewers could have uploaded: their cap over the time each was present
    for i, summ in enumerate(client_summaries):
        summ = summ or {}
        row = {
            "client": i,
            "completed": bool(summ.get("completed", False)),
            "bytes_from_peers": int(summ.get("bytes_from_peers", 0)),
            "bytes_from_operator": int(summ.get("bytes_from_operator", 0)),
            "bytes_from_server": int(summ.get("bytes_from_server", 0)),
            "bytes_uploaded": int(summ.get("bytes_uploaded", 0)),
            "bytes_redundant": int(summ.get("bytes_redundant", 0)),
            "bytes_redundant_raced": int(summ.get("bytes_redundant_raced", 0)),
            "bytes_server_wasted": int(summ.get("bytes_server_wasted", 0)),
            "stalls": int(summ.get("stalls", 0)),
            "stall_seconds": float(summ.get("stall_seconds", 0.0)),
            "startup_ms": summ.get("startup_ms"),
            "summary_written": bool(summ),
        }
        present = summ.get("t_ms")
        if isinstance(present, (int, float)) and present > 0:
            capacity += s.upload_limit / 8.0 * present / 1000.0
        rows.append(row)
        stall_count += row["stalls"]
        stall_seconds += row["stall_seconds"]
        redundant += row["bytes_redundant"]
        raced += row["bytes_redundant_raced"]
        from_server += row["bytes_from_server"]
        wasted += row["bytes_server_wasted"]
        uploaded += row["bytes_uploaded"]
        if isinstance(row["startup_ms"], (int, float)) and row["startup_ms"] >= 0:
            startups.append(float(row["startup_ms"]))
    reduction = 100.0 * (1.0 - server / unicast) if unicast else 0.0
    # A toast-client stops a fetch whose piece a peer delivered first by closing the connection; the server
    # may have sent some of the answer by then, which the client never reads.
    unreceived = 0
    if viewers_fetch and all(summ is not None for summ in client_summaries):
        unreceived = max(0, int(vod_bytes) - from_server)
    sent_to_viewers = from_server + unreceived
    return {
        "scenario": s.name,
        "clients": n,
        "completed_clients": sum(1 for r in rows if r["completed"]),
        "title_bytes": title_bytes,
        "unicast_bytes": unicast,
        "server_bytes": int(server),
        "vod_server_bytes": int(vod_bytes),
        "seed_bytes": int(seed_bytes),
        "tracker_bytes": int(tracker_bytes),
        "vod_share_pct": 100.0 * vod_bytes / server if server else 0.0,
        "seed_share_pct": 100.0 * seed_bytes / server if server else 0.0,
        "reduction_pct": reduction,
        "ceiling_pct": ceiling_pct(s),
        # The viewers' upload: what they sent peers over what their caps allowed while they were present
        # (from start to summary). Where it is near 100% the swarm carries all it can, whatever the picker;
        # upload_bound_pct is the reduction if every byte of it had gone to peers (at most 1 - 1/N), an upper
        # bound: the last viewers have nobody behind them to upload to.
        "upload_capacity_bytes": int(capacity),
        "upload_used_pct": 100.0 * uploaded / capacity if capacity else None,
        "upload_bound_pct": 100.0 * min(capacity, unicast - title_bytes) / unicast if unicast and capacity else None,
        "total_traffic_bytes": int(server + uploaded),
        "redundant_bytes": redundant,
        # Of those, peers' blocks of pieces the server had already delivered: it raced peers sending them.
        "redundant_raced_bytes": raced,
        # Server bytes that did not help: pieces a peer delivered first (received, or sent and dropped with a
        # stopped request), failed or corrupt responses; a share of what the VoD server sent the viewers.
        "server_wasted_bytes": wasted + unreceived,
        "server_unreceived_bytes": unreceived,
        "server_wasted_pct": 100.0 * (wasted + unreceived) / sent_to_viewers if sent_to_viewers else 0.0,
        "stalls": {"count": stall_count, "seconds": stall_seconds},
        "startup_ms": {"median": percentile(startups, 50), "p95": percentile(startups, 95)},
        "per_client": rows,
    }


def add_resources(r: dict, res: dict) -> None:
    """Puts the sampler's figures (resources.summarize) in the report: each client's CPU and memory in its
    row, the rest under "resources"."""
    by_name = {p["name"]: p for p in res["processes"]}
    for row in r["per_client"]:
        p = by_name.get(f"client{row['client']:03d}", {})
        for key in ("cpu_seconds", "cpu_pct", "mem_private_peak_kb", "mem_private_median_kb"):
            row[key] = p.get(key)
    r["resources"] = res


def _mb(b: float) -> str:
    return f"{b / 1e6:.1f} MB"


def _seed_kind(r: dict) -> str:
    config = r.get("scenario_config") or {}
    if not config.get("seed", True):
        return "none"
    if config.get("seed_client") == "toast":
        return "Toast's, leader choker"
    return "stock libtorrent"


def render_markdown(report: dict, plots: list[str]) -> str:
    r = report
    out = [f"# Toast testbed report: {r['scenario']}", ""]
    if r.get("shape"):
        sh = r["shape"]
        out += [f"Shape: **{sh['label']}**. Arrivals {sh['gap_piece_times']:g} piece-times apart, "
                f"{sh['watching_at_once']} watching and {sh['present_at_once']} present at once, arrival span "
                f"{sh['span_over_title']:g}x the title ({sh['title_pieces']} pieces of {sh['piece_seconds']:g} s), "
                f"upload / bitrate {sh['upload_over_bitrate']:g}. Thesis: 36 piece-times, ~95 watching, "
                "3.15x, 0.5 / 0.75 / 1.", ""]
    if r.get("notes"):
        out += [f"> {n}" for n in r["notes"]] + [""]
    out += [
        "| metric | value |", "|---|---|",
        f"| clients (completed) | {r['clients']} ({r['completed_clients']}) |",
        f"| unicast bytes | {_mb(r['unicast_bytes'])} |",
        f"| server bytes (VoD + seed + tracker) | {_mb(r['server_bytes'])} |",
        f"| VoD server / seed share (the seed: {_seed_kind(r)}) | {r['vod_share_pct']:.1f}% / "
        f"{r['seed_share_pct']:.1f}% |",
        f"| **reduction vs unicast** | **{r['reduction_pct']:.1f}%** (ceiling {r['ceiling_pct']:.1f}%)"
        + (f"; not comparable: {r['clients'] - r['completed_clients']} viewers did not complete |"
           if r["completed_clients"] < r["clients"] else " |"),
        f"| total traffic | {_mb(r['total_traffic_bytes'])} |",
        *([f"| viewers' upload used (of cap x time present) | {r['upload_used_pct']:.1f}% "
           f"(reduction if all of it reached peers: {r['upload_bound_pct']:.1f}%) |"]
          if r.get("upload_used_pct") is not None else []),
        f"| redundant bytes (of pieces the server raced) | {_mb(r['redundant_bytes'])} "
        f"({_mb(r.get('redundant_raced_bytes', 0))}) |",
        f"| wasted server bytes | {_mb(r.get('server_wasted_bytes', 0))} "
        f"({r.get('server_wasted_pct', 0.0):.1f}% of what the server sent the viewers; "
        f"{_mb(r.get('server_unreceived_bytes', 0))} of it sent for requests they stopped) |",
        f"| stalls | {r['stalls']['count']} ({r['stalls']['seconds']:.1f} s) |",
        f"| startup median / p95 | {_fmt_ms(r['startup_ms']['median'])} / {_fmt_ms(r['startup_ms']['p95'])} |",
        "",
    ]
    if r.get("baselines"):
        out += ["## Baselines (same scenario)", "", "| system | server bytes | reduction | stalls |",
                "|---|---|---|---|",
                f"| Toast | {_mb(r['server_bytes'])} | {r['reduction_pct']:.1f}% | {r['stalls']['count']} |"]
        for name, b in r["baselines"].items():
            out.append(f"| {name} | {_mb(b['server_bytes'])} | {b['reduction_pct']:.1f}% | {b['stalls']} |")
        out.append("")
    if r.get("shaping"):
        sh = r["shaping"]
        limit = f"{sh['download_limit'] / 1e6:g} Mbps tbf" if sh["download_limit"] else "no tbf limit"
        out += ["## Network shaping", "",
                f"Each client in its own network namespace on a bridge ({limit} towards each client, "
                f"{sh['delay_ms']:g} ms added delay). Bytes through each client's shaper: " +
                ", ".join(_mb(b) for b in sh["bytes_towards_clients"]) + ".", ""]
    if r.get("resources"):
        out += render_resources(r["resources"])
    out += ["## Clients", "", "| # | done | from peers (of it the operator's) | from server | uploaded | redundant | "
            "stalls | startup | CPU | memory peak / median |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in r["per_client"]:
        out.append(f"| {c['client']} | {'yes' if c['completed'] else 'no'} | {_mb(c['bytes_from_peers'])} "
                   f"({_mb(c.get('bytes_from_operator', 0))}) | "
                   f"{_mb(c['bytes_from_server'])} | {_mb(c['bytes_uploaded'])} | {_mb(c['bytes_redundant'])} | "
                   f"{c['stalls']} ({c['stall_seconds']:.1f} s) | {_fmt_ms(c['startup_ms'])} | "
                   f"{_fmt_cpu(c.get('cpu_seconds'), c.get('cpu_pct'))} | "
                   f"{_fmt_kb(c.get('mem_private_peak_kb'))} / {_fmt_kb(c.get('mem_private_median_kb'))} |")
    out.append("")
    for p in plots:
        out += [f"![{Path(p).stem}]({p})", ""]
    return "\n".join(out)


def render_resources(res: dict) -> list[str]:
    c, m = res["clients"], res["machine"]

    def spread(d, fmt):
        return "n/a" if d["median"] is None else f"{fmt(d['median'])} / {fmt(d['max'])}"
    out = ["## Resources", "",
           "Sampled every second from /proc: CPU time (utime + stime) and private memory (anonymous resident) of "
           "each process; the machine's busy share counts every process on it, not only this run's.", "",
           "| | median / max |", "|---|---|",
           f"| client CPU, % of one core over its life | {spread(c['cpu_pct'], lambda v: f'{v:.2f}%')} |",
           f"| client CPU time | {spread(c['cpu_seconds'], lambda v: f'{v:.1f} s')} |",
           f"| client private memory, peak | {spread(c['mem_private_peak_mb'], lambda v: f'{v:.1f} MB')} |",
           f"| client private memory, median over its life | "
           f"{spread(c['mem_private_median_mb'], lambda v: f'{v:.1f} MB')} |", ""]
    roles = ", ".join(f"{role} {sec:.1f} s" for role, sec in sorted(res["cpu_seconds_by_role"].items()))
    if m.get("busy_pct_mean") is not None:
        out += [f"CPU time by role: {roles}. The machine ({res['cores']} cores) was {m['busy_pct_mean']:.0f}% busy "
                f"on average over {m['seconds']:.0f} s, {m['busy_pct_peak']:.0f}% in its busiest 5 s, "
                f"{m.get('saturated_seconds', 0.0):.0f} s saturated (95% or more); this run's "
                f"processes account for {m.get('run_share_pct', 0.0):.0f}% of all cores.", ""]
    peaks = res.get("cpu_series", {}).get("peak_pct_of_one_core", {})
    if peaks:
        busiest = ", ".join(f"{role} {pct:.0f}%" for role, pct in sorted(peaks.items()))
        out += [f"Busiest sample interval per role, % of one core: {busiest} (each role's use per interval: "
                "`resources.cpu_series` in report.json).", ""]
    return out


def _fmt_cpu(seconds, pct) -> str:
    if seconds is None:
        return "n/a"
    return f"{seconds:.1f} s" + (f" ({pct:.1f}%)" if pct is not None else "")


def _fmt_kb(kb) -> str:
    return "n/a" if kb is None else f"{kb / 1024:.1f} MB"


def _fmt_ms(v) -> str:
    return "n/a" if v is None else f"{v:.0f} ms"


def plot_bytes(report: dict, path: Path) -> bool:
    """Per-client bytes from peers vs from the server. False if matplotlib is unavailable."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = report["per_client"]
    idx = [r["client"] for r in rows]
    peers = [r["bytes_from_peers"] / 1e6 for r in rows]
    server = [r["bytes_from_server"] / 1e6 for r in rows]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(idx, peers, label="from peers")
    ax.bar(idx, server, bottom=peers, label="from VoD server")
    ax.set_xlabel("client (arrival order)")
    ax.set_ylabel("MB")
    ax.set_title(f"{report['scenario']}: reduction {report['reduction_pct']:.1f}%")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
