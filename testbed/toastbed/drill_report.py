"""The fault drills' report: a table row per drill from its runs (totals for what must be complete or 0,
medians per run for the rest), the Markdown table and report, and DIR/drills.json."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from . import scenario as scen


def summarize(runs: list[dict]) -> dict:
    """A drill's table row from its runs: totals for what must be complete or 0, medians per run for the rest."""
    def median(key):
        values = [r[key] for r in runs if r[key] is not None]
        return (statistics.median(values) if values else None), len(values)

    row = {"drill": runs[0]["drill"], "what": runs[0]["what"], "runs": len(runs),
           "viewers": sum(r["viewers"] for r in runs), "completed": sum(r["completed"] for r in runs),
           "bytes_lost": sum(r["bytes_lost"] for r in runs)}
    for key in ("stalls", "stall_seconds", "service_back_s", "viewer_back_s"):
        row[key], row[key + "_runs"] = median(key)
    row["notes"] = [n if len(runs) == 1 else f"run {i + 1}: {n}" for i, r in enumerate(runs) for n in r["notes"]]
    return row


def fmt_s(row: dict, key: str) -> str:
    """A median in seconds, with how many runs had one when some did not."""
    v, n = row[key], row.get(key + "_runs", 1)
    if v is None:
        return "-"
    return f"{v:.2f}" + (f" ({n} of {row['runs']} runs)" if n < row.get("runs", 1) else "")


def table(rows: list[dict]) -> str:
    out = ["| drill | runs | viewers completed | stalls per run (count, s) | bytes lost | service back (s) | "
           "viewers back (s) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['drill']} | {r.get('runs', 1)} | {r['completed']}/{r['viewers']} | {r['stalls']:g}, "
                   f"{r['stall_seconds']:.2f} | {r['bytes_lost']} | {fmt_s(r, 'service_back_s')} | "
                   f"{fmt_s(r, 'viewer_back_s')} |")
    return "\n".join(out)


def render(rows: list[dict], s: scen.Scenario, fault_at: float, fault_seconds: float) -> str:
    runs = rows[0]["runs"] if rows else 1
    lines = ["# Fault drills", "",
             f"{s.clients} viewers {s.arrival_interval:g} s apart in network namespaces, a {s.title_seconds:g} s "
             f"title at {s.bitrate / 1e6:g} Mbps ({-(-s.title_bytes // s.piece_size)} pieces of "
             f"{s.piece_size // 1024} KiB), picker {s.picker}, upload {s.upload_limit / 1e6:g} Mbps, no seed; "
             f"each fault at {fault_at:g} s (the tracker's 1 s before the last arrival, the bit rot's at 1.5 s) "
             f"for {fault_seconds:g} s. "
             f"One swarm per drill and run; {runs} run(s) each (medians per run; bytes lost and viewers "
             "completed are totals).", "", table(rows), "",
             "## What each drill did and saw", ""]
    for r in rows:
        lines.append(f"- **{r['drill']}**: {r['what']}." + (" " + "; ".join(r["notes"]) + "." if r["notes"] else ""))
    return "\n".join(lines) + "\n"


def write_report(out: Path, s: scen.Scenario, fault_at: float, fault_seconds: float,
                 runs: dict[str, list[dict]]) -> list[dict]:
    """DIR/drills.json (every run, and a row per drill) and DIR/report.md; returns the rows."""
    rows = [summarize(r) for r in runs.values() if r]
    (out / "drills.json").write_text(json.dumps({"scenario": s.to_json(), "fault_at": fault_at,
                                                 "fault_seconds": fault_seconds, "drills": rows, "runs": runs},
                                                indent=2))
    (out / "report.md").write_text(render(rows, s, fault_at, fault_seconds))
    return rows
