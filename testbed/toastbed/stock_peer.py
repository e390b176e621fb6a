#!/usr/bin/python3
"""A stock libtorrent peer (Debian's python3-libtorrent, none of Toast's logic), two roles:

  seed     the optional seed beside the VoD server: seeds the complete title (upload optionally limited)
  stream   the "what a user would otherwise run" baseline: sequential download with piece deadlines at the
           playback rate, the VoD server added as a BEP 19 web seed, playback simulated to count stalls

Writes JSON lines to --stats (the client schema's keys it can fill) and a last "summary" line on exit/SIGTERM.
"""

import argparse
import json
import signal
import sys
import time

import libtorrent as lt


def make_session(listen: str, upload_limit_bps: int) -> lt.session:
    settings = {
        "listen_interfaces": listen,
        "enable_dht": False, "enable_lsd": False, "enable_upnp": False, "enable_natpmp": False,
        "allow_multiple_connections_per_ip": True,
        "close_redundant_connections": False,
        "alert_mask": lt.alert.category_t.status_notification | lt.alert.category_t.error_notification,
        "upload_rate_limit": upload_limit_bps // 8 if upload_limit_bps else 0,
    }
    ses = lt.session(settings)
    # Loopback peers fall in libtorrent's "local" class, which ignores rate limits: map everything to global.
    flt = lt.ip_filter()
    flt.add_rule("0.0.0.0", "255.255.255.255", 1 << lt.session.global_peer_class_id)
    ses.set_peer_class_filter(flt)
    return ses


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("role", choices=["seed", "stream"])
    ap.add_argument("torrent")
    ap.add_argument("--save-dir", required=True)
    ap.add_argument("--listen", required=True, help="HOST:PORT")
    ap.add_argument("--stats", required=True)
    ap.add_argument("--upload-limit", type=int, default=0, help="bits/s, 0 = unlimited")
    ap.add_argument("--bitrate", type=int, default=0, help="bits/s (stream role; default: the torrent's)")
    ap.add_argument("--web-seed", action="append", default=[], help="BEP 19 web seed URL (stream role)")
    ap.add_argument("--behavior", choices=["download", "stream", "seed"], default="stream")
    args = ap.parse_args()

    info = lt.torrent_info(args.torrent)
    raw = lt.bdecode(open(args.torrent, "rb").read())
    bitrate = args.bitrate
    if not bitrate:
        meta = raw.get(b"toast", {}) if isinstance(raw, dict) else {}
        bitrate = int(meta.get(b"bitrate", 0))
    ses = make_session(args.listen, args.upload_limit)
    atp = lt.add_torrent_params()
    atp.ti = info
    atp.save_path = args.save_dir
    if args.role == "seed":
        atp.flags |= lt.torrent_flags.seed_mode
    atp.url_seeds = args.web_seed if args.role == "stream" else []
    handle = ses.add_torrent(atp)
    if args.role == "stream":
        handle.set_flags(lt.torrent_flags.sequential_download)

    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))

    n, plen = info.num_pieces(), info.piece_length()
    piece_seconds = plen * 8.0 / bitrate if bitrate else 0.0
    t0 = time.monotonic()
    play_start = None       # monotonic time playback started
    stalled_since = None
    stall_total, stalls, longest = 0.0, 0, 0.0
    playhead = 0.0          # seconds of video played
    deadlines_set = False
    out = open(args.stats, "w", buffering=1)
    last_line = 0.0
    completed = False

    def record(event=None):
        st = handle.status()
        rec = {
            "t": round(time.monotonic() - t0, 3),
            "bytes_from_peers": int(st.total_payload_download),
            "bytes_from_server": 0,
            "bytes_uploaded": int(st.total_payload_upload),
            "bytes_redundant": int(st.total_redundant_bytes + st.total_failed_bytes),
            "stalls": stalls,
            "stall_seconds": round(stall_total, 3),
            "longest_stall": round(longest, 3),
            "startup_ms": None if play_start is None else int((play_start - t0) * 1000),
            "playhead": int(playhead * bitrate / 8) if bitrate else 0,
            "pieces_had": int(st.num_pieces),
            "completed": completed,
        }
        if event:
            rec["event"] = event
        out.write(json.dumps(rec) + "\n")

    while not stop["now"]:
        time.sleep(0.1)
        now = time.monotonic()
        st = handle.status()
        if args.role == "stream" and not deadlines_set and st.has_metadata:
            # Deadlines at the playback rate, as streaming front ends on libtorrent do.
            for p in range(n):
                handle.set_piece_deadline(p, int(1000 * (1 + p * piece_seconds)))
            deadlines_set = True
        if args.role == "stream" and bitrate:
            have = handle.status().pieces
            if play_start is None:
                if len(have) and have[0]:
                    play_start = now
            else:
                cur = min(int(playhead / piece_seconds), n - 1) if piece_seconds else 0
                if playhead >= n * piece_seconds - 1e-9:
                    completed = True
                elif have[cur]:
                    if stalled_since is not None:
                        d = now - stalled_since
                        stall_total += d
                        longest = max(longest, d)
                        stalled_since = None
                    playhead += 0.1
                elif stalled_since is None:
                    stalled_since = now
                    stalls += 1
        if args.role == "stream":
            if args.behavior == "download" and st.is_seeding:
                completed = True
                break
            if args.behavior == "stream" and completed:
                break
        if now - last_line >= 1.0:
            record()
            last_line = now
    if args.role == "seed":
        completed = handle.status().is_seeding
    record("summary")
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
