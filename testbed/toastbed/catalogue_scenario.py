"""Catalogue scenarios ("type": "catalogue"): B set-top boxes, T titles with Zipf popularity, a compressed
evening. Validated with messages that name the field and the value; the fields are testbed/README.md's
"Catalogue scenarios", shared with the simulator.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import asdict, dataclass, field

from . import catalogue_workload as wl
from .scenario import PICKERS, ScenarioError, THESIS_PIECE_SECONDS, parse_bitrate, parse_duration, parse_size

CACHES = ("none", "lru", "popularity")
CHOKERS = ("nearest", "tit-for-tat", "seed", "leader")
DEFAULT_PROFILE = [[0.0, 0.15], [0.5, 1.0], [0.8, 1.0], [1.0, 0.2]]
_TITLES_QUOTA = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*titles?\s*$", re.I)
PUSH_KEYS = ("quota", "rate", "window")
MAX_NIGHT_S = 3600  # the longest off-peak phase before the evening a push window may ask for


@dataclass
class CatalogueScenario:
    name: str
    type: str = "catalogue"
    boxes: int = 150
    titles: int = 30
    zipf_alpha: float = 0.9
    title_seconds: float = 120.0
    bitrate: int = 4_000_000
    piece_size: int = 256 * 1024
    uplink: int = 1_000_000
    uplink_mix: list = field(default_factory=lambda: [{"share": 1.0, "factor": 1.0}])
    evening: dict = field(default_factory=lambda: {"seconds": 600.0, "profile": DEFAULT_PROFILE})
    peak_viewers_pct: float = 20.0
    abandon: dict = field(default_factory=lambda: {"pct": 40.0, "watched": [0.05, 0.6]})
    disk_quota: str = "4 titles"
    warm_titles: int = 3
    cache: str = "lru"
    push: dict | None = None
    picker: str = "adaptive"
    choker: str = "nearest"
    random_seed: int = 1
    time_limit: float = 0.0
    # The testbed's own (the simulator ignores them): seeks, the player, the idle probe box, extra options.
    seek_pct: float = 0.0
    player_buffer: float = 2.0
    probe_box: bool = True
    extra_client_args: list = field(default_factory=list)

    @property
    def title_bytes(self) -> int:
        return int(self.title_seconds * self.bitrate / 8)

    @property
    def quota_bytes(self) -> int:
        m = _TITLES_QUOTA.match(str(self.disk_quota))
        if m:
            return int(float(m.group(1)) * self.title_bytes)
        return parse_size(self.disk_quota)

    @property
    def evening_seconds(self) -> float:
        return float(self.evening["seconds"])

    @property
    def profile(self) -> list[tuple[float, float]]:
        return [(float(x), float(y)) for x, y in self.evening["profile"]]

    @property
    def mix(self) -> list[tuple[float, float]]:
        return [(float(m["share"]), float(m["factor"])) for m in self.uplink_mix]

    def to_json(self) -> dict:
        return asdict(self)

    def workload(self) -> wl.Workload:
        lo, hi = self.abandon["watched"]
        return wl.generate(random_seed=self.random_seed, boxes=self.boxes, titles=self.titles,
                           zipf_alpha=self.zipf_alpha, title_seconds=self.title_seconds,
                           title_bytes=self.title_bytes, uplink_bps=self.uplink, uplink_mix=self.mix,
                           evening_s=self.evening_seconds, profile=self.profile,
                           peak_viewers_pct=self.peak_viewers_pct, abandon_pct=float(self.abandon["pct"]),
                           watched=(float(lo), float(hi)), quota_bytes=self.quota_bytes,
                           warm_count=self.warm_titles, cache=self.cache, seek_pct=self.seek_pct)

    @property
    def night_seconds(self) -> float:
        """The off-peak phase before the evening that a push window starting before it asks for."""
        return max(0.0, -self.push["window"][0]) if self.push else 0.0

    def derived_time_limit(self) -> float:
        """The evening, then the last sessions' watch with room for startup and stalls, then the wind-down
        (counted from the evening's start)."""
        return self.time_limit or self.evening_seconds + 2 * self.title_seconds + 60


def is_catalogue(data) -> bool:
    return isinstance(data, dict) and data.get("type") == "catalogue"


def _fail(key: str, what: str, raw) -> ScenarioError:
    return ScenarioError(f"scenario field '{key}': expected {what}, got {json.dumps(raw)}")


def _number(key, raw, what, lo=-math.inf, hi=math.inf, lo_open=False):
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise _fail(key, what, raw)
    if raw < lo or raw > hi or (lo_open and raw == lo):
        raise _fail(key, what, raw)
    return float(raw)


def _int(key, raw, what, lo, hi):
    if isinstance(raw, bool) or not isinstance(raw, int) or not lo <= raw <= hi:
        raise _fail(key, what, raw)
    return raw


def _convert(key, raw, convert, what, check=lambda v: True):
    try:
        value = convert(raw)
    except (ValueError, TypeError):
        raise _fail(key, what, raw) from None
    if not check(value):
        raise _fail(key, what, raw)
    return value


def _uplink_mix(raw) -> list:
    what = "a list of {\"share\": S, \"factor\": F} with shares > 0 summing to 1 and factors > 0"
    if not isinstance(raw, list) or not raw:
        raise _fail("uplink_mix", what, raw)
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or set(entry) != {"share", "factor"}:
            raise _fail(f"uplink_mix[{i}]", "an object with exactly \"share\" and \"factor\"", entry)
        share = _number(f"uplink_mix[{i}].share", entry["share"], "a share in (0, 1]", 0, 1, lo_open=True)
        factor = _number(f"uplink_mix[{i}].factor", entry["factor"], "a factor > 0", 0, 1000, lo_open=True)
        out.append({"share": share, "factor": factor})
    total = sum(e["share"] for e in out)
    if abs(total - 1.0) > 1e-6:
        raise ScenarioError(f"scenario field 'uplink_mix': the shares sum to {total:g}, expected 1")
    return out


def _evening(raw) -> dict:
    if not isinstance(raw, dict) or not set(raw) <= {"seconds", "profile"}:
        raise _fail("evening", "an object with \"seconds\" and \"profile\"", raw)
    seconds = _convert("evening.seconds", raw.get("seconds", 600), parse_duration, "a duration > 0",
                       lambda v: v > 0)
    profile = raw.get("profile", DEFAULT_PROFILE)
    what = "a list of [x, y] points, x from 0 to 1 strictly increasing, y in [0, 1] peaking at 1"
    if not isinstance(profile, list) or len(profile) < 2:
        raise _fail("evening.profile", what, profile)
    points = []
    for i, p in enumerate(profile):
        if not isinstance(p, list) or len(p) != 2:
            raise _fail(f"evening.profile[{i}]", "an [x, y] pair", p)
        points.append([_number(f"evening.profile[{i}][0]", p[0], "x in [0, 1]", 0, 1),
                       _number(f"evening.profile[{i}][1]", p[1], "y in [0, 1]", 0, 1)])
    xs = [x for x, _ in points]
    if xs[0] != 0 or xs[-1] != 1 or any(b <= a for a, b in zip(xs, xs[1:])):
        raise _fail("evening.profile", what, profile)
    if max(y for _, y in points) != 1.0:
        raise _fail("evening.profile", what + " (its peak is 1.0: peak_viewers_pct sets the rate there)",
                    profile)
    return {"seconds": seconds, "profile": points}


def _abandon(raw) -> dict:
    if not isinstance(raw, dict) or not set(raw) <= {"pct", "watched"}:
        raise _fail("abandon", "an object with \"pct\" and \"watched\"", raw)
    pct = _number("abandon.pct", raw.get("pct", 40), "a percentage from 0 to 100", 0, 100)
    watched = raw.get("watched", [0.05, 0.6])
    if (not isinstance(watched, list) or len(watched) != 2
            or any(isinstance(w, bool) or not isinstance(w, (int, float)) for w in watched)
            or not 0 < watched[0] <= watched[1] <= 1):
        raise _fail("abandon.watched", "[lo, hi] with 0 < lo <= hi <= 1", watched)
    return {"pct": pct, "watched": [float(watched[0]), float(watched[1])]}


def _disk_quota(raw, title_bytes: int) -> str:
    what = "a size such as \"240MiB\" or a count of titles such as \"4 titles\", at least one title"
    text = str(raw)
    m = _TITLES_QUOTA.match(text)
    try:
        quota = int(float(m.group(1)) * title_bytes) if m else parse_size(raw)
    except (ValueError, TypeError):
        raise _fail("disk_quota", what, raw) from None
    if quota < title_bytes:
        raise _fail("disk_quota", what + f" ({title_bytes} bytes)", raw)
    return text


def _push(raw, evening_s: float) -> dict | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _fail("push", "null or an object with \"quota\", \"rate\" and \"window\"", raw)
    for key in PUSH_KEYS:
        if key not in raw:
            raise ScenarioError(f"scenario field 'push': missing \"{key}\"")
    out = dict(raw)
    out["quota"] = _convert("push.quota", raw["quota"], parse_size, "a size > 0 such as \"200MiB\"", lambda v: v > 0)
    out["rate"] = _convert("push.rate", raw["rate"], parse_bitrate, "a bitrate > 0 such as \"2Mbps\"",
                           lambda v: v > 0)
    w = raw["window"]
    if (not isinstance(w, list) or len(w) != 2
            or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in w)
            or not -MAX_NIGHT_S <= w[0] < w[1] <= evening_s):
        raise _fail("push.window", f"[start, end] seconds from the evening's start (before it: negative), "
                                   f"-{MAX_NIGHT_S} <= start < end <= {evening_s:g}", w)
    out["window"] = [float(w[0]), float(w[1])]
    return out


def from_dict(data: dict, default_name: str = "scenario") -> CatalogueScenario:
    if not is_catalogue(data):
        raise ScenarioError("scenario field 'type': expected \"catalogue\"")
    known = set(CatalogueScenario.__dataclass_fields__) | {"description"}
    for key in data:
        if key not in known:
            hint = " (a box's upload is 'uplink' and 'uplink_mix')" if key == "upload_limit" else ""
            raise ScenarioError(f"scenario field '{key}': unknown field in a catalogue scenario{hint}")
    d = CatalogueScenario(name="")
    g = data.get
    s = CatalogueScenario(name=str(g("name", default_name)))
    s.boxes = _int("boxes", g("boxes", d.boxes), "an integer from 1 to 1000", 1, 1000)
    s.titles = _int("titles", g("titles", d.titles), "an integer from 1 to 999", 1, 999)
    s.zipf_alpha = _number("zipf_alpha", g("zipf_alpha", d.zipf_alpha), "a number from 0 to 5", 0, 5)
    s.title_seconds = _convert("title_seconds", g("title_seconds", d.title_seconds), parse_duration,
                               "a duration such as \"120s\"", lambda v: v > 0)
    s.bitrate = _convert("bitrate", g("bitrate", d.bitrate), parse_bitrate, "a bitrate such as \"4Mbps\"",
                         lambda v: v > 0)
    s.piece_size = _convert("piece_size", g("piece_size", d.piece_size), parse_size,
                            "a power of two of at least 16KiB", lambda v: v >= 16384 and v & (v - 1) == 0)
    if s.title_bytes < s.piece_size:
        raise ScenarioError("scenario: the title (title_seconds x bitrate) is smaller than one piece")
    s.uplink = _convert("uplink", g("uplink", d.uplink), parse_bitrate, "a bitrate such as \"1Mbps\"",
                        lambda v: v > 0)
    s.uplink_mix = _uplink_mix(g("uplink_mix", d.uplink_mix))
    for m in s.uplink_mix:
        if math.floor(s.uplink * m["factor"] + 0.5) < 1000:
            raise _fail("uplink_mix", "factors that leave every box at least 1 kbps of uplink", g("uplink_mix"))
    s.evening = _evening(g("evening", d.evening))
    s.peak_viewers_pct = _number("peak_viewers_pct", g("peak_viewers_pct", d.peak_viewers_pct),
                                 "a percentage in (0, 100]", 0, 100, lo_open=True)
    s.abandon = _abandon(g("abandon", d.abandon))
    s.disk_quota = _disk_quota(g("disk_quota", d.disk_quota), s.title_bytes)
    s.warm_titles = _int("warm_titles", g("warm_titles", d.warm_titles), "an integer from 0 to 999", 0, 999)
    s.cache = _convert("cache", g("cache", d.cache), str, "one of " + ", ".join(CACHES), lambda v: v in CACHES)
    s.push = _push(g("push", d.push), s.evening_seconds)
    s.picker = _convert("picker", g("picker", d.picker), str, "one of " + ", ".join(PICKERS),
                        lambda v: v in PICKERS)
    s.choker = _convert("choker", g("choker", d.choker), str, "one of " + ", ".join(CHOKERS),
                        lambda v: v in CHOKERS)
    s.random_seed = _int("random_seed", g("random_seed", d.random_seed), "a non-negative integer", 0, 2**63 - 1)
    s.time_limit = _convert("time_limit", g("time_limit", d.time_limit), parse_duration, "a duration")
    if s.time_limit and s.time_limit < s.evening_seconds:
        raise _fail("time_limit", f"at least the evening ({s.evening_seconds:g} s)", g("time_limit"))
    s.seek_pct = _number("seek_pct", g("seek_pct", d.seek_pct), "a percentage from 0 to 100", 0, 100)
    s.player_buffer = _convert("player_buffer", g("player_buffer", d.player_buffer), parse_duration,
                               "a duration from 0.5s to 30s", lambda v: 0.5 <= v <= 30)
    probe = g("probe_box", d.probe_box)
    if not isinstance(probe, bool):
        raise _fail("probe_box", "true or false", probe)
    s.probe_box = probe
    extra = g("extra_client_args", [])
    if not isinstance(extra, list) or not all(isinstance(x, str) for x in extra):
        raise _fail("extra_client_args", "a list of strings", extra)
    s.extra_client_args = extra
    return s


def shape(s: CatalogueScenario, w: wl.Workload | None = None) -> dict:
    """The figures a catalogue result must share with another to be comparable: boxes, titles, alpha,
    sessions per box, peak viewers (planned, and the most sessions overlapping), upload / bitrate, disk quota
    / title size, and how compressed time is (a piece-time against the thesis's ~1 s)."""
    w = w or s.workload()
    ups = sorted(w.uplinks_bps)
    piece_seconds = s.piece_size * 8 / s.bitrate
    peak_demand = s.peak_viewers_pct / 100.0 * s.boxes * s.bitrate
    d = {
        "boxes": s.boxes,
        "titles": s.titles,
        "zipf_alpha": s.zipf_alpha,
        "sessions": len(w.sessions),
        "sessions_dropped": w.dropped,
        "sessions_per_box": round(len(w.sessions) / s.boxes, 2),
        "peak_viewers_planned": round(s.peak_viewers_pct / 100.0 * s.boxes, 1),
        "peak_viewers_pct": s.peak_viewers_pct,
        "watching_at_once_max": wl.concurrency([(x.start_s, x.start_s + x.watch_s) for x in w.sessions]),
        "upload_over_bitrate_median": round(statistics.median(ups) / s.bitrate, 3),
        "upload_over_bitrate_mean": round(sum(ups) / len(ups) / s.bitrate, 3),
        "disk_quota_over_title": round(s.quota_bytes / s.title_bytes, 2),
        "warm_titles_mean": round(sum(len(h) for h in w.warm) / s.boxes, 2),
        "mean_watch_s": round(w.mean_watch_s, 2),
        "evening_s": s.evening_seconds,
        "title_seconds": s.title_seconds,
        "piece_seconds": round(piece_seconds, 4),
        "time_compression": round(THESIS_PIECE_SECONDS / piece_seconds, 2),
        # All boxes' upload over the demand at the planned peak: no swarm can take more off the server then.
        "peak_bound_planned_pct": round(min(100.0, 100.0 * sum(ups) / peak_demand), 1),
        "cache": s.cache,
        "push": s.push is not None,
        "seek_pct": s.seek_pct,
    }
    d["label"] = shape_label(d)
    return d


def shape_label(d: dict) -> str:
    label = (f"catalogue: {d['boxes']} boxes, {d['titles']} titles, Zipf {d['zipf_alpha']:g}, "
             f"{d['sessions_per_box']:g} sessions a box, peak {d['peak_viewers_pct']:g}% watching, "
             f"upload / bitrate {d['upload_over_bitrate_median']:g} (median box), "
             f"quota {d['disk_quota_over_title']:g} titles")
    if d["time_compression"] > 1.1:
        label += (f"; time-compressed {d['time_compression']:g}x: a piece-time is "
                  f"{d['piece_seconds'] * 1000:.0f} ms (thesis ~1 s)")
    if d["title_seconds"] < 1800:
        label += (f"; {d['title_seconds']:g} s titles and a {d['evening_s']:g} s evening stand for films and a "
                  "prime-time evening")
    return label
