#!/usr/bin/python3
"""CI's check that a run stops cleanly: testbed/run is interrupted mid-run (SIGINT, as Ctrl-C sends, then the
same with SIGTERM, then a catalogue run in its evening with SIGINT) and must exit 130 saying so, with no
process of the run left behind (and no server store of a catalogue run left in /dev/shm).

A process belongs to the run when its command line names the run's output directory (every server, tracker,
seed, client and box is started with paths inside it).
"""

import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN = HERE.parent / "run"
sys.path.insert(0, str(HERE))

import checks  # noqa: E402


def leftovers(out: str) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return [line.strip() for line in ps.splitlines() if out in line and "interrupt_check" not in line]


# A catalogue small enough to reach its evening in seconds: 4 boxes (and the probe box), 2 titles.
CATALOGUE = {"type": "catalogue", "name": "interrupt", "boxes": 4, "titles": 2, "title_seconds": "20s",
             "evening": {"seconds": 60}, "peak_viewers_pct": 50, "warm_titles": 1}


def one(sig: signal.Signals, bin_dir: str, catalogue: bool = False) -> list[str]:
    problems = []
    with tempfile.TemporaryDirectory(prefix="toast-interrupt-") as out:
        scenario = HERE.parent / "scenarios" / "smoke.json"
        started = Path(out) / "toast" / "client001"  # the second viewer
        if catalogue:
            scenario = Path(out) / "catalogue.json"
            scenario.write_text(json.dumps(CATALOGUE))
            started = Path(out) / "catalogue" / "sessions.json"
        p = subprocess.Popen([str(RUN), str(scenario), "--out", out, "--bin-dir", bin_dir, "--no-baselines"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not started.exists():
            if p.poll() is not None:
                break
            time.sleep(0.2)
        if not started.exists():
            p.kill()
            p.wait(10)
            return [f"{sig.name}: the run never reached {started.name}: {p.stdout.read()[-2000:]}"]
        time.sleep(8.0 if catalogue else 1.0)  # a catalogue run: its boxes up, its evening begun
        running = len(leftovers(out))
        p.send_signal(sig)
        try:
            output, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            return [f"{sig.name}: testbed/run did not exit within 60 s"]
        if running < 4:
            problems.append(f"{sig.name}: only {running} processes of the run were seen before the signal")
        if p.returncode != 130:
            problems.append(f"{sig.name}: exit code {p.returncode}, expected 130")
        if catalogue and "the evening starts" not in output:
            problems.append(f"{sig.name}: the catalogue run was interrupted before its evening: {output[-500:]}")
        if "interrupted; every process was stopped" not in output:
            problems.append(f"{sig.name}: no interruption message in: {output[-500:]}")
        left = leftovers(out)
        if left:
            problems.append(f"{sig.name}: left behind: {left}")
        stores = list(Path("/dev/shm").glob(f"toast-testbed-store-{p.pid}-*"))
        if stores:
            problems.append(f"{sig.name}: the server's store left in memory: {stores}")
    return problems


def main() -> int:
    bins = checks.bin_dir(__doc__)
    problems = one(signal.SIGINT, bins) + one(signal.SIGTERM, bins) + one(signal.SIGINT, bins, catalogue=True)
    return checks.verdict(problems, "interrupt OK: SIGINT and SIGTERM stop the run (a catalogue run too) with "
                                    "exit 130 and leave no process behind")


if __name__ == "__main__":
    sys.exit(main())
