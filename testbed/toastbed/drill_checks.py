"""What a fault drill reads of a live swarm: the viewers' stats files and copies, the processes' logs, the
title's torrent. Pure reads, no processes started (drills.py runs the swarm and the faults)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def latest_record(path: Path) -> dict | None:
    """The newest complete line of a stats file (None before the first)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8192))
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return None
    for raw in reversed(lines):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            continue
    return None


def received(rec: dict | None) -> int:
    return 0 if rec is None else int(rec.get("bytes_from_peers", 0)) + int(rec.get("bytes_from_server", 0))


def bytes_lost(copy: Path, title: bytes) -> int:
    """Bytes of `title` that `copy` does not hold exactly: missing, extra or different."""
    try:
        data = copy.read_bytes()
    except OSError:
        return len(title)
    if hashlib.sha256(data).digest() == hashlib.sha256(title).digest():
        return 0
    lost = abs(len(data) - len(title))
    step = 1 << 16
    for off in range(0, min(len(data), len(title)), step):
        a, b = data[off:off + step], title[off:off + step]
        if a != b:
            lost += sum(1 for x, y in zip(a, b) if x != y)
    return lost


def tail(path: Path, lines: int = 3) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""


def torrent_info_hash(path: Path) -> bytes:
    import libtorrent as lt  # Debian's python3-libtorrent: /usr/bin/python3 only

    ti = lt.torrent_info(str(path))
    return ti.info_hashes().v1.to_bytes() if hasattr(ti, "info_hashes") else ti.info_hash().to_bytes()


def tracker_whole(back_s: float | None, interval_s: float) -> tuple[bool, str]:
    """Whether a restarted tracker held every running viewer within one announce interval of its restart
    (`back_s`: when it first did, None if never while watched), and the drill's note saying so."""
    whole = back_s is not None and back_s <= interval_s
    when = f"{back_s:.1f} s after its restart" if back_s is not None else "at no time while watched"
    return whole, (f"the restarted tracker held every running viewer {when} (announce interval {interval_s:g} s): "
                   + ("whole within one interval" if whole else "NOT whole within one interval"))
