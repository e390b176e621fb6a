#!/usr/bin/env bash
# What keeping the swarms across restarts (state_file) costs announces: toast-tracker with a state file saved
# every second against the same tracker without one, under the same UDP load: 100k distinct peers over 1000
# swarms (a 10 MB state file), each announcing 6 times from 32 concurrent clients on one thread. With a fixed
# number of clients waiting at a time, a pause of the io thread delays only the announces waiting then, so
# the figure to watch is the maximum latency (the percentiles barely move). Each round starts a fresh
# tracker per configuration and alternates which goes first; every run is bounded in count (600k announces)
# and time (60 s, plus a hard `timeout`). Prints every run, the medians and the ratios with / without.
#
# usage: tracker/bench/bench_state_save.sh [--runs N]
#   BUILD_DIR     build directory (default: <repo>/build-tracker); toast-tracker and tracker_load_gen are built
# Run it under the heavy lock: flock /work/heavy.lock tracker/bench/bench_state_save.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-tracker}
RUNS=5
PEERS=100000
SWARMS=1000
ROUNDS=6
CONCURRENCY=32
TIME_LIMIT=60

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "bench_state_save.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "bench_state_save.sh: --runs needs a positive integer" >&2; exit 2; }

# shellcheck source=tracker/bench/lib.sh
source "$ROOT/tracker/bench/lib.sh"
build_tracker_bench "$ROOT" "$BUILD_DIR"

WORK=$(mktemp -d)
PID=""
cleanup() {
  if [[ -n "$PID" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/none.json" <<JSON
{"rate_limit": {"per_second": 0}, "log_level": "warn"}
JSON
cat >"$WORK/saved.json" <<JSON
{"rate_limit": {"per_second": 0}, "log_level": "warn", "state_file": "$WORK/swarms.json", "state_save_interval": "1s"}
JSON

declare -A RESULTS
measure() {  # measure none|saved
  rm -f "$WORK/swarms.json"
  local port line
  port=$(free_port)
  "$TRACKER" --listen "127.0.0.1:$port" --udp "127.0.0.1:$port" --config "$WORK/$1.json" \
    >"$WORK/out" 2>"$WORK/err" &
  PID=$!
  wait_port "$port" || { echo "toast-tracker did not start:" >&2; cat "$WORK/err" >&2; exit 1; }
  line=$(timeout $((TIME_LIMIT + 30)) "$LOADGEN" --mode udp --port "$port" --peers "$PEERS" --swarms "$SWARMS" \
           --rounds "$ROUNDS" --concurrency "$CONCURRENCY" --time-limit "$TIME_LIMIT") || {
    echo "$1 run failed: $line" >&2; cat "$WORK/err" >&2; exit 1; }
  kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""
  if [[ $1 == saved && ! -s "$WORK/swarms.json" ]]; then
    echo "the tracker with a state file saved nothing:" >&2; cat "$WORK/err" >&2; exit 1
  fi
  printf '  %-6s %s\n' "$1" "$line"
  for k in announces_per_s p99_ms max_ms; do RESULTS[$1.$k]+="$(field "$k" "$line") "; done
}

echo "toast-tracker with state_file saved every 1 s vs without: $PEERS peers, $SWARMS swarms, $ROUNDS announces" \
     "each over UDP, $CONCURRENCY clients, $RUNS rounds, $(nproc) cores"
for run in $(seq "$RUNS"); do
  if (( run % 2 )); then measure none; measure saved; else measure saved; measure none; fi
done

med() { tr ' ' '\n' <<<"${RESULTS[$1]}" | grep -v '^$' | median; }
printf '\n%-22s %12s %12s %8s\n' "median of $RUNS runs" "saved" "none" "ratio"
for k in announces_per_s p99_ms max_ms; do
  s=$(med "saved.$k"); n=$(med "none.$k")
  ratio=$(awk -v a="$s" -v b="$n" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  printf '%-22s %12s %12s %8s\n' "$k" "$s" "$n" "$ratio"
done
echo "(ratio = saved / none: below 1 is the cost for announces_per_s, above 1 for the latencies)"
