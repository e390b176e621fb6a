#!/usr/bin/python3
"""A stock libtorrent peer (Debian's python3-libtorrent, none of Toast's logic) that tries to download TORRENT
from the peers given with --peer, for the private-swarm interop tests. It listens with TLS too ("PORTs"), so
that it is as capable as libtorrent allows, and presents --cert/--key when given (otherwise none). After
--seconds (or once it has every piece) it prints one JSON line: bytes downloaded, pieces had, the most peers
it was connected to at once, and the disconnect reasons libtorrent reported."""

import argparse
import json
import os
import sys
import tempfile
import time

import libtorrent as lt


# RFC 7919's ffdhe2048 group: set_ssl_certificate loads DH parameters with the certificate, and a file that
# holds none makes the torrent fail (a torrent_error_alert, and no TLS connection is made).
FFDHE2048 = """-----BEGIN DH PARAMETERS-----
MIIBCAKCAQEA//////////+t+FRYortKmq/cViAnPTzx2LnFg84tNpWp4TZBFGQz
+8yTnc4kmz75fS/jY2MMddj2gbICrsRhetPfHtXV/WVhJDP1H18GbtCFY2VVPe0a
87VXE15/V8k1mE8McODmi3fipona8+/och3xWKE2rec1MKzKT0g6eXq8CrGCsyT7
YdEIqUuyyOP7uWrat2DX9GgdT0Kj3jlN9K5W7edjcrsZCwenyO4KbXCeAvzhzffi
7MA0BM0oNC9hkXL+nOmFg/+OTxIy7vKBg8P+OxtMb61zO7X8vC7CIAXFjvGDfRaD
ssbzSibBsu/6iGtCOGEoXJf//////////wIBAg==
-----END DH PARAMETERS-----
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("torrent")
    ap.add_argument("--save-dir", required=True)
    ap.add_argument("--peer", action="append", default=[], help="HOST:PORT to connect to (repeatable)")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--seconds", type=float, default=15)
    args = ap.parse_args()
    ses = lt.session({
        "listen_interfaces": "127.0.0.1:0,127.0.0.1:0s",
        "enable_dht": False, "enable_lsd": False, "enable_upnp": False, "enable_natpmp": False,
        "allow_multiple_connections_per_ip": True,
        # Toast's boxes take TCP only; libtorrent tries uTP first and would spend the run waiting on it.
        "enable_outgoing_utp": False, "enable_incoming_utp": False,
        "alert_mask": lt.alert.category_t.error_notification | lt.alert.category_t.peer_notification
        | lt.alert.category_t.connect_notification | lt.alert.category_t.status_notification,
    })
    atp = lt.add_torrent_params()
    atp.ti = lt.torrent_info(args.torrent)
    atp.save_path = args.save_dir
    atp.trackers = []
    h = ses.add_torrent(atp)
    if args.cert:
        with tempfile.NamedTemporaryFile("w", suffix=".pem", delete=False) as f:
            f.write(FFDHE2048)
        h.set_ssl_certificate(args.cert, args.key, f.name, "")
    reasons = set()
    most_peers = 0
    deadline = time.monotonic() + args.seconds
    next_connect = 0.0
    while time.monotonic() < deadline:
        now = time.monotonic()
        if now >= next_connect:
            for p in args.peer:
                host, port = p.rsplit(":", 1)
                h.connect_peer((host, int(port)))
            next_connect = now + 1.0
        ses.wait_for_alert(100)
        for a in ses.pop_alerts():
            if isinstance(a, lt.peer_disconnected_alert) or isinstance(a, lt.peer_error_alert):
                reasons.add(a.error.message())
        st = h.status()
        most_peers = max(most_peers, st.num_peers)
        if st.is_seeding:
            break
    if args.cert:
        os.unlink(f.name)
    st = h.status()
    print(json.dumps({"downloaded": st.total_payload_download, "pieces": st.num_pieces,
                      "most_peers": most_peers, "reasons": sorted(reasons)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
