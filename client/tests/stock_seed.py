#!/usr/bin/python3
"""A stock libtorrent seed for the client's integration tests: Debian's python3-libtorrent with none of
Toast's logic, unthrottled. Seeds TORRENT from --save-dir, listening on --listen HOST:PORT, announcing to the
torrent's tracker, until SIGTERM or SIGINT. Only what a closed testbed on 127.0.0.1 needs is set: several
peers share one address, and nothing reaches outside (DHT, LSD, UPnP, NAT-PMP off)."""

import argparse
import signal
import sys
import time

import libtorrent as lt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("torrent")
    ap.add_argument("--save-dir", required=True)
    ap.add_argument("--listen", required=True, help="HOST:PORT")
    args = ap.parse_args()
    ses = lt.session({
        "listen_interfaces": args.listen,
        "enable_dht": False, "enable_lsd": False, "enable_upnp": False, "enable_natpmp": False,
        "allow_multiple_connections_per_ip": True,
    })
    atp = lt.add_torrent_params()
    atp.ti = lt.torrent_info(args.torrent)
    atp.save_path = args.save_dir
    atp.flags |= lt.torrent_flags.seed_mode
    ses.add_torrent(atp)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))
    while not stop["now"]:
        time.sleep(0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
