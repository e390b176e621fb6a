"""The catalogue workload: which box watches which title when, and for how long. Pure and deterministic:
every random number is a raw mt19937_64 draw (mt64), so the simulator (toast-sim --print-sessions) makes the
same sessions from the same scenario. The spec is testbed/README.md, "Catalogue scenarios"; each function
below is one of its steps, in the order they draw.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from .mt64 import MT19937_64

# The engine for seeks is seeded apart (random_seed + SEEK_SEED_OFFSET) so that the shared sessions do not
# depend on the testbed-only seek fields.
SEEK_SEED_OFFSET = 0x5EEC


@dataclass(frozen=True)
class Session:
    box: int
    title: int            # popularity rank, 1 = most popular
    start_s: float        # seconds into the evening
    watch_s: float        # media seconds watched
    watched_fraction: float

    def to_json(self) -> dict:
        return {"box": self.box, "title": title_name(self.title), "start_s": self.start_s,
                "watch_s": self.watch_s, "watched_fraction": self.watched_fraction}


@dataclass(frozen=True)
class Seek:
    """One seek of a session: after `at_s` media seconds played, to `to_s` in the title."""
    at_s: float
    to_s: float


def title_name(rank: int) -> str:
    return f"t{rank:03d}"


def largest_remainder(shares: list[float], total: int) -> list[int]:
    """Counts n_k summing to `total`, each share x total rounded down, then one more to the largest
    remainders (ties: the lower k first)."""
    exact = [share * total for share in shares]
    counts = [math.floor(x) for x in exact]
    left = total - sum(counts)
    order = sorted(range(len(shares)), key=lambda k: (-(exact[k] - counts[k]), k))
    for k in order[:left]:
        counts[k] += 1
    return counts


def box_uplinks(rng: MT19937_64, boxes: int, uplink_bps: int, mix: list[tuple[float, float]]) -> list[int]:
    """Step 1: each box's uplink in bits/s. The factors, n_k of each, shuffled by Fisher-Yates from the end;
    box b's uplink is floor(uplink x factor + 0.5)."""
    counts = largest_remainder([share for share, _ in mix], boxes)
    factors = [factor for (_, factor), n in zip(mix, counts) for _ in range(n)]
    for i in range(boxes - 1, 0, -1):
        j = math.floor(rng.u01() * (i + 1))
        factors[i], factors[j] = factors[j], factors[i]
    return [math.floor(uplink_bps * f + 0.5) for f in factors]


def zipf_cdf(titles: int, alpha: float) -> list[float]:
    """Step 4's cumulative weights: w_i = 1 / pow(i, alpha), S_i = S_(i-1) + w_i left to right,
    c_i = S_i / S_T (so c_T is exactly 1)."""
    sums, s = [], 0.0
    for i in range(1, titles + 1):
        s += 1.0 / math.pow(i, alpha)
        sums.append(s)
    return [x / s for x in sums]


def zipf_draw(cdf: list[float], u: float) -> int:
    """The rank (1-based) of the first title with u < c_i."""
    return bisect.bisect_right(cdf, u) + 1


def warm_titles(rng: MT19937_64, boxes: int, cdf: list[float], count: int, title_bytes: int,
                quota_bytes: int, max_draws: int = 50) -> list[list[int]]:
    """Step 2: for each box in order, Zipf draws until it holds `count` distinct titles, or the next distinct
    one would pass its quota, or `max_draws` draws were made. Titles in draw order: the first drawn was
    watched most recently."""
    out = []
    for _ in range(boxes):
        held: list[int] = []
        for _ in range(max_draws):
            if len(held) >= count:
                break
            t = zipf_draw(cdf, rng.u01())
            if t in held:
                continue
            if (len(held) + 1) * title_bytes > quota_bytes:
                break
            held.append(t)
        out.append(held)
    return out


def mean_watch_seconds(title_seconds: float, abandon_pct: float, lo: float, hi: float) -> float:
    """Step 3: m = L x ((1 - a) + a x (lo + hi) / 2)."""
    a = abandon_pct / 100.0
    return title_seconds * ((1.0 - a) + a * (lo + hi) / 2.0)


def profile_at(profile: list[tuple[float, float]], f: float) -> float:
    """The arrival rate's shape at fraction f of the evening: linear between the profile's points (the
    first segment with x_k <= f < x_(k+1)); its last value at f >= 1."""
    for (x0, y0), (x1, y1) in zip(profile, profile[1:]):
        if x0 <= f < x1:
            return y0 + (y1 - y0) * (f - x0) / (x1 - x0)
    return profile[-1][1]


def arrivals(rng: MT19937_64, *, boxes: int, titles_cdf: list[float], evening_s: float,
             profile: list[tuple[float, float]], lambda_peak: float, title_seconds: float, abandon_pct: float,
             lo: float, hi: float) -> tuple[list[Session], int]:
    """Step 5: a Poisson process at the peak rate thinned by the profile (u2 < shape(t / evening)); every
    iteration that does not stop draws u2..u6, accepted or not. Returns the sessions (by start) and how many
    were dropped because no box was idle."""
    a = abandon_pct / 100.0
    busy_until = [0.0] * boxes
    sessions, dropped, t = [], 0, 0.0
    while True:
        t += -math.log(1.0 - rng.u01()) / lambda_peak
        if t >= evening_s:
            break
        u2, u3, u4, u5, u6 = (rng.u01() for _ in range(5))
        if not u2 < profile_at(profile, t / evening_s):
            continue
        title = zipf_draw(titles_cdf, u3)
        watched = 1.0 if u4 >= a else lo + (hi - lo) * u5
        idle = [b for b in range(boxes) if busy_until[b] <= t]
        if not idle:
            dropped += 1
            continue
        box = idle[math.floor(u6 * len(idle))]
        watch_s = watched * title_seconds
        busy_until[box] = t + watch_s
        sessions.append(Session(box, title, t, watch_s, watched))
    return sessions, dropped


@dataclass
class Workload:
    uplinks_bps: list[int]
    warm: list[list[int]]          # per box, ranks in draw order (empty lists when cache is "none")
    sessions: list[Session]
    dropped: int
    mean_watch_s: float
    lambda_peak: float             # sessions per second at the profile's peak
    seeks: list[Seek | None]       # per session (testbed only; its own engine)

    def to_json(self) -> dict:
        """sessions.json: what the simulator's --print-sessions prints for the same scenario."""
        return {"sessions": [s.to_json() for s in self.sessions], "dropped": self.dropped,
                "box_uplinks_bps": self.uplinks_bps,
                "warm_titles": [[title_name(t) for t in held] for held in self.warm],
                "mean_watch_s": self.mean_watch_s, "lambda_peak": self.lambda_peak}


def draw_seeks(seed: int, sessions: list[Session], seek_pct: float, title_seconds: float) -> list[Seek | None]:
    """Which sessions seek once, when and where: per session, in order, three draws from an engine seeded
    with random_seed + SEEK_SEED_OFFSET: it seeks when u_a < seek_pct / 100, after u_b x its watch time, to
    u_c x (L - what it has left to watch), so the rest of its watch fits in the title."""
    if seek_pct <= 0:
        return [None] * len(sessions)
    rng = MT19937_64(seed + SEEK_SEED_OFFSET)
    out: list[Seek | None] = []
    for s in sessions:
        ua, ub, uc = rng.u01(), rng.u01(), rng.u01()
        if not ua < seek_pct / 100.0:
            out.append(None)
            continue
        at = ub * s.watch_s
        left = s.watch_s - at
        out.append(Seek(at, uc * (title_seconds - left)))
    return out


def generate(*, random_seed: int, boxes: int, titles: int, zipf_alpha: float, title_seconds: float,
             title_bytes: int, uplink_bps: int, uplink_mix: list[tuple[float, float]], evening_s: float,
             profile: list[tuple[float, float]], peak_viewers_pct: float, abandon_pct: float,
             watched: tuple[float, float], quota_bytes: int, warm_count: int, cache: str,
             seek_pct: float = 0.0) -> Workload:
    """The whole workload of a scenario, the steps in the spec's order on one engine."""
    rng = MT19937_64(random_seed)
    uplinks = box_uplinks(rng, boxes, uplink_bps, uplink_mix)
    cdf = zipf_cdf(titles, zipf_alpha)
    # Drawn whatever the cache, so that every cache policy sees the same sessions; without a cache the boxes
    # kept nothing of their earlier evenings.
    warm = warm_titles(rng, boxes, cdf, warm_count, title_bytes, quota_bytes)
    if cache == "none":
        warm = [[] for _ in range(boxes)]
    lo, hi = watched
    m = mean_watch_seconds(title_seconds, abandon_pct, lo, hi)
    lam = peak_viewers_pct / 100.0 * boxes / m
    sessions, dropped = arrivals(rng, boxes=boxes, titles_cdf=cdf, evening_s=evening_s, profile=profile,
                                 lambda_peak=lam, title_seconds=title_seconds, abandon_pct=abandon_pct,
                                 lo=lo, hi=hi)
    seeks = draw_seeks(random_seed, sessions, seek_pct, title_seconds)
    return Workload(uplinks, warm, sessions, dropped, m, lam, seeks)


def concurrency(intervals: list[tuple[float, float]]) -> int:
    """The most intervals [start, end) open at one moment."""
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    best = now = 0
    for _, step in events:  # an end sorts before a start at the same time: [start, end)
        now += step
        best = max(best, now)
    return best
