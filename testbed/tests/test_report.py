"""Unit tests for scenario validation and report arithmetic (no processes started)."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toastbed import report, scenario  # noqa: E402


class ScenarioTest(unittest.TestCase):
    def test_defaults_and_units(self):
        s = scenario.from_dict({"clients": 4, "upload_limit": "1.5Mbps", "title_seconds": "2min",
                                "piece_size": "256KiB", "buffer_limit": "25%"})
        self.assertEqual(s.clients, 4)
        self.assertEqual(s.upload_limit, 1_500_000)
        self.assertEqual(s.title_seconds, 120)
        self.assertEqual(s.title_bytes, 120 * 2_000_000 // 8)
        self.assertEqual(s.buffer_limit, "25%")

    def test_bad_fields_are_named(self):
        cases = [({"clients": 0}, "'clients'"), ({"picker": "fastest"}, "'picker'"),
                 ({"upload_limit": "lots"}, "'upload_limit'"), ({"colour": 1}, "'colour': unknown field"),
                 ({"piece_size": "100KiB"}, "'piece_size'"), ({"buffer_limit": "150%"}, "'buffer_limit'"),
                 ({"baselines": ["multicast"]}, "'baselines'")]
        for data, needle in cases:
            with self.assertRaises(scenario.ScenarioError) as cm:
                scenario.from_dict(data)
            self.assertIn(needle, str(cm.exception))

    def test_unreadable_and_invalid_files(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "s.json"
            p.write_text("{not json")
            with self.assertRaisesRegex(scenario.ScenarioError, "not valid JSON"):
                scenario.load(p)
            with self.assertRaisesRegex(scenario.ScenarioError, "cannot read"):
                scenario.load(Path(d) / "missing.json")

    def test_arrivals(self):
        s = scenario.from_dict({"clients": 3, "arrival": "uniform", "arrival_interval": "10s"})
        self.assertEqual(scenario.arrival_times(s), [0, 10, 20])
        s = scenario.from_dict({"clients": 3, "arrival": "all-at-once"})
        self.assertEqual(scenario.arrival_times(s), [0, 0, 0])
        s = scenario.from_dict({"clients": 200, "arrival": "poisson", "arrival_interval": 2, "random_seed": 7})
        a = scenario.arrival_times(s)
        self.assertEqual(a, scenario.arrival_times(s))  # repeatable
        gaps = [b - x for x, b in zip(a, a[1:])]
        self.assertTrue(1.5 < sum(gaps) / len(gaps) < 2.5)


class ReportTest(unittest.TestCase):
    def test_prometheus_sum_adds_every_label_set(self):
        text = ('# TYPE toast_http_bytes_sent_total counter\n'
                'toast_http_bytes_sent_total{title="a"} 100\n'
                'toast_http_bytes_sent_total{title="b"} 50\n'
                'toast_http_requests_total{status="200"} 7\n')
        self.assertEqual(report.prometheus_sum(text, "toast_http_bytes_sent_total"), 150)
        self.assertEqual(report.prometheus_sum(text, "missing"), 0)

    def test_reduction_ceiling_and_shares(self):
        s = scenario.from_dict({"clients": 4, "behavior": "stream", "upload_limit": "1Mbps", "bitrate": "2Mbps"})
        summ = {"completed": True, "bytes_from_peers": 600, "bytes_from_server": 400, "bytes_uploaded": 500,
                "bytes_redundant": 10, "stalls": 1, "stall_seconds": 0.5, "startup_ms": 200}
        r = report.compute(s, 1000, [summ, summ, summ, None], vod_bytes=1000, seed_bytes=500, tracker_bytes=100)
        self.assertEqual(r["unicast_bytes"], 4000)
        self.assertEqual(r["server_bytes"], 1600)
        self.assertAlmostEqual(r["reduction_pct"], 60.0)
        self.assertAlmostEqual(r["ceiling_pct"], 50.0)  # upload/bitrate for streamers
        self.assertAlmostEqual(r["vod_share_pct"], 62.5)
        self.assertEqual(r["completed_clients"], 3)
        self.assertEqual(r["stalls"], {"count": 3, "seconds": 1.5})
        self.assertEqual(r["startup_ms"]["median"], 200)
        self.assertFalse(r["per_client"][3]["summary_written"])
        self.assertEqual(r["total_traffic_bytes"], 1600 + 1500)

    def test_ceiling_without_upload_cap_is_one_minus_one_over_n(self):
        s = scenario.from_dict({"clients": 10, "behavior": "seed"})
        self.assertAlmostEqual(report.ceiling_pct(s), 90.0)

    def test_stats_file_summary_is_the_summary_line(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "stats.jsonl"
            p.write_text(json.dumps({"t": 1}) + "\n" + "garbage\n" + json.dumps({"event": "summary", "stalls": 2}))
            summary, lines = report.read_stats(p)
            self.assertEqual(summary["stalls"], 2)
            self.assertEqual(len(lines), 1)

    def test_markdown_lists_every_client(self):
        s = scenario.from_dict({"clients": 2})
        r = report.compute(s, 1000, [None, None], 2000, 0, 0)
        md = report.render_markdown(r, ["p.png"])
        self.assertIn("| 0 | no |", md)
        self.assertIn("| 1 | no |", md)
        self.assertIn("![p](p.png)", md)
        self.assertIn("**0.0%**", md)


if __name__ == "__main__":
    unittest.main()
