#!/usr/bin/env python3
"""docs/walk_test.py [--bin-dir BUILD]: the README's five-minute walk, run as the README shows it.

Takes the shell blocks the README marks `<!-- walk -->` (and the last one, `<!-- walk: end -->`), and runs them in
one bash (`set -euo pipefail`) in a temporary directory with the build's programs first on PATH. Only three
things differ from what a reader types: the walk's four addresses (127.0.0.1:8080, :6969, :8781, :8782) become
free ports, mpv gets `--vo=null --ao=null --no-config --quiet`, and before the last block the test saves each box's
status of the title. It then checks that both mpv processes played to the end (the script fails otherwise),
that every piece reached both boxes, that box 2 took bytes from its peer, and that no process of the walk is
left.

Exit status 0 when the walk works, 1 when it does not (the log tail says why), 77 when mpv or ffmpeg is
missing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ADDRESSES = ("127.0.0.1:8080", "127.0.0.1:6969", "127.0.0.1:8781", "127.0.0.1:8782")
BOXES = ("127.0.0.1:8781", "127.0.0.1:8782")
BLOCK = re.compile(r"^<!-- walk(: end)? -->\n```sh\n(.*?)\n```", re.S | re.M)
TIME_LIMIT = 240  # seconds: two plays of a 20 s movie, 5 s apart, and the set-up


class WalkError(RuntimeError):
    pass


def walk_blocks(readme: str) -> tuple[list[str], str]:
    """The blocks to run in order, and the last one (`walk: end`)."""
    blocks, end = [], None
    for m in BLOCK.finditer(readme):
        if m.group(1):
            end = m.group(2)
        elif end is not None:
            raise WalkError("README.md: a `<!-- walk -->` block comes after the `<!-- walk: end -->` one")
        else:
            blocks.append(m.group(2))
    if not blocks or end is None:
        raise WalkError("README.md has no `<!-- walk -->` blocks and a `<!-- walk: end -->` block to run")
    return blocks, end


def free_ports(n: int) -> list[int]:
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def script(blocks: list[str], end: str, ports: dict[str, str]) -> str:
    text = "\n".join(blocks)
    for address in ADDRESSES:
        if address not in text + end:
            raise WalkError(f"the README's walk no longer uses {address}; update ADDRESSES in docs/walk_test.py")
    mpv = re.compile(r'\bmpv "')
    if len(mpv.findall(text)) != 2:
        raise WalkError('the README\'s walk should start two players as `mpv "URL"`; update docs/walk_test.py')
    text = mpv.sub('mpv --vo=null --ao=null --no-config --quiet "', text)
    save = "".join(f"curl -sf http://{box}/api/titles/$ID > status{i + 1}.json\n" for i, box in enumerate(BOXES))
    full = "set -euo pipefail\n" + text + "\n" + save + end + "\n"
    return re.sub("|".join(re.escape(a) for a in ports), lambda m: ports[m.group(0)], full)


def group_members(pgid: int) -> list[str]:
    """The processes still in the walk's process group, as "PID COMMAND"."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                out.append(f"{entry.name} {cmd}")
        except (OSError, ValueError, IndexError):
            continue
    return out


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(none)"


def run(bin_dir: Path) -> None:
    blocks, end = walk_blocks((REPO / "README.md").read_text())
    ports = dict(zip(ADDRESSES, (f"127.0.0.1:{p}" for p in free_ports(len(ADDRESSES)))))
    text = script(blocks, end, ports)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(bin_dir / "server"), str(bin_dir / "tracker"), str(bin_dir / "client"),
                                   env.get("PATH", "/usr/bin:/bin")])
    for program in ("server/toast-server", "tracker/toast-tracker", "client/toast-client"):
        if not (bin_dir / program).exists():
            raise WalkError(f"{bin_dir / program} is missing: build first")
    with tempfile.TemporaryDirectory(prefix="toast-walk.") as tmp:
        work = Path(tmp)
        (work / "walk.sh").write_text(text)
        log = work / "walk.log"
        started = time.monotonic()
        with open(log, "wb") as out:
            p = subprocess.Popen(["bash", str(work / "walk.sh")], cwd=work, env=env, stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            status = p.wait(timeout=TIME_LIMIT)
            left = group_members(p.pid)
        except subprocess.TimeoutExpired:
            status, left = None, []
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        seconds = time.monotonic() - started
        logs = "\n".join(f"--- {name}\n{tail(work / name, 10)}"
                         for name in ("server.log", "tracker.log", "box1.log", "box2.log"))
        if status is None:
            raise WalkError(f"the walk did not end within {TIME_LIMIT} s\n--- walk.log\n{tail(log)}\n{logs}")
        if status != 0:
            raise WalkError(f"the walk failed with status {status} after {seconds:.0f} s\n--- walk.log\n"
                            f"{tail(log)}\n{logs}")
        if left:
            raise WalkError("the walk's last block left processes running:\n" + "\n".join(left))
        boxes = [json.loads((work / f"status{i + 1}.json").read_text()) for i in range(len(BOXES))]
        for i, box in enumerate(boxes, 1):
            if box["pieces_had"] != box["pieces"]:
                raise WalkError(f"box {i} holds {box['pieces_had']} of the movie's {box['pieces']} pieces after "
                                f"mpv played it: {box}")
            if box["state"] != "playing" or box["position_ms"] < box["duration_ms"] // 2:
                raise WalkError(f"box {i}'s playhead is not past the movie's middle after mpv played it: {box}")
        if boxes[1]["bytes_from_peers"] <= 0:
            raise WalkError(f"box 2 took nothing from box 1, so the movie did not go through a swarm: {boxes[1]}")
        print(f"walk_test: the README's walk played the movie on both boxes in {seconds:.0f} s; box 2 took "
              f"{boxes[1]['bytes_from_peers']} bytes from its peer and {boxes[1]['bytes_from_server']} from the "
              f"server ({boxes[1]['stalls']} stalls)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="docs/walk_test.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", default=str(REPO / "build"), help="CMake build directory (default: build/)")
    args = ap.parse_args(argv)
    missing = [tool for tool in ("mpv", "ffmpeg", "curl") if shutil.which(tool) is None]
    if missing:
        print(f"walk_test: skipped: {', '.join(missing)} not installed (scripts/install-deps.sh installs them)")
        return 77
    try:
        run(Path(args.bin_dir).resolve())
    except WalkError as e:
        print(f"walk_test: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
