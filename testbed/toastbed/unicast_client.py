#!/usr/bin/python3
"""The plain-unicast baseline viewer: reads the VoD server's rate-paced /stream/NAME and simulates playback
at the bitrate, counting startup delay and stalls. Writes the client stats schema's summary line."""

import argparse
import json
import signal
import sys
import time
import urllib.request


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("url")
    ap.add_argument("--bitrate", type=int, required=True, help="bits/s")
    ap.add_argument("--startup-bytes", type=int, default=256 * 1024)
    ap.add_argument("--stats", required=True)
    args = ap.parse_args()
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))

    rate = args.bitrate / 8.0
    t0 = time.monotonic()
    received, consumed = 0, 0.0
    play_start, last = None, None
    stalls, stall_total, longest, stalled_since = 0, 0.0, 0.0, None
    completed = False
    with urllib.request.urlopen(args.url, timeout=30) as resp:
        total = int(resp.headers.get("Content-Length", "0"))
        while not stop["now"]:
            chunk = resp.read(64 * 1024)
            now = time.monotonic()
            if play_start is None and (received + len(chunk) >= min(args.startup_bytes, total) or not chunk):
                play_start = last = now
            if play_start is not None:
                # Advance playback for the time since the last check, stalling where data ran out.
                if stalled_since is None:
                    consumed += (now - last) * rate
                    if consumed > received and consumed < total:
                        consumed = received
                        stalled_since = now
                        stalls += 1
                last = now
            received += len(chunk)
            if stalled_since is not None and received > consumed:
                d = now - stalled_since
                stall_total += d
                longest = max(longest, d)
                stalled_since = None
                last = now
            if not chunk:
                break
        completed = received == total and total > 0
    rec = {"event": "summary", "bytes_from_peers": 0, "bytes_from_server": received, "bytes_uploaded": 0,
           "bytes_redundant": 0, "stalls": stalls, "stall_seconds": round(stall_total, 3),
           "longest_stall": round(longest, 3),
           "startup_ms": None if play_start is None else int((play_start - t0) * 1000),
           "completed": completed}
    with open(args.stats, "w") as f:
        f.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
