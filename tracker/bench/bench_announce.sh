#!/usr/bin/env bash
# toast-tracker side by side with opentracker (Debian's package, whitelist mode) under the same load
# generator: 10k distinct peers over 100 whitelisted swarms, each announcing 3 times ("started", then two
# re-announces; a quarter are seeds; numwant 50), from 32 concurrent clients on one thread, over HTTP (one
# TCP connection per announce, as BitTorrent clients do; Debian's opentracker is built without keep-alive)
# and over UDP (BEP 15). Both trackers serve requests on one thread: toast-tracker's io thread, and
# opentracker's main loop (listen.udp.workers unset, its default, so UDP is served there too). Each round
# starts a fresh tracker per (mode, tracker) and alternates which tracker goes first. Every run is bounded
# in count (30k announces) and time (60 s, plus a hard `timeout`). Prints every run, the medians and the
# ratios toast-tracker / opentracker.
#
# usage: tracker/bench/bench_announce.sh [--runs N] [--keep-alive]
#   --keep-alive  also run toast-tracker alone over HTTP keep-alive (no opentracker figure to compare)
#   BUILD_DIR     build directory (default: <repo>/build-tracker); toast-tracker and tracker_load_gen are built
# Run it under the heavy lock: flock /work/heavy.lock tracker/bench/bench_announce.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-tracker}
RUNS=5
KEEPALIVE=0
PEERS=10000
SWARMS=100
ROUNDS=3
CONCURRENCY=32
TIME_LIMIT=60

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --keep-alive) KEEPALIVE=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "bench_announce.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "bench_announce.sh: --runs needs a positive integer" >&2; exit 2; }
command -v opentracker >/dev/null || { echo "bench_announce.sh: opentracker is not installed (scripts/install-deps.sh)" >&2; exit 1; }

# shellcheck source=tracker/bench/lib.sh
source "$ROOT/tracker/bench/lib.sh"
build_tracker_bench "$ROOT" "$BUILD_DIR"

WORK=$(mktemp -d)
chmod 755 "$WORK"  # opentracker drops to nobody (and chroots here when started as root)
PID=""
cleanup() {
  if [[ -n "$PID" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# The load generator's swarms: info-hash k is "BENCHSWARM" followed by k in ten digits.
python3 -c "
for k in range($SWARMS): print(('BENCHSWARM%010d' % k).encode().hex())" >"$WORK/whitelist.txt"
chmod 644 "$WORK/whitelist.txt"
cat >"$WORK/tracker.json" <<JSON
{"whitelist": "$WORK/whitelist.txt", "rate_limit": {"per_second": 0}, "log_level": "warn"}
JSON

# start NAME: a fresh tracker on a free port (HTTP and UDP on the same number); sets PID and PORT.
start() {
  PORT=$(free_port)
  if [[ $1 == toast ]]; then
    "$TRACKER" --listen "127.0.0.1:$PORT" --udp "127.0.0.1:$PORT" --config "$WORK/tracker.json" \
      >"$WORK/out" 2>"$WORK/err" &
  else
    # The whitelist path is read after opentracker chroots to -d (when root), so it is relative to it.
    (cd "$WORK" && exec opentracker -i 127.0.0.1 -p "$PORT" -P "$PORT" -d "$WORK" -w whitelist.txt) \
      >"$WORK/out" 2>"$WORK/err" &
  fi
  PID=$!
  wait_port "$PORT" || { echo "$1 did not start:" >&2; cat "$WORK/err" >&2; exit 1; }
}

stop() {
  kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""
}

declare -A RESULTS
measure() {  # measure TRACKER MODE [extra load_gen args]
  local tracker=$1 mode=$2; shift 2
  start "$tracker"
  local line
  line=$(timeout $((TIME_LIMIT + 30)) "$LOADGEN" --mode "$mode" --port "$PORT" --peers "$PEERS" --swarms "$SWARMS" \
           --rounds "$ROUNDS" --concurrency "$CONCURRENCY" --time-limit "$TIME_LIMIT" "$@") || {
    echo "$tracker $mode run failed: $line" >&2; cat "$WORK/err" >&2; exit 1; }
  stop
  printf '  %-11s %-4s %s\n' "$tracker" "$mode" "$line"
  local key="$tracker.$mode"
  for k in announces_per_s p50_ms p99_ms; do
    RESULTS[$key.$k]+="$(field "$k" "$line") "
  done
}

echo "toast-tracker vs opentracker $(dpkg-query -W -f='${Version}' opentracker 2>/dev/null): $PEERS peers," \
     "$SWARMS whitelisted swarms, $ROUNDS announces each, $CONCURRENCY clients, $RUNS rounds, $(nproc) cores"
for run in $(seq "$RUNS"); do
  order="toast opentracker"; (( run % 2 == 0 )) && order="opentracker toast"
  for mode in http udp; do
    for tracker in $order; do
      if [[ $mode == http ]]; then measure "$tracker" http --new-connection; else measure "$tracker" udp; fi
    done
  done
  if [[ $KEEPALIVE == 1 ]]; then
    start toast
    line=$(timeout $((TIME_LIMIT + 30)) "$LOADGEN" --mode http --port "$PORT" --peers "$PEERS" --swarms "$SWARMS" \
             --rounds "$ROUNDS" --concurrency "$CONCURRENCY" --time-limit "$TIME_LIMIT")
    stop
    printf '  %-11s %-4s %s (keep-alive)\n' toast http "$line"
    for k in announces_per_s p50_ms p99_ms; do RESULTS[keepalive.$k]+="$(field "$k" "$line") "; done
  fi
done

med() { tr ' ' '\n' <<<"${RESULTS[$1]}" | grep -v '^$' | median; }
printf '\n%-22s %14s %14s %8s\n' "median of $RUNS runs" "toast-tracker" "opentracker" "ratio"
for mode in http udp; do
  for k in announces_per_s p50_ms p99_ms; do
    t=$(med "toast.$mode.$k"); o=$(med "opentracker.$mode.$k")
    ratio=$(awk -v a="$t" -v b="$o" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    printf '%-22s %14s %14s %8s\n' "$mode $k" "$t" "$o" "$ratio"
  done
done
if [[ $KEEPALIVE == 1 ]]; then
  for k in announces_per_s p50_ms p99_ms; do
    printf '%-22s %14s %14s %8s\n' "http keep-alive $k" "$(med "keepalive.$k")" "-" "-"
  done
fi
echo "(ratio = toast-tracker / opentracker: above 1 is better for announces_per_s, worse for latencies;"
echo " HTTP opens one connection per announce, so its latency includes the TCP handshake)"
