"""A paced player for the catalogue runs: reads a box's playback URL as a set-top box's player does, at the
title's bitrate with a small buffer, so the box's StreamWatcher sees real reads (a read far ahead of the
playhead would be a player filling its cache). Many sessions share one asyncio loop: a session is a few
coroutine wake-ups per 64 KiB read, not a process.

PlayerModel decides (pure, the clock passed in); play() is the socket side.
"""

from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import dataclass, field

CHUNK = 64 * 1024
RCVBUF = 64 * 1024      # the kernel's share of the player's buffer: small, so reads follow the playhead
RESUME_S = 0.5          # media a stalled player waits for before it plays again (or the rest of the body)
HEADER_TIMEOUT_S = 30.0


class PlayerModel:
    """One playback: media seconds received and played since the last (re)start of reading, stalls
    (the buffer ran dry before the body's end) and when each happened. Starting or seeking, the player waits
    for its first byte; from then the playhead advances in real time while the buffer holds media."""

    def __init__(self, bitrate_bps: int, buffer_s: float, target_s: float, now: float):
        self.bytes_per_s = bitrate_bps / 8.0
        self.buffer_s = buffer_s
        self.target_s = target_s        # media seconds to watch in all, then the viewer stops
        self.state = "starting"         # starting | playing | stalled | seeking | done
        self.played_s = 0.0             # media played in all (across seeks)
        self.segment_played_s = 0.0     # since the current read position
        self.received_s = 0.0           # media received since the current read position
        self.body_end_s = None          # media seconds in the current body once it ended (end of title)
        self.waiting_since = now        # start of the current wait for data (starting, seeking, stalled)
        self.startup_s: float | None = None
        self.seek_s: list[float] = []
        self.stalls = 0
        self.stall_s = 0.0
        self.last = now

    def advance(self, now: float) -> None:
        """Plays the buffer up to `now`: a stall starts where it ran dry, the session ends at its target."""
        if self.state == "playing":
            dt = max(0.0, now - self.last)
            available = self.received_s - self.segment_played_s
            left = self.target_s - self.played_s
            step = min(dt, available, left)
            self.segment_played_s += step
            self.played_s += step
            if self.played_s >= self.target_s - 1e-9:
                self.state = "done"
            elif step < dt:
                at_end = self.body_end_s is not None and self.segment_played_s >= self.body_end_s - 1e-9
                if at_end:
                    self.state = "done"  # the title ended before the target (a seek moved it on)
                else:
                    self.state = "stalled"
                    self.stalls += 1
                    self.waiting_since = self.last + step
        self.last = now

    def on_bytes(self, n: int, now: float) -> None:
        self.advance(now)
        self.received_s += n / self.bytes_per_s
        if self.state in ("starting", "seeking") and n > 0:
            waited = now - self.waiting_since
            if self.state == "starting":
                self.startup_s = waited
            else:
                self.seek_s.append(waited)
            self.state = "playing"
        elif self.state == "stalled":
            ahead = self.received_s - self.segment_played_s
            if ahead >= RESUME_S or self.body_ended():
                self.stall_s += now - self.waiting_since
                self.state = "playing"

    def on_body_end(self, now: float) -> None:
        """The response ended: no more media at this position (the title's end)."""
        self.advance(now)
        self.body_end_s = self.received_s
        if self.state == "stalled":
            self.stall_s += now - self.waiting_since
            self.state = "playing"

    def body_ended(self) -> bool:
        return self.body_end_s is not None

    def seek(self, now: float) -> None:
        """The player reads from elsewhere: its buffer is dropped and it waits for the new position."""
        self.advance(now)
        if self.state == "stalled":
            self.stall_s += now - self.waiting_since
        self.state = "seeking"
        self.waiting_since = now
        self.segment_played_s = self.received_s = 0.0
        self.body_end_s = None

    def room_bytes(self) -> int:
        """What the player may read now: up to its buffer past the playhead."""
        ahead = self.received_s - self.segment_played_s
        return max(0, int((self.buffer_s - ahead) * self.bytes_per_s))

    def seconds_until_change(self) -> float:
        """How long until the buffer has a chunk's room again, or runs dry, or the target is reached."""
        if self.state != "playing":
            return 0.25
        ahead = self.received_s - self.segment_played_s
        if self.body_end_s is not None:  # nothing more to read: play out what is here
            return max(0.01, min(ahead, self.target_s - self.played_s))
        need_room = CHUNK / self.bytes_per_s - (self.buffer_s - ahead)
        return max(0.01, min(max(need_room, 0.0), ahead, self.target_s - self.played_s))


@dataclass
class PlayResult:
    ok: bool = False
    error: str = ""
    startup_ms: float | None = None
    seek_ms: list = field(default_factory=list)
    stalls: int = 0
    stall_s: float = 0.0
    played_s: float = 0.0
    bytes_read: int = 0
    ended_at: float = 0.0


async def _open(host: str, port: int, path: str, offset: int):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
    sock.setblocking(False)
    try:
        await asyncio.get_running_loop().sock_connect(sock, (host, port))
    except OSError:
        sock.close()
        raise
    reader, writer = await asyncio.open_connection(sock=sock, limit=CHUNK // 2)
    writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nRange: bytes={offset}-\r\n"
                  "Connection: close\r\n\r\n").encode())
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEADER_TIMEOUT_S)
    status = head.split(b" ", 2)[1] if head.startswith(b"HTTP/1.") else b"?"
    if status not in (b"200", b"206"):
        writer.close()
        raise OSError(f"the player URL answered {status.decode(errors='replace')}")
    return reader, writer


def _split(url: str) -> tuple[str, int, str]:
    rest = url.split("://", 1)[1]
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.rpartition(":")
    return host, int(port), "/" + path


async def play(url: str, *, bitrate_bps: int, title_bytes: int, buffer_s: float, watch_s: float,
               seek: tuple[float, float] | None = None, give_up_s: float = 120.0,
               since: float | None = None, clock=time.monotonic) -> PlayResult:
    """Reads `url` from the start as a player: `watch_s` media seconds played, then it stops (closes). With
    `seek` = (after_s, to_s) it reads from to_s once after_s seconds played. A read that brings nothing for
    `give_up_s` ends the session with an error. Startup counts from `since` (the play request), else now."""
    host, port, path = _split(url)
    m = PlayerModel(bitrate_bps, buffer_s, watch_s, clock() if since is None else since)
    result = PlayResult()
    offset = 0
    seek_pending = seek
    writer = None
    try:
        while m.state != "done":
            reader, writer = await _open(host, port, path, offset)
            while True:
                now = clock()
                m.advance(now)
                if m.state == "done":
                    break
                if seek_pending and m.played_s >= seek_pending[0] - 1e-9:
                    offset = min(int(seek_pending[1] * m.bytes_per_s), max(0, title_bytes - 1))
                    seek_pending = None
                    m.seek(now)
                    break
                room = m.room_bytes()
                if room >= CHUNK and not m.body_ended():
                    wait = m.seconds_until_change() if m.state == "playing" else give_up_s
                    if seek_pending and m.state == "playing":
                        wait = min(wait, max(0.01, seek_pending[0] - m.played_s))
                    try:
                        data = await asyncio.wait_for(reader.read(min(room, CHUNK)), wait)
                    except asyncio.TimeoutError:
                        if m.state != "playing" and clock() - m.waiting_since >= give_up_s:
                            raise OSError(f"no media for {give_up_s:g} s") from None
                        continue
                    now = clock()
                    if not data:
                        if m.received_s == 0 and m.state in ("starting", "seeking"):
                            raise OSError("the player URL closed before sending media")
                        m.on_body_end(now)
                        continue
                    result.bytes_read += len(data)
                    m.on_bytes(len(data), now)
                else:
                    wait = m.seconds_until_change()
                    if seek_pending:
                        wait = min(wait, max(0.01, seek_pending[0] - m.played_s))
                    await asyncio.sleep(wait)
            writer.close()
            writer = None
        result.ok = True
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as e:
        result.error = str(e) or type(e).__name__
    finally:
        if writer is not None:
            writer.close()
        m.advance(clock())
    result.startup_ms = None if m.startup_s is None else m.startup_s * 1000.0
    result.seek_ms = [s * 1000.0 for s in m.seek_s]
    result.stalls, result.stall_s, result.played_s = m.stalls, m.stall_s, m.played_s
    result.ended_at = clock()
    return result
