#!/usr/bin/python3
"""CI's testbed check: runs scenarios/smoke.json end to end and checks its report.

Every client completes, Toast's operator seed and the peers take load off the VoD server (reduction_pct > 0), the
accounting adds up, and every documented report field is present. Exit 0 when all hold, 1 with the reasons.
"""

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import checks  # noqa: E402
from toastbed import run  # noqa: E402

REQUIRED = ["clients", "unicast_bytes", "server_bytes", "reduction_pct", "ceiling_pct", "vod_server_bytes",
            "seed_bytes", "vod_share_pct", "seed_share_pct", "total_traffic_bytes", "redundant_bytes", "stalls",
            "startup_ms", "per_client", "server_wasted_bytes", "server_wasted_pct", "shape", "resources"]


def check(r: dict) -> list[str]:
    problems = [f"missing field {k}" for k in REQUIRED if k not in r]
    if problems:
        return problems
    if r["clients"] != 4:
        problems.append(f"expected 4 clients, report has {r['clients']}")
    not_done = [c["client"] for c in r["per_client"] if not c["completed"]]
    if not_done:
        problems.append(f"clients {not_done} did not complete")
    if not r["reduction_pct"] > 0:
        problems.append(f"reduction_pct is {r['reduction_pct']:.1f}, expected > 0 with a seed and peers")
    if r["reduction_pct"] > r["ceiling_pct"] + 1e-9 and r["seed_bytes"] == 0:
        problems.append("reduction above the ceiling without a seed: accounting is wrong")
    if r["unicast_bytes"] != r["clients"] * 24 * 2_000_000 // 8:
        problems.append(f"unicast_bytes {r['unicast_bytes']} is not title size x clients")
    if r["vod_server_bytes"] + r["seed_bytes"] + r["tracker_bytes"] != r["server_bytes"]:
        problems.append("server_bytes is not the sum of VoD server, seed and tracker bytes")
    if r["scenario_config"].get("seed_client") != "toast" or not r["seed_bytes"] > 0:
        problems.append(f"Toast's operator seed ({r['scenario_config'].get('seed_client')}) sent "
                        f"{r['seed_bytes']} bytes, expected some")
    peers = sum(c["bytes_from_peers"] for c in r["per_client"])
    if peers <= 0:
        problems.append("no client received anything from peers")
    for key in ("median", "p95"):
        if r["startup_ms"][key] is None:
            problems.append(f"startup_ms.{key} is missing")
    unmeasured = [c["client"] for c in r["per_client"]
                  if not (c.get("cpu_seconds") or 0) > 0 or not (c.get("mem_private_peak_kb") or 0) > 0]
    if unmeasured:
        problems.append(f"clients {unmeasured} have no CPU time or private memory sampled")
    if r["resources"]["machine"]["busy_pct_mean"] is None:
        problems.append("the machine's CPU use was not sampled")
    series = r["resources"]["cpu_series"]
    # Every role has a value for every interval; the tracker and the server may use less than a tick in all.
    for role in ("client", "seed", "server", "tracker"):
        values = series["pct_of_one_core"].get(role, [])
        if len(values) != len(series["interval_end_s"]) or len(values) < 5:
            problems.append(f"the {role} role's CPU series has {len(values)} intervals of "
                            f"{len(series['interval_end_s'])}")
    if not sum(series["pct_of_one_core"].get("client", [])) > 0:
        problems.append("the clients used no CPU in any interval of the series")
    if not r["shape"]["label"].startswith("scaled:"):
        problems.append(f"the smoke scenario is not labelled as scaled: {r['shape']['label']}")
    return problems


def main() -> int:
    bins = checks.bin_dir(__doc__)
    with tempfile.TemporaryDirectory(prefix="toast-smoke-") as out:
        rc = run.main([str(HERE.parent / "scenarios" / "smoke.json"), "--out", out, "--bin-dir", bins])
        if rc != 0:
            print(f"testbed/run exited with {rc}")
            return 1
        r = json.loads((Path(out) / "report.json").read_text())
        if not (Path(out) / "report.md").exists():
            print("report.md was not written")
            return 1
        problems = check(r)
        for p in problems:
            print("FAIL:", p)
        if problems:
            for d in sorted(Path(out).glob("toast/logs/*.log")):
                print(f"--- {d.name}\n" + d.read_text()[-1500:])
            return 1
        print(f"smoke OK: reduction {r['reduction_pct']:.1f}% (ceiling {r['ceiling_pct']:.1f}%), "
              f"{r['stalls']['count']} stalls, startup median {r['startup_ms']['median']:.0f} ms")
        return 0


if __name__ == "__main__":
    sys.exit(main())
