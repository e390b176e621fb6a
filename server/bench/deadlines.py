#!/usr/bin/python3
"""The swarm's safety net under background load: range requests that carry a Toast-Deadline (what toast-client
sends for the pieces its playhead needs) beside best-effort range requests that keep the disks busy, with the
disks' queues first come first served (`disk_order` fifo) and earliest deadline first (edf). Seed 001's point:
a queue that knows deadlines serves the urgent reads in time on the same disks.

Emulated disks with the RDA paper's t_a and r_d (not scaled), rda placement, one title. Background: wrk with
--background connections asking random --range-kib ranges, no deadline. Foreground: --clients loops, each
asking a random range of --range-kib with `Toast-Deadline: --deadline-ms`, then pausing --pause-ms (a box
fetching the pieces its peers did not deliver). A foreground request misses when its answer is complete
after its deadline (measured by the client); the server's own count (toast_store_read_deadlines_total) and
its Toast-Late answers are reported beside. Alternating orders, --rounds rounds, medians.

A benchmark, not a test: it prints a table and writes deadlines.json into --out.
"""

import argparse
import http.client
import json
import os
import random
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import PAPER, Server, Store, StoreSpec, log  # noqa: E402


def foreground(port, title_bytes, range_bytes, deadline_ms, pause_s, stop, out, seed):
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while not stop.is_set():
        first = rng.randrange(0, title_bytes - range_bytes)
        headers = {"Range": f"bytes={first}-{first + range_bytes - 1}", "Toast-Deadline": str(deadline_ms)}
        started = time.monotonic()
        try:
            conn.request("GET", "/titles/t0000", headers=headers)
            resp = conn.getresponse()
            body = resp.read()
        except (OSError, http.client.HTTPException) as e:
            out.append({"error": str(e)})
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            continue
        took = time.monotonic() - started
        out.append({"status": resp.status, "ok": resp.status == 206 and len(body) == range_bytes,
                    "seconds": took, "late_header": resp.getheader("Toast-Late") is not None})
        stop.wait(pause_s)
    conn.close()


def wrk(port, connections, seconds, title_bytes, range_bytes):
    lua = os.path.join(os.path.dirname(os.path.abspath(__file__)), "random_range.lua")
    return subprocess.Popen(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s", "-s", lua,
                             f"http://127.0.0.1:{port}/titles/t0000", "--", str(title_bytes), str(range_bytes)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def metric(text, series):
    m = re.search(r"^" + re.escape(series) + r" ([0-9.e+]+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def one_run(store, args, order, title_bytes, seed):
    store.spec.queue = order
    range_bytes = args.range_kib * 1024
    with Server(store) as server:
        bg = wrk(server.port, args.background, args.seconds, title_bytes, range_bytes)
        time.sleep(1.0)  # the background fills the queues first
        stop = threading.Event()
        samples = []
        threads = [threading.Thread(target=foreground,
                                    args=(server.port, title_bytes, range_bytes, args.deadline_ms,
                                          args.pause_ms / 1e3, stop, samples, seed * 100 + i))
                   for i in range(args.clients)]
        for t in threads:
            t.start()
        time.sleep(max(1.0, args.seconds - 2.0))
        stop.set()
        for t in threads:
            t.join()
        out, _ = bg.communicate(timeout=args.seconds + 60)
        metrics = server.metrics()
    done = [s for s in samples if "seconds" in s]
    lat = sorted(s["seconds"] for s in done)
    missed = sum(1 for s in done if s["seconds"] * 1e3 > args.deadline_ms)
    m = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    return {
        "order": order,
        "foreground": len(done),
        "errors": len(samples) - len(done) + sum(1 for s in done if not s["ok"]),
        "missed": missed,
        "missed_pct": 100.0 * missed / len(done) if done else float("nan"),
        "p50_ms": 1e3 * lat[len(lat) // 2] if lat else float("nan"),
        "p95_ms": 1e3 * lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else float("nan"),
        "late_headers": sum(1 for s in done if s["late_header"]),
        "server_met": metric(metrics, 'toast_store_read_deadlines_total{result="met"}'),
        "server_missed": metric(metrics, 'toast_store_read_deadlines_total{result="missed"}'),
        "background_rps": float(m.group(1)) if m else float("nan"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--work-dir", default="/dev/shm/toast-deadlines")
    ap.add_argument("--out", default="deadlines-results")
    ap.add_argument("--disks", type=int, default=2)
    ap.add_argument("--title-mib", type=int, default=256)
    ap.add_argument("--range-kib", type=int, default=256)
    ap.add_argument("--background", type=int, default=16, help="best-effort wrk connections")
    ap.add_argument("--clients", type=int, default=2, help="foreground loops with a deadline")
    ap.add_argument("--deadline-ms", type=int, default=150)
    ap.add_argument("--pause-ms", type=int, default=100)
    ap.add_argument("--seconds", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--orders", default="fifo,edf")
    args = ap.parse_args()

    benchlib.stop_on_sigterm()
    server_bin, = benchlib.snapshot_binaries(args.build_dir, args.work_dir, ("toast-server",))
    os.makedirs(args.out, exist_ok=True)
    title_bytes = args.title_mib * 1024 * 1024
    spec = StoreSpec(args.disks, PAPER["t_a"], PAPER["r_d"], 2e6, 1.0, "rda",
                     extra={"block_size": "1MiB", "max_connections": 1024})
    store = Store(server_bin, os.path.join(args.work_dir, "store"), spec, 1, 1, media_bytes=title_bytes)
    store.create()
    log(f"deadlines: {args.disks} emulated disks (t_a {PAPER['t_a'] * 1e3:g} ms, r_d {PAPER['r_d'] / 1e6:g} "
        f"Mbps), {args.background} best-effort connections, {args.clients} clients with a {args.deadline_ms} ms "
        f"deadline, {args.range_kib} KiB ranges; load average {benchlib.load_average():.1f}")

    orders = args.orders.split(",")
    runs = {o: [] for o in orders}
    for rnd in range(args.rounds):
        for o in (orders if rnd % 2 == 0 else list(reversed(orders))):
            r = one_run(store, args, o, title_bytes, rnd + 1)
            runs[o].append(r)
            log(f"  round {rnd + 1} {o}: {r['foreground']} requests, missed {r['missed']} "
                f"({r['missed_pct']:.1f}%), p50 {r['p50_ms']:.0f} ms, p95 {r['p95_ms']:.0f} ms, Toast-Late "
                f"{r['late_headers']}, background {r['background_rps']:.0f} req/s")

    keys = ("foreground", "errors", "missed", "missed_pct", "p50_ms", "p95_ms", "late_headers", "server_met",
            "server_missed", "background_rps")
    rows = [{"order": o, "median": {k: benchlib.median([r[k] for r in runs[o]]) for k in keys}, "runs": runs[o]}
            for o in orders]
    with open(os.path.join(args.out, "deadlines.json"), "w") as f:
        json.dump({"when": time.strftime("%Y-%m-%d %H:%M"), "args": vars(args),
                   "load_average_end": benchlib.load_average(), "rows": rows}, f, indent=1)
    print(f"{args.clients} clients with a {args.deadline_ms} ms Toast-Deadline beside {args.background} best-effort "
          f"connections, random {args.range_kib} KiB ranges, {args.disks} emulated disks (t_a "
          f"{PAPER['t_a'] * 1e3:g} ms, r_d {PAPER['r_d'] / 1e6:g} Mbps); medians of {args.rounds} alternating "
          f"{args.seconds} s runs")
    print(f"{'order':<6} {'requests':>8} {'missed':>7} {'missed %':>9} {'p50 ms':>7} {'p95 ms':>7} "
          f"{'Toast-Late':>10} {'server missed':>13} {'background req/s':>16}")
    for r in rows:
        m = r["median"]
        print(f"{r['order']:<6} {m['foreground']:>8g} {m['missed']:>7g} {m['missed_pct']:>9.1f} {m['p50_ms']:>7.0f} "
              f"{m['p95_ms']:>7.0f} {m['late_headers']:>10g} {m['server_missed']:>13g} "
              f"{m['background_rps']:>16.0f}")


if __name__ == "__main__":
    main()
