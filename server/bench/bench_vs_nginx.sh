#!/usr/bin/env bash
# Benchmark (not a test): toast-server against nginx (sendfile on) serving the same large file, driven by wrk
# with random Range requests of 256 KiB and 4 MiB at 16 and 64 connections. Runs alternate toast/nginx so
# drift on a shared machine hits both; prints requests/s medians and the toast/nginx ratio per case, and
# checks a sample of responses from both servers byte for byte.
#
# Environment: BUILD_DIR (default <repo>/build-bench), SIZE_MIB (1024), ROUNDS (5), DURATION (10s),
# SERVER_THREADS (the machine's cores, as nginx's `worker_processes auto`: toast io_threads and nginx
# worker_processes, always equal), WRK_THREADS (2), WORK_DIR (a temp dir),
# BLOCK_SIZE (unset: the server's default, bitrate x time_slice = 2 Mbps x 5 s = 1.25 MB, so a 1 GiB title
# has ~1,700 replica files; set it, e.g. 16MiB, to compare other layouts). Toast runs with its default
# config apart from the listen address, the disks, io_threads, max_connections and the log level.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO/build-bench}"
SIZE_MIB="${SIZE_MIB:-1024}"
ROUNDS="${ROUNDS:-5}"
DURATION="${DURATION:-10s}"
SERVER_THREADS="${SERVER_THREADS:-$(nproc)}"
WRK_THREADS="${WRK_THREADS:-2}"
BLOCK_SIZE="${BLOCK_SIZE:-}"
LUA="$REPO/server/bench/random_range.lua"

for tool in cmake wrk nginx python3; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is not installed" >&2; exit 1; }
done

echo "== building toast-server (Release) in $BUILD_DIR"
cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j1 --target toast-server >/dev/null
TOAST="$BUILD_DIR/server/toast-server"

WORK="${WORK_DIR:-$(mktemp -d /tmp/toast-bench.XXXXXX)}"
TOAST_PID=""
NGINX_PID=""
cleanup() {
    [[ -n "$TOAST_PID" ]] && kill "$TOAST_PID" 2>/dev/null && wait "$TOAST_PID" 2>/dev/null || true
    [[ -n "$NGINX_PID" ]] && kill "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null || true
    if [[ -z "${WORK_DIR:-}" ]]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "bench: nothing listens on port $1" >&2
    exit 1
}

FILE="$WORK/www/movie"
BYTES=$((SIZE_MIB * 1024 * 1024))
mkdir -p "$WORK/www" "$WORK/disk0" "$WORK/disk1" "$WORK/disk2" "$WORK/disk3" "$WORK/nginx"
if [[ ! -f "$FILE" || $(stat -c %s "$FILE") -ne $BYTES ]]; then
    echo "== writing a $SIZE_MIB MiB file"
    head -c "$BYTES" /dev/urandom >"$FILE"
fi
# nginx's workers run as an unprivileged user when started by root.
chmod a+rx "$WORK" "$WORK/www"
chmod a+r "$FILE"

TOAST_PORT=$(free_port)
cat >"$WORK/toast.json" <<JSON
{"listen": "127.0.0.1:$TOAST_PORT", "disks": ["$WORK/disk0", "$WORK/disk1", "$WORK/disk2", "$WORK/disk3"],
 "policy": "rda", "io_threads": $SERVER_THREADS, "max_connections": 4096, "log_level": "warn"}
JSON
BLOCK_ARGS=()
[[ -n "$BLOCK_SIZE" ]] && BLOCK_ARGS=(--block-size "$BLOCK_SIZE")
echo "== ingesting into toast (4 disks, rda, blocks of ${BLOCK_SIZE:-the default size})"
"$TOAST" --config "$WORK/toast.json" ingest movie "$FILE" --torrent "$WORK/movie.torrent" "${BLOCK_ARGS[@]}" | head -1

NGINX_PORT=$(free_port)
cat >"$WORK/nginx/nginx.conf" <<CONF
daemon off;
worker_processes $SERVER_THREADS;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    client_body_temp_path $WORK/nginx/body;
    proxy_temp_path $WORK/nginx/proxy;
    fastcgi_temp_path $WORK/nginx/fastcgi;
    uwsgi_temp_path $WORK/nginx/uwsgi;
    scgi_temp_path $WORK/nginx/scgi;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location /titles/ { alias $WORK/www/; }
    }
}
CONF

"$TOAST" --config "$WORK/toast.json" serve 2>"$WORK/toast.log" &
TOAST_PID=$!
nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" 2>"$WORK/nginx/stderr.log" &
NGINX_PID=$!
wait_port "$TOAST_PORT"
wait_port "$NGINX_PORT"

echo "== warming the page cache (source file and every block replica)"
cat "$FILE" >/dev/null
find "$WORK"/disk? -type f -exec cat {} + >/dev/null

echo "== checking a sample of responses byte for byte"
python3 - "$FILE" "$TOAST_PORT" "$NGINX_PORT" <<'PY'
import random, sys, urllib.request
path, ports = sys.argv[1], sys.argv[2:]
size = __import__("os").path.getsize(path)
rng = random.Random(1)
with open(path, "rb") as f:
    for i in range(40):
        n = rng.choice([1, 1000, 256 * 1024, 4 * 1024 * 1024, 5 * 1024 * 1024 + 7])
        first = rng.randrange(0, size - n + 1)
        f.seek(first)
        want = f.read(n)
        for port in ports:
            req = urllib.request.Request(f"http://127.0.0.1:{port}/titles/movie",
                                         headers={"Range": f"bytes={first}-{first + n - 1}"})
            with urllib.request.urlopen(req) as r:
                got = r.read()
                if r.status != 206 or got != want:
                    sys.exit(f"bench: port {port} answered {r.status} with wrong bytes for {first}-{first + n - 1}")
print("   40 ranges from each server match the file")
PY

run_wrk() {  # port conns range_bytes -> prints requests/s
    local out
    out=$(wrk -t"$WRK_THREADS" -c"$2" -d"$DURATION" --timeout 10s -s "$LUA" "http://127.0.0.1:$1/titles/movie" -- "$BYTES" "$3")
    if grep -q "Non-2xx" <<<"$out"; then
        echo "bench: non-2xx responses from port $1:" >&2
        echo "$out" >&2
        exit 1
    fi
    awk '/^Requests\/sec:/ {print $2}' <<<"$out"
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

declare -A RESULTS
CASES=("262144 16" "262144 64" "4194304 16" "4194304 64")
echo "== $ROUNDS rounds x $DURATION per server and case, alternating (server threads: $SERVER_THREADS, wrk threads: $WRK_THREADS)"
for round in $(seq "$ROUNDS"); do
    for c in "${CASES[@]}"; do
        read -r range conns <<<"$c"
        # Alternate which server goes first in each round.
        if ((round % 2)); then order="toast nginx"; else order="nginx toast"; fi
        for who in $order; do
            port=$TOAST_PORT
            [[ $who == nginx ]] && port=$NGINX_PORT
            rps=$(run_wrk "$port" "$conns" "$range")
            RESULTS["$who $range $conns"]+=" $rps"
            printf '   round %d  %-5s %4d KiB x %2d conns: %10.1f req/s\n' "$round" "$who" $((range / 1024)) "$conns" "$rps"
        done
    done
done

echo
echo "== medians of $ROUNDS runs (requests/s; MiB/s in brackets)"
printf '%-22s %18s %18s %8s\n' "case" "toast" "nginx" "ratio"
for c in "${CASES[@]}"; do
    read -r range conns <<<"$c"
    t=$(median <<<"${RESULTS["toast $range $conns"]}")
    n=$(median <<<"${RESULTS["nginx $range $conns"]}")
    awk -v t="$t" -v n="$n" -v r="$range" -v c="$conns" 'BEGIN {
        printf "%4d KiB x %2d conns    %9.1f [%5.0f] %9.1f [%5.0f] %7.2fx\n", r / 1024, c, t, t * r / 1048576, n, n * r / 1048576, t / n }'
done
echo "ratio = toast median / nginx median (target >= 1.00)"
