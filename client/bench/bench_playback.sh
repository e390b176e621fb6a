#!/usr/bin/env bash
# Playback latency benchmark for `toast-client play`. Not a test: it prints figures.
#
# On 127.0.0.1 with a healthy toast-server, a tracker and one seed peer that uploads at the title's bitrate
# (so the swarm delivers in playback order and the server is asked only for what the swarm cannot bring in
# time), it starts a fresh `toast-client play --player none` RUNS times (empty save directory each time) and,
# acting as the player, measures
#   startup: time to first playable data, the player's first request (bytes 0-64KiB) to its first body byte
#            (also from the client's launch, which adds libtorrent's start and the listener);
#   seek:    seek-to-data, right after startup a request for 64 KiB at three quarters of the title (a piece
#            nobody has sent yet) to its first body byte.
# Both are measured by curl (time_starttransfer, what a player sees) and by the client itself (the stats'
# first_byte_ms and seek_ms). The reference run, side by side: the same requests sent straight to the VoD
# server (unicast, no swarm, no local endpoint). Targets: startup median <= 250 ms, seek median
# <= 500 ms.
#
# Environment: RUNS (default 15), TOAST_BUILD_DIR (default build), PIECE (torrent piece size, default 256KiB),
# SECONDS_LONG (video length, default 60), KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=${RUNS:-15}
build_dir=${TOAST_BUILD_DIR:-build}
piece=${PIECE:-256KiB}
length=${SECONDS_LONG:-60}
for tool in ffmpeg curl python3; do
  command -v "$tool" >/dev/null || { echo "bench_playback: '$tool' is required (scripts/install-deps.sh)" >&2; exit 2; }
done

echo "bench_playback: building toast-client and toast-server (Release) in $build_dir/"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j1 --target toast-client toast-server toast-tracker >/dev/null
client_bin=$PWD/$build_dir/client/toast-client
server_bin=$PWD/$build_dir/server/toast-server
tracker_bin=$PWD/$build_dir/tracker/toast-tracker

work=$(mktemp -d "${TMPDIR:-/tmp}/toast-bench-playback.XXXXXX")
server_pid=""
client_pid=""
tracker_pid=""
seed_pid=""
stop_pid() {  # stop_pid PID: SIGTERM, then SIGKILL after 5 s
  local pid=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  stop_pid "$client_pid"
  stop_pid "$seed_pid"
  stop_pid "$tracker_pid"
  stop_pid "$server_pid"
  if [ "${KEEP:-0}" = 1 ]; then echo "bench_playback: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() {  # wait_http URL PID: until the URL answers (10 s at most)
  for _ in $(seq 200); do
    curl -fs -o /dev/null -I "$1" && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

media=$work/movie.ts
echo "bench_playback: generating a ${length} s H.264/AAC MPEG-TS test video"
ffmpeg -v error -y -f lavfi -i testsrc=size=640x360:rate=25 -f lavfi -i sine=frequency=440:sample_rate=44100 \
  -t "$length" -c:v libx264 -preset ultrafast -g 25 -b:v 2M -c:a aac -b:a 96k "$media"
size=$(stat -c %s "$media")
bitrate=$((size * 8 / length))
mkdir -p "$work"/d0 "$work"/d1 "$work/seed"
server_port=$(free_port)
tracker_port=$(free_port)
cat >"$work/server.json" <<JSON
{"listen": "127.0.0.1:$server_port", "disks": ["$work/d0", "$work/d1"], "log_level": "warn"}
JSON
"$server_bin" --config "$work/server.json" ingest movie.ts "$media" --torrent "$work/movie.torrent" \
  --bitrate "$bitrate" --piece-size "$piece" --announce "http://127.0.0.1:$tracker_port/announce" >/dev/null
"$server_bin" --config "$work/server.json" serve 2>"$work/server.log" &
server_pid=$!
"$tracker_bin" --listen "127.0.0.1:$tracker_port" >/dev/null 2>"$work/tracker.log" &
tracker_pid=$!
wait_http "http://127.0.0.1:$server_port/titles/movie.ts" "$server_pid" ||
  { echo "bench_playback: the server did not start:"; cat "$work/server.log"; exit 1; }
cp "$media" "$work/seed/movie.ts"
"$client_bin" stream "$work/movie.torrent" --save-dir "$work/seed" --listen 127.0.0.1:0 --stats "$work/seed.stats" \
  --behavior seed --upload-limit "$bitrate" --log-level warn 2>"$work/seed.log" &
seed_pid=$!
sleep 1

target=$((size * 3 / 4))
first_range="0-65535"
seek_range="$target-$((target + 65535))"
results=$work/results.txt
: >"$results"
echo "bench_playback: $runs runs, title $((size / 1024)) KiB at $bitrate bit/s, pieces of $piece"
for i in $(seq "$runs"); do
  run_dir=$work/run$i
  mkdir -p "$run_dir"
  http_port=$(free_port)
  url=http://127.0.0.1:$http_port/movie.ts
  launched=$(date +%s.%N)
  "$client_bin" play "$work/movie.torrent" --save-dir "$run_dir" --listen 127.0.0.1:0 --stats "$run_dir/stats.jsonl" \
    --http "127.0.0.1:$http_port" --player none --behavior seed --log-level warn >"$run_dir/out.log" 2>&1 &
  client_pid=$!
  # Wait for the listener without sending a request: the first request is the player's first read.
  for _ in $(seq 400); do
    python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' \
      "$http_port" 2>/dev/null && break
    sleep 0.02
  done
  asked=$(date +%s.%N)
  startup=$(curl -s -o /dev/null -r "$first_range" -w '%{time_starttransfer}' "$url")
  seek=$(curl -s -o /dev/null -r "$seek_range" -w '%{time_starttransfer}' "$url")
  sleep 1.2  # one stats line after the seek
  stop_pid "$client_pid"
  client_pid=""
  from_launch=$(python3 -c "print($asked - $launched + $startup)")
  ref_start=$(curl -s -o /dev/null -r "$first_range" -w '%{time_starttransfer}' "http://127.0.0.1:$server_port/titles/movie.ts")
  ref_seek=$(curl -s -o /dev/null -r "$seek_range" -w '%{time_starttransfer}' "http://127.0.0.1:$server_port/titles/movie.ts")
  summary=$(tail -n 1 "$run_dir/stats.jsonl")
  echo "$startup $seek $ref_start $ref_seek $from_launch $summary" >>"$results"
  printf '  run %2d: startup %4.0f ms, seek %4.0f ms\n' "$i" "$(python3 -c "print($startup*1000)")" \
    "$(python3 -c "print($seek*1000)")"
done

python3 - "$results" <<'PY'
import json, sys

def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = max(0, min(len(v) - 1, -(-p * len(v) // 100) - 1))  # nearest rank
    return v[int(k)]

def median(values):
    v = sorted(values)
    n = len(v)
    return (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2) if n else float("nan")

rows = {"startup (curl)": [], "seek (curl)": [], "startup (client stats)": [], "seek (client stats)": [],
        "startup from launch (curl)": [], "ref startup": [], "ref seek": []}
for line in open(sys.argv[1]):
    parts = line.split(" ", 5)
    s, k, rs, rk, fl = (float(x) * 1000 for x in parts[:5])
    rec = json.loads(parts[5])
    rows["startup from launch (curl)"].append(fl)
    rows["startup (curl)"].append(s)
    rows["seek (curl)"].append(k)
    rows["ref startup"].append(rs)
    rows["ref seek"].append(rk)
    if rec.get("first_byte_ms") is not None:
        rows["startup (client stats)"].append(rec["first_byte_ms"])
    rows["seek (client stats)"].extend(rec.get("seek_ms", []))

print()
print("| metric | runs | median ms | p95 ms | target | reference: server direct, median ms | ratio |")
print("|---|---|---|---|---|---|---|")
for name, ref, target in (("startup (curl)", "ref startup", 250), ("startup (client stats)", "ref startup", 250),
                          ("startup from launch (curl)", "ref startup", 250),
                          ("seek (curl)", "ref seek", 500), ("seek (client stats)", "ref seek", 500)):
    v = rows[name]
    r = median(rows[ref])
    m = median(v)
    ok = "met" if m <= target else "MISSED"
    print(f"| {name} | {len(v)} | {m:.1f} | {pct(v, 95):.1f} | <= {target} ({ok}) | {r:.1f} | {m / r if r else float('nan'):.1f}x |")
PY
