#!/usr/bin/python3
"""Placement under skew and faults (seed 002 ch. 4, Fig. 4.2-4.7; seed 000): for naive, RAID-0, RAID-1,
random and RDA placement, the most rate-paced /stream viewers the emulated array carries without starvation,
by binary search, under

  uniform     every title equally popular
  zipf:S      title of rank r picked with probability proportional to r^-S (S = 0.5, 1.0)
  hot-disk    the titles naive placement puts on disk 0 are --hot-weight times as popular: one disk
              overloaded under naive placement, the same titles for every policy

with Poisson arrivals (mean gap: --ramp slices / the model's N), then again with disk 0 fail-stuttering
(--stutter % extra bytes per read, the thesis's §4.3 stutter model). For each cell: max streams (median of
--repeats searches), and from the first failing trial above it the starved viewers, mean and max stall, and
the per-disk share of reads and the median start latency at the max. The RDA paper's uniform numbers (8
disks, its parameters) are printed beside as ratios to its best placement, since our array is scaled.

A benchmark, not a test: prints a table, writes placement.json into --out. --quick: 4 disks, uniform and
zipf:1.0, one search each, short titles. --smoke (the short version CI runs, about a minute): one trial each
of naive and RDA placement with one hot disk at two thirds of the model's N; exits 1 unless RDA carries
every viewer and naive placement starves some.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import PAPER, Scale, Server, Store, StoreSpec, log, model_streams  # noqa: E402

# Seed 000 (RDA paper), uniform popularity, 8 disks: simultaneous streams per placement.
PAPER_UNIFORM = {"naive": 332, "raid1": 334, "rda": 336, "random": 288, "raid0": 256}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--work-dir", default="/dev/shm/toast-placement")
    ap.add_argument("--out", default="placement-results")
    ap.add_argument("--disks", type=int, default=8)
    ap.add_argument("--titles", type=int, default=0, help="titles in the store (default: 1.5 x the model's N)")
    ap.add_argument("--policies", default="naive,raid0,raid1,random,rda")
    ap.add_argument("--workloads", default="uniform,zipf:0.5,zipf:1.0,hot-disk")
    ap.add_argument("--hot-weight", type=float, default=4.0)
    ap.add_argument("--stutter", type=float, default=50.0, help="fail-stutter %% on disk 0 (0: no fault runs)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=16, help="title length in time slices")
    ap.add_argument("--ramp", type=float, default=2.0)
    ap.add_argument("--time-scale", type=float, default=0.2)
    ap.add_argument("--byte-scale", type=float, default=64.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        sys.exit(smoke(args))
    if args.quick:
        args.disks, args.repeats, args.rounds = 4, 1, 8
        args.workloads = "uniform,zipf:1.0"

    scale = Scale(args.time_scale, args.byte_scale)
    benchlib.stop_on_sigterm()
    server_bin, loadgen_bin = benchlib.snapshot_binaries(args.build_dir, args.work_dir)
    os.makedirs(args.out, exist_ok=True)
    t_a, t_b, r_d, r_c, model, gap = array_model(scale, args.disks, args.ramp)
    count = args.titles or int(model * 1.5)
    # A viewer holds a slice before it plays, so titles of L slices run up to (1 + 1/L) x the model before
    # anyone starves; search well past that so a placement that staggers its viewers' starts is not capped.
    ceiling = int(model * max(1.15, 1 + 2 / args.rounds)) + 2
    policies = [p for p in args.policies.split(",") if p]
    workloads = [w for w in args.workloads.split(",") if w]
    faults = [0.0] + ([args.stutter] if args.stutter > 0 else [])
    log(f"placement: D={args.disks}, model N {model:.1f}, {count} titles of {args.rounds} slices, Poisson gap "
        f"{gap * 1e3:.1f} ms; scaled {scale.label()}; load average {benchlib.load_average():.1f}")

    hot = None
    results = []
    for policy in policies:
        spec = StoreSpec(args.disks, t_a, r_d, r_c, t_b, policy)
        store = Store(server_bin, os.path.join(args.work_dir, policy), spec, count, args.rounds)
        store.create()
        titles = sorted(store.manifests())
        if hot is None:
            # The same hot titles for every policy: those the first store's first replica puts on disk 0
            # (with naive first, exactly one disk's titles).
            hot = {t for t, d in store.title_disks().items() if d == 0}
        for stutter in faults:
            spec.faults = {0: {"stutter_pct": stutter}} if stutter > 0 else {}
            for workload in workloads:
                if workload == "uniform":
                    pick, listed = "weighted", [(t, 1) for t in titles]
                elif workload == "hot-disk":
                    pick, listed = "weighted", [(t, args.hot_weight if t in hot else 1) for t in titles]
                else:
                    pick, listed = workload, titles
                found, above = [], []
                at_max = None
                for rep in range(args.repeats):
                    with Server(store) as server:
                        trials, summary = benchlib.loadgen(
                            loadgen_bin, server, listed, r_c, t_b,
                            ["--search", f"{max(1, int(model * 0.3))}:{ceiling}",
                             "--precision", str(max(1, int(model * 0.02))), "--pick", pick,
                             "--arrival", f"poisson:{gap:.4f}s", "--seed", str(rep + 1)], args.work_dir)
                    found.append(summary["max_viewers"])
                    failing = sorted((t for t in trials if not t["passed"]), key=lambda t: t["viewers"])
                    if failing:
                        above.append(failing[0])
                    passing = [t for t in trials if t["passed"] and t["viewers"] == summary["max_viewers"]]
                    if passing:
                        at_max = passing[-1]
                reads = at_max["disk_reads"] if at_max else []
                share = [r / sum(reads) for r in reads] if reads and sum(reads) else []
                row = {"policy": policy, "workload": workload, "stutter_pct": stutter, "model": model,
                       "found": found, "max_streams": benchlib.median(found),
                       "starved_above": benchlib.median([t["starved"] for t in above]),
                       "stall_mean_above": benchlib.median([t["stall_mean"] for t in above]),
                       "stall_max_above": benchlib.median([t["stall_max"] for t in above]),
                       "disk_read_share": share,
                       # A placement that queues every viewer's first read on one disk (RAID-0 with titles no
                       # longer than the stripe) staggers starts: it carries more streams by making them wait.
                       "start_latency_at_max": at_max["start_latency_median"] if at_max else float("nan")}
                results.append(row)
                log(f"  {policy} {workload} stutter {stutter:g}%: {found} streams; above: starved "
                    f"{row['starved_above']}, stall mean {row['stall_mean_above']:.2f} s, max "
                    f"{row['stall_max_above']:.2f} s")

    with open(os.path.join(args.out, "placement.json"), "w") as f:
        json.dump({"scale": scale.label(), "disks": args.disks, "model": model, "titles": count,
                   "rounds": args.rounds, "when": time.strftime("%Y-%m-%d %H:%M"),
                   "load_average_end": benchlib.load_average(), "results": results}, f, indent=1)

    print(f"Placement x workload x fault, D={args.disks} emulated disks, model N {model:.1f}; scaled "
          f"{scale.label()}; {count} titles of {args.rounds} slices; median of {args.repeats}")
    print(f"{'policy':<7} {'workload':<9} {'stutter':>7} {'max N':>6} {'/best':>6} {'paper/best':>10} "
          f"{'starved>':>8} {'stall mean':>10} {'stall max':>9} {'start s':>7}  per-disk read share")
    best = {}
    for r in results:
        key = (r["workload"], r["stutter_pct"])
        best[key] = max(best.get(key, 0), r["max_streams"])
    paper_best = max(PAPER_UNIFORM.values())
    for r in results:
        key = (r["workload"], r["stutter_pct"])
        paper = (f"{PAPER_UNIFORM[r['policy']] / paper_best:.2f}"
                 if r["workload"] == "uniform" and r["stutter_pct"] == 0 and r["policy"] in PAPER_UNIFORM
                 else "")
        shares = " ".join(f"{s:.2f}" for s in r["disk_read_share"])
        print(f"{r['policy']:<7} {r['workload']:<9} {r['stutter_pct']:>6g}% {r['max_streams']:>6g} "
              f"{r['max_streams'] / best[key] if best[key] else 0:>6.2f} {paper:>10} {r['starved_above']:>8g} "
              f"{r['stall_mean_above']:>10.2f} {r['stall_max_above']:>9.2f} {r['start_latency_at_max']:>7.2f}  "
              f"{shares}")
    print("paper (seed 000, uniform, 8 disks): naive 332, RAID-1 334, RDA 336, random 288, RAID-0 256")


def array_model(scale, disks, ramp):
    """The paper's disk and 6 Mbps streams, scaled: (t_a, t_b, r_d, r_c, the model's N, mean arrival gap)."""
    t_a, t_b = PAPER["t_a"] * scale.time, PAPER["t_b"] * scale.time
    r_d, r_c = PAPER["r_d"] / scale.bytes, 6e6 / scale.bytes
    model = model_streams(disks, t_a, r_d, r_c, t_b)
    return t_a, t_b, r_d, r_c, model, ramp * t_b / model


def smoke(args):
    """RDA's point in one comparison: with the titles of one disk 4x as popular, naive placement puts about
    half the reads on that disk and starves viewers at a load RDA spreads over every disk."""
    scale = Scale(args.time_scale, args.byte_scale)
    benchlib.stop_on_sigterm()
    server_bin, loadgen_bin = benchlib.snapshot_binaries(args.build_dir, args.work_dir)
    disks, rounds, titles = 4, 8, 64
    t_a, t_b, r_d, r_c, model, gap = array_model(scale, disks, args.ramp)
    viewers = int(model * 2 / 3)
    log(f"placement smoke: D={disks}, model N {model:.1f}, {viewers} viewers, {titles} titles, hot disk x4")
    hot, starved = None, {}
    for policy in ("naive", "rda"):
        store = Store(server_bin, os.path.join(args.work_dir, policy), StoreSpec(disks, t_a, r_d, r_c, t_b, policy),
                      titles, rounds)
        store.create()
        if hot is None:
            hot = {t for t, d in store.title_disks().items() if d == 0}
        listed = [(t, 4.0 if t in hot else 1) for t in sorted(store.manifests())]
        with Server(store) as server:
            trials, _ = benchlib.loadgen(loadgen_bin, server, listed, r_c, t_b,
                                         ["--viewers", str(viewers), "--pick", "weighted",
                                          "--arrival", f"poisson:{gap:.4f}s", "--seed", "1"], args.work_dir)
        if len(trials) != 1 or trials[0]["errors"] or trials[0]["admitted"] != viewers:
            log(f"placement smoke: {policy}: the trial did not run cleanly: {trials}")
            return 1
        starved[policy] = trials[0]["starved"]
    print(f"placement smoke: {viewers} viewers, one disk's titles 4x as popular: naive starved "
          f"{starved['naive']}, rda starved {starved['rda']}")
    if starved["rda"] != 0 or starved["naive"] == 0:
        print("placement smoke: FAIL: expected RDA to carry every viewer and naive placement to starve some")
        return 1
    return 0


if __name__ == "__main__":
    main()
