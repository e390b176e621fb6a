"""The fault-drill script's cheap parts: its command line, the byte check and the table (the drills themselves
are a benchmark: testbed/drills)."""

import contextlib
import io
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toastbed import drill_checks, drill_report, drills  # noqa: E402


def run_main(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = drills.main(list(argv))
    return rc, out.getvalue(), err.getvalue()


class DrillCommandLineTest(unittest.TestCase):
    def test_dry_run_lists_every_drill_and_runs_nothing(self):
        rc, out, _ = run_main("--dry-run")
        self.assertEqual(rc, 0)
        for name in drills.DRILLS:
            self.assertIn(f"  {name}: ", out)
        self.assertIn("the fault at 16 s for 5 s", out)  # 8 viewers 2 s apart: 2 s after the last arrives

    def test_bad_arguments_are_named_and_exit_2(self):
        cases = [(["--only", "baseline,meteor"], "unknown drill(s) meteor"),
                 (["--clients", "1"], "--clients 1"),
                 (["--fault-seconds", "0"], "--fault-seconds 0"),
                 (["--fault-at", "100"], "--fault-at 100"),
                 (["--title-seconds", "2"], "--title-seconds 2"),
                 (["--repeat", "0"], "--repeat 0"),
                 ([], "--out DIR is required")]
        for argv, message in cases:
            with self.subTest(argv=argv):
                rc, _, err = run_main(*argv)
                self.assertEqual(rc, 2)
                self.assertIn(message, err)

    def test_only_runs_the_named_drills(self):
        rc, out, _ = run_main("--dry-run", "--only", "net-drop,client-kill")
        self.assertEqual(rc, 0)
        self.assertIn("2 drill(s)", out)
        self.assertNotIn("  baseline: ", out)


class BytesLostTest(unittest.TestCase):
    def test_counts_missing_extra_and_different_bytes(self):
        title = bytes(range(256)) * 1024
        with tempfile.TemporaryDirectory() as d:
            copy = Path(d) / "copy"
            copy.write_bytes(title)
            self.assertEqual(drill_checks.bytes_lost(copy, title), 0)
            damaged = bytearray(title)
            damaged[70000:70003] = b"\0\0\0"  # bytes 70000..70002 were 112, 113, 114
            copy.write_bytes(bytes(damaged))
            self.assertEqual(drill_checks.bytes_lost(copy, title), 3)
            copy.write_bytes(title[:-10])
            self.assertEqual(drill_checks.bytes_lost(copy, title), 10)
            self.assertEqual(drill_checks.bytes_lost(Path(d) / "absent", title), len(title))


class TrackerWhole(unittest.TestCase):
    def test_whole_only_within_one_interval(self):
        self.assertEqual(drill_checks.tracker_whole(3.25, 15),
                         (True, "the restarted tracker held every running viewer 3.2 s after its restart "
                                "(announce interval 15 s): whole within one interval"))
        self.assertTrue(drill_checks.tracker_whole(15.0, 15)[0])
        self.assertFalse(drill_checks.tracker_whole(15.1, 15)[0])
        whole, note = drill_checks.tracker_whole(None, 15)
        self.assertFalse(whole)
        self.assertIn("at no time while watched", note)
        self.assertIn("NOT whole", note)


def run_row(stalls, seconds, lost, service, viewer, completed=8):
    return {"drill": "server-kill", "what": "w", "viewers": 8, "completed": completed, "stalls": stalls,
            "stall_seconds": seconds, "bytes_lost": lost, "service_back_s": service, "viewer_back_s": viewer,
            "notes": ["n"]}


class TableTest(unittest.TestCase):
    def test_one_run_is_its_own_row(self):
        row = drill_report.summarize([run_row(1, 0.5, 0, None, 1.234)])
        lines = drill_report.table([row]).splitlines()
        self.assertEqual(len(lines), 3)
        self.assertEqual(lines[2], "| server-kill | 1 | 8/8 | 1, 0.50 | 0 | - | 1.23 |")
        self.assertEqual(row["notes"], ["n"])

    def test_runs_give_medians_and_totals_and_say_when_a_recovery_is_missing(self):
        row = drill_report.summarize([run_row(5, 3.9, 0, 0.11, 1.2), run_row(2, 1.0, 7, None, 0.8, completed=7),
                                run_row(3, 2.0, 0, 0.13, 1.0)])
        self.assertEqual((row["stalls"], row["stall_seconds"], row["bytes_lost"]), (3, 2.0, 7))
        self.assertEqual((row["completed"], row["viewers"]), (23, 24))
        self.assertEqual(drill_report.table([row]).splitlines()[2],
                         "| server-kill | 3 | 23/24 | 3, 2.00 | 7 | 0.12 (2 of 3 runs) | 1.00 |")
        self.assertEqual(row["notes"], ["run 1: n", "run 2: n", "run 3: n"])


if __name__ == "__main__":
    unittest.main()
