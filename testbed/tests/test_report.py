"""Unit tests for scenario validation and report arithmetic (no processes started)."""

import json
import sys
import socket
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toastbed import host, report, resources, run, run_all, scenario, thesis_report  # noqa: E402


class ScenarioTest(unittest.TestCase):
    def test_defaults_and_units(self):
        s = scenario.from_dict({"clients": 4, "upload_limit": "1.5Mbps", "title_seconds": "2min",
                                "piece_size": "256KiB", "buffer_limit": "25%"})
        self.assertEqual(s.clients, 4)
        self.assertEqual(s.upload_limit, 1_500_000)
        self.assertEqual(s.title_seconds, 120)
        self.assertEqual(s.title_bytes, 120 * 2_000_000 // 8)
        self.assertEqual(s.buffer_limit, "25%")
        self.assertEqual(s.seed_client, "stock")

    def test_bad_fields_are_named(self):
        cases = [({"clients": 0}, "'clients'"), ({"picker": "fastest"}, "'picker'"),
                 ({"upload_limit": "lots"}, "'upload_limit'"), ({"colour": 1}, "'colour': unknown field"),
                 ({"piece_size": "100KiB"}, "'piece_size'"), ({"buffer_limit": "150%"}, "'buffer_limit'"),
                 ({"baselines": ["multicast"]}, "'baselines'"), ({"lookahead": "500ms"}, "'lookahead'"),
                 ({"lookahead": "far"}, "'lookahead'"), ({"seed_client": "aria2"}, "'seed_client'")]
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


class ShapeTest(unittest.TestCase):
    def test_the_thesis_operating_point_has_the_thesis_shape(self):
        # 64 KiB pieces at 2 Mbps: a piece-time of 262 ms, a quarter of the thesis's 1.05 s.
        s = scenario.from_dict({"clients": 300, "arrival_interval": "9.437s", "title_seconds": "896s",
                                "piece_size": "64KiB", "behavior": "seed", "upload_limit": "1Mbps"})
        sh = scenario.shape(s)
        self.assertAlmostEqual(sh["gap_piece_times"], 36.0, places=1)
        self.assertEqual(sh["watching_at_once"], 95)
        self.assertEqual(sh["present_at_once"], 300)  # seeders stay
        self.assertAlmostEqual(sh["span_over_title"], 3.15, places=2)
        self.assertEqual(sh["upload_over_bitrate"], 0.5)
        self.assertEqual(sh["time_compression"], 4.0)
        self.assertEqual(sh["label"], "thesis shape; time-compressed 4x: a piece-time is 262 ms (thesis ~1 s)")

    def test_a_scaled_scenario_says_what_differs(self):
        s = scenario.from_dict({"clients": 12, "arrival_interval": "3s", "title_seconds": "40s"})
        sh = scenario.shape(s)
        self.assertEqual(sh["watching_at_once"], 12)
        self.assertEqual(sh["time_compression"], 1.0)
        self.assertEqual(sh["label"], "scaled: arrivals 12.6x closer than the thesis's (2.86 piece-times apart, "
                                      "thesis 36); 12 watching at once (thesis ~95)")
        seed = scenario.shape(scenario.from_dict({"clients": 12, "arrival_interval": "3s", "title_seconds": "40s",
                                                  "behavior": "seed"}))
        self.assertIn("arrival span 0.82x the title (thesis 3.15x)", seed["label"])
        once = scenario.shape(scenario.from_dict({"clients": 5, "arrival": "all-at-once"}))
        self.assertEqual(once["watching_at_once"], 5)
        self.assertIn("all arrivals at once", once["label"])

    def test_watching_at_once_counts_overlapping_playback(self):
        # A viewer every 10 s watching 25 s: at most 3 overlap (arrivals at 0, 10, 20; the first leaves at 25).
        s = scenario.from_dict({"clients": 6, "arrival_interval": "10s", "title_seconds": "25s"})
        self.assertEqual(scenario.watching_at_once(s), 3)
        s = scenario.from_dict({"clients": 6, "arrival_interval": "10s", "title_seconds": "20s"})
        self.assertEqual(scenario.watching_at_once(s), 2)  # leaving at 20 as the third arrives


class ResourcesTest(unittest.TestCase):
    def test_this_process_is_readable(self):
        import os
        cpu = resources.read_cpu_ticks(os.getpid())
        mem = resources.read_memory_kb(os.getpid())
        self.assertIsNotNone(cpu)
        self.assertGreater(mem[0], 0)
        self.assertIsNone(resources.read_cpu_ticks(2 ** 22 + 1))  # above pid_max: never a process

    def test_summary_of_constructed_samples(self):
        t = resources.TICKS
        a = resources.Tracked("client000", "client", 1, start_ticks=5, cpu_ticks=2 * t, first_seen=0.0,
                              last_seen=100.0, memory_kb=[1024, 3072, 2048])
        b = resources.Tracked("client001", "client", 2, start_ticks=5, cpu_ticks=4 * t, first_seen=0.0,
                              last_seen=100.0, memory_kb=[4096])
        srv = resources.Tracked("server", "server", 3, start_ticks=5, cpu_ticks=10 * t, first_seen=0.0,
                                last_seen=100.0)
        machine = [(0.0, 0, 0), (5.0, 500, 1000), (10.0, 1400, 2000), (15.0, 1500, 3000)]
        res = resources.summarize([a, b, srv], machine)
        self.assertEqual(res["clients"]["cpu_pct"], {"median": 3.0, "max": 4.0})
        self.assertEqual(res["clients"]["mem_private_peak_mb"], {"median": 3.5, "max": 4.0})
        self.assertEqual(res["clients"]["mem_private_median_mb"], {"median": 3.0, "max": 4.0})
        self.assertEqual(res["cpu_seconds_by_role"], {"client": 6.0, "server": 10.0})
        self.assertEqual(res["machine"]["busy_pct_mean"], 50.0)
        self.assertEqual(res["machine"]["busy_pct_peak"], 90.0)  # 5-10 s
        self.assertEqual(res["machine"]["saturated_seconds"], 0.0)  # no interval at 95% or more
        # Two one-second intervals at 96% and 100% among idler ones: saturated for 2 s.
        busy = [(0.0, 0, 0), (1.0, 96, 100), (2.0, 146, 200), (3.0, 246, 300), (4.0, 250, 400)]
        self.assertEqual(resources.machine_figures(busy, 5.0)["saturated_seconds"], 2.0)
        self.assertAlmostEqual(res["machine"]["run_share_pct"], 100.0 * 16 / (15 * resources.CORES), places=1)

    def test_each_roles_cpu_per_interval(self):
        t = resources.TICKS
        # Constructed samples: the server runs throughout; the client is first seen at 2 s with a tick it used
        # before, and has exited by 4 s (its count stays as it was).
        roles = [(10.0, {"server": 0}),
                 (11.0, {"server": t // 2}),
                 (12.0, {"server": t, "client": 1}),
                 (13.0, {"server": t, "client": 1 + 3 * t // 2}),
                 (14.0, {"server": 2 * t, "client": 1 + 3 * t // 2})]
        series = resources.role_series(roles)
        self.assertEqual(series["interval_end_s"], [1.0, 2.0, 3.0, 4.0])
        self.assertEqual(series["pct_of_one_core"]["server"], [50.0, 50.0, 0.0, 100.0])
        self.assertEqual(series["pct_of_one_core"]["client"],
                         [0.0, round(100.0 / t, 1), 150.0, 0.0])
        self.assertEqual(series["peak_pct_of_one_core"], {"client": 150.0, "server": 100.0})
        # Samples at the same instant are skipped; fewer than two samples give an empty series.
        self.assertEqual(resources.role_series(roles[:1] + roles[:2])["interval_end_s"], [1.0])
        self.assertEqual(resources.role_series(roles[:1])["pct_of_one_core"], {})
        res = resources.summarize([], [], roles=roles)
        self.assertEqual(res["cpu_series"], series)
        s = scenario.from_dict({"clients": 1})
        r = report.compute(s, 1000, [{"completed": True}], 500, 0, 0)
        report.add_resources(r, resources.summarize([], [(10.0, 0, 0), (14.0, 400, 800)], roles=roles))
        md = report.render_markdown(r, [])
        self.assertIn("Busiest sample interval per role, % of one core: client 150%, server 100%", md)

    def test_report_rows_carry_each_clients_figures(self):
        s = scenario.from_dict({"clients": 1})
        r = report.compute(s, 1000, [{"completed": True}], 500, 0, 0)
        res = resources.summarize([resources.Tracked("client000", "client", 1, start_ticks=1,
                                                     cpu_ticks=resources.TICKS, first_seen=0.0, last_seen=10.0,
                                                     memory_kb=[2048])], [])
        report.add_resources(r, res)
        self.assertEqual(r["per_client"][0]["cpu_seconds"], 1.0)
        self.assertEqual(r["per_client"][0]["cpu_pct"], 10.0)
        self.assertEqual(r["per_client"][0]["mem_private_peak_kb"], 2048)
        md = report.render_markdown(r, [])
        self.assertIn("| client CPU, % of one core over its life | 10.00% / 10.00% |", md)
        self.assertIn("1.0 s (10.0%) | 2.0 MB / 2.0 MB |", md)

    def test_report_rows_carry_what_the_operators_seed_sent(self):
        s = scenario.from_dict({"clients": 2})
        r = report.compute(s, 1000, [{"completed": True, "bytes_from_peers": 3_000_000,
                                      "bytes_from_operator": 1_000_000}, {"completed": True}], 500, 0, 0)
        self.assertEqual([c["bytes_from_operator"] for c in r["per_client"]], [1_000_000, 0])
        md = report.render_markdown(r, [])
        self.assertIn("| 0 | yes | 3.0 MB (1.0 MB) |", md)


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
                "bytes_redundant": 10, "bytes_redundant_raced": 6, "stalls": 1, "stall_seconds": 0.5,
                "startup_ms": 200, "bytes_server_wasted": 8}
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
        self.assertEqual(r["server_wasted_bytes"], 24)
        self.assertEqual(r["redundant_bytes"], 30)
        self.assertEqual(r["redundant_raced_bytes"], 18)
        self.assertAlmostEqual(r["server_wasted_pct"], 2.0)  # of the 1200 bytes the viewers took from the server

    def test_upload_used_is_what_viewers_sent_over_their_cap_while_present(self):
        # 3 viewers of a 1000-byte title, upload capped at 800 bits/s (100 bytes/s): present 4 s and 6 s, and
        # one that wrote no summary (not counted).
        s = scenario.from_dict({"clients": 3, "behavior": "stream", "upload_limit": "800bps"})
        a = {"completed": True, "bytes_uploaded": 300, "t_ms": 4000}
        b = {"completed": True, "bytes_uploaded": 500, "t_ms": 6000}
        r = report.compute(s, 1000, [a, b, None], vod_bytes=2200, seed_bytes=0, tracker_bytes=0)
        self.assertEqual(r["upload_capacity_bytes"], 1000)
        self.assertAlmostEqual(r["upload_used_pct"], 80.0)
        self.assertAlmostEqual(r["upload_bound_pct"], 100.0 * 1000 / 3000)
        self.assertIn("| viewers' upload used (of cap x time present) | 80.0% (reduction if all of it reached "
                      "peers: 33.3%) |", report.render_markdown(r, []))
        # The bound is at most 1 - 1/N: the first viewer's copy comes from the server.
        b["t_ms"] = 60000
        self.assertAlmostEqual(report.compute(s, 1000, [a, b, None], 0, 0, 0)["upload_bound_pct"], 200.0 / 3)
        # No summaries: nothing to say.
        r = report.compute(s, 1000, [None, None, None], 0, 0, 0)
        self.assertIsNone(r["upload_used_pct"])
        self.assertNotIn("upload used", report.render_markdown(r, []))

    def test_server_bytes_no_viewer_received_are_wasted(self):
        # Toast viewers stop a fetch whose piece a peer delivered first; what the server had sent of it they
        # never read, and it shows only in the server's own count.
        s = scenario.from_dict({"clients": 3, "behavior": "stream"})
        summ = {"completed": True, "bytes_from_server": 400, "bytes_server_wasted": 8}
        r = report.compute(s, 1000, [summ, summ, summ], vod_bytes=1260, seed_bytes=0, tracker_bytes=0,
                           viewers_fetch=True)
        self.assertEqual(r["server_unreceived_bytes"], 60)
        self.assertEqual(r["server_wasted_bytes"], 24 + 60)
        self.assertAlmostEqual(r["server_wasted_pct"], 100.0 * 84 / 1260)
        self.assertIn("of it sent for requests they stopped", report.render_markdown(r, []))
        # Stock viewers (a baseline) count no server bytes of their own: nothing is inferred.
        r = report.compute(s, 1000, [summ, summ, summ], vod_bytes=1260, seed_bytes=0, tracker_bytes=0)
        self.assertEqual(r["server_unreceived_bytes"], 0)
        self.assertEqual(r["server_wasted_bytes"], 24)
        # A viewer without a summary: what it received is unknown, so is the difference.
        r = report.compute(s, 1000, [summ, summ, None], vod_bytes=1260, seed_bytes=0, tracker_bytes=0,
                           viewers_fetch=True)
        self.assertEqual(r["server_unreceived_bytes"], 0)

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
        self.assertIn("not comparable: 2 viewers did not complete", md)
        self.assertIn("(the seed: stock libtorrent)", md)

    def test_toast_seed_needs_a_client_with_the_leader_choker(self):
        with tempfile.TemporaryDirectory() as d:
            bins = {}
            for name, help_text in (("old", "--choker C  nearest: ...; seed: ..."),
                                    ("new", "--choker C  nearest: ...; leader: to the viewer furthest along")):
                exe = Path(d) / name
                exe.write_text(f"#!/bin/sh\necho '{help_text}'\n")
                exe.chmod(0o755)
                bins[name] = {"client": exe}
            toast = scenario.from_dict({"seed_client": "toast"})
            self.assertIn("needs a toast-client with --choker leader", run.seed_client_problem(toast, bins["old"]))
            self.assertIn(str(bins["old"]["client"]), run.seed_client_problem(toast, bins["old"]))
            self.assertEqual(run.seed_client_problem(toast, bins["new"]), "")
            self.assertEqual(run.seed_client_problem(scenario.from_dict({}), bins["old"]), "")
            self.assertEqual(
                run.seed_client_problem(scenario.from_dict({"seed_client": "toast", "seed": False}), bins["old"]), "")

    def test_markdown_names_the_operator_seed(self):
        for fields, kind in (({"seed_client": "toast"}, "Toast's, leader choker"), ({"seed": False}, "none")):
            s = scenario.from_dict({"clients": 2, **fields})
            r = report.compute(s, 1000, [None, None], 2000, 0, 0)
            r["scenario_config"] = s.to_json()
            self.assertIn(f"(the seed: {kind})", report.render_markdown(r, []))


class RunAllPlanTest(unittest.TestCase):
    def setUp(self):
        self.base, self.exps = run_all.load([])
        self.plans = {stem: run_all.expand(self.base, stem, exp, netem=False) for stem, exp in self.exps}

    def key(self, stem, **params):
        rows = [r for r in self.plans[stem] if all(str(r["params"].get(k)) == str(v) for k, v in params.items())]
        self.assertEqual(len(rows), 1, f"{stem} {params}")
        return rows[0]["key"]

    def test_every_figure_of_the_issue_has_an_experiment(self):
        figures = {exp["figure"] for _, exp in self.exps}
        self.assertEqual(figures, {"5.3", "5.4", "5.5", "5.6", "5.7", "5.8", "5.9", "5.11", "arrivals", "size",
                                   "operator seed"})
        targets = {k for _, exp in self.exps for k in exp.get("targets", {})}
        self.assertEqual(targets, {"stream_full_upload", "seed_span3", "stream_half_upload", "seed_half_upload"})

    def test_sweeps_expand_to_every_combination_plus_the_extra_rows(self):
        uploads, pickers, seeds = 3, 5, 5
        self.assertEqual(len(self.plans["fig5_3_pickers_upload"]), uploads * pickers * seeds)
        self.assertEqual(len(self.plans["fig5_8_buffer"]), 16)
        window = self.plans["fig5_4_window"]
        self.assertEqual(len(window), 5 + 2)
        self.assertEqual([r["scenario"].picker for r in window[-2:]], ["inorder", "beta"])

    def test_the_same_scenario_in_several_figures_is_one_run(self):
        base = self.key("fig5_3_pickers_upload", upload_limit="2Mbps", picker="hybrid", random_seed=1)
        self.assertEqual(base, self.key("fig5_5_behaviour_2mbps", behavior="stream", picker="hybrid"))
        self.assertEqual(base, self.key("fig5_4_window", inorder_window="10s"))
        self.assertEqual(base, self.key("arrivals", arrival="uniform"))
        self.assertEqual(base, self.key("fig5_7_choker", choker="nearest", picker="hybrid"))
        # A buffer as large as the title bounds nothing: the 100% row is the unbounded run.
        self.assertEqual(base, self.key("fig5_8_buffer", buffer_limit="100%", picker="hybrid"))
        self.assertNotEqual(base, self.key("fig5_8_buffer", buffer_limit="50%", picker="hybrid"))
        # 5.11 is made of runs of 5.3, 5.5 and 5.6.
        self.assertEqual(self.key("fig5_11_traffic", behavior="seed", upload_limit="1Mbps", picker="beta"),
                         self.key("fig5_6_behaviour_1mbps", behavior="seed", picker="beta"))

    def test_delay_rows_are_skipped_with_the_reason_when_netem_is_missing(self):
        rows = self.plans["fig5_9_delay"]
        skipped = [r for r in rows if r["skipped"]]
        self.assertEqual(len(skipped), 2)
        self.assertTrue(all(r["params"]["delay_ms"] == 4 and "netem" in r["skipped"] for r in skipped))
        with_netem = run_all.expand(self.base, "fig5_9_delay", dict(self.exps)["fig5_9_delay"], netem=True)
        self.assertFalse(any(r["skipped"] for r in with_netem))

    def test_the_large_set_is_the_main_figures_at_48_viewers(self):
        base, exps = run_all.load([], run_all.EXPERIMENTS / "large")
        self.assertEqual(base["clients"], 48)
        self.assertEqual({stem for stem, _ in exps}, {"fig5_5_behaviour_2mbps", "fig5_6_behaviour_1mbps"})
        rows = run_all.expand(base, "fig5_5_behaviour_2mbps", dict(exps)["fig5_5_behaviour_2mbps"], netem=False)
        self.assertTrue(all(r["scenario"].clients == 48 and r["scenario"].title_seconds == 160 for r in rows))

    def test_unknown_experiment_and_bad_sweep_are_named(self):
        with self.assertRaisesRegex(run_all.PlanError, "no experiment named fig9_9"):
            run_all.load(["fig9_9"])
        with self.assertRaisesRegex(run_all.PlanError, r"bad \[picker=fastest\].*'picker'"):
            run_all.expand(self.base, "bad", {"figure": "x", "title": "t", "thesis": "-",
                                              "sweep": {"picker": ["fastest"]}}, netem=False)

    def test_headline_puts_numbers_beside_the_thesis(self):
        def row(params, pct):
            return {"params": params, "report": {"reduction_pct": pct}}
        results = {
            "fig5_5_behaviour_2mbps": [row({"behavior": b, "picker": p}, v) for b, p, v in [
                ("download", "inorder", 71), ("stream", "hybrid", 75), ("seed", "hybrid", 88),
                ("download", "rarest", 10)]],
            "fig5_6_behaviour_1mbps": [row({"behavior": "stream", "picker": "beta"}, 40),
                                       row({"behavior": "seed", "picker": "hybrid"}, 70)],
            "arrivals": [row({"arrival": "uniform"}, 50), row({"arrival": "all-at-once"}, 40)],
        }
        lines = {claim: (thesis, ours) for claim, thesis, ours in thesis_report.headline(results)}
        self.assertEqual(lines["2 Mbps upload, download and stream, Toast's pickers"], (">= 70%", "71-75%"))
        self.assertEqual(lines["2 Mbps upload, seed, hybrid"], ("up to 90%", "88%"))
        self.assertEqual(lines["1 Mbps upload, stream, best picker (ceiling 50%)"][1], "40%")
        self.assertEqual(lines["all-at-once arrivals vs uniform"], ("21% worse than uniform",
                                                                    "20% worse (40% vs 50%)"))

    def test_headline_sets_the_adaptive_picker_against_the_best_fixed_one_by_median(self):
        def row(up, picker, pct, seed):
            return {"params": {"upload_limit": up, "picker": picker, "random_seed": seed},
                    "report": {"reduction_pct": pct}}
        f53 = [row("1Mbps", "beta", v, i) for i, v in enumerate([28.0, 27.0, 29.0])]
        f53 += [row("1Mbps", "hybrid", v, i) for i, v in enumerate([17.0, 30.0, 16.0])]
        f53 += [row("1Mbps", "adaptive", v, i) for i, v in enumerate([26.0, 31.0, 30.0])]
        f53 += [row("2Mbps", "hybrid", 55.0, 0), row("2Mbps", "adaptive", 54.0, 0)]
        for r, used in zip(f53, [90.0, 95.0, 93.0, 91.0]):
            r["report"]["upload_used_pct"] = used
        lines = {claim: ours for claim, _, ours in thesis_report.headline({"fig5_3_pickers_upload": f53})}
        # hybrid's best single run (30%) does not make it the best: medians are compared.
        self.assertEqual(lines["1 Mbps upload, stream: adaptive vs the best fixed picker"],
                         "adaptive 30.0% vs beta 28.0% (+2.0 points, median of 3); "
                         "the viewers used 92% of their upload")
        self.assertEqual(lines["2 Mbps upload, stream: adaptive vs the best fixed picker"],
                         "adaptive 54.0% vs hybrid 55.0% (-1.0 points, median of 1)")
        self.assertNotIn("1.5 Mbps upload, stream: adaptive vs the best fixed picker", lines)

    def test_issue_targets_put_each_target_beside_the_thesis_and_say_by_how_much_it_is_missed(self):
        def row(params, pct, stalls=0, wasted=0.5, startup=200.0, clients=96, present=95):
            return {"params": params, "shape": {"label": "thesis shape", "present_at_once": present},
                    "report": {"reduction_pct": pct, "stalls": {"count": stalls, "seconds": 0.1 * stalls},
                               "clients": clients, "completed_clients": clients, "server_wasted_pct": wasted,
                               "startup_ms": {"median": startup, "p95": startup}}}
        exps = [("stream", {"targets": {"stream_full_upload": {"upload_limit": "2Mbps"},
                                        "stream_half_upload": {"upload_limit": "1Mbps"}}}),
                ("present_200", {"targets": {"present_200": {}}})]
        results = {"stream": [row({"upload_limit": "2Mbps"}, 86.0), row({"upload_limit": "1Mbps"}, 41.5, stalls=2,
                                                                        wasted=3.0, startup=300.0)],
                   "present_200": [row({"clients": 200}, 80.0, clients=200, present=200)]}
        rows = {r["key"]: r for r in thesis_report.issue_targets(exps, results)}
        self.assertEqual((rows["stream_full_upload"]["ours"], rows["stream_full_upload"]["met"]), ("86.0%", True))
        self.assertEqual(rows["stream_half_upload"]["ours"], "41.5% (3.5 points short), 2 stalls")
        self.assertFalse(rows["stream_half_upload"]["met"])
        self.assertEqual(rows["seed_span3"]["ours"], "not run")
        self.assertEqual(rows["present_200"]["ours"], "200 present, 0 stalls, 80.0% below unicast")
        self.assertTrue(rows["present_200"]["met"])
        self.assertEqual(rows["stalls"]["ours"], "2 in 1 of 3 runs")
        self.assertFalse(rows["wasted"]["met"])
        self.assertEqual(rows["startup"]["ours"], "median of runs 200 ms, worst 300 ms (50 ms over)")
        md = "\n".join(thesis_report.render_targets(list(rows.values())))
        self.assertIn("| upload = bitrate / 2, stream (ceiling 50%) | at most 45% | >= 45% | 41.5% (3.5 points "
                      "short), 2 stalls | **no** | thesis shape |", md)

    def test_the_thesis_set_has_the_thesis_shape_and_every_target(self):
        base, exps = run_all.load([], run_all.EXPERIMENTS / "thesis")
        plans = {stem: run_all.expand(base, stem, exp, netem=False) for stem, exp in exps}
        stream = plans["stream"]
        self.assertTrue(all(r["shape"]["label"].startswith("thesis shape; time-compressed 8x") for r in stream))
        self.assertEqual({r["scenario"].upload_limit for r in stream}, {1_000_000, 2_000_000})
        self.assertTrue(all(abs(r["shape"]["span_over_title"] - 3.15) < 0.1 for r in plans["seed"]))
        self.assertEqual(plans["present_200"][0]["shape"]["present_at_once"], 200)
        quarter = plans["present_500_quarter"][0]
        self.assertEqual(quarter["shape"]["present_at_once"], 500)
        self.assertEqual((quarter["scenario"].bitrate, quarter["scenario"].upload_limit), (500_000, 500_000))
        self.assertAlmostEqual(quarter["scenario"].piece_size * 8 / quarter["scenario"].bitrate,
                               plans["present_500"][0]["scenario"].piece_size * 8 / 2_000_000)
        named = {k for _, exp in exps for k in exp.get("targets", {})}
        self.assertEqual(named, {key for key, *_ in thesis_report.TARGETS})

    def test_dry_run_plans_without_running(self):
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = run_all.main(["--dry-run", "--only", "arrivals"])
        self.assertEqual(rc, 0)
        self.assertIn("3 runs (3 table rows)", buf.getvalue())

    def test_scenarios_written_for_runs_one_at_a_time_and_the_report_built_from_those_run(self):
        import contextlib
        import io
        with tempfile.TemporaryDirectory() as d:
            out, scen_dir = Path(d) / "out", Path(d) / "scenarios"
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = run_all.main(["--only", "arrivals", "--out", str(out), "--write-scenarios", str(scen_dir)])
            self.assertEqual(rc, 0)
            files = sorted(scen_dir.glob("*.json"))
            self.assertEqual(len(files), 3)
            self.assertFalse((out / "runs").exists())  # nothing ran
            commands = [line for line in buf.getvalue().splitlines() if "testbed/run " in line]
            self.assertEqual(len(commands), 3)
            # Each file loads back as the same run, and its command puts the report where --resume looks.
            for f in files:
                s = scenario.load(f)
                self.assertEqual(run_all.run_key(s), f.stem)
                self.assertTrue(any(f"{f} --out {out / 'runs' / f.stem}" in c for c in commands))
            # One of them run (its report as testbed/run writes it): the report has it, and the rest not run.
            s = scenario.load(files[0])
            (out / "runs" / files[0].stem).mkdir(parents=True)
            fake = {"kind": "toast", "scenario_config": s.to_json(), "reduction_pct": 50.0, "ceiling_pct": 91.7,
                    "vod_share_pct": 100.0, "seed_share_pct": 0.0, "stalls": {"count": 0, "seconds": 0.0},
                    "startup_ms": {"median": 50.0}, "completed_clients": 12, "clients": 12,
                    "total_traffic_bytes": 1e8}
            (out / "runs" / files[0].stem / "report.json").write_text(json.dumps(fake))
            with contextlib.redirect_stdout(io.StringIO()):
                rc = run_all.main(["--only", "arrivals", "--out", str(out), "--report-only"])
            self.assertEqual(rc, 0)
            rows = json.loads((out / "results.json").read_text())["experiments"]["arrivals"]
            self.assertEqual(sorted(bool(r["report"]) for r in rows), [False, False, True])
            self.assertEqual(sorted(r["skipped"] or "" for r in rows), ["", "not run yet", "not run yet"])
            self.assertEqual(len(list((out / "runs").iterdir())), 1)  # and it ran nothing


class LauncherTest(unittest.TestCase):
    def test_the_server_host_seed_is_named_when_the_client_has_the_option(self):
        import os
        with tempfile.TemporaryDirectory() as d:
            new, old = Path(d) / "new-client", Path(d) / "old-client"
            new.write_text("#!/bin/sh\necho '  --operator-peer IP:PORT   a peer of the operator'\n")
            old.write_text("#!/bin/sh\necho '  --tracker URL'\n")
            for f in (new, old):
                os.chmod(f, 0o755)
            s = scenario.from_dict({"clients": 1})
            stack = run.Stack.__new__(run.Stack)
            stack.torrent, stack.server_port, stack.host, stack.title = Path(d) / "t.torrent", 1, "127.0.0.1", "t"
            stack.seed_endpoint, stack.creds = "127.0.0.1:7000", None
            argv = run.client_argv("toast", s, stack, {"client": new}, Path(d), 0)
            self.assertEqual(argv[argv.index("--operator-peer") + 1], "127.0.0.1:7000")
            self.assertNotIn("--operator-peer", run.client_argv("toast", s, stack, {"client": old}, Path(d), 0))
            stack.seed_endpoint = ""  # no seed in the scenario
            self.assertNotIn("--operator-peer", run.client_argv("toast", s, stack, {"client": new}, Path(d), 0))
            # The lookahead is passed only when the scenario sets one, in seconds or as "none".
            self.assertNotIn("--lookahead", argv)
            for value, passed in (("7.5s", "7.5s"), ("2min", "120.0s"), ("none", "none")):
                s = scenario.from_dict({"clients": 1, "lookahead": value})
                argv = run.client_argv("toast", s, stack, {"client": new}, Path(d), 0)
                self.assertEqual(argv[argv.index("--lookahead") + 1], passed)


class DiskTest(unittest.TestCase):
    def test_a_run_the_disk_cannot_hold_is_refused_with_the_figures(self):
        s = scenario.from_dict({"clients": 96, "title_seconds": "448s", "piece_size": "32KiB"})
        self.assertEqual(run.disk_needed(s), int(99 * 112_000_000 * 1.05))
        huge = scenario.from_dict({"clients": 500, "title_seconds": "100h"})  # 500 x 90 GB
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(host.RunError, r"needs about \d+\.\d GB on .* GB are free"):
                run.check_disk(huge, Path(d))
            run.check_disk(scenario.from_dict({"clients": 1, "title_seconds": "4s"}), Path(d))

    def test_the_titles_copies_go_and_the_results_stay(self):
        with tempfile.TemporaryDirectory() as d:
            work = Path(d)
            for rel in ("client000/data/title", "client000/stats.jsonl", "disks/d0/b", "media/title", "logs/x.log"):
                (work / rel).parent.mkdir(parents=True, exist_ok=True)
                (work / rel).write_text("x")
            run.drop_data(work)
            left = sorted(str(f.relative_to(work)) for f in work.rglob("*") if f.is_file())
            self.assertEqual(left, ["client000/stats.jsonl", "logs/x.log"])


class PortTest(unittest.TestCase):
    def test_free_ports_are_never_handed_out_twice(self):
        ports = [host.free_port() for _ in range(200)]
        self.assertEqual(len(set(ports)), 200)

    def test_free_ports_lie_outside_the_ephemeral_range(self):
        low, high = host.ephemeral_range()
        for port in (host.free_port() for _ in range(200)):
            self.assertFalse(low <= port <= high, port)
            self.assertGreaterEqual(port, 1024)

    def test_listen_range_is_below_the_ephemeral_range_when_there_is_room(self):
        self.assertEqual(host.listen_range((32768, 60999)), (10000, 32767))
        self.assertEqual(host.listen_range((13000, 60000)), (60001, 65535))
        self.assertEqual(host.listen_range((11000, 63000)), (1024, 65535))

    def test_an_unreadable_port_range_falls_back_to_linux_default(self):
        self.assertEqual(host.ephemeral_range("/nonexistent/ip_local_port_range"), (32768, 60999))

    def test_a_port_someone_listens_on_is_never_handed_out(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            self.assertFalse(host._bindable(s.getsockname()[1]))


if __name__ == "__main__":
    unittest.main()
