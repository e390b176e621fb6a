"""sim/tools/sizing.py and sizing-runs.sh on made-up runs (tiny JSON in a temporary directory, no simulation):
the bill per 1000 boxes, the scenario rebuilt from _base.json + the experiment's base + the row's params, the
tables' rows and their order, both images, and the messages for what is missing or malformed."""

import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"
spec = importlib.util.spec_from_file_location("sizing", TOOLS / "sizing.py")
sizing = importlib.util.module_from_spec(spec)
sys.modules["sizing"] = sizing  # dataclasses look their module up there
spec.loader.exec_module(sizing)

BASE = {"type": "catalogue", "boxes": 500, "titles": 50, "zipf_alpha": 0.9, "title_seconds": "3600s",
        "bitrate": "4Mbps", "piece_size": "1MiB", "uplink": "1Mbps", "evening": {"seconds": "2h"},
        "peak_viewers_pct": 20, "disk_quota": "4 titles", "warm_titles": 3, "cache": "lru", "random_seed": 1,
        "probe_box": False}
PUSH = {"quota": "2GB", "rate": "4Mbps", "window": [-3600, 0]}
PUSHED = "push: a 2 GB quota a box fetched at 4 Mbps in the 1 h before"  # PUSH in words
ONE_HOUR = {"evening": {"seconds": "1h"}}
# name: (the experiment's base, [params of each row, in the file's order])
EXPERIMENTS = {
    "base": ({}, [{"random_seed": 1}]),
    "boxes": ({}, [{"random_seed": 1}, {"boxes": 100, "titles": 10}, {"boxes": 1000, "titles": 100}]),
    "titles": ({}, [{"titles": 500}, {"titles": 15}]),
    "zipf": ({}, [{"zipf_alpha": 0.6}, {"zipf_alpha": 1.2}]),
    "uplink": ({}, [{"uplink": "2Mbps"}, {"uplink": "4Mbps"}]),
    "storage": ({}, [{"disk_quota": "1 titles"}, {"disk_quota": "10 titles"}]),
    "popularity": ({"cache": "popularity"}, [{"titles": 500}, {"titles": 50}]),
    "push": ({"cache": "popularity", "push": PUSH}, [{"titles": 50}, {"titles": 500}]),
    "boxes_1h": (ONE_HOUR, [{"random_seed": 1}, {"boxes": 10000, "titles": 1000}]),
    "push_1h": ({**ONE_HOUR, "cache": "popularity", "push": PUSH},
                [{"random_seed": 1}, {"boxes": 10000, "titles": 1000}]),
}


def report(boxes, peak_bps, unicast_bps=None, night=0, stalls=1, clients=178):
    unicast_bps = unicast_bps or boxes * 714_000.0
    return {"server_peak_bps": peak_bps, "unicast_peak_bps": unicast_bps,
            "peak_reduction_pct": 100 * (1 - peak_bps / unicast_bps),
            "stalls": {"count": stalls, "seconds": 0.1},
            "clients": clients, "night_server_bytes": night, "per_box": [{}] * boxes, "scenario_config": {}}


def make_runs(root: Path):
    """The sizing files and a run of each: a row's peak is its boxes x 9 kbps x (1 + titles / 100)."""
    scen, runs = root / "scenarios", root / "runs"
    scen.mkdir()
    (scen / "_base.json").write_text(json.dumps({"scenario": BASE}))
    for name, (exp_base, rows) in EXPERIMENTS.items():
        first = next(iter(rows[0].items()))
        (scen / f"{name}.json").write_text(json.dumps({"base": exp_base, "sweep": {first[0]: [first[1]]},
                                                       "also": rows[1:]}))
        results = []
        for params in rows:
            shape = {**BASE, **exp_base, **params}
            peak = shape["boxes"] * 9000.0 * (1 + shape["titles"] / 100)
            night = 167e9 * shape["boxes"] / 500 if shape.get("push") else 0
            label = ",".join(f"{k}={v}" for k, v in params.items())
            results.append({"label": label, "params": params,
                            "report": report(shape["boxes"], peak, night=night)})
        (runs / name).mkdir(parents=True)
        (runs / name / "results.json").write_text(json.dumps(results))
    evening = runs / "e10k"
    evening.mkdir()
    config = {**BASE, "boxes": 10000, "titles": 1000, "evening": {"seconds": "4h"}, "name": "evening_10k"}
    (evening / "report.json").write_text(json.dumps({**report(10000, 244e6), "scenario_config": config}))
    return scen, runs


def run_tool(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = sizing.main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def table_scenarios(text: str, heading: str) -> list:
    """The first column of the table under `heading`."""
    lines = text.split(f"### {heading}\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return [line.split(" | ")[0][2:] for line in lines[3:]]


class SizingToolTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.scen, self.runs = make_runs(self.root)
        self.img = self.root / "img"

    def tearDown(self):
        self.tmp.cleanup()

    def test_the_bill_per_1000_boxes_is_the_peak_over_the_boxes(self):
        row = sizing.make_row("x", "x", {**sizing.DEFAULTS, **BASE}, report(500, 4.5e6, 357e6), "here")
        self.assertAlmostEqual(row.bill_per_1000, 9.0)
        self.assertAlmostEqual(row.unicast_per_1000, 714.0)
        self.assertIn("| 9.0 Mbps | 4.5 Mbps for 500 | 714 Mbps | 98.7% | 1 / 178 | — |",
                      sizing.table_line(row, BASE))

    def test_a_row_is_the_base_then_the_experiments_base_then_its_params(self):
        exp_base = {"cache": "popularity", "titles": 7, "evening": {"seconds": "1h"}}
        shape = sizing.rebuild_shape(BASE, exp_base, {"titles": 100, "boxes": 1000})
        self.assertEqual((shape["boxes"], shape["titles"], shape["cache"]), (1000, 100, "popularity"))
        self.assertEqual(shape["evening"], {"seconds": "1h"})  # replaced whole, as toast-sim does
        self.assertEqual((shape["zipf_alpha"], shape["uplink"]), (0.9, "1Mbps"))
        experiments, _ = sizing.load_experiments(self.runs, self.scen, False)
        last = experiments["push_1h"][1].shape
        self.assertEqual((last["boxes"], last["cache"], last["push"]), (10000, "popularity", PUSH))
        self.assertEqual(sizing.describe(last, BASE),
                         f"10,000 boxes, 1,000 titles, popularity cache, {PUSHED}, 1 h evening")

    def test_the_tables_rows_in_order(self):
        rc, out, err = run_tool(self.runs, "--scenarios", self.scen, "--evening", f"10k={self.runs / 'e10k'}")
        self.assertEqual(rc, 0, err)
        self.assertIn("The base (`_base.json`): 500 boxes, 50 titles, titles of 1 h, a bitrate of 4 Mbps, "
                      "Zipf 0.9, uplink 1 Mbps (0.25 of the bitrate), cache of 4 titles, 3 warm, LRU cache, "
                      "no push, 2 h evening, peaking at 20% watching, seed 1.", out)
        one_at_a_time = "One dimension at a time (boxes, titles, zipf, uplink, storage)"
        self.assertEqual(table_scenarios(out, one_at_a_time), [
            "100 boxes, 10 titles", "the base", "1,000 boxes, 100 titles", "15 titles", "500 titles",
            "Zipf 0.6", "Zipf 1.2", "uplink 2 Mbps (0.5 of the bitrate)", "uplink 4 Mbps (the bitrate)",
            "cache of 1 title", "cache of 10 titles"])
        popularity = "The popularity cache without and with push (popularity, push)"
        self.assertEqual(table_scenarios(out, popularity), ["popularity cache", f"popularity cache, {PUSHED}",
                                                            "500 titles, popularity cache",
                                                            f"500 titles, popularity cache, {PUSHED}"])
        push = f"popularity cache, {PUSHED}, 1 h evening"
        self.assertEqual(table_scenarios(out, "Without and with push as the boxes grow (boxes_1h, push_1h)"),
                         ["1 h evening", push, "10,000 boxes, 1,000 titles, 1 h evening",
                          f"10,000 boxes, 1,000 titles, {push}"])
        self.assertEqual(table_scenarios(out, "Whole evenings"), ["10,000 boxes, 1,000 titles, 4 h evening"])
        self.assertNotIn("Other sizing files", out)
        # The fixture's rule: 500 boxes x 9 kbps x (1 + 500 / 100) = 27 Mbps, 54 per 1000.
        self.assertIn("| 500 titles | 54.0 Mbps | 27.0 Mbps for 500 | 714 Mbps | 92.4% | 1 / 178 | — |",
                      out)
        self.assertIn("| 167 GB |", out)
        self.assertIn("| 10,000 boxes, 1,000 titles, 4 h evening | 24.4 Mbps | 244.0 Mbps for 10,000 |", out)

    def test_a_row_that_did_not_run_is_named(self):
        file = self.runs / "storage" / "results.json"
        file.write_text(json.dumps(json.loads(file.read_text())[:1]))
        rc, out, err = run_tool(self.runs, "--scenarios", self.scen)
        self.assertEqual((rc, out), (1, ""))
        self.assertEqual(err, f"sizing.py: {file}: no row for disk_quota=10 titles of storage.json (the run "
                              f"failed or did not run it: {self.runs / 'storage.log'})\n")
        rc, out, err = run_tool(self.runs, "--scenarios", self.scen, "--skip-missing")
        self.assertEqual(rc, 0, err)
        self.assertIn("skipped storage [disk_quota=10 titles]", err)
        self.assertIn("| cache of 1 title |", out)
        self.assertNotIn("| cache of 10 titles |", out)

    def test_an_image_directory_that_cannot_be_made_is_named(self):
        self.img.write_text("a file")
        rc, out, err = run_tool(self.runs, "--scenarios", self.scen, "--img-dir", self.img)
        self.assertEqual((rc, out), (1, ""))
        self.assertIn(f"sizing.py: cannot write the images: [Errno 17] File exists: '{self.img}'", err)

    def test_a_sizing_file_no_table_names_gets_its_own(self):
        (self.scen / "seeds.json").write_text(json.dumps({"sweep": {"random_seed": [2]},
                                                          "also": [{"piece_size": "256KiB"}]}))
        (self.runs / "seeds").mkdir()
        (self.runs / "seeds" / "results.json").write_text(json.dumps(
            [{"label": "random_seed=2", "params": {"random_seed": 2}, "report": report(500, 5e6)},
             {"label": "piece_size=256KiB", "params": {"piece_size": "256KiB"}, "report": report(500, 5e6)}]))
        rc, out, err = run_tool(self.runs, "--scenarios", self.scen)
        self.assertEqual(rc, 0, err)
        # A field the words do not cover is still named: no row says "the base" unless it is.
        self.assertEqual(table_scenarios(out, "Other sizing files (seeds)"),
                         ["seed 2", 'piece_size="256KiB"'])

    def test_both_images_are_written_and_nothing_else(self):
        rc, _, err = run_tool(self.runs, "--scenarios", self.scen, "--img-dir", self.img,
                              "--evening", f"10k={self.runs / 'e10k'}")
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(p.name for p in self.img.iterdir()),
                         ["sizing-boxes.png", "sizing-dimensions.png"])
        for p in self.img.iterdir():
            data = p.read_bytes()
            self.assertGreater(len(data), 10_000)
            self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")

    def test_a_missing_run_directory_is_named_and_nothing_is_written(self):
        (self.runs / "zipf" / "results.json").unlink()
        (self.runs / "zipf").rmdir()
        proc = subprocess.run([sys.executable, str(TOOLS / "sizing.py"), str(self.runs), "--scenarios",
                               str(self.scen), "--img-dir", str(self.img)], capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stdout, "")
        self.assertIn(f"sizing.py: {self.runs / 'zipf'}: no such directory (toast-sim "
                      f"{self.scen / 'zipf.json'} --out {self.runs / 'zipf'} --tick 1000)", proc.stderr)
        self.assertFalse(self.img.exists())
        rc, out, err = run_tool(self.runs, "--scenarios", self.scen, "--skip-missing")
        self.assertEqual(rc, 0, err)
        self.assertIn(f"skipped zipf: no {self.runs / 'zipf' / 'results.json'}", err)
        self.assertNotIn("Zipf 0.6", out)

    def test_a_report_without_server_peak_bps_is_named_and_old_images_stay(self):
        self.assertEqual(run_tool(self.runs, "--scenarios", self.scen, "--img-dir", self.img)[0], 0)
        before = {p.name: p.read_bytes() for p in self.img.iterdir()}
        file = self.runs / "uplink" / "results.json"
        rows = json.loads(file.read_text())
        del rows[1]["report"]["server_peak_bps"]
        file.write_text(json.dumps(rows))
        rc, out, err = run_tool(self.runs, "--scenarios", self.scen, "--img-dir", self.img)
        self.assertEqual((rc, out), (1, ""))
        self.assertEqual(err, f"sizing.py: {file} row 1 (uplink=4Mbps): report field 'server_peak_bps' is "
                              "missing\n")
        self.assertEqual({p.name: p.read_bytes() for p in self.img.iterdir()}, before)
        rows[1]["report"]["server_peak_bps"] = "fast"
        file.write_text(json.dumps(rows))
        err = run_tool(self.runs, "--scenarios", self.scen)[2]
        self.assertIn("'server_peak_bps' is not a number ('fast')", err)

    def test_a_run_of_other_boxes_than_the_files_say_is_refused(self):
        file = self.runs / "titles" / "results.json"
        rows = json.loads(file.read_text())
        rows[0]["report"]["per_box"] = [{}] * 300
        file.write_text(json.dumps(rows))
        err = run_tool(self.runs, "--scenarios", self.scen)[2]
        self.assertIn("300 boxes in per_box, but the scenario rebuilt from the sizing files has 500", err)
        rows[0]["params"]["uplink"] = "fast"
        file.write_text(json.dumps(rows))
        err = run_tool(self.runs, "--scenarios", self.scen)[2]
        self.assertIn(f"{file} row 0 (titles=500): cannot read the rebuilt scenario "
                      "(cannot read a bitrate 'fast')", err)

    def test_bad_evenings_are_named(self):
        self.assertIn("--evening '10k': expected NAME=DIR", run_tool(self.runs, "--scenarios", self.scen,
                                                                      "--evening", "10k")[2])
        err = run_tool(self.runs, "--scenarios", self.scen, "--evening", f"x={self.root / 'nope'}")[2]
        self.assertIn(f"{self.root / 'nope' / 'report.json'}: no such file (the evening x)", err)


class RealSizingFilesTest(unittest.TestCase):
    def test_every_row_of_the_sizing_files_is_stated_in_words(self):
        """The rows toast-sim expands (every sweep combination, then the `also` rows) from the repository's
        files: a value the tool cannot read would fail here, not in front of the lead's runs."""
        scenarios = TOOLS.parent / "scenarios" / "sizing"
        base = json.loads((scenarios / "_base.json").read_text())["scenario"]
        stated = {}
        for file in sorted(scenarios.glob("*.json")):
            if file.name == "_base.json":
                continue
            exp = json.loads(file.read_text())
            for params in sizing.expected_params(exp):
                shape = sizing.rebuild_shape(base, exp.get("base", {}), params)
                stated[f"{file.stem} {params}"] = sizing.describe(shape, base)
        self.assertEqual(stated["base {'random_seed': 1}"], "the base")
        self.assertEqual(stated["titles {'titles': 500}"], "500 titles")
        self.assertTrue(all(stated.values()))


class SizingRunsTest(unittest.TestCase):
    def test_every_sizing_file_runs_into_its_directory_the_long_ones_last(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = Path(tmp) / "fake-sim"
            fake.write_text('#!/bin/sh\necho "$@" >> "$(dirname "$3")/calls"\n')
            fake.chmod(0o755)
            out = Path(tmp) / "out"
            runner = [str(TOOLS / "sizing-runs.sh"), str(out), str(fake)]
            subprocess.run(runner, check=True, capture_output=True, timeout=60)
            sizing_dir = TOOLS.parent / "scenarios" / "sizing"
            names = sorted(p.stem for p in sizing_dir.glob("*.json") if p.name != "_base.json")
            calls = (out / "calls").read_text().splitlines()
            self.assertEqual(sorted(Path(c.split()[0]).stem for c in calls), names)
            self.assertEqual([Path(c.split()[0]).stem for c in calls][-2:], ["boxes_1h", "push_1h"])
            for c in calls:
                name = Path(c.split()[0]).stem
                self.assertEqual(c.split()[1:], ["--out", str(out / name), "--tick", "1000"])
            # Done experiments are skipped; a failed one is named and the exit status is 1.
            (out / "zipf.done").unlink()
            fake.write_text("#!/bin/sh\nexit 3\n")
            proc = subprocess.run(runner, capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 1)
            self.assertIn("failed: zipf", proc.stderr)
            self.assertEqual(proc.stdout.count("skipped"), len(names) - 1)


if __name__ == "__main__":
    unittest.main()
