#!/usr/bin/python3
"""CI's catalogue check: runs scenarios/catalogue_smoke.json end to end (the tracker, the VoD server with 6
titles, 14 boxes each a `toast-client serve`, the evening's sessions through their control APIs) and checks
its report.json from outside: peak_reduction_pct, reduction_pct, stalls and push_bytes present and within
sane bounds, every session completed, and no box process left once the run has ended. Exit 0 when all hold.
"""

import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import checks  # noqa: E402
from toastbed import run  # noqa: E402

SCENARIO = HERE.parent / "scenarios" / "catalogue_smoke.json"


def processes_under(path: str) -> list[str]:
    """Processes whose command line names `path` (the run's directory): what the run left behind."""
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if path in cmd:
            left.append(f"{pid}: {cmd[:120]}")
    return left


def check(r: dict) -> list[str]:
    problems = []
    for key in ("peak_reduction_pct", "reduction_pct", "stalls", "push_bytes", "peak_bound_pct",
                "peak_server_bps", "peak_unicast_bps", "per_title", "box_resources", "shape", "startup_ms"):
        if key not in r:
            problems.append(f"report.json has no {key}")
    if problems:
        return problems
    for key in ("peak_reduction_pct", "reduction_pct"):
        v = r[key]
        # The boxes hold warm titles and upload to each other: the server sends less than unicast would,
        # and never less than nothing.
        if not isinstance(v, (int, float)) or not 0 < v <= 100:
            problems.append(f"{key} is {v}, expected in (0, 100]")
    if not (isinstance(r["peak_bound_pct"], (int, float)) and 0 < r["peak_bound_pct"] <= 100):
        problems.append(f"peak_bound_pct is {r['peak_bound_pct']}, expected in (0, 100]")
    stalls = r["stalls"]
    if not (isinstance(stalls.get("count"), int) and stalls["count"] >= 0 and stalls.get("seconds", -1) >= 0):
        problems.append(f"stalls is {stalls}")
    elif stalls["count"] > r["sessions"]:
        problems.append(f"{stalls['count']} stalls in {r['sessions']} sessions")
    if r["push_bytes"] != 0:
        problems.append(f"push_bytes is {r['push_bytes']} in a scenario without push, expected 0")
    if r["sessions"] < 10 or r["sessions_completed"] != r["sessions"]:
        problems.append(f"{r['sessions_completed']} of {r['sessions']} sessions completed")
    if r["unicast_bytes"] <= 0 or r["server_bytes"] <= 0 or r["server_bytes"] >= r["unicast_bytes"]:
        problems.append(f"server bytes {r['server_bytes']} against unicast {r['unicast_bytes']}")
    if r["startup_ms"]["median"] is None:
        problems.append("no startup was measured")
    if r["seek_ms"]["count"] == 0:
        problems.append("no seek was made (seek_pct 25)")
    if len(r["per_title"]) != 6 or sum(t["sessions"] for t in r["per_title"]) != r["sessions"]:
        problems.append("per_title does not cover the 6 titles and every session")
    cpu = r["box_resources"]["cpu_pct"]["median"]
    if cpu is None or not cpu > 0:
        problems.append(f"the boxes' CPU was not sampled ({cpu})")
    if not r.get("probe_box") or r["probe_box"].get("mem_private_peak_kb") is None:
        problems.append("the idle probe box was not measured")
    if r.get("boxes_left_running"):
        problems.append(f"boxes still running after the run: {r['boxes_left_running']}")
    return problems


def main() -> int:
    bins = checks.bin_dir(__doc__)
    with tempfile.TemporaryDirectory(prefix="toast-catalogue-") as out:
        rc = run.main([str(SCENARIO), "--out", out, "--bin-dir", bins])
        left = processes_under(out)
        report = Path(out) / "report.json"
        if not report.exists():
            print(f"testbed/run exited with {rc} and wrote no report")
            return 1
        r = json.loads(report.read_text())
        problems = check(r)
        if rc != 0:
            problems.append(f"testbed/run exited with {rc}")
        if left:
            problems.append("processes left behind: " + "; ".join(left[:5]))
        torrents = sorted((Path(out) / "catalogue" / "torrents").glob("*.torrent"))
        # The probe box is on the operator's side of the bill: every torrent names it as the operator's peer.
        unnamed = [t.name for t in torrents if b"14:operator_peersl" not in t.read_bytes()]
        if len(torrents) != 6 or unnamed:
            problems.append(f"{len(torrents)} torrents, not naming the probe box as the operator's peer: {unnamed}")
        if not (Path(out) / "report.md").exists() or not (Path(out) / "rate.png").exists():
            problems.append("report.md or its rate plot was not written")
        if problems:
            for log in sorted(Path(out).glob("catalogue/logs/*.log"))[:6]:
                print(f"--- {log.name}\n" + log.read_text(errors="replace")[-1200:])
        return checks.verdict(problems, f"catalogue smoke OK: peak {r['peak_reduction_pct']:.1f}% below unicast "
                              f"(bound {r['peak_bound_pct']:.1f}%), bytes {r['reduction_pct']:.1f}%, "
                              f"{r['stalls']['count']} stalls, {r['sessions']} sessions, startup median "
                              f"{r['startup_ms']['median']:.0f} ms, {r.get('wall_seconds', 0):.0f} s")


if __name__ == "__main__":
    sys.exit(main())
