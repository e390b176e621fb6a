#!/usr/bin/python3
"""toast-server asked for more paced streams than its disks carry, with and without admission control
(seed 001; docs/server.md "Admission control").

The capacity benchmark's setup (emulated disks with the RDA paper's t_a and r_d, naive placement, 6 Mbps
streams in 5 s slices, all scaled as benchlib.Scale says), N viewers of distinct titles = --load x the disk
model's N = D*t_b*r_d / (t_a*r_d + r_c*t_b), started over --ramp slices. Once without admission control (every
/stream accepted: the array slows down for everyone) and once with it (config "admission": the per-round
ledger; refused viewers get 503 + Retry-After and do not retry). Repeated, medians.

A benchmark, not a test: it prints a table and writes overload.json into --out.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import PAPER, Scale, Server, Store, StoreSpec, log, model_streams  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--work-dir", default="/dev/shm/toast-overload")
    ap.add_argument("--out", default="overload-results")
    ap.add_argument("--disks", type=int, default=2)
    ap.add_argument("--load", type=float, default=2.0, help="viewers as a multiple of the model's N")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=16, help="title length in time slices")
    ap.add_argument("--ramp", type=float, default=2.0, help="viewer starts spread over this many slices")
    ap.add_argument("--time-scale", type=float, default=0.2)
    ap.add_argument("--byte-scale", type=float, default=64.0)
    ap.add_argument("--disk-share", type=float, default=0.9)
    ap.add_argument("--start-latency", type=float, default=1.0, help="admission start latency in slices")
    ap.add_argument("--order", default="", help="disk_order (fifo, cscan, edf)")
    args = ap.parse_args()

    scale = Scale(args.time_scale, args.byte_scale)
    benchlib.stop_on_sigterm()
    server_bin, loadgen_bin = benchlib.snapshot_binaries(args.build_dir, args.work_dir)
    os.makedirs(args.out, exist_ok=True)
    t_a = PAPER["t_a"] * scale.time
    t_b = PAPER["t_b"] * scale.time
    r_d = PAPER["r_d"] / scale.bytes
    r_c = 6e6 / scale.bytes
    model = model_streams(args.disks, t_a, r_d, r_c, t_b)
    viewers = int(round(model * args.load))
    log(f"overload: D={args.disks}, model N {model:.1f}, {viewers} viewers ({args.load:g}x); scaled "
        f"{scale.label()}; load average {benchlib.load_average():.1f}")

    spec = StoreSpec(args.disks, t_a, r_d, r_c, t_b, "naive", args.order)
    store = Store(server_bin, os.path.join(args.work_dir, "store"), spec, viewers + 4 * args.disks, args.rounds)
    store.create()
    titles, usable = benchlib.balanced_order(store.title_disks(), args.disks)
    titles = titles[:viewers]

    admission = {"disk_share": args.disk_share, "start_latency": f"{args.start_latency * t_b * 1e3:.3f}ms"}
    rows = []
    for label, extra in (("no admission control", {}), ("admission control", {"admission": admission})):
        spec.extra = extra
        runs = []
        for rep in range(args.repeats):
            with Server(store) as server:
                trials, _ = benchlib.loadgen(loadgen_bin, server, titles, r_c, t_b,
                                             ["--viewers", str(len(titles)), "--arrival",
                                              f"ramp:{args.ramp * t_b:.3f}s", "--seed", str(rep + 1)],
                                             args.work_dir)
            t = trials[-1]
            runs.append(t)
            log(f"  {label} run {rep + 1}: admitted {t['admitted']}, refused {t['refused']}, errors "
                f"{t['errors']}, starved {t['starved']}, stalls {t['stalls']} ({t['stall_seconds']:.1f} s)")
        med = {k: benchlib.median([r[k] for r in runs])
               for k in ("admitted", "refused", "errors", "starved", "stalls", "stall_seconds", "stall_max",
                         "start_latency_median", "retry_after_median")}
        rows.append({"mode": label, "median": med, "runs": runs})

    with open(os.path.join(args.out, "overload.json"), "w") as f:
        json.dump({"scale": scale.label(), "disks": args.disks, "model": model, "viewers": len(titles),
                   "load": args.load, "rounds": args.rounds, "when": time.strftime("%Y-%m-%d %H:%M"),
                   "load_average_end": benchlib.load_average(), "rows": rows}, f, indent=1)
    print(f"{len(titles)} viewers against D={args.disks} emulated disks, model N {model:.1f} ({args.load:g}x); "
          f"scaled {scale.label()}; titles of {args.rounds} slices; median of {args.repeats}")
    print(f"{'mode':<22} {'admitted':>8} {'refused':>8} {'errors':>6} {'starved':>8} {'stalls':>7} "
          f"{'stall s':>8} {'start lat s':>11} {'Retry-After s':>13}")
    for r in rows:
        m = r["median"]
        print(f"{r['mode']:<22} {m['admitted']:>8g} {m['refused']:>8g} {m['errors']:>6g} {m['starved']:>8g} "
              f"{m['stalls']:>7g} {m['stall_seconds']:>8.1f} {m['start_latency_median']:>11.2f} "
              f"{m['retry_after_median']:>13.2f}")


if __name__ == "__main__":
    main()
