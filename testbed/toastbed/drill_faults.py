"""The faults of testbed/drills: each drill's name and what it does to the live swarm when its fault starts and
when it ends. `d` is the running drill (drills.Drill): its stack, viewers, network and notes."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
from pathlib import Path

from .drill_checks import latest_record

DRILLS = {
    "baseline": "no fault: the reference for stalls and timing",
    "server-kill": "SIGKILL the VoD server mid-stream, start it again when the fault ends",
    "disk-offline": "take disk 0 of the server's 4 offline (admin API) for the fault",
    "disks-offline": "take 2 of the server's 4 disks offline for the fault, both holding a block the viewers "
                     "stream then: the blocks with no replica left are refused (503), the others served, so "
                     "each viewer's server answers and refuses in turn",
    "disk-stutter": "disk 0 stutters (admin fault injection: 5000% extra bytes per read, 250 ms before each read)",
    "block-corrupt": "overwrite 4 KiB in the middle of one replica of the title's last block (the first "
                     "replica the manifest lists): the server must catch it by checksum and read the other",
    "block-rot": "1.5 s after the first viewer started, have the server read (and check) the middle of the "
                 "title's first block from its first-listed replica, then overwrite 4 KiB there and put the file's "
                 "mtime back: silent bit rot, while the other viewers still have to arrive",
    "tracker-kill": "SIGKILL the tracker 1 s before the last viewer arrives, start it "
                    "again when the fault ends: the last viewer must find its peers",
    "tracker-kill-one": "two trackers in the announce-list; SIGKILL the first 1 s before the last viewer "
                        "arrives, start it again when the fault ends: the last viewer must find its peers through "
                        "the other (viewer back: from its arrival to its first peer), and the restarted tracker "
                        "must know every running viewer again (service back: from its restart)",
    "node-kill": "the VoD server is a tier of 3 nodes; SIGKILL node 1 mid-stream, start it again when the fault "
                 "ends: each viewer asks a piece's other holder",
    "client-kill": "SIGKILL the last viewer, start it again on the same save dir when the fault ends: it must "
                   "resume and finish",
    "client-enospc": "fill the last viewer's disk (its save dir is a tmpfs) for the fault, then free it",
    "net-drop": "drop every packet to and from the last viewer for the fault (pfifo limit 0 on both ends of "
                "its veth)",
}
SERVER_DRILLS = ("server-kill", "node-kill", "disk-offline", "disks-offline", "disk-stutter", "block-corrupt",
                 "block-rot")
TRACKER_DRILLS = ("tracker-kill", "tracker-kill-one")
VIEWER_DRILLS = ("client-kill", "client-enospc", "net-drop")


class DrillError(RuntimeError):
    pass


def manifest(d) -> dict:
    path = d.work / "disks" / "d0" / "manifests" / f"{d.stack.title}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise DrillError(f"cannot read the server's manifest {path}: {e}") from None


def replica(d, block: int) -> Path:
    """The first listed replica of the title's block `block` (-1: the last)."""
    first = manifest(d)["blocks"][block]["replicas"][0]
    return d.work / "disks" / f"d{first['disk']}" / first["file"]


def corrupt(d, path: Path, keep_mtime: bool) -> None:
    st = path.stat()
    with open(path, "r+b") as f:
        f.seek(st.st_size // 2)
        f.write(os.urandom(4096))
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    d.notes.append(f"corrupted {path.relative_to(d.work)} ({st.st_size} bytes) at {st.st_size // 2}"
                      + (", mtime put back" if keep_mtime else ""))


def start_fault(d) -> None:
    n = d.name
    if n == "server-kill":
        os.killpg(d.stack.server_proc.pid, signal.SIGKILL)
        d.stack.server_proc.wait(5)
    elif n in TRACKER_DRILLS:
        os.killpg(d.stack.tracker_proc.pid, signal.SIGKILL)
        d.stack.tracker_proc.wait(5)
    elif n == "node-kill":
        os.killpg(d.stack.server_procs[1].pid, signal.SIGKILL)
        d.stack.server_procs[1].wait(5)
    elif n == "disk-offline":
        d.admin(0, {"offline": True})
    elif n == "disks-offline":
        # The two disks holding a block the viewers stream during the fault (a quarter into the title),
        # so at least that block is lost while they are offline.
        blocks = manifest(d)["blocks"]
        d.offline = sorted({r["disk"] for r in blocks[len(blocks) // 4]["replicas"]})
        for disk in d.offline:
            d.admin(disk, {"offline": True})
        lost = [i for i, b in enumerate(blocks) if {r["disk"] for r in b["replicas"]} <= set(d.offline)]
        d.notes.append(f"disks {d.offline} offline: blocks {lost} of {len(blocks)} have no replica left")
    elif n == "disk-stutter":
        d.admin(0, {"stutter_pct": 5000, "added_latency": "250ms"})
    elif n == "block-corrupt":
        corrupt(d, replica(d, -1), keep_mtime=False)
    elif n == "block-rot":
        # The server reads (and checks) the range from this replica first: with its twin's disk offline
        # for one read, it has no other.
        twin = manifest(d)["blocks"][0]["replicas"][1]["disk"]
        d.admin(twin, {"offline": True})
        checked = d.probe_server(d.probed_block)
        d.admin(twin, {"offline": False})
        if not checked:
            raise DrillError("block-rot: the server did not serve the first block's middle before the damage")
        corrupt(d, replica(d, 0), keep_mtime=True)
    elif n == "client-kill":
        v = d.viewers[d.target]
        d.before_kill = latest_record(v.stats)
        os.killpg(v.proc.pid, signal.SIGKILL)
        v.exit_codes.append(v.proc.wait(5))
    elif n == "client-enospc":
        d.filler = d.mounted / ".filler"
        fd = os.open(d.filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            for chunk in (1 << 20, 4096, 1):
                try:
                    while os.write(fd, b"\0" * chunk):
                        pass
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
        finally:
            os.close(fd)
        d.notes.append(f"filled {d.mounted.relative_to(d.work)}: "
                          f"{shutil.disk_usage(d.mounted).free} bytes free")
    elif n == "net-drop":
        d.network.blackhole(d.target, True)


def end_fault(d) -> None:
    n = d.name
    if n == "server-kill":
        d.stack.start_server("server-restarted")
    elif n in TRACKER_DRILLS:
        d.stack.start_tracker("tracker-restarted")
    elif n == "node-kill":
        d.stack.start_node(1, "server-n1-restarted")
    elif n == "disk-offline":
        d.admin(0, {"offline": False})
    elif n == "disks-offline":
        for disk in d.offline:
            d.admin(disk, {"offline": False})
    elif n == "disk-stutter":
        d.admin(0, {"stutter_pct": 0, "added_latency": "0ms"})
    elif n == "client-kill":
        d.restart(d.viewers[d.target])
    elif n == "client-enospc":
        d.filler.unlink()
    elif n == "net-drop":
        d.network.blackhole(d.target, False)
