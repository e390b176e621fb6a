#!/usr/bin/python3
"""The README's commands on a real network: the operator's host (VoD server and tracker) and two set-top boxes,
each in a network namespace of its own on one switch, run as the README shows them (`toast-tracker --listen
0.0.0.0:6969 --udp 0.0.0.0:6969`, `toast-server ... ingest/serve`, `toast-client stream ... --listen 6881`
with the same port on both boxes). The second box must get the title from the first one over the network,
byte-exact and without a stall, which a box listening on 127.0.0.1 only could not do.

Needs root, `ip netns` and nftables; without them it says why and exits 77 (CTest: skipped). Every namespace
it creates is deleted, also when it fails.
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import checks  # noqa: E402
from toastbed import host, netlab  # noqa: E402

SKIP = 77
OP, BOX1, BOX2 = "10.215.0.2", "10.215.0.3", "10.215.0.4"
BITRATE = 2_000_000
TITLE = 12 * BITRATE // 8  # 12 s


def summary(stats: Path) -> dict:
    lines = stats.read_text().strip().splitlines() if stats.exists() else []
    last = json.loads(lines[-1]) if lines else {}
    return last if last.get("event") == "summary" else {}


def main() -> int:
    bins = host.binaries(Path(checks.bin_dir(__doc__)))
    why = netlab.why_not_available()
    if why:
        print("skipped: " + why)
        return SKIP
    problems: list[str] = []
    procs: list[subprocess.Popen] = []
    lab = netlab.Lab("nr")
    with tempfile.TemporaryDirectory(prefix="toast-netns-") as tmp:
        w = Path(tmp)
        try:
            lab.switch("lan", "10.215.0.0/24")
            op = lab.host("op", "lan", OP)
            box1 = lab.host("b1", "lan", BOX1)
            box2 = lab.host("b2", "lan", BOX2)

            def start(ns: str, name: str, argv: list[str]) -> subprocess.Popen:
                log = open(w / f"{name}.log", "wb")
                p = subprocess.Popen(lab.exec(ns, argv), stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
                procs.append(p)
                return p

            for d in ("d0", "d1", "d2", "d3", "box1", "box2"):
                (w / d).mkdir()
            host.make_title(w / "movie.bin", TITLE, 5)
            (w / "server.json").write_text(json.dumps({
                "listen": f"{OP}:8080", "disks": [str(w / f"d{i}") for i in range(4)], "policy": "rda",
                "public_url": f"http://{OP}:8080"}))
            server = [str(bins["server"]), "--config", str(w / "server.json")]
            ingest = subprocess.run(server + ["ingest", "movie", str(w / "movie.bin"), "--bitrate", "2Mbps",
                                              "--announce", f"http://{OP}:6969/announce", "--torrent",
                                              str(w / "movie.torrent")], capture_output=True, text=True, timeout=120)
            if ingest.returncode != 0:
                raise netlab.LabError("ingest failed: " + ingest.stderr)
            start(op, "tracker", [str(bins["tracker"]), "--listen", "0.0.0.0:6969", "--udp", "0.0.0.0:6969"])
            start(op, "server", server + ["serve"])
            time.sleep(1.0)
            client = [str(bins["client"]), "stream", str(w / "movie.torrent"), "--listen", "6881"]
            start(box1, "box1", client + ["--save-dir", str(w / "box1"), "--stats", str(w / "box1.jsonl"),
                                          "--behavior", "seed"])
            time.sleep(4.0)
            b2 = start(box2, "box2", client + ["--save-dir", str(w / "box2"), "--stats", str(w / "box2.jsonl")])
            try:
                rc = b2.wait(90)
            except subprocess.TimeoutExpired:
                rc = None
            s = summary(w / "box2.jsonl")
            if rc != 0:
                problems.append(f"box 2 exited with {rc}: {(w / 'box2.log').read_text()[-2000:]}")
            elif not s:
                problems.append("box 2 wrote no summary")
            else:
                if s.get("stalls") != 0:
                    problems.append(f"box 2 stalled {s.get('stalls')} times")
                if s.get("bytes_from_peers", 0) < TITLE // 2:
                    problems.append(f"box 2 got {s.get('bytes_from_peers')} bytes from box 1 over the network "
                                    f"(of {TITLE}): the boxes did not trade")
                if (w / "box2" / "movie").read_bytes() != (w / "movie.bin").read_bytes():
                    problems.append("box 2's copy differs from the title")
            # The tracker recorded the boxes at their network addresses, not at 127.0.0.1.
            stats = subprocess.run(lab.exec(op, ["curl", "-s", "http://127.0.0.1:6969/stats"]),
                                   capture_output=True, text=True, timeout=20).stdout
            totals = json.loads(stats)["totals"] if stats else {}
            if totals.get("seeders", 0) + totals.get("leechers", 0) < 1:
                problems.append(f"the tracker knows no box: {stats}")
        except netlab.LabError as e:
            problems.append(str(e))
        finally:
            for p in reversed(procs):
                if p.poll() is None:
                    p.terminate()
                    try:
                        p.wait(10)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait(5)
            lab.teardown()
    left = netlab.leftovers(lab.tag)
    if left:
        problems.append(f"left behind: {left}")
    return checks.verdict(problems, "netns OK: the README's server, tracker and two boxes (--listen 6881) traded "
                                    "between network namespaces")


if __name__ == "__main__":
    sys.exit(main())
