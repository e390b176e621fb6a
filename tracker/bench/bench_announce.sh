#!/usr/bin/env bash
# Load check for toast-tracker: 10k distinct peers over 100 swarms, each announcing 3 times ("started", then
# two re-announces), over HTTP keep-alive and over UDP (BEP 15), from 32 concurrent clients. Every run is
# bounded in count (30k announces) and time (60 s, plus a hard `timeout`), against a fresh tracker with
# rate limiting off. Prints each run, the median of the runs, and the ratio to a saved reference run.
#
# usage: tracker/bench/bench_announce.sh [--runs N] [--save-reference]
#   BUILD_DIR   build directory (default: <repo>/build-tracker); toast-tracker and tracker_load_gen are built
#   REFERENCE   reference file (default: tracker/bench/reference.txt)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-tracker}
REFERENCE=${REFERENCE:-$ROOT/tracker/bench/reference.txt}
RUNS=3
SAVE=0
PEERS=10000
SWARMS=100
ROUNDS=3
CONCURRENCY=32
TIME_LIMIT=60

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --save-reference) SAVE=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "bench_announce.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "bench_announce.sh: --runs needs a positive integer" >&2; exit 2; }

if [[ ! -f "$BUILD_DIR/build.ninja" && ! -f "$BUILD_DIR/Makefile" ]]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$BUILD_DIR" -j1 --target toast-tracker tracker_load_gen >/dev/null
TRACKER="$BUILD_DIR/tracker/toast-tracker"
LOADGEN="$BUILD_DIR/tracker/tracker_load_gen"

WORK=$(mktemp -d)
TRACKER_PID=""
cleanup() {
  if [[ -n "$TRACKER_PID" ]]; then kill "$TRACKER_PID" 2>/dev/null || true; wait "$TRACKER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
echo '{"rate_limit": {"per_second": 0}, "log_level": "warn"}' >"$WORK/tracker.json"

# Starts a fresh tracker on free ports (port 0; it prints what it bound) and sets HTTP_PORT / UDP_PORT.
start_tracker() {
  "$TRACKER" --listen 127.0.0.1:0 --udp 127.0.0.1:0 --config "$WORK/tracker.json" >"$WORK/out" 2>"$WORK/err" &
  TRACKER_PID=$!
  for _ in $(seq 100); do
    if grep -q '^toast-tracker: udp' "$WORK/out" 2>/dev/null; then break; fi
    sleep 0.05
  done
  HTTP_PORT=$(sed -n 's/^toast-tracker: http .*:\([0-9]*\)$/\1/p' "$WORK/out")
  UDP_PORT=$(sed -n 's/^toast-tracker: udp .*:\([0-9]*\)$/\1/p' "$WORK/out")
  [[ -n "$HTTP_PORT" && -n "$UDP_PORT" ]] || { echo "toast-tracker did not start:" >&2; cat "$WORK/err" >&2; exit 1; }
}

stop_tracker() {
  kill "$TRACKER_PID"; wait "$TRACKER_PID" || true; TRACKER_PID=""
}

field() {  # field NAME LINE
  sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"
}

median() {
  sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'
}

echo "toast-tracker announce load: $PEERS peers, $SWARMS swarms, $ROUNDS announces each, $CONCURRENCY clients, $RUNS runs"
declare -A RESULTS
for mode in http udp; do
  for run in $(seq "$RUNS"); do
    start_tracker
    port=$HTTP_PORT; [[ $mode == udp ]] && port=$UDP_PORT
    line=$(timeout $((TIME_LIMIT + 30)) "$LOADGEN" --mode "$mode" --port "$port" --peers "$PEERS" --swarms "$SWARMS" \
             --rounds "$ROUNDS" --concurrency "$CONCURRENCY" --time-limit "$TIME_LIMIT") || {
      echo "run failed: $line" >&2; exit 1; }
    swarms=$(curl -s "http://127.0.0.1:$HTTP_PORT/stats" | python3 -c 'import json,sys; t=json.load(sys.stdin)["totals"]; print(t["swarms"], t["seeders"]+t["leechers"])')
    stop_tracker
    echo "  $mode run $run: $line (tracker: swarms, peers = $swarms)"
    for k in announces_per_s p50_ms p99_ms; do
      RESULTS[$mode.$k]+="$(field "$k" "$line") "
    done
  done
done

declare -A REF
if [[ -f "$REFERENCE" ]]; then
  while read -r key value; do [[ -n "$key" && "$key" != \#* ]] && REF[$key]=$value; done <"$REFERENCE"
fi

printf '\n%-22s %12s %12s %8s\n' "median of $RUNS runs" "this run" "reference" "ratio"
SAVED=""
for mode in http udp; do
  for k in announces_per_s p50_ms p99_ms; do
    m=$(tr ' ' '\n' <<<"${RESULTS[$mode.$k]}" | grep -v '^$' | median)
    ref=${REF[$mode.$k]:-}
    ratio="-"
    [[ -n "$ref" ]] && ratio=$(awk -v a="$m" -v b="$ref" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    printf '%-22s %12s %12s %8s\n' "$mode $k" "$m" "${ref:--}" "$ratio"
    SAVED+="$mode.$k $m"$'\n'
  done
done
echo "(ratio = this run / reference; above 1 is better for announces_per_s, worse for latencies)"

if [[ $SAVE == 1 ]]; then
  { echo "# toast-tracker bench_announce.sh reference, $(date -u +%Y-%m-%d), $(nproc) cores, git $(git -C "$ROOT" rev-parse --short HEAD)"; printf '%s' "$SAVED"; } >"$REFERENCE"
  echo "saved reference to $REFERENCE"
fi
