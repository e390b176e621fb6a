"""What a run costs the machine: each process's CPU time and private memory, and the machine's CPU use.

A sampler thread reads /proc once a second: /proc/PID/stat (utime + stime) for CPU, /proc/PID/status
(RssAnon: private memory, see read_memory_kb) for memory, and /proc/stat for the whole machine. A process's CPU time is its last sample (a
process that exits on its own loses at most the last second: run() takes a final sample before it stops
anything). The machine's figure includes every other process on it (other engineers' builds): the report
gives this run's own share beside it.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1


def read_cpu_ticks(pid: int | str) -> tuple[int, int] | None:
    """(utime + stime, starttime) of a process in clock ticks; None once it is gone. The start time tells a
    reused pid apart from the process that had it."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # the command name may hold spaces and parentheses
    # Fields after the name start at field 3 (state): utime is field 14, stime 15, starttime 22.
    try:
        return int(fields[11]) + int(fields[12]), int(fields[19])
    except (IndexError, ValueError):
        return None


def read_memory_kb(pid: int | str) -> tuple[int, int] | None:
    """(anonymous, file-backed) resident memory of a process in KiB; None once it is gone.

    Anonymous resident memory (heap, stacks) is what the process costs: none of the testbed's processes
    fork, so it is all private. File-backed pages are listed apart: libtorrent maps the title's file, so
    the pieces a client holds show up there, and they are page cache the kernel can drop.
    /proc/PID/smaps_rollup would split private from shared exactly, but reading it costs about 0.5-1 ms
    per process, a third of a core each second at 300 processes; status costs a tenth of that."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    anon = file = None
    for line in text.splitlines():
        if line.startswith("RssAnon:"):
            anon = int(line.split()[1])
        elif line.startswith("RssFile:"):
            file = int(line.split()[1])
    if anon is None or file is None:
        return None
    return anon, file


def read_machine_ticks() -> tuple[int, int] | None:
    """(busy, total) clock ticks of all CPUs since boot; busy excludes idle and iowait."""
    try:
        with open("/proc/stat") as f:
            first = f.readline().split()
    except OSError:
        return None
    if not first or first[0] != "cpu":
        return None
    values = [int(v) for v in first[1:9]]  # user nice system idle iowait irq softirq steal
    total = sum(values)
    return total - values[3] - values[4], total


@dataclass
class Tracked:
    name: str
    role: str  # "client", "server", "tracker", "seed", "testbed"
    pid: int
    start_ticks: int | None = None
    cpu_ticks: int = 0
    first_seen: float = 0.0
    last_seen: float = 0.0
    memory_kb: list[int] = field(default_factory=list)  # anonymous resident, one per sample
    file_kb_peak: int = 0
    gone: bool = False
    cpu_samples: list[tuple[float, int]] = field(default_factory=list)  # (monotonic time, CPU ticks so far)


class Sampler:
    """Samples every tracked process and the machine every `interval` seconds on its own thread."""

    def __init__(self, interval: float = 1.0):
        self.interval = interval
        self.tracked: list[Tracked] = []
        self.machine: list[tuple[float, int, int]] = []  # (monotonic time, busy ticks, total ticks)
        # (monotonic time, CPU ticks each role's processes used since they started, gone ones included)
        self.roles: list[tuple[float, dict[str, int]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def track(self, name: str, role: str, pid: int) -> None:
        with self._lock:
            self.tracked.append(Tracked(name, role, pid))
        self._sample_one(self.tracked[-1], time.monotonic())

    def start(self) -> None:
        self.track("testbed", "testbed", os.getpid())
        now = time.monotonic()
        self._sample_machine(now)
        with self._lock:
            self._sample_roles(now, list(self.tracked))
        self._thread = threading.Thread(target=self._loop, name="resource-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """A last sample of everything still running, then the thread ends."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self.sample()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        now = time.monotonic()
        with self._lock:
            procs = list(self.tracked)
        for t in procs:
            if not t.gone:
                self._sample_one(t, now)
        self._sample_machine(now)
        self._sample_roles(now, procs)

    def _sample_one(self, t: Tracked, now: float) -> None:
        cpu = read_cpu_ticks(t.pid)
        if cpu is None or (t.start_ticks is not None and cpu[1] != t.start_ticks):
            t.gone = True
            return
        if t.start_ticks is None:
            t.start_ticks, t.first_seen = cpu[1], now
        t.cpu_ticks, t.last_seen = cpu[0], now
        t.cpu_samples.append((now, cpu[0]))
        mem = read_memory_kb(t.pid)
        if mem is not None and mem[0] > 0:
            t.memory_kb.append(mem[0])
            t.file_kb_peak = max(t.file_kb_peak, mem[1])

    def _sample_machine(self, now: float) -> None:
        m = read_machine_ticks()
        if m is not None:
            self.machine.append((now, m[0], m[1]))

    def _sample_roles(self, now: float, procs: list[Tracked]) -> None:
        totals: dict[str, int] = {}
        for t in procs:
            totals[t.role] = totals.get(t.role, 0) + t.cpu_ticks
        self.roles.append((now, totals))

    def report(self) -> dict:
        """The run's resource figures (see summarize)."""
        with self._lock:
            procs = list(self.tracked)
        return summarize(procs, self.machine, roles=self.roles)


def _process_row(t: Tracked) -> dict:
    life = max(t.last_seen - t.first_seen, 0.0)
    cpu_s = t.cpu_ticks / TICKS
    return {
        "name": t.name,
        "role": t.role,
        "cpu_seconds": round(cpu_s, 2),
        # Averaged over the process's life; short-lived processes are too noisy to compare.
        "cpu_pct": round(100.0 * cpu_s / life, 2) if life >= 1.0 else None,
        "mem_private_peak_kb": max(t.memory_kb) if t.memory_kb else None,
        "mem_private_median_kb": int(statistics.median(t.memory_kb)) if t.memory_kb else None,
        "mem_file_peak_kb": t.file_kb_peak,
    }


def _spread(values: list[float]) -> dict:
    values = [v for v in values if v is not None]
    if not values:
        return {"median": None, "max": None}
    return {"median": round(statistics.median(values), 2), "max": round(max(values), 2)}


def role_series(roles: list[tuple[float, dict[str, int]]]) -> dict:
    """Each role's CPU use per sample interval, in % of one core, and each role's busiest interval: where the
    machine's time went while a run was saturated (a role's total alone does not say when it was spent). A
    process seen for the first time brings the ticks it used before; a process gone keeps its last count."""
    if len(roles) < 2:
        return {"interval_end_s": [], "pct_of_one_core": {}, "peak_pct_of_one_core": {}}
    t0 = roles[0][0]
    names = sorted({r for _, totals in roles for r in totals})
    ends: list[float] = []
    pct: dict[str, list[float]] = {r: [] for r in names}
    for (ta, a), (tb, b) in zip(roles, roles[1:]):
        dt = tb - ta
        if dt <= 0:
            continue
        ends.append(round(tb - t0, 1))
        for r in names:
            used = max(b.get(r, 0) - a.get(r, 0), 0) / TICKS
            pct[r].append(round(100.0 * used / dt, 1))
    return {"interval_end_s": ends, "pct_of_one_core": pct,
            "peak_pct_of_one_core": {r: max(v) if v else 0.0 for r, v in pct.items()}}


def summarize(procs: list[Tracked], machine: list[tuple[float, int, int]], window: float = 5.0,
              roles: list[tuple[float, dict[str, int]]] | None = None) -> dict:
    """Per-process rows, the clients' medians and maxima, each role's total CPU time and its use over time
    (role_series), and the machine's busy share of all its cores: mean over the run and the busiest
    `window`-second stretch."""
    rows = [_process_row(t) for t in procs]
    clients = [r for r in rows if r["role"] == "client"]
    by_role: dict[str, float] = {}
    for r in rows:
        by_role[r["role"]] = round(by_role.get(r["role"], 0.0) + r["cpu_seconds"], 2)
    out = {
        "cores": CORES,
        "processes": rows,
        "clients": {
            "count": len(clients),
            "cpu_pct": _spread([r["cpu_pct"] for r in clients]),
            "cpu_seconds": _spread([r["cpu_seconds"] for r in clients]),
            "mem_private_peak_mb": _spread([r["mem_private_peak_kb"] / 1024 for r in clients
                                            if r["mem_private_peak_kb"]]),
            "mem_private_median_mb": _spread([r["mem_private_median_kb"] / 1024 for r in clients
                                              if r["mem_private_median_kb"]]),
        },
        "cpu_seconds_by_role": by_role,
        "cpu_series": role_series(roles or []),
        "machine": machine_figures(machine, window),
    }
    span = machine[-1][0] - machine[0][0] if len(machine) >= 2 else 0.0
    if span > 0:
        ours = sum(by_role.values())
        out["machine"]["run_share_pct"] = round(100.0 * ours / (span * CORES), 1)
    return out


# A sample interval this busy is a saturated one: the processes of a run then wait for a core, and a viewer's
# one- or two-second buffer drains while they wait (in the 200-viewer runs stalls came in such stretches).
SATURATED_PCT = 95.0


def machine_figures(machine: list[tuple[float, int, int]], window: float) -> dict:
    """Busy share of all cores (100% = every core busy): the run's mean, its busiest window, and how long the
    sample intervals at SATURATED_PCT or more lasted in all."""
    if len(machine) < 2:
        return {"busy_pct_mean": None, "busy_pct_peak": None, "seconds": 0.0, "saturated_seconds": 0.0}
    t0, b0, n0 = machine[0]
    t1, b1, n1 = machine[-1]
    mean = 100.0 * (b1 - b0) / (n1 - n0) if n1 > n0 else 0.0
    peak, j = 0.0, 0
    for i in range(len(machine)):
        # the shortest stretch from sample j that spans the window
        while j < len(machine) and machine[j][0] - machine[i][0] < window:
            j += 1
        if j >= len(machine):
            break
        dn = machine[j][2] - machine[i][2]
        if dn > 0:
            peak = max(peak, 100.0 * (machine[j][1] - machine[i][1]) / dn)
    if peak == 0.0:
        peak = mean
    saturated = sum(b[0] - a[0] for a, b in zip(machine, machine[1:])
                    if b[2] > a[2] and 100.0 * (b[1] - a[1]) / (b[2] - a[2]) >= SATURATED_PCT)
    return {"busy_pct_mean": round(mean, 1), "busy_pct_peak": round(peak, 1), "seconds": round(t1 - t0, 1),
            "saturated_seconds": round(saturated, 1)}
