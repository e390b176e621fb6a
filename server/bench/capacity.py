#!/usr/bin/python3
"""Capacity of toast-server on emulated disks, measured as the thesis did (seed 002 §3.3, Fig. 3.2-3.4):
N rate-paced /stream viewers of distinct titles, binary search for the largest N with no starvation, repeated,
median; beside the disk model N = D*t_b*r_d / (t_a*r_d + r_c*t_b).

A benchmark, not a test: it prints a table (and writes capacity.json and capacity.png into --out).

Setup, as in the thesis's ch. 3 prototype: independent disks, each title whole on one disk (naive placement),
viewers of distinct titles spread evenly over the disks; every disk emulated with the RDA paper's t_a and r_d
(17 ms, 525 Mbps), streams of 6 Mbps (and 12, 25 Mbps for larger blocks) in 5 s time slices, all scaled as
benchlib.Scale says. Viewers start spread evenly over --ramp time slices.
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
    ap.add_argument("--work-dir", default="/dev/shm/toast-capacity")
    ap.add_argument("--out", default="capacity-results")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=40, help="title length in time slices (trial length)")
    ap.add_argument("--ramp", type=float, default=2.0, help="viewer starts spread over this many time slices")
    ap.add_argument("--time-scale", type=float, default=0.2)
    ap.add_argument("--byte-scale", type=float, default=64.0)
    ap.add_argument("--disks", default="1,2,4,8", help="disk counts at 6 Mbps")
    ap.add_argument("--bitrates", default="12,25", help="more bitrates (Mbps, unscaled) at --bitrate-disks")
    ap.add_argument("--bitrate-disks", type=int, default=4)
    ap.add_argument("--orders", default="", help="disk queue orders to compare, e.g. fifo,cscan")
    ap.add_argument("--full-seek", type=float, default=0.0,
                    help="emulated full-stroke seek in ms (unscaled); 0: every access costs t_a")
    ap.add_argument("--quick", action="store_true", help="CI: one small configuration, one short search")
    args = ap.parse_args()

    scale = Scale(args.time_scale, args.byte_scale)
    benchlib.stop_on_sigterm()
    server_bin, loadgen_bin = benchlib.snapshot_binaries(args.build_dir, args.work_dir)
    os.makedirs(args.out, exist_ok=True)

    configs = []  # (disks, bitrate Mbps unscaled, queue order)
    orders = [o for o in args.orders.split(",") if o] or [""]
    if args.quick:
        configs = [(2, 6, o) for o in orders]
        args.repeats, args.rounds = 1, min(args.rounds, 12)
    else:
        for d in [int(x) for x in args.disks.split(",") if x]:
            for o in orders:
                configs.append((d, 6, o))
        for r in [float(x) for x in args.bitrates.split(",") if x]:
            for o in orders:
                configs.append((args.bitrate_disks, r, o))

    t_a = PAPER["t_a"] * scale.time
    t_b = PAPER["t_b"] * scale.time
    r_d = PAPER["r_d"] / scale.bytes
    full_seek = args.full_seek / 1e3 * scale.time
    results = []
    log(f"capacity: {len(configs)} configurations x {args.repeats} searches, titles of {args.rounds} slices; "
        f"scaled {scale.label()}: t_a {t_a * 1e3:.2f} ms, t_b {t_b:.2f} s, r_d {r_d / 1e6:.3f} Mbps; "
        f"load average {benchlib.load_average():.1f}")
    stores = {}
    for disks, mbps, order in configs:
        r_c = mbps * 1e6 / scale.bytes
        model = model_streams(disks, t_a, r_d, r_c, t_b)
        spec = StoreSpec(disks, t_a, r_d, r_c, t_b, "naive", order, full_seek)
        key = (disks, mbps)
        label = f"D={disks} r_c={mbps:g}Mbps" + (f" {order}" if order else "")
        log(f"{label}: model {model:.1f} streams")
        if key not in stores:
            # Enough titles that every disk holds its share of the search's upper bound.
            count = int(model * 1.25 * 1.3) + 4 * disks
            store = Store(server_bin, os.path.join(args.work_dir, f"D{disks}-{mbps:g}"), spec, count, args.rounds)
            store.create()
            stores[key] = store
        store = stores[key]
        store.spec = spec
        order_titles, usable = benchlib.balanced_order(store.title_disks(), disks)
        lo, hi = max(1, int(model * 0.8)), min(usable, int(model * 1.15) + 2)
        found = []
        for rep in range(args.repeats):
            with Server(store) as server:
                trials, summary = benchlib.loadgen(
                    loadgen_bin, server, order_titles, r_c, t_b,
                    ["--search", f"{lo}:{hi}", "--precision", str(max(1, int(model * 0.01))),
                     "--arrival", f"ramp:{args.ramp * t_b:.3f}s", "--seed", str(rep + 1)], args.work_dir)
            verified = any(t["passed"] for t in trials)
            found.append(summary["max_viewers"])
            log(f"  search {rep + 1}: {summary['max_viewers']} streams"
                + ("" if verified else " (no trial passed: the lower bound is an overestimate)"))
        measured = benchlib.median(found)
        results.append({"disks": disks, "bitrate_mbps": mbps, "order": order or "fifo", "model": model,
                        "measured": found, "median": measured, "ratio": measured / model,
                        "block_bytes": int(r_c * t_b / 8), "verified": verified})

    summary = {"scale": scale.label(), "rounds": args.rounds, "ramp_slices": args.ramp, "t_a": t_a, "t_b": t_b,
               "r_d": r_d, "full_seek": full_seek, "load_average_end": benchlib.load_average(),
               "results": results, "when": time.strftime("%Y-%m-%d %H:%M")}
    with open(os.path.join(args.out, "capacity.json"), "w") as f:
        json.dump(summary, f, indent=1)

    print(f"Capacity on emulated disks (thesis disk model; scaled {scale.label()}; titles of {args.rounds} "
          f"slices, starts over {args.ramp:g} slices; median of {args.repeats})")
    print(f"{'disks':>5} {'r_c':>8} {'block':>9} {'order':>6} {'model N':>8} {'measured':>9} {'ratio':>6}  runs")
    worst = 0.0
    for r in results:
        worst = max(worst, abs(r["ratio"] - 1))
        print(f"{r['disks']:>5} {r['bitrate_mbps']:>6g}M {r['block_bytes']:>9} {r['order']:>6} {r['model']:>8.1f} "
              f"{r['median']:>9g} {r['ratio']:>6.3f}  {r['measured']}")
    print(f"largest deviation from the model: {worst * 100:.1f}%  (thesis: 11% on average, its Fig. 3.2-3.3)")
    plot(results, os.path.join(args.out, "capacity.png"), scale)


def plot(results, path, scale):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("capacity: matplotlib missing, no plot")
        return
    labels = [f"D={r['disks']}\n{r['bitrate_mbps']:g} Mbps" + (f"\n{r['order']}" if r["order"] != "fifo" else "")
              for r in results]
    x = range(len(results))
    fig, ax = plt.subplots(figsize=(max(6, len(results) * 1.1), 4))
    ax.bar([i - 0.2 for i in x], [r["model"] for r in results], 0.4, label="model")
    ax.bar([i + 0.2 for i in x], [r["median"] for r in results], 0.4, label="measured (median)")
    for i, r in enumerate(results):
        ax.text(i + 0.2, r["median"], f"{r['ratio']:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("simultaneous streams")
    ax.set_title(f"toast-server capacity vs disk model (emulated, {scale.label()})", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    log(f"capacity: plot in {path}")


if __name__ == "__main__":
    main()
