#!/usr/bin/python3
"""toast-server asked for more paced streams than its disks carry, with and without admission control
(seed 001; docs/server-storage.md "Admission control").

The capacity benchmark's setup (emulated disks with the RDA paper's t_a and r_d, naive placement, 6 Mbps
streams in 5 s slices, all scaled as benchlib.Scale says). First the capacity search finds C, the most viewers of
distinct titles the disks carry with none starving (no admission control, as server/bench/capacity.py does).
Then, for each --loads multiple of C, that many viewers arrive over --ramp slices, once with admission control
off ("admission": {"enabled": false}: every /stream accepted, the array slows down for everyone) and once with
the server's default config (admission control on): refused viewers ask again after Retry-After, as players
do, for up to --retry-for slices. What admission carries is the most viewers streaming at once (peak), against
C; no admitted viewer may starve. Repeated, medians.

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
    ap.add_argument("--loads", default="1,2", help="viewers as multiples of the measured capacity C")
    ap.add_argument("--capacity", type=int, default=0, help="C; 0: found by the capacity search first")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=16, help="title length in time slices")
    ap.add_argument("--ramp", type=float, default=2.0, help="viewer starts spread over this many slices")
    ap.add_argument("--retry-for", type=float, default=0.0,
                    help="a refused viewer asks again for this many slices (default: twice the title length)")
    ap.add_argument("--time-scale", type=float, default=0.2)
    ap.add_argument("--byte-scale", type=float, default=64.0)
    ap.add_argument("--admission", default="{}",
                    help="the admission config of the admission rows, as JSON (default {}: the server's defaults)")
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
    loads = [float(x) for x in args.loads.split(",") if x]
    retry_for = (args.retry_for or 2 * args.rounds) * t_b
    log(f"overload: D={args.disks}, model N {model:.1f}; scaled {scale.label()}; titles of {args.rounds} slices; "
        f"load average {benchlib.load_average():.1f}")

    spec = StoreSpec(args.disks, t_a, r_d, r_c, t_b, "naive", args.order)
    count = int(model * max(loads) * 1.3) + 4 * args.disks
    store = Store(server_bin, os.path.join(args.work_dir, "store"), spec, count, args.rounds)
    store.create()
    titles, usable = benchlib.balanced_order(store.title_disks(), args.disks)
    off = {"admission": {"enabled": False}}

    capacity = args.capacity
    if not capacity:
        spec.extra = off
        lo, hi = max(1, int(model * 0.8)), min(usable, int(model * 1.2) + 2)
        found = []
        for rep in range(args.repeats):
            with Server(store) as server:
                _, summary = benchlib.loadgen(
                    loadgen_bin, server, titles, r_c, t_b,
                    ["--search", f"{lo}:{hi}", "--precision", str(max(1, int(model * 0.01))),
                     "--arrival", f"ramp:{args.ramp * t_b:.3f}s", "--seed", str(rep + 1)], args.work_dir)
            found.append(summary["max_viewers"])
            log(f"  capacity search {rep + 1}: {summary['max_viewers']} streams")
        capacity = int(benchlib.median(found))
    log(f"overload: capacity C = {capacity} ({capacity / model:.3f} of the model)")

    rows = []
    for load in loads:
        viewers = min(usable, int(round(capacity * load)))
        for label, extra in (("no admission control", off),
                             ("admission control", {"admission": json.loads(args.admission)} if args.admission != "{}"
                              else {})):
            spec.extra = extra
            spec.server_admission = not extra
            runs = []
            for rep in range(args.repeats):
                with Server(store) as server:
                    trials, _ = benchlib.loadgen(loadgen_bin, server, titles[:viewers], r_c, t_b,
                                                 ["--viewers", str(viewers), "--arrival",
                                                  f"ramp:{args.ramp * t_b:.3f}s", "--seed", str(rep + 1),
                                                  "--retry-for", f"{retry_for:.3f}s"], args.work_dir)
                t = trials[-1]
                runs.append(t)
                log(f"  {load:g}x {label} run {rep + 1}: peak {t['peak_streams']} streaming, admitted "
                    f"{t['admitted']}, gave up {t['refused']}, errors {t['errors']}, starved {t['starved']}, "
                    f"stalls {t['stalls']} ({t['stall_seconds']:.1f} s)")
            med = {k: benchlib.median([r[k] for r in runs])
                   for k in ("peak_streams", "admitted", "refused", "refusals", "errors", "starved", "stalls",
                             "stall_seconds", "start_latency_median", "retry_after_median")}
            med["peak_of_capacity"] = med["peak_streams"] / capacity
            rows.append({"load": load, "viewers": viewers, "mode": label, "median": med, "runs": runs})

    with open(os.path.join(args.out, "overload.json"), "w") as f:
        json.dump({"scale": scale.label(), "disks": args.disks, "model": model, "capacity": capacity,
                   "rounds": args.rounds, "retry_for": retry_for, "when": time.strftime("%Y-%m-%d %H:%M"),
                   "load_average_end": benchlib.load_average(), "rows": rows}, f, indent=1)
    print(f"D={args.disks} emulated disks, model N {model:.1f}, capacity C {capacity}; scaled {scale.label()}; "
          f"titles of {args.rounds} slices; refused viewers retry for {retry_for:.0f} s; median of {args.repeats}")
    print(f"{'load':>5} {'viewers':>7} {'mode':<22} {'peak':>5} {'/ C':>5} {'admitted':>8} {'gave up':>7} "
          f"{'starved':>7} {'stalls':>6} {'stall s':>7} {'start s':>7} {'Retry-After':>11}")
    for r in rows:
        m = r["median"]
        print(f"{r['load']:>4g}x {r['viewers']:>7} {r['mode']:<22} {m['peak_streams']:>5g} "
              f"{m['peak_of_capacity']:>5.2f} {m['admitted']:>8g} {m['refused']:>7g} {m['starved']:>7g} "
              f"{m['stalls']:>6g} {m['stall_seconds']:>7.1f} {m['start_latency_median']:>7.2f} "
              f"{m['retry_after_median']:>11.2f}")


if __name__ == "__main__":
    main()
