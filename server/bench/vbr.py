#!/usr/bin/python3
"""Variable-bit-rate titles under admission control: reserving each round by the title's demand trace against
reserving its peak rate in every round, with each start-scheduling policy (seeds 004 and 001;
docs/server-storage.md "Admission control").

ffmpeg encodes a real H.264 title at constant quality (CRF), its scenes alternating between easy and hard
every --scene seconds, so its rate varies as a film's does; toast-server ingests it (recording its demand
trace) as --copies titles on emulated disks with the RDA paper's t_a and r_d (not scaled: the title's real
bytes are read). --viewers viewers arrive (Poisson, mean gap --gap) for uniformly picked copies and watch the
whole title, played by the trace (toast-loadgen --traces); refused viewers do not retry. For each reservation
and policy: streams admitted, refused, starved, and start latency (request to the first byte). Repeated with
different arrival seeds; medians.

A benchmark, not a test: it prints a table and writes vbr.json into --out.
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import PAPER, Server, Store, StoreSpec, log  # noqa: E402


def encode(path, seconds, scene, crf, size, noise):
    """A constant-quality title whose scenes alternate between a still-ish pattern and full-frame noise."""
    vf = f"noise=alls={noise}:allf=t+u:enable='gte(mod(t,{2 * scene}),{scene})'"
    cmd = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
           f"testsrc2=size={size}:rate=25", "-t", str(seconds), "-vf", vf, "-c:v", "libx264", "-preset",
           "veryfast", "-crf", str(crf), "-g", "50", "-an", "-f", "mpegts", path]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"ffmpeg failed: {out.stderr.strip()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--work-dir", default="/dev/shm/toast-vbr")
    ap.add_argument("--out", default="vbr-results")
    ap.add_argument("--disks", type=int, default=2)
    ap.add_argument("--copies", type=int, default=8, help="titles ingested from the one encoding")
    ap.add_argument("--seconds", type=int, default=40, help="title length")
    ap.add_argument("--scene", type=float, default=5.0, help="seconds between easy and hard scenes")
    ap.add_argument("--crf", type=int, default=26)
    ap.add_argument("--noise", type=int, default=30, help="strength of the hard scenes' noise (about 2 Mbps on "
                    "average with the other defaults)")
    ap.add_argument("--size", default="640x360")
    ap.add_argument("--time-slice", type=float, default=1.0, help="the server's round t_b, seconds")
    ap.add_argument("--viewers", type=int, default=160)
    ap.add_argument("--gap", type=float, default=0.1, help="mean gap between arrivals, seconds (Poisson)")
    ap.add_argument("--disk-share", type=float, default=0.9)
    ap.add_argument("--start-latency", type=float, default=3.0, help="seconds a stream may start late")
    ap.add_argument("--policies", default="greedy,minimal_load,last_scheduled")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    benchlib.stop_on_sigterm()
    server_bin, loadgen_bin = benchlib.snapshot_binaries(args.build_dir, args.work_dir)
    os.makedirs(args.out, exist_ok=True)
    media = os.path.join(args.work_dir, "title.ts")
    encode(media, args.seconds, args.scene, args.crf, args.size, args.noise)

    spec = StoreSpec(args.disks, PAPER["t_a"], PAPER["r_d"], 2e6, args.time_slice, "rda")
    store = Store(server_bin, os.path.join(args.work_dir, "store"), spec, 0, 1)
    store.create()
    for i in range(args.copies):
        store.ingest(f"v{i}", media)
    manifests = store.manifests()
    trace = manifests["v0"]["trace"]
    round_s = trace["round_ns"] / 1e9
    rounds = trace["bytes"]
    average = sum(rounds) * 8 / (len(rounds) * round_s)
    peak = max(rounds) * 8 / round_s
    log(f"vbr: {os.path.getsize(media)} bytes, {len(rounds)} rounds of {round_s:g} s, average "
        f"{average / 1e6:.2f} Mbps, peak {peak / 1e6:.2f} Mbps ({peak / average:.2f}x); load average "
        f"{benchlib.load_average():.1f}")
    traces_file = os.path.join(args.work_dir, "traces.json")
    with open(traces_file, "w") as f:
        json.dump({"round": round_s, "titles": {t: m["trace"]["bytes"] for t, m in manifests.items()}}, f)
    titles = [(t, 1) for t in sorted(manifests)]

    rows = []
    for reserve in ("peak", "trace"):
        for policy in args.policies.split(","):
            spec.extra = {"admission": {"disk_share": args.disk_share, "reserve": reserve,
                                        "start_policy": policy,
                                        "start_latency": f"{args.start_latency * 1e3:.0f}ms"}}
            runs = []
            for rep in range(args.repeats):
                with Server(store) as server:
                    trials, _ = benchlib.loadgen(
                        loadgen_bin, server, titles, average, args.time_slice,
                        ["--viewers", str(args.viewers), "--arrival", f"poisson:{args.gap:g}s", "--pick",
                         "weighted", "--traces", traces_file, "--seed", str(rep + 1)], args.work_dir)
                t = trials[-1]
                runs.append(t)
                log(f"  {reserve}/{policy} run {rep + 1}: admitted {t['admitted']}, refused {t['refused']}, "
                    f"starved {t['starved']}, start latency median {t['start_latency_median']:.2f} s max "
                    f"{t['start_latency_max']:.2f} s")
            med = {k: benchlib.median([r[k] for r in runs])
                   for k in ("admitted", "refused", "errors", "starved", "stalls", "start_latency_median",
                             "start_latency_max")}
            rows.append({"reserve": reserve, "policy": policy, "median": med, "runs": runs})

    with open(os.path.join(args.out, "vbr.json"), "w") as f:
        json.dump({"when": time.strftime("%Y-%m-%d %H:%M"), "disks": args.disks, "time_slice": args.time_slice,
                   "average_bps": average, "peak_bps": peak, "rounds": rounds, "viewers": args.viewers,
                   "gap": args.gap, "load_average_end": benchlib.load_average(), "rows": rows}, f, indent=1)
    print(f"{args.viewers} viewers (Poisson, mean gap {args.gap:g} s) of a {args.seconds} s CRF {args.crf} title "
          f"(average {average / 1e6:.2f} Mbps, peak {peak / 1e6:.2f} Mbps in {round_s:g} s rounds) on "
          f"{args.disks} emulated disks (t_a {PAPER['t_a'] * 1e3:g} ms, r_d {PAPER['r_d'] / 1e6:g} Mbps); "
          f"disk_share {args.disk_share:g}, start latency up to {args.start_latency:g} s; median of "
          f"{args.repeats}")
    print(f"{'reserve':<8} {'policy':<15} {'admitted':>8} {'refused':>8} {'starved':>8} {'stalls':>7} "
          f"{'start median s':>14} {'start max s':>11}")
    for r in rows:
        m = r["median"]
        print(f"{r['reserve']:<8} {r['policy']:<15} {m['admitted']:>8g} {m['refused']:>8g} {m['starved']:>8g} "
              f"{m['stalls']:>7g} {m['start_latency_median']:>14.2f} {m['start_latency_max']:>11.2f}")


if __name__ == "__main__":
    main()
