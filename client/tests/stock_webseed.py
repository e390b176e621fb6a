#!/usr/bin/python3
"""A stock libtorrent download for the client's integration tests: Debian's python3-libtorrent fetches TORRENT
into --save-dir from whatever the torrent names (its web seeds, its trackers) and exits 0 once it has every
piece, 1 after --timeout seconds. SSRF mitigation is off because the tests' server is on 127.0.0.1: libtorrent
refuses web seeds with a query string (a signed URL's ?token=) on local addresses, not on public ones."""

import argparse
import sys
import time

import libtorrent as lt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("torrent")
    ap.add_argument("--save-dir", required=True)
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    ses = lt.session({
        "listen_interfaces": "127.0.0.1:0",
        "enable_dht": False, "enable_lsd": False, "enable_upnp": False, "enable_natpmp": False,
        "ssrf_mitigation": False,
    })
    atp = lt.add_torrent_params()
    atp.ti = lt.torrent_info(args.torrent)
    atp.save_path = args.save_dir
    handle = ses.add_torrent(atp)
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        if handle.status().is_seeding:
            return 0
        time.sleep(0.1)
    print(f"not complete after {args.timeout} s: progress {handle.status().progress:.3f}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
