"""Unit tests of a catalogue report's arithmetic with constructed inputs (the billed peak, reductions, the
bound, idle upload and CPU), and of the player's pacing model."""

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toastbed import catalogue_report as cr  # noqa: E402
from toastbed import catalogue_scenario as cs  # noqa: E402
from toastbed.player import PlayerModel  # noqa: E402
from toastbed.resources import TICKS  # noqa: E402


class BillingTest(unittest.TestCase):
    def test_p95_by_nearest_rank(self):
        self.assertEqual(cr.nearest_rank(list(range(1, 21)), 95), 19)   # ceil(0.95 x 20) = 19th
        self.assertEqual(cr.nearest_rank(list(range(1, 101)), 95), 95)
        self.assertEqual(cr.nearest_rank([5.0], 95), 5.0)
        self.assertEqual(cr.nearest_rank([3, 1, 2], 95), 3)              # ceil(2.85) = 3rd
        self.assertIsNone(cr.nearest_rank([], 95))

    def test_a_counter_is_binned_by_interpolation(self):
        points = [(-1.0, 100.0), (0.0, 100.0), (10.0, 200.0), (20.0, 200.0), (25.0, 300.0)]
        self.assertEqual(cr.bin_edges(25.0), [0.0, 10.0, 20.0, 30.0])
        self.assertEqual(cr.counter_bins(points, [0.0, 10.0, 20.0, 30.0]), [100.0, 0.0, 100.0])
        self.assertEqual(cr.cumulative_at(points, 5.0), 150.0)
        self.assertEqual(cr.cumulative_at(points, 99.0), 300.0)

    def test_sessions_are_binned_at_the_bitrate_for_the_time_watched(self):
        bins = cr.interval_bins([(5.0, 25.0), (0.0, 10.0)], 1000.0, [0.0, 10.0, 20.0, 30.0])
        self.assertEqual(bins, [15000.0, 10000.0, 5000.0])

    def test_peak_reduction_and_its_bound(self):
        # 20 bins: unicast 100 Mbps in all but one (200), the server 10 Mbps but one burst of 90.
        uni = [100e6 * 10 / 8] * 19 + [200e6 * 10 / 8]
        srv = [10e6 * 10 / 8] * 19 + [90e6 * 10 / 8]
        p = cr.peak_figures(srv, uni, total_uplink_bps=40e6)
        self.assertEqual(p["peak_unicast_bps"], 100e6)   # the top bin is the 5% not billed
        self.assertEqual(p["peak_server_bps"], 10e6)
        self.assertAlmostEqual(p["peak_reduction_pct"], 90.0)
        self.assertAlmostEqual(p["peak_bound_pct"], 40.0)
        self.assertEqual(cr.peak_figures(srv, uni, total_uplink_bps=400e6)["peak_bound_pct"], 100.0)
        self.assertIsNone(cr.peak_figures([], [], 1.0)["peak_reduction_pct"])
        self.assertEqual(cr.reduction(25.0, 100.0), 75.0)
        self.assertIsNone(cr.reduction(1.0, 0.0))


class PlayersBehindTest(unittest.TestCase):
    @staticmethod
    def _records(*stalls):
        return [{"player_stalls": p, "player_stall_s": ps, "box_stalls": b, "box_stall_s": bs, "played_s": played}
                for p, ps, b, bs, played in stalls]

    def test_players_stalling_where_the_boxes_did_not_flag_the_run(self):
        note = cr.players_behind(self._records((5750, 9000.0, 3, 0.5, 6000.0), (0, 562.2, 2, 0.4, 4000.0)))
        self.assertEqual(note, "the players stalled 5750 times (9562 s) where the boxes stalled 5 times (0.9 s), "
                               "of 10000 s played: the players fell behind their boxes, so this run's figures "
                               "are the machine's, not the system's; run it with fewer runs beside it")

    def test_a_few_seconds_over_an_evening_are_not_flagged(self):
        self.assertIsNone(cr.players_behind(self._records((0, 0.0, 0, 0.0, 90.0), (0, 0.0, 0, 0.0, 90.0))))
        self.assertIsNone(cr.players_behind(self._records((2, 0.9, 0, 0.0, 10.0))))        # under a second
        self.assertIsNone(cr.players_behind(self._records((7, 3.3, 0, 0.0, 12000.0))))     # under 1% played
        self.assertIsNone(cr.players_behind(self._records((9, 122.0, 4, 2.0, 12000.0))))   # 120 s: exactly 1%
        self.assertIsNotNone(cr.players_behind(self._records((9, 122.1, 4, 2.0, 12000.0))))


class IdleTest(unittest.TestCase):
    def test_idle_time_is_the_evening_without_sessions(self):
        self.assertEqual(cr.subtract([(10, 20), (15, 30), (50, 60)], 0, 100), [(0, 10), (30, 50), (60, 100)])
        self.assertEqual(cr.subtract([], 0, 5), [(0, 5)])
        self.assertEqual(cr.subtract([(0, 100)], 0, 50), [])

    def test_upload_between_polls_is_split_by_the_idle_share(self):
        idle = [(0.0, 10.0)]
        samples = [(0.0, 0), (5.0, 500), (15.0, 1500), (20.0, 2000)]
        up_idle, cap, total = cr.idle_upload(samples, idle, 800.0, 0.0, 20.0)
        self.assertEqual(total, 2000)
        self.assertEqual(up_idle, 500 + 1000 * 0.5)
        self.assertEqual(cap, 100.0 * 10)   # 800 bits/s = 100 B/s for 10 idle seconds

    def test_idle_cpu_counts_only_intervals_wholly_idle(self):
        samples = [(float(t), t * TICKS // 100) for t in range(0, 21)]   # 1% of a core throughout
        samples[15] = (15.0, samples[15][1] + 5 * TICKS)                 # a burst while watching
        pct = cr.idle_cpu_pct(samples, [(0.0, 10.0)])
        self.assertAlmostEqual(pct, 1.0)
        self.assertIsNone(cr.idle_cpu_pct(samples, [(0.0, 3.0)]))        # too short to say


class ComputeTest(unittest.TestCase):
    def test_a_constructed_evening(self):
        s = cs.from_dict({"type": "catalogue", "boxes": 2, "titles": 2, "title_seconds": 40, "bitrate": "8Mbps",
                          "uplink": "2Mbps", "evening": {"seconds": 40}, "peak_viewers_pct": 50})
        w = s.workload()
        t0 = 1000.0
        # The VoD server sends title t001 at 2 MB/s for the first 20 s, then nothing; t002 nothing.
        metrics = [(t0 + t, {"t001": 2e6 * min(t, 20), "t002": 0.0}, 0.0) for t in range(-1, 41)]
        rec = {"index": 0, "box": 0, "title": 1, "planned_start_s": 0.0, "watch_s": 40.0, "seek": None,
               "started_s": 0.0, "play_s": 0.0, "stop_s": 40.0, "held_before": False, "played_s": 40.0,
               "startup_ms": 0.0, "seek_ms": [100.0], "player_stalls": 1, "player_stall_s": 0.5, "box_stalls": 2,
               "box_stall_s": 1.5, "box_startup_ms": 80, "box_seek_ms": [90], "bytes_from_peers": 0,
               "bytes_from_server": 40e6, "error": ""}
        boxes = [{"index": 0, "name": "box000", "uplink_bps": 2e6, "probe": False, "warm": 0,
                  "upload_samples": [(t0, 0), (t0 + 40, 0)], "push_bytes": 0, "titles_held": 1},
                 {"index": 1, "name": "box001", "uplink_bps": 2e6, "probe": False, "warm": 0,
                  "upload_samples": [(t0, 0), (t0 + 20, 2.5e6), (t0 + 40, 5e6)], "push_bytes": 123,
                  "titles_held": 1},
                 # The probe box's upload is server-side: 4 MB over the evening, polled every 20 s.
                 {"index": 2, "name": "probe", "uplink_bps": 2e6, "probe": True, "warm": 2,
                  "upload_samples": [(t0, 0), (t0 + 20, 2e6), (t0 + 40, 4e6)], "push_bytes": 0, "titles_held": 2}]
        res = {"processes": [{"name": "box000", "cpu_pct": 1.0, "mem_private_peak_kb": 4096,
                              "mem_private_median_kb": 2048}]}
        r = cr.compute(s, w, records=[rec], t0=t0, end_s=40.0, metrics=metrics, boxes=boxes, res=res,
                       cpu_samples={})
        self.assertEqual(r["unicast_bytes"], 40e6)
        self.assertEqual(r["server_bytes"], 44e6)
        self.assertEqual((r["vod_server_bytes"], r["probe_box_bytes"], r["tracker_bytes"]), (40e6, 4e6, 0))
        self.assertAlmostEqual(r["reduction_pct"], -10.0)
        # Bins: the VoD server 16 Mbps in the first two, 0 after, the probe 0.8 Mbps throughout; unicast 8 Mbps
        # in all four: p95 = 16.8 vs 8.
        self.assertEqual([round(b) for b in r["bins"]["server_bps"]], [16.8e6, 16.8e6, 0.8e6, 0.8e6])
        self.assertAlmostEqual(r["peak_server_bps"], 16.8e6)
        self.assertEqual(r["peak_unicast_bps"], 8e6)
        self.assertAlmostEqual(r["peak_reduction_pct"], -110.0)
        self.assertEqual(r["probe_box"]["bytes_uploaded"], 4e6)
        self.assertEqual(r["probe_box"]["idle_upload_used_pct"], 40.0)
        self.assertEqual(r["peak_bound_pct"], 50.0)        # 4 Mbps of upload over 8 Mbps of demand
        self.assertEqual(r["stalls"], {"count": 2, "seconds": 1.5})
        self.assertEqual(r["player_stalls"], {"count": 1, "seconds": 0.5})
        self.assertEqual(r["push_bytes"], 123)
        self.assertEqual(r["idle_upload_bytes"], 5e6)       # box001 idle all evening
        self.assertEqual(r["idle_upload_capacity_bytes"], 250000 * 40)  # box001: 40 idle s
        self.assertEqual(r["idle_upload_used_pct"], 50.0)
        self.assertEqual(r["per_title"][0]["offload_pct"], 0.0)
        self.assertIsNone(r["per_title"][1]["offload_pct"])
        self.assertEqual(r["seek_ms"]["median"], 100.0)
        self.assertEqual(r["sessions_completed"], 1)
        self.assertEqual(r["watching_at_once_max"], 1)
        self.assertEqual(r["box_resources"]["mem_private_peak_mb"]["median"], 4.0)
        md = cr.render_markdown({**r, "shape": cs.shape(s, w)}, [])
        self.assertIn("**-110.0% below**", md)
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(cr.plot({**r, "scenario": "x"}, Path(d)), ["rate.png", "offload.png"])


class NightTest(unittest.TestCase):
    def test_a_push_window_before_the_evening_counts_in_bytes_not_in_the_peak(self):
        s = cs.from_dict({"type": "catalogue", "boxes": 1, "titles": 1, "title_seconds": 20, "bitrate": "8Mbps",
                          "evening": {"seconds": 20}, "peak_viewers_pct": 100, "probe_box": False,
                          "push": {"quota": "10MB", "rate": "8Mbps", "window": [-30, 0]}})
        t0 = 500.0
        # The night: the server sends 1 MB/s for 30 s (push); the evening: nothing (the box holds the title).
        metrics = [(t0 + t, {"t001": 1e6 * (min(t, 0) + 30)}, 0.0) for t in range(-31, 21)]
        rec = {"index": 0, "box": 0, "title": 1, "planned_start_s": 0.0, "watch_s": 20.0, "seek": None,
               "started_s": 0.0, "play_s": 0.0, "stop_s": 20.0, "held_before": True, "played_s": 20.0,
               "startup_ms": 0.0, "seek_ms": [], "player_stalls": 0, "player_stall_s": 0.0, "box_stalls": 0,
               "box_stall_s": 0.0, "box_startup_ms": 5, "box_seek_ms": [], "bytes_from_peers": 0,
               "bytes_from_server": 0, "error": ""}
        boxes = [{"index": 0, "name": "box000", "uplink_bps": 1e6, "probe": False, "warm": 0,
                  "upload_samples": [], "push_bytes": 30e6, "titles_held": 1}]
        r = cr.compute(s, s.workload(), records=[rec], t0=t0, end_s=20.0, metrics=metrics, boxes=boxes,
                       res={"processes": []}, cpu_samples={})
        self.assertEqual(r["night_server_bytes"], 30e6)
        self.assertEqual(r["night_peak_bps"], 8e6)
        self.assertEqual(r["server_bytes"], 0)
        self.assertEqual(r["peak_server_bps"], 0.0)
        self.assertEqual(r["peak_reduction_pct"], 100.0)
        self.assertAlmostEqual(r["reduction_pct"], 100.0 * (1 - 30e6 / 20e6))   # the push cost more bytes
        self.assertEqual(r["push_bytes"], 30e6)


class PlayerModelTest(unittest.TestCase):
    def test_startup_stall_and_resume(self):
        m = PlayerModel(8000, buffer_s=2.0, target_s=10.0, now=0.0)   # 1000 bytes a second
        self.assertEqual(m.room_bytes(), 2000)
        m.on_bytes(1000, 0.3)                                           # first byte at 0.3 s
        self.assertEqual((m.state, m.startup_s), ("playing", 0.3))
        self.assertEqual(m.room_bytes(), 1000)
        m.advance(1.3)                                                  # one second played: dry
        self.assertEqual(m.state, "playing")
        m.advance(1.5)
        self.assertEqual((m.state, m.stalls, m.waiting_since), ("stalled", 1, 1.3))
        m.on_bytes(200, 2.0)                                            # 0.2 s: not enough to resume
        self.assertEqual(m.state, "stalled")
        m.on_bytes(400, 2.5)
        self.assertEqual(m.state, "playing")
        self.assertAlmostEqual(m.stall_s, 1.2)
        self.assertAlmostEqual(m.played_s, 1.0)

    def test_the_target_ends_the_session(self):
        m = PlayerModel(8000, buffer_s=2.0, target_s=1.5, now=0.0)
        m.on_bytes(2000, 0.0)
        m.advance(5.0)
        self.assertEqual(m.state, "done")
        self.assertEqual(m.played_s, 1.5)
        self.assertEqual(m.stalls, 0)

    def test_the_title_end_is_not_a_stall(self):
        m = PlayerModel(8000, buffer_s=2.0, target_s=10.0, now=0.0)
        m.on_bytes(1000, 0.0)
        m.on_body_end(0.5)
        m.advance(3.0)
        self.assertEqual((m.state, m.stalls, m.played_s), ("done", 0, 1.0))

    def test_a_seek_waits_for_its_first_byte(self):
        m = PlayerModel(8000, buffer_s=2.0, target_s=10.0, now=0.0)
        m.on_bytes(2000, 0.0)
        m.seek(1.0)
        self.assertEqual((m.state, m.room_bytes()), ("seeking", 2000))
        m.on_bytes(500, 1.25)
        self.assertEqual(m.seek_s, [0.25])
        self.assertEqual(m.state, "playing")
        self.assertAlmostEqual(m.played_s, 1.0)


if __name__ == "__main__":
    unittest.main()
