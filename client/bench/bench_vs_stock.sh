#!/usr/bin/env bash
# Client benchmark (not a test): the same swarm run with Toast clients, with stock libtorrent streaming clients
# (sequential download + piece deadlines, the VoD server as a BEP 19 web seed: what a user would otherwise run)
# and with plain unicast viewers, RUNS times alternating (default 3). Prints per-run figures, then medians and
# the ratios Toast/stock and Toast/unicast of VoD-server bytes, and the stalls of each.
#   usage: client/bench/bench_vs_stock.sh [RUNS] [SCENARIO]   (BUILD_DIR defaults to build/)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
scenario=${2:-testbed/scenarios/bench_client.json}
build_dir=${BUILD_DIR:-build}
cmake --build "$build_dir" --target toast-server toast-tracker toast-client >/dev/null
out=$(mktemp -d "${TMPDIR:-/tmp}/toast-bench-client.XXXXXX")
trap 'rm -rf "$out"' EXIT
for i in $(seq "$runs"); do
  echo "run $i/$runs" >&2
  testbed/run "$scenario" --out "$out/run$i" --bin-dir "$build_dir" >/dev/null
done
/usr/bin/python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
rows = [json.load(open(f"{out}/run{i}/report.json")) for i in range(1, runs + 1)]
def med(xs): return statistics.median(xs)
toast = [r["server_bytes"] for r in rows]
stock = [r["baselines"]["stock"]["server_bytes"] for r in rows]
uni = [r["baselines"]["unicast"]["server_bytes"] for r in rows]
print(f"{'run':>4} {'toast MB':>9} {'stock MB':>9} {'unicast MB':>10} {'toast stalls':>12} {'stock stalls':>12}")
for i, r in enumerate(rows, 1):
    print(f"{i:>4} {toast[i-1]/1e6:9.1f} {stock[i-1]/1e6:9.1f} {uni[i-1]/1e6:10.1f} {r['stalls']['count']:>12} "
          f"{r['baselines']['stock']['stalls']:>12}")
print(f"median server bytes: toast {med(toast)/1e6:.1f} MB, stock {med(stock)/1e6:.1f} MB, unicast {med(uni)/1e6:.1f} MB")
print(f"ratio toast/stock   {med(toast)/med(stock):.2f}")
print(f"ratio toast/unicast {med(toast)/med(uni):.2f}  (reduction {100*(1-med(toast)/med(uni)):.1f}%)")
print(f"median stalls: toast {med([r['stalls']['count'] for r in rows])}, "
      f"stock {med([r['baselines']['stock']['stalls'] for r in rows])}")
PY
