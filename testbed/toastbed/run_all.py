"""testbed/run-all [--out DIR] [--only NAME]... [--resume] [--dry-run]: every experiment, one report.

Each file in testbed/experiments/ (except _base.json) is one figure of the thesis: a `base` (fields that
differ from _base.json), a `sweep` (field -> values; every combination runs), optional `also` rows (extra
runs shown beside the sweep, e.g. reference pickers) and the thesis's finding. The same scenario appearing in
several figures runs once. Writes DIR/report.md (headline table beside the thesis, per-figure tables and
plots) and DIR/results.json; each run's own report is under DIR/runs/.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from . import catalogue_experiments as cat, host, netshape, run, scenario as scen, thesis_report

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
BASE_FILE = "_base.json"
SETUP_SECONDS = 8  # ingest, server, tracker, seed start and the final stop, per run (measured)


class PlanError(ValueError):
    pass


def canonical(s: scen.Scenario) -> dict:
    """The scenario's fields that decide its outcome: equal dicts are the same run."""
    d = s.to_json()
    d.pop("name", None)
    d.pop("baselines", None)
    if d.get("buffer_limit") == "100%":  # a buffer as large as the title bounds nothing
        d["buffer_limit"] = ""
    return d


def run_key(s: scen.Scenario, kind: str = "toast") -> str:
    text = json.dumps({"kind": kind, **canonical(s)}, sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def estimate_seconds(s: scen.Scenario) -> float:
    if cat.is_catalogue(s):
        return cat.estimate_seconds(s)
    return max(scen.arrival_times(s)) + s.title_seconds + SETUP_SECONDS


def load(names: list[str], directory: Path = EXPERIMENTS) -> tuple[dict, list[tuple[str, dict]]]:
    try:
        base = json.loads((directory / BASE_FILE).read_text())["scenario"]
    except (OSError, json.JSONDecodeError, KeyError) as e:
        raise PlanError(f"cannot read {directory / BASE_FILE}: {e}") from None
    files = sorted(f for f in directory.glob("*.json") if f.name != BASE_FILE)
    if names:
        unknown = sorted(set(names) - {f.stem for f in files})
        if unknown:
            raise PlanError("no experiment named " + ", ".join(unknown))
        files = [f for f in files if f.stem in names]
    exps = []
    for f in files:
        try:
            exps.append((f.stem, json.loads(f.read_text())))
        except json.JSONDecodeError as e:
            raise PlanError(f"{f}: not valid JSON: {e}") from None
    return base, exps


def expand(base: dict, name: str, exp: dict, netem: bool) -> list[dict]:
    """Rows of one experiment: params, the scenario, and a reason when it cannot run here."""
    for key in ("figure", "title", "sweep", "thesis"):
        if key not in exp:
            raise PlanError(f"experiment {name}: missing '{key}'")
    keys = list(exp["sweep"])
    combos = [dict(zip(keys, c)) for c in itertools.product(*(exp["sweep"][k] for k in keys))]
    combos += [dict(a) for a in exp.get("also", [])]
    rows = []
    for params in combos:
        data = {**base, **exp.get("base", {}), **params}
        label = ",".join(f"{k}={v}" for k, v in params.items())
        data["name"] = f"{name}[{label}]"
        try:
            s = scen.from_dict(data)
        except scen.ScenarioError as e:
            raise PlanError(f"experiment {name} [{label}]: {e}") from None
        skipped = None
        if getattr(s, "delay_ms", 0) > 0 and not netem:
            skipped = "not run: this kernel has no netem qdisc, so no delay can be added"
        rows.append({"params": params, "label": label, "scenario": s, "key": run_key(s), "skipped": skipped,
                     "shape": cat.shape(s) if cat.is_catalogue(s) else scen.shape(s)})
    return rows


def summary(r: dict) -> dict:
    if r.get("kind") == "catalogue":
        return cat.summary(r)
    return {k: v for k, v in r.items() if k not in ("per_client", "scenario_config")}


def write_scenarios(planned: dict[str, list[dict]], directory: Path, out: Path) -> None:
    """Each run's scenario as DIR/KEY.json, and the command that runs it alone under the machine's heavy-run
    lock with its report in OUT/runs/KEY, where --resume and --report-only look."""
    directory.mkdir(parents=True, exist_ok=True)
    for stem, rows in planned.items():
        for row in rows:
            if row["skipped"]:
                continue
            path = directory / f"{row['key']}.json"
            path.write_text(json.dumps(row["scenario"].to_json(), indent=1) + "\n")
            print(f"{stem}[{row['label']}]: testbed/run {path} --out {out / 'runs' / row['key']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="testbed/run-all", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="out/run-all")
    ap.add_argument("--bin-dir", default=str(run.REPO / "build"))
    ap.add_argument("--only", action="append", default=[], help="run only this experiment (file stem)")
    ap.add_argument("--experiments", default=str(EXPERIMENTS),
                    help="directory of experiment files and their _base.json (default: testbed/experiments; "
                         "testbed/experiments/large has the main figures at 48 viewers)")
    ap.add_argument("--resume", action="store_true", help="reuse runs already in DIR/runs (same scenario)")
    ap.add_argument("--no-baselines", action="store_true", help="skip stock/unicast on the base scenario")
    ap.add_argument("--parallel", type=int, default=3,
                    help="runs at once (default 3: a run of 12 clients at 2 Mbps uses about 5%% of 2 cores)")
    ap.add_argument("--dry-run", action="store_true", help="print the runs and the expected time, run nothing")
    ap.add_argument("--write-scenarios", metavar="DIR",
                    help="write each run's scenario to DIR/KEY.json and print the testbed/run command that puts "
                         "its report where --resume or --report-only finds it; run nothing")
    ap.add_argument("--report-only", action="store_true",
                    help="build the report from the runs already in OUT/runs (as --resume); run none of the rest")
    args = ap.parse_args(argv)
    run.stop_on_signals()
    netem = netshape.has_netem()
    try:
        base, exps = load(args.only, Path(args.experiments))
        planned = {stem: expand(base, stem, exp, netem) for stem, exp in exps}
        base_scenario = scen.from_dict({**base, "name": "base"})
    except PlanError as e:
        print(f"testbed/run-all: {e}", file=sys.stderr)
        return 2
    unique: dict[str, scen.Scenario] = {}
    for rows in planned.values():
        for row in rows:
            if not row["skipped"]:
                unique.setdefault(row["key"], row["scenario"])
    catalogue = cat.is_catalogue(base_scenario)
    # A catalogue run has its unicast figures in it; it starts a process a box, so runs go one at a time.
    kinds = [] if args.no_baselines or args.only or catalogue else ["stock", "unicast"]
    if catalogue:
        args.parallel = 1
    seconds = sum(estimate_seconds(s) for s in unique.values()) + len(kinds) * estimate_seconds(base_scenario)
    total_runs = len(unique) + len(kinds)
    print(f"{total_runs} runs ({sum(len(r) for r in planned.values())} table rows), about "
          f"{seconds / 60 / max(1, args.parallel):.0f} minutes with {max(1, args.parallel)} at once")
    if args.write_scenarios:
        write_scenarios(planned, Path(args.write_scenarios), Path(args.out))
        return 0
    if args.dry_run:
        for stem, rows in planned.items():
            for row in rows:
                sh = row["shape"]
                if catalogue:
                    print(f"  {stem}[{row['label']}] -> {row['skipped'] or row['key']}\n      {cat.dry_run_line(row)}")
                    continue
                print(f"  {stem}[{row['label']}] -> {row['skipped'] or row['key']}\n"
                      f"      {sh['gap_piece_times']:g} piece-times apart, {sh['watching_at_once']} watching / "
                      f"{sh['present_at_once']} present at once, span {sh['span_over_title']:g}x the title, "
                      f"upload/bitrate {sh['upload_over_bitrate']:g}: {sh['label']}")
        return 0
    try:
        bins = host.binaries(Path(args.bin_dir))
    except host.RunError as e:
        print(f"testbed/run-all: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    jobs = [(key, s, "toast") for key, s in unique.items()]
    jobs += [(run_key(base_scenario, kind), base_scenario, kind) for kind in kinds]
    jobs.sort(key=lambda job: -estimate_seconds(job[1]))  # longest first: the parallel runs end together
    started = time.monotonic()
    stop = threading.Event()
    shaping_lock = threading.Lock()  # runs in network namespaces share one bridge: one at a time
    print_lock = threading.Lock()
    finished = [0]
    reused = [0]

    def say(text: str) -> None:
        with print_lock:
            print(f"[{(time.monotonic() - started) / 60:4.1f} min] {text}", flush=True)

    def execute(key: str, s: scen.Scenario, kind: str) -> dict | None:
        rdir = out / "runs" / key
        cached = rdir / "report.json"
        if (args.resume or args.report_only) and cached.exists():
            r = json.loads(cached.read_text())
            wanted = "catalogue" if cat.is_catalogue(s) else kind  # a catalogue report says it is one
            if r.get("scenario_config") == s.to_json() and r.get("kind") == wanted:
                say(f"reused {kind} {s.name}")
                reused[0] += 1
                return r
        if args.report_only:
            say(f"not run {kind} {s.name}")
            return None
        say(f"start {kind} {s.name}")
        try:
            if cat.is_catalogue(s):
                r = cat.run(s, bins, rdir, stop)
            elif s.shaping:
                with shaping_lock:
                    r = run.run_once(kind, s, bins, rdir, progress=lambda m: None, stop=stop)
            else:
                r = run.run_once(kind, s, bins, rdir, progress=lambda m: None, stop=stop)
        except (host.RunError, netshape.ShapingError) as e:
            say(f"FAILED {kind} {s.name}: {e}")
            return None
        r["scenario_config"] = s.to_json()
        cached.write_text(json.dumps(r, indent=2))
        finished[0] += 1
        if cat.is_catalogue(s):
            say(f"done {finished[0]}/{len(jobs)}: {s.name}: {cat.done_line(r)}")
        else:
            say(f"done {finished[0]}/{len(jobs)}: {kind} {s.name}: reduction {r['reduction_pct']:.1f}%, "
                f"stalls {r['stalls']['count']}, {r['completed_clients']}/{r['clients']} completed")
        return r

    done: dict[tuple[str, str], dict | None] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, args.parallel))
    try:
        futures = {pool.submit(execute, key, s, kind): (key, kind) for key, s, kind in jobs}
        pending = set(futures)
        while pending:  # a timeout keeps the main thread able to take Ctrl-C
            finished_now, pending = wait(pending, timeout=1.0)
            for f in finished_now:
                done[futures[f]] = f.result()
    except KeyboardInterrupt:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        print("testbed/run-all: interrupted; every process was stopped (rerun with --resume to continue)",
              file=sys.stderr)
        return 130
    pool.shutdown(wait=True)
    failed = 0 if args.report_only else sum(1 for r in done.values() if r is None)
    results: dict[str, list] = {}
    for stem, rows in planned.items():
        for row in rows:
            if row["skipped"]:
                continue
            r = done.get((row["key"], "toast"))
            row["report"] = summary(r) if r else None
            if r is None:
                row["skipped"] = "not run yet" if args.report_only else "run failed (see the log)"
        results[stem] = [{k: v for k, v in row.items() if k != "scenario"} for row in rows]
    baselines: dict[str, dict] = {}
    if kinds and done.get((run_key(base_scenario), "toast")):
        baselines["Toast"] = summary(done[(run_key(base_scenario), "toast")])
        for kind in kinds:
            if done.get((run_key(base_scenario, kind), kind)):
                baselines[kind] = summary(done[(run_key(base_scenario, kind), kind)])
    minutes = (time.monotonic() - started) / 60
    if reused[0] == len(jobs):  # a report rebuilt from earlier runs: their run-all's time still stands
        try:
            minutes = json.loads((out / "results.json").read_text()).get("minutes", minutes)
        except (OSError, json.JSONDecodeError, AttributeError):
            pass
    if catalogue:
        md = cat.render(base, exps, results, minutes, len(jobs))
    else:
        md = thesis_report.render(base, exps, results, baselines, minutes, netem, len(jobs), out)
    (out / "report.md").write_text(md)
    (out / "results.json").write_text(json.dumps({"minutes": round(minutes, 1), "baselines": baselines,
                                                  "issue_targets": [] if catalogue else thesis_report.issue_targets(exps, results),
                                                  "headline": [] if catalogue else thesis_report.headline(results),
                                                  "experiments": results},
                                                 indent=2))
    print(md.split("## Headline")[0])
    print(f"wrote {out / 'report.md'} ({minutes:.0f} minutes, {failed} failed runs)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
