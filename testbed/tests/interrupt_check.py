#!/usr/bin/python3
"""CI's check that a run stops cleanly: testbed/run is interrupted mid-run (SIGINT, as Ctrl-C sends, then the
same with SIGTERM) and must exit 130 saying so, with no process of the run left behind.

A process belongs to the run when its command line names the run's output directory (every server, tracker,
seed and client is started with paths inside it).
"""

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


def one(sig: signal.Signals, bin_dir: str) -> list[str]:
    problems = []
    with tempfile.TemporaryDirectory(prefix="toast-interrupt-") as out:
        p = subprocess.Popen([str(RUN), str(HERE.parent / "scenarios" / "smoke.json"), "--out", out, "--bin-dir",
                              bin_dir, "--no-baselines"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (Path(out) / "toast" / "client001").exists():
            if p.poll() is not None:
                break
            time.sleep(0.2)
        if not (Path(out) / "toast" / "client001").exists():
            p.kill()
            p.wait(10)
            return [f"{sig.name}: the run never started its second client: {p.stdout.read()[-2000:]}"]
        time.sleep(1.0)
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
        if "interrupted; every process was stopped" not in output:
            problems.append(f"{sig.name}: no interruption message in: {output[-500:]}")
        left = leftovers(out)
        if left:
            problems.append(f"{sig.name}: left behind: {left}")
    return problems


def main() -> int:
    bins = checks.bin_dir(__doc__)
    problems = one(signal.SIGINT, bins) + one(signal.SIGTERM, bins)
    return checks.verdict(problems, "interrupt OK: SIGINT and SIGTERM stop the run with exit 130 and leave no "
                                    "process behind")


if __name__ == "__main__":
    sys.exit(main())
