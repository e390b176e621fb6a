"""Scenario files: what one experiment runs, validated with messages that name the field and the value."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, asdict
from pathlib import Path

_BITRATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(bps|kbps|mbps|gbps|k|m|g)?\s*$", re.I)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(b|kib|mib|gib|kb|mb|gb|k|m|g)?\s*$", re.I)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|m|h)?\s*$", re.I)

PICKERS = ("rarest", "inorder", "beta", "hybrid", "adaptive")
BEHAVIORS = ("download", "stream", "seed")
CHOKERS = ("tit-for-tat", "seed", "nearest")
SEED_CLIENTS = ("stock", "toast")
ARRIVALS = ("uniform", "poisson", "all-at-once")


class ScenarioError(ValueError):
    pass


def parse_bitrate(text) -> int:
    """Bits per second from 2000000, "2Mbps", "1.5M", "800kbps"."""
    if isinstance(text, (int, float)) and not isinstance(text, bool) and text >= 0:
        return int(text)
    m = _BITRATE.match(str(text))
    if not m:
        raise ValueError(text)
    scale = {"": 1, "bps": 1, "k": 1e3, "kbps": 1e3, "m": 1e6, "mbps": 1e6, "g": 1e9, "gbps": 1e9}
    return int(round(float(m.group(1)) * scale[(m.group(2) or "").lower()]))


def parse_size(text) -> int:
    """Bytes from 262144, "256KiB", "4MiB", "1MB"."""
    if isinstance(text, int) and not isinstance(text, bool) and text >= 0:
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(text)
    scale = {"": 1, "b": 1, "k": 1024, "kib": 1024, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30,
             "gib": 1 << 30, "kb": 1e3, "mb": 1e6, "gb": 1e9}
    return int(round(float(m.group(1)) * scale[(m.group(2) or "").lower()]))


def parse_duration(text) -> float:
    """Seconds from 5, "250ms", "15min", "1h"."""
    if isinstance(text, (int, float)) and not isinstance(text, bool) and text >= 0:
        return float(text)
    m = _DURATION.match(str(text))
    if not m:
        raise ValueError(text)
    scale = {"": 1, "s": 1, "ms": 1e-3, "min": 60, "m": 60, "h": 3600}
    return float(m.group(1)) * scale[(m.group(2) or "").lower()]


@dataclass
class Scenario:
    name: str
    clients: int = 8
    arrival: str = "uniform"              # uniform | poisson | all-at-once
    arrival_interval: float = 5.0         # seconds between arrivals (uniform) or mean (poisson)
    behavior: str = "stream"
    picker: str = "adaptive"
    inorder_window: float = 30.0          # seconds of video
    lookahead: str = ""                   # "" = the client's default, "none" = the whole title, or a duration
    upload_limit: int = 2_000_000         # bits/s per client
    download_limit: int = 0               # bits/s per client, 0 = unlimited
    buffer_limit: str = ""                # "" = unlimited, "50%" or a size
    title_seconds: float = 60.0
    bitrate: int = 2_000_000
    piece_size: int = 256 * 1024
    choker: str = "nearest"
    delay_ms: float = 0.0                 # added one-way delay (needs netem)
    shaping: bool = False                 # clients in network namespaces with tbf
    seed: bool = True                     # a seed beside the server (server host)
    seed_upload_limit: int = 0            # bits/s, 0 = unlimited
    seed_client: str = "stock"            # stock (libtorrent's own choking) | toast (toast-client --behavior seed)
    random_seed: int = 1
    time_limit: float = 0.0               # hard stop in seconds; 0 = derived from the scenario
    private: bool = False                 # a private torrent (BEP 27) and a passkey per box at the tracker
    ssl: bool = False                     # also the operator's CA in the torrent and a certificate per box
    baselines: list = field(default_factory=list)  # "unicast", "stock"
    extra_client_args: list = field(default_factory=list)

    @property
    def title_bytes(self) -> int:
        return int(self.title_seconds * self.bitrate / 8)

    def to_json(self) -> dict:
        return asdict(self)


def load(path: str | Path) -> Scenario:
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise ScenarioError(f"cannot read scenario {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ScenarioError(f"scenario {path} is not valid JSON: {e}") from None
    return from_dict(data, default_name=path.stem)


def from_dict(data: dict, default_name: str = "scenario"):
    """A single-title Scenario, or a CatalogueScenario for `"type": "catalogue"`."""
    if not isinstance(data, dict):
        raise ScenarioError("scenario: expected a JSON object")
    kind = data.get("type", "title")
    if kind == "catalogue":
        from . import catalogue_scenario  # it builds on this module's parsers
        return catalogue_scenario.from_dict(data, default_name)
    if kind != "title":
        raise ScenarioError(f"scenario field 'type': expected \"title\" or \"catalogue\", got {json.dumps(kind)}")
    known = set(Scenario.__dataclass_fields__)
    for key in data:
        if key not in known and key not in ("description", "type"):
            raise ScenarioError(f"scenario field '{key}': unknown field")

    def get(key, convert, check=None, what=""):
        default = getattr(Scenario(name=""), key)
        if key not in data:
            return default
        raw = data[key]
        try:
            value = convert(raw)
        except (ValueError, TypeError):
            raise ScenarioError(f"scenario field '{key}': expected {what}, got {json.dumps(raw)}") from None
        if check and not check(value):
            raise ScenarioError(f"scenario field '{key}': expected {what}, got {json.dumps(raw)}")
        return value

    def choice(key, options):
        return get(key, str, lambda v: v in options, "one of " + ", ".join(options))

    def positive_int(v):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError
        return v

    def flag(v):
        if not isinstance(v, bool):
            raise TypeError
        return v

    def buffer(v):
        if v in ("", None):
            return ""
        s = str(v).strip()
        if s.endswith("%"):
            pct = float(s[:-1])
            if not 0 < pct <= 100:
                raise ValueError
            return s
        parse_size(s)
        return s

    def lookahead(v):
        if v in ("", "none"):
            return v
        if parse_duration(v) < 1:
            raise ValueError
        return str(v)

    def str_list(v):
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise TypeError
        return v

    s = Scenario(name=str(data.get("name", default_name)))
    s.clients = get("clients", positive_int, lambda v: 1 <= v <= 500, "an integer from 1 to 500")
    s.arrival = choice("arrival", ARRIVALS)
    s.arrival_interval = get("arrival_interval", parse_duration, None, "a duration such as \"5s\"")
    s.behavior = choice("behavior", BEHAVIORS)
    s.picker = choice("picker", PICKERS)
    s.inorder_window = get("inorder_window", parse_duration, None, "a duration such as \"30s\"")
    s.lookahead = get("lookahead", lookahead, None, "a duration of at least 1s such as \"60s\", or \"none\"")
    s.upload_limit = get("upload_limit", parse_bitrate, lambda v: v > 0, "a bitrate such as \"2Mbps\"")
    s.download_limit = get("download_limit", parse_bitrate, None, "a bitrate such as \"8Mbps\" or 0")
    s.buffer_limit = get("buffer_limit", buffer, None, "a percentage such as \"50%\" or a size")
    s.title_seconds = get("title_seconds", parse_duration, lambda v: v > 0, "a duration such as \"60s\"")
    s.bitrate = get("bitrate", parse_bitrate, lambda v: v > 0, "a bitrate such as \"2Mbps\"")
    s.piece_size = get("piece_size", parse_size, lambda v: v >= 16384 and v & (v - 1) == 0,
                       "a power of two of at least 16KiB")
    s.choker = choice("choker", CHOKERS)
    s.delay_ms = get("delay_ms", float, lambda v: 0 <= v <= 1000, "milliseconds from 0 to 1000")
    s.shaping = get("shaping", flag, None, "true or false")
    s.seed = get("seed", flag, None, "true or false")
    s.seed_upload_limit = get("seed_upload_limit", parse_bitrate, None, "a bitrate or 0")
    s.seed_client = choice("seed_client", SEED_CLIENTS)
    s.random_seed = get("random_seed", positive_int, lambda v: v >= 0, "a non-negative integer")
    s.time_limit = get("time_limit", parse_duration, None, "a duration")
    s.baselines = get("baselines", str_list, lambda v: all(x in ("unicast", "stock") for x in v),
                      "a list of \"unicast\" and \"stock\"")
    s.extra_client_args = get("extra_client_args", str_list, None, "a list of strings")
    s.private = get("private", flag, None, "true or false")
    s.ssl = get("ssl", flag, None, "true or false")
    if s.private or s.ssl:
        which = "ssl" if s.ssl else "private"
        # Stock libtorrent here takes no passkey or certificate: it could not join.
        if s.seed and s.seed_client == "stock":
            raise ScenarioError(f"scenario field '{which}': needs seed_client \"toast\" (the stock seed has no "
                                "passkey or certificate)")
        if "stock" in s.baselines:
            raise ScenarioError(f"scenario field '{which}': the \"stock\" baseline cannot join a private swarm")
    if s.title_bytes < s.piece_size:
        raise ScenarioError("scenario: the title (title_seconds x bitrate) is smaller than one piece")
    return s


def arrival_times(s: Scenario) -> list[float]:
    """Start offsets in seconds for each client; deterministic for a given random_seed."""
    import random

    if s.arrival == "all-at-once":
        return [0.0] * s.clients
    if s.arrival == "uniform":
        return [i * s.arrival_interval for i in range(s.clients)]
    rng = random.Random(s.random_seed)
    t, out = 0.0, []
    for _ in range(s.clients):
        out.append(t)
        t += rng.expovariate(1.0 / s.arrival_interval) if s.arrival_interval > 0 else 0.0
    return out


# The thesis's operating point (ch. 5.2): a 2 Mbps, 858 MB title (57 min), 300 clients arriving every 36 s over
# 3 hours. Its piece size is not stated; 36 s being 36 piece-times makes a piece about 1 s of video, as
# 256 KiB at 2 Mbps is (1.05 s).
THESIS_PIECE_SECONDS = 256 * 1024 * 8 / 2_000_000
THESIS_SHAPE = {"gap_piece_times": 36.0, "watching_at_once": 95.0, "span_over_title": 3.15}
_NEAR = 0.2  # within 20% of the thesis's figure counts as keeping it


def watching_at_once(s: Scenario) -> int:
    """The most viewers whose playback overlaps at one moment (each watches for the title's length from its
    arrival): the thesis's "about 95"."""
    arrivals = arrival_times(s)
    best, j = 0, 0
    for i, a in enumerate(arrivals):  # arrivals are sorted: count those still watching when viewer i arrives
        while arrivals[j] + s.title_seconds <= a:
            j += 1
        best = max(best, i - j + 1)
    return best


def present_at_once(s: Scenario) -> int:
    """The most viewers in the swarm at one moment: streaming viewers leave when their playback ends, seeding
    ones stay to the end of the run (all of them are there at the end), downloading ones leave when they have
    every piece (so for them this is an upper bound)."""
    return s.clients if s.behavior == "seed" else watching_at_once(s)


def shape(s: Scenario) -> dict:
    """The scenario's dimensionless shape, the figures that must match the thesis's for a result to be
    comparable with it: the gap between arrivals in piece-times, viewers watching (and present) at once, the
    arrival span over the title's length, upload over bitrate, and how much faster than the thesis's a
    piece-time passes."""
    piece_seconds = s.piece_size * 8 / s.bitrate
    arrivals = arrival_times(s)
    span = arrivals[-1] - arrivals[0] if arrivals else 0.0
    gap = span / (len(arrivals) - 1) if len(arrivals) > 1 else 0.0
    d = {
        "piece_seconds": round(piece_seconds, 4),
        "title_pieces": -(-s.title_bytes // s.piece_size),
        "gap_piece_times": round(gap / piece_seconds, 2),
        "watching_at_once": watching_at_once(s),
        "present_at_once": present_at_once(s),
        "span_over_title": round(span / s.title_seconds, 2),
        "upload_over_bitrate": round(s.upload_limit / s.bitrate, 3),
        "time_compression": round(THESIS_PIECE_SECONDS / piece_seconds, 2),
    }
    d["label"] = shape_label(d, s.behavior)
    return d


def shape_label(d: dict, behavior: str) -> str:
    """"thesis shape" when the arrival gap and the viewers watching at once are the thesis's (seeding: also the
    arrival span over the title), otherwise "scaled" and what differs. A piece-time shorter than the thesis's
    makes the run time-compressed: every fixed delay (a tick, a round trip, an HTTP request, libtorrent's
    rate and choking rounds) weighs more per piece than it did there."""
    def near(key):
        return abs(d[key] - THESIS_SHAPE[key]) <= _NEAR * THESIS_SHAPE[key]
    parts = []
    if not near("gap_piece_times"):
        g = d["gap_piece_times"]
        if g > 0:
            ratio = THESIS_SHAPE["gap_piece_times"] / g
            how = f"{ratio:.1f}x closer" if ratio > 1 else f"{1 / ratio:.1f}x further apart"
            parts.append(f"arrivals {how} than the thesis's ({g:g} piece-times apart, thesis 36)")
        else:
            parts.append("all arrivals at once (thesis: 36 piece-times apart)")
    if not near("watching_at_once"):
        parts.append(f"{d['watching_at_once']} watching at once (thesis ~95)")
    if behavior == "seed" and not near("span_over_title"):
        parts.append(f"arrival span {d['span_over_title']:g}x the title (thesis 3.15x)")
    label = "scaled: " + "; ".join(parts) if parts else "thesis shape"
    if d["time_compression"] > 1.1:
        label += (f"; time-compressed {d['time_compression']:g}x: a piece-time is "
                  f"{d['piece_seconds'] * 1000:.0f} ms (thesis ~1 s)")
    return label
