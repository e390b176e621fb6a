#!/usr/bin/python3
"""CI's network-shaping check: a tiny scenario with every client in its own network namespace.

Needs root and `ip netns`; without them it says why and exits 77 (CTest: skipped). Checks that every client
completed, that the clients' traffic really crossed their veth and tbf (bytes towards each client of at least
the part of the title it did not already hold, and, under an 8 Mbps tbf, no more than 8 Mbps allows), that
the missing netem is reported rather than fatal, and that no namespace or bridge is left behind.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import checks  # noqa: E402
from toastbed import netshape, run  # noqa: E402

SKIP = 77
LIMIT_BPS = 8_000_000
SCENARIO = {"name": "shaping", "clients": 2, "arrival": "uniform", "arrival_interval": "2s", "behavior": "stream",
            "picker": "hybrid", "inorder_window": "6s", "upload_limit": "2Mbps", "download_limit": LIMIT_BPS,
            "title_seconds": "12s", "bitrate": "2Mbps", "piece_size": "256KiB", "seed": True,
            "seed_upload_limit": "2Mbps", "random_seed": 3, "shaping": True, "delay_ms": 4, "time_limit": "120s"}


def ours() -> set[str]:
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {n for n in names if n.startswith("tb") and not n.startswith("toastbed-probe")} | \
        {w.rstrip(":").split("@")[0] for w in links.split() if w.startswith("tbbr")}


def main() -> int:
    bins = checks.bin_dir(__doc__)
    if os.geteuid() != 0:
        print("skipped: network namespaces need root")
        return SKIP
    probe = subprocess.run(["ip", "netns", "add", "toastbed-probe-ci"], capture_output=True, text=True)
    subprocess.run(["ip", "netns", "del", "toastbed-probe-ci"], capture_output=True)
    if probe.returncode != 0:
        print("skipped: cannot create a network namespace here: " + probe.stderr.strip())
        return SKIP
    before = ours()
    problems = []
    with tempfile.TemporaryDirectory(prefix="toast-shaping-") as out:
        scenario = Path(out) / "shaping.json"
        scenario.write_text(json.dumps(SCENARIO))
        rc = run.main([str(scenario), "--out", str(Path(out) / "run"), "--bin-dir", bins])
        if rc != 0:
            problems.append(f"testbed/run exited with {rc}")
        else:
            r = json.loads((Path(out) / "run" / "report.json").read_text())
            not_done = [c["client"] for c in r["per_client"] if not c["completed"]]
            if not_done:
                problems.append(f"clients {not_done} did not complete")
            sh = r.get("shaping")
            if not sh or len(sh["bytes_towards_clients"]) != 2:
                problems.append(f"report has no shaping counters for 2 clients: {sh}")
            else:
                title = 12 * 2_000_000 // 8
                for i, sent in enumerate(sh["bytes_towards_clients"]):
                    if sent < title:  # the whole title reached each client through its veth (plus headers)
                        problems.append(f"client {i}: only {sent} bytes crossed its shaper, title is {title}")
                    ceiling = LIMIT_BPS / 8 * r["wall_seconds"] + 64 * 1024
                    if sent > ceiling:
                        problems.append(f"client {i}: {sent} bytes in {r['wall_seconds']} s exceeds the tbf rate")
            if not netshape.has_netem() and not any("no netem" in n for n in r["notes"]):
                problems.append(f"the missing netem is not reported: notes {r['notes']}")
    left = ours() - before
    if left:
        problems.append(f"left behind: {sorted(left)}")
    return checks.verdict(problems, "shaping OK: 2 clients in namespaces behind tbf, all completed, nothing left "
                                    "behind")


if __name__ == "__main__":
    sys.exit(main())
