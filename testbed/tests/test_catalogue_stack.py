"""Unit tests of a catalogue run's plumbing that needs no running program: warm titles placed as the service
keeps them, a box's upload counted across evictions, the server's bytes per title, the boxes' command lines
and the refusal of a scenario the built client cannot run, and where the server's store goes."""

import json
import os
import stat
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toastbed import catalogue_scenario as cs  # noqa: E402
from toastbed import catalogue_stack as st  # noqa: E402
from toastbed import host  # noqa: E402


class WarmPlacementTest(unittest.TestCase):
    def test_titles_are_placed_as_the_service_keeps_them(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            titles = []
            for rank, ih in ((1, "a" * 40), (2, "b" * 40)):
                media = d / f"t00{rank}"
                media.write_bytes(bytes([rank]) * 1000)
                torrent = d / f"t00{rank}.torrent"
                torrent.write_bytes(b"d4:infoi%dee" % rank)
                titles.append(st.CatalogueTitle(rank, f"t00{rank}", media, torrent, ih, f"t00{rank}"))
            box = st.Box(0, "box000", d / "box000", 1_000_000, [2, 1])
            st.place_warm(box, [titles[1], titles[0]], now_ms=10_000_000)
            saved = json.loads((box.save_dir / "titles.json").read_text())
            self.assertEqual(saved["version"], 1)
            self.assertEqual([t["id"] for t in saved["titles"]], ["b" * 40, "a" * 40])
            self.assertEqual([t["name"] for t in saved["titles"]], ["t002", "t001"])
            # The first drawn was watched most recently, an hour before the next.
            self.assertEqual([t["last_watched"] for t in saved["titles"]], [6_400_000, 2_800_000])
            placed = box.save_dir / "titles" / ("b" * 40)
            self.assertEqual((placed / "title.torrent").read_bytes(), b"d4:infoi2ee")
            self.assertEqual(os.stat(placed / "t002").st_ino, os.stat(titles[1].media).st_ino)  # a hard link


class UploadCountTest(unittest.TestCase):
    def test_upload_is_counted_across_polls_and_evictions(self):
        box = st.Box(0, "box000", Path("/nonexistent"), 1_000_000, [])
        box.absorb_status({"titles": [{"id": "x", "bytes_uploaded": 100}, {"id": "y", "bytes_uploaded": 50}]})
        self.assertEqual(box.upload_total, 150)
        box.absorb_status({"titles": [{"id": "x", "bytes_uploaded": 180}, {"id": "y", "bytes_uploaded": 50}]})
        self.assertEqual(box.upload_total, 230)
        # y evicted, z added: y's bytes stay counted, z's count from its first sight.
        box.absorb_status({"titles": [{"id": "x", "bytes_uploaded": 200}, {"id": "z", "bytes_uploaded": 30}]})
        self.assertEqual(box.upload_total, 280)
        self.assertEqual(box.titles_held, 2)
        # y comes back (watched again): a new title on the box, counted from zero.
        box.absorb_status({"titles": [{"id": "x", "bytes_uploaded": 200}, {"id": "z", "bytes_uploaded": 30},
                                      {"id": "y", "bytes_uploaded": 5}]})
        self.assertEqual(box.upload_total, 285)


class MetricsTest(unittest.TestCase):
    def test_bytes_sent_by_title(self):
        text = "\n".join(["# HELP toast_http_bytes_sent_total Title body bytes sent over HTTP",
                          "# TYPE toast_http_bytes_sent_total counter",
                          'toast_http_bytes_sent_total{title="t001"} 1000',
                          'toast_http_bytes_sent_total{title="t002"} 2.5e3',
                          'toast_http_requests_total{status="200"} 7'])
        self.assertEqual(st.per_title_bytes(text), {"t001": 1000.0, "t002": 2500.0})


class CommandLineTest(unittest.TestCase):
    def fake_client(self, d: Path, help_text: str) -> Path:
        path = d / "toast-client"
        path.write_text("#!/bin/sh\ncat <<'EOF'\n" + help_text + "\nEOF\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        host._help_cache.clear()
        return path

    def test_options_the_build_lacks_are_named(self):
        with tempfile.TemporaryDirectory() as d:
            old = self.fake_client(Path(d), "  --save-dir DIR\n  --disk-quota SIZE")
            s = cs.from_dict({"type": "catalogue", "cache": "popularity"})
            self.assertIn("has no --cache (needed for cache \"popularity\")", st.client_problem(s, old))
            s = cs.from_dict({"type": "catalogue", "push": {"quota": "100MB", "rate": "1Mbps", "window": [0, 60]}})
            self.assertIn("no --push-quota, --push-rate, --box-id (needed for push)", st.client_problem(s, old))
            self.assertEqual(st.client_problem(cs.from_dict({"type": "catalogue"}), old), "")
            new = self.fake_client(Path(d), "  --cache POLICY\n  --push-quota SIZE\n  --push-rate RATE\n  --box-id ID")
            self.assertEqual(st.client_problem(s, new), "")

    def test_a_box_gets_its_uplink_quota_and_server(self):
        with tempfile.TemporaryDirectory() as d:
            client = self.fake_client(Path(d), "  --save-dir DIR")
            s = cs.from_dict({"type": "catalogue", "titles": 5, "title_seconds": 10, "bitrate": "8Mbps",
                              "disk_quota": "2 titles", "extra_client_args": ["--max-connections", "20"]})
            stack = mock.Mock(server_url="http://127.0.0.1:9")
            box = st.Box(3, "box003", Path(d) / "box003", 250_000, [], api_port=1001, listen_port=1002)
            argv = st.box_argv(s, client, box, stack)
            self.assertEqual(argv[1:], ["serve", "--save-dir", str(box.save_dir), "--api", "127.0.0.1:1001",
                                        "--listen", "127.0.0.1:1002", "--upload-limit", "250000",
                                        "--disk-quota", "20000000", "--server", "http://127.0.0.1:9",
                                        "--log-level", "warn", "--max-connections", "20"])
            probe = st.Box(5, "probe", Path(d) / "probe", 1_000_000, [1, 2, 3, 4, 5], probe=True)
            self.assertIn("50000000", st.box_argv(s, client, probe, stack))  # the whole catalogue
            cached = self.fake_client(Path(d), "  --cache POLICY")
            self.assertEqual(st.box_argv(cs.from_dict({"type": "catalogue", "cache": "none"}), cached, box,
                                         stack)[-2:], ["--cache", "lru"])  # "none" is the app's doing


class ServerConfigTest(unittest.TestCase):
    def test_the_forecast_is_the_zipf_expectation_per_hour(self):
        s = cs.from_dict({"type": "catalogue", "titles": 2, "zipf_alpha": 1.0,
                          "evening": {"seconds": 100, "profile": [[0, 0], [1, 1]]}})
        f = st.demand_forecast(s, lambda_peak=0.1)["titles"]
        # 0.1 a second at the peak, the profile's mean 0.5: 180 an hour, split 2:1.
        self.assertAlmostEqual(f["t001"], 120.0)
        self.assertAlmostEqual(f["t002"], 60.0)

    def test_push_gets_its_window_on_the_evenings_clock(self):
        with tempfile.TemporaryDirectory() as d:
            s = cs.from_dict({"type": "catalogue", "uplink": "2Mbps", "peak_viewers_pct": 10,
                              "push": {"quota": "200MB", "rate": "3Mbps", "window": [10, 99.5], "replicas": 3}})
            extra = st.server_extra(s, 0.05, Path(d), evening_unix=1_700_000_000)
            self.assertEqual(extra["push"], {"rate": 3_000_000, "box_quota": 200_000_000, "box_upload": 2_000_000,
                                             "peak_viewers_pct": 10.0, "refresh": "10s", "replicas": 3,
                                             "window": {"unix": [1_700_000_010, 1_700_000_100]}})
            self.assertEqual(json.loads(Path(extra["demand"]["forecast"]).read_text())["titles"].keys(),
                             {f"t{i:03d}" for i in range(1, 31)})
            self.assertEqual(st.server_extra(cs.from_dict({"type": "catalogue"}), 0.05, Path(d), 0), {})


class StoreTest(unittest.TestCase):
    def test_the_store_goes_to_memory_only_with_room_to_spare(self):
        with tempfile.TemporaryDirectory() as d:
            work = Path(d)
            with mock.patch.object(st, "memory_available", return_value=st.MEMORY_SPARE + 10 << 30):
                place = st.store_place(work, 1 << 30)
                self.assertTrue(place.is_relative_to(st.SHM) or not st.SHM.is_dir())
            with mock.patch.object(st, "memory_available", return_value=st.MEMORY_SPARE):
                self.assertEqual(st.store_place(work, 1 << 30), work / "disks")

    def test_a_store_left_by_a_gone_run_is_removed(self):
        if not st.SHM.is_dir():
            self.skipTest("no /dev/shm")
        left = st.SHM / f"{st.SHM_PREFIX}999999999-test"
        mine = st.SHM / f"{st.SHM_PREFIX}{os.getpid()}-test"
        for p in (left, mine):
            (p / "d0").mkdir(parents=True, exist_ok=True)
        try:
            st.store_place(Path("/tmp"), 1)
            self.assertFalse(left.exists())
            self.assertTrue(mine.exists())
        finally:
            for p in (left, mine):
                if p.exists():
                    import shutil
                    shutil.rmtree(p)


if __name__ == "__main__":
    unittest.main()
