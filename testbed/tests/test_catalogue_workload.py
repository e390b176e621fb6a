"""Unit tests of the catalogue workload: the engine, the Zipf draw, the uplink mix, warm titles, the
sessions, and the scenario's validation (no processes started)."""

import json
import math
import subprocess
import sys
import unittest
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from toastbed import catalogue_scenario as cs  # noqa: E402
from toastbed import catalogue_workload as wl  # noqa: E402
from toastbed import scenario  # noqa: E402
from toastbed.mt64 import MT19937_64  # noqa: E402


class EngineTest(unittest.TestCase):
    def test_the_10000th_output_of_a_default_seeded_engine_is_the_standards(self):
        g = MT19937_64()
        for _ in range(9999):
            g.next()
        self.assertEqual(g.next(), 9981545732273789042)  # [rand.predef] in the C++ standard

    def test_a_draw_is_the_top_53_bits_over_2_to_the_53(self):
        a, b = MT19937_64(7), MT19937_64(7)
        for _ in range(100):
            x = a.next()
            u = b.u01()
            self.assertEqual(u, (x >> 11) / 2**53)
            self.assertTrue(0.0 <= u < 1.0)


class ZipfTest(unittest.TestCase):
    def test_cumulative_weights_end_at_exactly_one(self):
        for alpha in (0.0, 0.8, 0.9, 1.0):
            cdf = wl.zipf_cdf(30, alpha)
            self.assertEqual(cdf[-1], 1.0)
            self.assertTrue(all(a < b for a, b in zip(cdf, cdf[1:])))
        self.assertEqual(wl.zipf_cdf(4, 0.0), [0.25, 0.5, 0.75, 1.0])
        w = [1.0, 1 / 2, 1 / 3]
        self.assertEqual(wl.zipf_cdf(3, 1.0), [1.0 / sum(w), 1.5 / sum(w), (1.5 + 1 / 3) / sum(w)])

    def test_the_draw_is_the_first_rank_with_u_below_its_cumulative_weight(self):
        cdf = [0.25, 0.5, 0.75, 1.0]
        self.assertEqual([wl.zipf_draw(cdf, u) for u in (0.0, 0.2499, 0.25, 0.5, 0.74, 0.75, 0.999999)],
                         [1, 1, 2, 3, 3, 4, 4])

    def test_draws_follow_the_weights(self):
        cdf = wl.zipf_cdf(10, 0.9)
        g = MT19937_64(3)
        counts = Counter(wl.zipf_draw(cdf, g.u01()) for _ in range(20000))
        w = [1 / math.pow(i, 0.9) for i in range(1, 11)]
        for rank in (1, 2, 10):
            expected = 20000 * w[rank - 1] / sum(w)
            self.assertLess(abs(counts[rank] - expected), 5 * math.sqrt(expected))


class UplinkMixTest(unittest.TestCase):
    def test_largest_remainder_with_ties_to_the_lower_index(self):
        self.assertEqual(wl.largest_remainder([0.3, 0.5, 0.2], 150), [45, 75, 30])
        self.assertEqual(wl.largest_remainder([0.3, 0.5, 0.2], 7), [2, 4, 1])   # 2.1 3.5 1.4: 3.5 first
        self.assertEqual(wl.largest_remainder([0.5, 0.5], 3), [2, 1])           # a tie: lower k first
        self.assertEqual(wl.largest_remainder([1 / 3] * 3, 4), [2, 1, 1])

    def test_the_mix_is_shuffled_by_fisher_yates_from_the_end(self):
        mix = [(0.3, 2.0), (0.5, 1.0), (0.2, 0.25)]
        ups = wl.box_uplinks(MT19937_64(1), 150, 1_000_000, mix)
        self.assertEqual(Counter(ups), {2_000_000: 45, 1_000_000: 75, 250_000: 30})
        # The same swaps by hand.
        g = MT19937_64(1)
        factors = [2.0] * 45 + [1.0] * 75 + [0.25] * 30
        for i in range(149, 0, -1):
            j = math.floor(g.u01() * (i + 1))
            factors[i], factors[j] = factors[j], factors[i]
        self.assertEqual(ups, [math.floor(1_000_000 * f + 0.5) for f in factors])
        self.assertNotEqual(ups[:45], [2_000_000] * 45)

    def test_one_box_draws_nothing(self):
        g = MT19937_64(5)
        self.assertEqual(wl.box_uplinks(g, 1, 1000, [(1.0, 1.5)]), [1500])
        self.assertEqual(g.next(), MT19937_64(5).next())


class WarmTitlesTest(unittest.TestCase):
    def test_distinct_titles_within_the_quota(self):
        cdf = wl.zipf_cdf(30, 0.9)
        warm = wl.warm_titles(MT19937_64(2), 50, cdf, 3, 100, 400)
        self.assertTrue(all(len(h) == 3 and len(set(h)) == 3 for h in warm))
        warm = wl.warm_titles(MT19937_64(2), 50, cdf, 3, 100, 250)  # only two fit
        self.assertTrue(all(len(h) == 2 for h in warm))

    def test_at_most_50_draws_a_box(self):
        # One title: the box holds it after one draw and can never find a second.
        g = MT19937_64(4)
        warm = wl.warm_titles(g, 2, [1.0], 2, 10, 1000)
        self.assertEqual(warm, [[1], [1]])
        ref = MT19937_64(4)
        for _ in range(100):
            ref.next()
        self.assertEqual(g.next(), ref.next())

    def test_a_box_stops_at_the_first_distinct_title_past_its_quota(self):
        cdf = wl.zipf_cdf(5, 1.0)
        warm = wl.warm_titles(MT19937_64(9), 40, cdf, 3, 100, 150)  # one title fits
        g, want = MT19937_64(9), []
        for _ in range(40):
            held = [wl.zipf_draw(cdf, g.u01())]
            while wl.zipf_draw(cdf, g.u01()) == held[0]:
                pass
            want.append(held)
        self.assertEqual(warm, want)


class SessionsTest(unittest.TestCase):
    def base(self, **over):
        data = {"type": "catalogue", "boxes": 40, "titles": 10, "title_seconds": 60,
                "evening": {"seconds": 300}, **over}
        return cs.from_dict(data)

    def test_same_seed_same_sessions_another_seed_others(self):
        a, b = self.base().workload(), self.base().workload()
        self.assertEqual(a.to_json(), b.to_json())
        self.assertNotEqual(a.to_json(), self.base(random_seed=2).workload().to_json())

    def test_sessions_are_sorted_and_never_overlap_on_a_box(self):
        w = self.base(peak_viewers_pct=60).workload()
        starts = [x.start_s for x in w.sessions]
        self.assertEqual(starts, sorted(starts))
        self.assertTrue(all(0 <= t < 300 for t in starts))
        by_box = {}
        for x in w.sessions:
            self.assertGreaterEqual(x.start_s, by_box.get(x.box, 0.0))
            by_box[x.box] = x.start_s + x.watch_s
        self.assertLessEqual(wl.concurrency([(x.start_s, x.start_s + x.watch_s) for x in w.sessions]), 40)

    def test_watch_lengths_follow_the_abandon_rule(self):
        w = self.base(abandon={"pct": 40, "watched": [0.1, 0.5]}, peak_viewers_pct=50).workload()
        fractions = [x.watched_fraction for x in w.sessions]
        early = [f for f in fractions if f < 1.0]
        self.assertTrue(all(0.1 <= f <= 0.5 for f in early))
        self.assertTrue(0.2 < len(early) / len(fractions) < 0.6)
        self.assertTrue(all(x.watch_s == x.watched_fraction * 60 for x in w.sessions))
        self.assertAlmostEqual(w.mean_watch_s, 60 * (0.6 + 0.4 * 0.3))

    def test_the_arrival_loop_draws_five_numbers_per_candidate(self):
        # A hand-written run of step 5 over a flat profile, checked draw by draw.
        cdf = wl.zipf_cdf(3, 1.0)
        got, dropped = wl.arrivals(MT19937_64(11), boxes=2, titles_cdf=cdf, evening_s=50, profile=[(0, 1), (1, 1)],
                                   lambda_peak=0.5, title_seconds=10, abandon_pct=50, lo=0.2, hi=0.4)
        g, t, busy, want, drops = MT19937_64(11), 0.0, [0.0, 0.0], [], 0
        while True:
            t += -math.log(1 - g.u01()) / 0.5
            if t >= 50:
                break
            u2, u3, u4, u5, u6 = (g.u01() for _ in range(5))
            title = wl.zipf_draw(cdf, u3)
            watched = 1.0 if u4 >= 0.5 else 0.2 + 0.2 * u5
            idle = [b for b in range(2) if busy[b] <= t]
            if not idle:
                drops += 1
                continue
            box = idle[math.floor(u6 * len(idle))]
            busy[box] = t + watched * 10
            want.append(wl.Session(box, title, t, watched * 10, watched))
        self.assertEqual(got, want)
        self.assertEqual(dropped, drops)
        self.assertGreater(len(want), 10)

    def test_the_profile_thins_arrivals(self):
        prof = [(0.0, 0.0), (0.5, 1.0), (1.0, 0.0)]
        self.assertEqual(wl.profile_at(prof, 0.25), 0.5)
        self.assertEqual(wl.profile_at(prof, 0.5), 1.0)
        self.assertEqual(wl.profile_at(prof, 0.9), 0.19999999999999996)
        w = self.base(boxes=300, evening={"seconds": 1000, "profile": [[0, 0], [0.5, 1], [1, 0]]}).workload()
        first = sum(1 for x in w.sessions if x.start_s < 100)
        middle = sum(1 for x in w.sessions if 450 <= x.start_s < 550)
        self.assertLess(first * 3, middle)

    def test_no_idle_box_drops_the_session(self):
        w = self.base(boxes=2, peak_viewers_pct=100, title_seconds=200, abandon={"pct": 0}).workload()
        self.assertGreater(w.dropped, 0)
        self.assertLessEqual(len(w.sessions), 2 * 300 / 200 + 2)

    def test_every_cache_policy_sees_the_same_sessions(self):
        none, lru, pop = (self.base(cache=c).workload() for c in ("none", "lru", "popularity"))
        self.assertTrue(all(h == [] for h in none.warm))
        self.assertTrue(all(len(h) == 3 for h in lru.warm))
        self.assertEqual(lru.warm, pop.warm)
        self.assertEqual(none.sessions, lru.sessions)
        self.assertEqual(lru.sessions, pop.sessions)
        # Warm titles are drawn even when a box keeps none, and only their count changes the sessions.
        self.assertNotEqual(self.base(warm_titles=1).workload().sessions, lru.sessions)

    def test_a_known_workload(self):
        """What a C++ program with std::mt19937_64, std::log and std::pow printed for this scenario (the spec's
        steps written out); the simulator (toast-sim --print-sessions) must print the same."""
        w = cs.from_dict({"type": "catalogue", "boxes": 6, "titles": 4, "title_seconds": 40,
                          "evening": {"seconds": 120}, "peak_viewers_pct": 50,
                          "uplink_mix": [{"share": 0.5, "factor": 2}, {"share": 0.5, "factor": 0.5}]}).workload()
        self.assertEqual(w.uplinks_bps, [500000, 2000000, 500000, 2000000, 500000, 2000000])
        self.assertEqual(w.warm, [[4, 2, 1], [2, 1, 3], [1, 3, 2], [1, 3, 2], [1, 2, 3], [1, 2, 4]])
        got = [(x.box, wl.title_name(x.title), x.start_s, x.watch_s) for x in w.sessions]
        self.assertEqual(got, [
            (3, "t001", 4.5065036842252564, 40.0), (0, "t001", 12.234852703990168, 2.2695308421031561),
            (5, "t001", 12.240771933415571, 40.0), (2, "t004", 18.950625777602568, 40.0),
            (1, "t001", 49.327412964662138, 5.1464895105621045), (2, "t001", 62.024704282780426, 19.0107108724536),
            (4, "t002", 95.147956482909137, 40.0), (1, "t001", 95.577651410850237, 40.0),
            (0, "t002", 100.71727377193612, 40.0), (3, "t001", 103.28881539026784, 40.0),
            (5, "t003", 106.87203285119185, 40.0), (2, "t002", 113.60106412826379, 40.0)])
        self.assertEqual(w.dropped, 1)
        self.assertEqual(w.sessions[1].watched_fraction, 0.056738271052578906)

    def test_seeks_are_drawn_from_their_own_engine(self):
        plain, seeking = self.base().workload(), self.base(seek_pct=50).workload()
        self.assertEqual(plain.to_json(), seeking.to_json())
        seeks = [x for x in seeking.seeks if x]
        self.assertTrue(0.3 < len(seeks) / len(seeking.sessions) < 0.7)
        for sess, sk in zip(seeking.sessions, seeking.seeks):
            if sk:
                self.assertTrue(0 <= sk.at_s <= sess.watch_s)
                self.assertLessEqual(sk.to_s + (sess.watch_s - sk.at_s), 60 + 1e-9)


class ValidationTest(unittest.TestCase):
    def test_defaults(self):
        s = cs.from_dict({"type": "catalogue"})
        self.assertEqual((s.boxes, s.titles, s.zipf_alpha, s.bitrate, s.uplink), (150, 30, 0.9, 4_000_000, 1_000_000))
        self.assertEqual(s.quota_bytes, 4 * 120 * 4_000_000 // 8)
        self.assertEqual(s.cache, "lru")
        self.assertIsNone(s.push)

    def test_bad_fields_are_named_with_their_value(self):
        cases = [
            ({"boxes": 0}, "'boxes': expected an integer from 1 to 1000, got 0"),
            ({"titles": "many"}, "'titles'"),
            ({"zipf_alpha": -1}, "'zipf_alpha'"),
            ({"uplink_mix": [{"share": 0.5, "factor": 1}]}, "'uplink_mix': the shares sum to 0.5"),
            ({"uplink_mix": [{"share": 1, "factor": 0}]}, "'uplink_mix[0].factor'"),
            ({"uplink_mix": [{"share": 1}]}, "'uplink_mix[0]'"),
            ({"evening": {"seconds": 0}}, "'evening.seconds'"),
            ({"evening": {"profile": [[0, 0.5], [1, 0.5]]}}, "its peak is 1.0"),
            ({"evening": {"profile": [[0, 1], [0.5, 1], [0.4, 1], [1, 1]]}}, "'evening.profile'"),
            ({"abandon": {"pct": 120}}, "'abandon.pct'"),
            ({"abandon": {"pct": 10, "watched": [0.6, 0.2]}}, "'abandon.watched'"),
            ({"disk_quota": "half a title"}, "'disk_quota'"),
            ({"disk_quota": "1MiB"}, "'disk_quota'"),
            ({"cache": "fifo"}, "'cache': expected one of none, lru, popularity, got \"fifo\""),
            ({"push": {"quota": "100MiB", "rate": "1Mbps"}}, "'push': missing \"window\""),
            ({"push": {"quota": "100MiB", "rate": "1Mbps", "window": [500, 700]}}, "'push.window'"),
            ({"picker": "fastest"}, "'picker'"),
            ({"upload_limit": "1Mbps"}, "'upload_limit': unknown field in a catalogue scenario (a box's upload"),
            ({"seek_pct": 101}, "'seek_pct'"),
            ({"time_limit": "10s"}, "'time_limit'"),
        ]
        for data, needle in cases:
            with self.assertRaises(scenario.ScenarioError, msg=str(data)) as cm:
                scenario.from_dict({"type": "catalogue", **data})
            self.assertIn(needle, str(cm.exception))

    def test_type_selects_the_kind_of_scenario(self):
        self.assertIsInstance(scenario.from_dict({"type": "catalogue"}), cs.CatalogueScenario)
        self.assertIsInstance(scenario.from_dict({"type": "title"}), scenario.Scenario)
        with self.assertRaisesRegex(scenario.ScenarioError, "'type'"):
            scenario.from_dict({"type": "playlist"})

    def test_a_push_window_before_the_evening_is_a_night(self):
        s = cs.from_dict({"type": "catalogue", "push": {"quota": "1GB", "rate": "2Mbps", "window": [-300, 0],
                                                        "replicas": 3}})
        self.assertEqual(s.night_seconds, 300.0)
        self.assertEqual(s.push["replicas"], 3)  # the planner's own fields pass through
        self.assertEqual(cs.from_dict({"type": "catalogue"}).night_seconds, 0.0)
        with self.assertRaisesRegex(scenario.ScenarioError, "'push.window'"):
            cs.from_dict({"type": "catalogue", "push": {"quota": "1GB", "rate": "2Mbps", "window": [-4000, 0]}})

    def test_quota_as_titles_or_size(self):
        s = cs.from_dict({"type": "catalogue", "disk_quota": "2.5 titles"})
        self.assertEqual(s.quota_bytes, int(2.5 * s.title_bytes))
        self.assertEqual(cs.from_dict({"type": "catalogue", "disk_quota": "300MiB"}).quota_bytes, 300 << 20)

    def test_the_shipped_scenarios_validate_and_dry_run(self):
        files = [HERE.parent / "scenarios" / "catalogue_smoke.json"]
        for f in files:
            s = scenario.load(f)
            self.assertIsInstance(s, cs.CatalogueScenario)
            out = subprocess.run([str(HERE.parent / "run"), str(f), "--dry-run"], capture_output=True, text=True,
                                 timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("sessions:", out.stdout)
            self.assertIn(f"{len(s.workload().sessions)} (", out.stdout)
            printed = subprocess.run([str(HERE.parent / "run"), str(f), "--print-sessions"], capture_output=True,
                                     text=True, timeout=60)
            self.assertEqual(json.loads(printed.stdout), s.workload().to_json())


if __name__ == "__main__":
    unittest.main()
