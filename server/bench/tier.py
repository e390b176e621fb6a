#!/usr/bin/python3
"""A tier of toast-server nodes on emulated disks (docs/server-storage.md "A tier of nodes"; seed 003 over
seed 000's RDA).

Every node has --disks emulated disks with the RDA paper's t_a and r_d and RDA inside the node; titles are
ingested on every node (each writes its share: every block on 2 nodes by rendezvous placement). The viewers
(--viewers) are toast-loadgen's: `direct` ones fetch each block with Range and Toast-Direct from the less loaded
of its two holders by the Toast-Load of their own last answers, as toast-client does, paced as /stream is;
`stream` ones open paced /stream on node i mod K, which reads the blocks it holds from its disks and relays the
others from a holder. Scaled as benchlib.Scale says, with blocks of one 16 KiB piece (a tier's blocks are
whole pieces) and streams whose slice is one block (r_c = 16 KiB per scaled slice).

Parts (--parts):
  capacity   the capacity search (most viewers of distinct titles with none starving, admission control
             off) at K = 1, 2, 3 (--nodes), against K = 1: the goal is K = 3 >= 2.8x; with each node's CPU
             and the machine's busy share over the search (the disks, not the machine, must bind).
  balance    one title of --balance-rounds blocks every viewer watches (arrivals spread over the title),
             K = 3: each node's share of the disk reads, with block placement and with title-level
             placement (every block of the title on the same 2 nodes).
  loads      direct viewers at fixed counts (--at), K = --nodes: one trial each with loads weighed by their
             age (toast-client's rule) and with every load taken as just heard, alternating; starved
             viewers, each node's reads, and each second the most asked node's requests over the mean.
  admission  admission control on (the default config), every viewer asking node 0 first: refused streams
             are sent to the node with room (307); 1x and 2x the K = 3 capacity, refused viewers retrying
             after Retry-After; the most streaming at once against the capacity.

A benchmark, not a test: prints tables and writes tier.json into --out.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import tierlib  # noqa: E402
from benchlib import PAPER, Scale, StoreSpec, log, model_streams  # noqa: E402

BLOCK = 16 * 1024


def viewer_args(tier, mode, loads="aged"):
    """toast-loadgen's options for the viewers: every node named, and in `direct` mode the tier's layout and
    how loads are weighed."""
    args = tier.loadgen_servers()
    if mode == "direct":
        store = tier.store
        args += ["--tier", ",".join(f"n{i}" for i in range(store.nodes)), "--block-size", str(BLOCK),
                 "--replicas", str(store.replicas), "--placement", store.placement, "--loads", loads]
    return args


def search(loadgen_bin, tier, titles, r_c, t_b, lo, hi, precision, ramp, seed, work_dir, mode, loads):
    """The most viewers with none starving, and what the search cost the machine: each node's CPU (share of
    one core) and the whole machine's busy share (every process, other users' included) over the search."""
    cpu0, busy, t0 = tier.cpu_seconds(), tierlib.MachineBusy(), time.time()
    trials, summary = benchlib.loadgen(loadgen_bin, tier, titles, r_c, t_b,
                                       ["--search", f"{lo}:{hi}", "--precision", str(precision), "--arrival",
                                        f"ramp:{ramp * t_b:.3f}s", "--seed", str(seed)]
                                       + viewer_args(tier, mode, loads),
                                       work_dir)
    wall = time.time() - t0
    cpu = [(b - a) / wall for a, b in zip(cpu0, tier.cpu_seconds())]
    return summary["max_viewers"], {"node_cpu": cpu, "machine_busy": busy.share(),
                                    "trials": [{k: t[k] for k in ("viewers", "starved", "errors", "node_reads",
                                                                  "ask_peak_median", "ask_peak_p90")}
                                               for t in trials]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--work-dir", default="/dev/shm/toast-tier")
    ap.add_argument("--out", default="tier-results")
    ap.add_argument("--parts", default="capacity,balance,admission")
    ap.add_argument("--nodes", default="1,2,3", help="tier sizes K for the capacity part")
    ap.add_argument("--disks", type=int, default=2, help="emulated disks per node")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--viewers", choices=("direct", "stream"), default="direct",
                    help="capacity and balance viewers: direct (block by block from a block's holders, as "
                         "toast-client does) or stream (paced /stream of node i mod K, which relays)")
    ap.add_argument("--loads", choices=("aged", "fresh"), default="aged",
                    help="direct viewers weigh each load by its age, as toast-client does (aged), or take every "
                         "load as just heard (fresh)")
    ap.add_argument("--at", default="", help="viewer counts for the loads part, e.g. 150,180,200")
    ap.add_argument("--rounds", type=int, default=16, help="title length in time slices")
    ap.add_argument("--balance-rounds", type=int, default=240, help="the hot title's length in time slices")
    ap.add_argument("--balance-time-scale", type=float, default=0.05,
                    help="the balance part's time scale (shorter slices, so a long title plays in minutes)")
    ap.add_argument("--ramp", type=float, default=2.0, help="viewer starts spread over this many slices")
    ap.add_argument("--balance-load", type=float, default=0.6,
                    help="hot-title viewers as a share of the K = 3 capacity")
    ap.add_argument("--capacity", type=int, default=0, help="the K = 3 capacity, when the capacity part is not run")
    ap.add_argument("--time-scale", type=float, default=0.2)
    ap.add_argument("--byte-scale", type=float, default=64.0)
    args = ap.parse_args()

    parts = [p for p in args.parts.split(",") if p]
    scale = Scale(args.time_scale, args.byte_scale)
    benchlib.stop_on_sigterm()
    server_bin, loadgen_bin = benchlib.snapshot_binaries(args.build_dir, args.work_dir)
    os.makedirs(args.out, exist_ok=True)
    t_a = PAPER["t_a"] * scale.time
    t_b = PAPER["t_b"] * scale.time
    r_d = PAPER["r_d"] / scale.bytes
    r_c = BLOCK * 8 / t_b
    node_model = model_streams(args.disks, t_a, r_d, r_c, t_b)
    log(f"tier: {args.disks} disks a node, node model N {node_model:.1f}; r_c {r_c / 1e3:.1f} kbps scaled "
        f"({r_c * scale.bytes / 1e6:.2f} Mbps unscaled), blocks of {BLOCK} B; {scale.label()}; "
        f"load average {benchlib.load_average():.1f}")
    spec = StoreSpec(args.disks, t_a, r_d, r_c, t_b, "rda")
    spec.extra = {"max_connections": 8192}
    results = {"scale": scale.label(), "disks": args.disks, "node_model": node_model, "rounds": args.rounds,
               "when": time.strftime("%Y-%m-%d %H:%M"), "load_average_start": benchlib.load_average()}
    precision = max(1, int(node_model * 0.02))

    capacity3 = args.capacity
    if "capacity" in parts:
        rows = []
        for k in [int(x) for x in args.nodes.split(",") if x]:
            count = int(node_model * k * 1.3) + 8
            store = tierlib.TierStore(server_bin, os.path.join(args.work_dir, f"K{k}"), spec, k, count, args.rounds)
            store.create(block_size=BLOCK)
            titles = [f"t{i:04d}" for i in range(count)]
            found, costs = [], []
            for rep in range(args.repeats):
                with tierlib.Tier(store) as tier:
                    n, cost = search(loadgen_bin, tier, titles, r_c, t_b, max(1, int(node_model * k * 0.6)),
                                     min(count, int(node_model * k * 1.2) + 2), precision, args.ramp, rep + 1,
                                     args.work_dir, args.viewers, args.loads)
                found.append(n)
                costs.append(cost)
                for t in cost["trials"]:
                    log(f"    {t['viewers']} viewers: starved {t['starved']}, errors {t['errors']}, node reads "
                        f"{t['node_reads']}, most asked node / mean each second: median "
                        f"{t['ask_peak_median']:.2f}, p90 {t['ask_peak_p90']:.2f}")
                log(f"  K={k} search {rep + 1}: {n} streams; node CPU "
                    f"{' '.join(f'{c * 100:.0f}%' for c in cost['node_cpu'])} of a core, machine busy "
                    f"{cost['machine_busy'] * 100:.0f}%, load average {benchlib.load_average():.1f}")
            rows.append({"nodes": k, "measured": found, "median": benchlib.median(found), "costs": costs})
            shutil_rm(store.root)
        base = rows[0]["median"] if rows and rows[0]["nodes"] == 1 else None
        for r in rows:
            r["vs_one"] = r["median"] / base if base else None
            if r["nodes"] == 3:
                capacity3 = int(r["median"])
        results["capacity"] = rows
        print(f"Tier capacity ({args.viewers} viewers of distinct titles, loads {args.loads}, no admission control; "
              f"{args.disks} emulated disks a node, node model N {node_model:.1f}; median of {args.repeats})")
        print(f"{'K':>3} {'measured':>9} {'vs K=1':>7}  searches  (node CPU, machine busy, first search)")
        for r in rows:
            c = r["costs"][0]
            print(f"{r['nodes']:>3} {r['median']:>9g} {r['vs_one'] or 0:>7.2f}  {r['measured']}  "
                  f"({' '.join(f'{x * 100:.0f}%' for x in c['node_cpu'])}, {c['machine_busy'] * 100:.0f}%)")

    if "loads" in parts:
        rows = []
        counts = [int(x) for x in args.at.split(",") if x]
        for k in [int(x) for x in args.nodes.split(",") if x]:
            store = tierlib.TierStore(server_bin, os.path.join(args.work_dir, f"L{k}"), spec, k, max(counts) + 2,
                                      args.rounds)
            store.create(block_size=BLOCK)
            titles = [f"t{i:04d}" for i in range(store.count)]
            busy = tierlib.MachineBusy()
            for n in counts:
                for loads in ("fresh", "aged"):
                    with tierlib.Tier(store) as tier:
                        trials, _ = benchlib.loadgen(loadgen_bin, tier, titles, r_c, t_b,
                                                     ["--viewers", str(n), "--arrival", f"ramp:{args.ramp * t_b:.3f}s",
                                                      "--seed", "1"] + viewer_args(tier, "direct", loads),
                                                     args.work_dir)
                    t = trials[-1]
                    rows.append({"nodes": k, "viewers": n, "loads": loads,
                                 **{key: t[key] for key in ("starved", "errors", "stalls", "node_reads",
                                                            "ask_peak_median", "ask_peak_p90")}})
                    log(f"  K={k} {n} viewers, loads {loads}: {json.dumps(rows[-1])}")
            log(f"  K={k}: machine busy {busy.share() * 100:.0f}%, load average {benchlib.load_average():.1f}")
            shutil_rm(store.root)
        results["loads"] = rows
        print("Direct viewers at fixed counts: loads weighed by their age against taken as just heard")
        print(f"{'K':>3} {'viewers':>7} {'loads':<6} {'starved':>7} {'most asked / mean (median, p90)':>32}  "
              f"node reads")
        for r in rows:
            print(f"{r['nodes']:>3} {r['viewers']:>7} {r['loads']:<6} {r['starved']:>7} "
                  f"{r['ask_peak_median']:>20.2f} {r['ask_peak_p90']:>11.2f}  {r['node_reads']}")

    if ("balance" in parts or "admission" in parts) and not capacity3:
        capacity3 = int(node_model * 3)
        log(f"tier: no K = 3 capacity measured; taking 3 x the node model ({capacity3})")

    if "balance" in parts:
        rows = []
        # Its own time scale: the title is long, and the share of reads does not depend on the scale. As many
        # viewers, against the K = 3 capacity at this scale, as --balance-load says.
        b_t_a, b_t_b = PAPER["t_a"] * args.balance_time_scale, PAPER["t_b"] * args.balance_time_scale
        b_r_c = BLOCK * 8 / b_t_b
        b_model = model_streams(args.disks, b_t_a, r_d, b_r_c, b_t_b)
        b_spec = StoreSpec(args.disks, b_t_a, r_d, b_r_c, b_t_b, "rda")
        b_spec.extra = dict(spec.extra)
        viewers = int(capacity3 * args.balance_load * b_model / node_model)
        log(f"tier balance: time x{args.balance_time_scale:g} (t_b {b_t_b:.3f} s, node model N {b_model:.1f}), "
            f"a title of {args.balance_rounds} blocks, {viewers} viewers")
        # Block placement with the holder drawn as boxes draw it, the same with every draw at 0 (the first
        # holder the loads allow: no salt), and title-level placement.
        variants = [("block", "split"), ("block", "first"), ("title", "split")]
        if args.viewers == "stream":
            variants = [("block", "split"), ("title", "split")]
        stores = {}
        for placement, ties in variants:
            if placement not in stores:
                stores[placement] = tierlib.TierStore(server_bin, os.path.join(args.work_dir, f"hot-{placement}"),
                                                      b_spec, 3, 1, args.balance_rounds, placement=placement)
                stores[placement].create(block_size=BLOCK)
            store = stores[placement]
            extra = ["--ties", ties] if args.viewers == "direct" else []
            runs = []
            for rep in range(args.repeats):
                with tierlib.Tier(store) as tier:
                    trials, _ = benchlib.loadgen(loadgen_bin, tier, ["t0000"], b_r_c, b_t_b,
                                                 ["--viewers", str(viewers), "--pick", "weighted", "--arrival",
                                                  f"ramp:{args.balance_rounds * b_t_b:.3f}s", "--seed", str(rep + 1)]
                                                 + viewer_args(tier, args.viewers, args.loads) + extra,
                                                 args.work_dir)
                t = trials[-1]
                total = sum(t["node_reads"]) or 1
                shares = [r / total for r in t["node_reads"]]
                runs.append({"shares": shares, "spread": (max(shares) - min(shares)) / (sum(shares) / 3),
                             "starved": t["starved"], "stalls": t["stalls"], "errors": t["errors"]})
                log(f"  {placement} placement, ties {ties}, run {rep + 1}: node read shares "
                    f"{' '.join(f'{s:.3f}' for s in shares)}, starved {t['starved']}, errors {t['errors']}")
            rows.append({"placement": placement, "ties": ties, "viewers": viewers, "runs": runs,
                         "spread": benchlib.median([r["spread"] for r in runs]),
                         "starved": benchlib.median([r["starved"] for r in runs])})
        for store in stores.values():
            shutil_rm(store.root)
        results["balance"] = rows
        print(f"One hot title of {args.balance_rounds} blocks on K = 3 ({viewers} {args.viewers} viewers, arrivals "
              f"over the title; median of {args.repeats})")
        print(f"{'placement':<10} {'ties':<6} {'node read shares (first run)':<30} {'max-min / mean':>14} "
              f"{'starved':>8}")
        for r in rows:
            shares = " ".join(f"{s:.3f}" for s in r["runs"][0]["shares"])
            print(f"{r['placement']:<10} {r['ties']:<6} {shares:<30} {r['spread']:>14.3f} {r['starved']:>8g}")

    if "admission" in parts:
        rows = []
        count = int(capacity3 * 2 * 1.1) + 8
        store = tierlib.TierStore(server_bin, os.path.join(args.work_dir, "admission"), spec, 3, count, args.rounds)
        spec.server_admission = True
        store.create(block_size=BLOCK)
        titles = [f"t{i:04d}" for i in range(count)]
        for load in (1.0, 2.0):
            viewers = int(round(capacity3 * load))
            runs = []
            for rep in range(args.repeats):
                with tierlib.Tier(store) as tier:
                    # Every viewer asks node 0: the others get theirs by redirect only.
                    trials, _ = benchlib.loadgen(loadgen_bin, tier, titles[:viewers], r_c, t_b,
                                                 ["--viewers", str(viewers), "--arrival",
                                                  f"ramp:{args.ramp * t_b:.3f}s", "--seed", str(rep + 1),
                                                  "--retry-for", f"{2 * args.rounds * t_b:.3f}s"], args.work_dir)
                t = trials[-1]
                runs.append(t)
                log(f"  {load:g}x run {rep + 1}: peak {t['peak_streams']} streaming, redirects {t['redirects']}, "
                    f"admitted {t['admitted']}, gave up {t['refused']}, starved {t['starved']}, node reads "
                    f"{t['node_reads']}")
            med = {k: benchlib.median([r[k] for r in runs])
                   for k in ("peak_streams", "admitted", "refused", "redirects", "starved", "stalls")}
            rows.append({"load": load, "viewers": viewers, "median": med,
                         "peak_of_capacity": med["peak_streams"] / capacity3, "runs": runs})
        spec.server_admission = False
        shutil_rm(store.root)
        results["admission"] = {"capacity": capacity3, "rows": rows}
        print(f"Tier-wide admission (default config), every viewer asking node 0 first; K = 3 capacity "
              f"{capacity3}; median of {args.repeats}")
        print(f"{'load':>5} {'viewers':>7} {'peak':>5} {'/ C':>5} {'redirects':>9} {'admitted':>8} {'gave up':>7} "
              f"{'starved':>7}")
        for r in rows:
            m = r["median"]
            print(f"{r['load']:>4g}x {r['viewers']:>7} {m['peak_streams']:>5g} {r['peak_of_capacity']:>5.2f} "
                  f"{m['redirects']:>9g} {m['admitted']:>8g} {m['refused']:>7g} {m['starved']:>7g}")

    results["load_average_end"] = benchlib.load_average()
    with open(os.path.join(args.out, "tier.json"), "w") as f:
        json.dump(results, f, indent=1)


def shutil_rm(path):
    import shutil
    shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
