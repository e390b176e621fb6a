"""testbed/run-all [--out DIR] [--only NAME]...: every experiment in testbed/experiments/, one report.

Each experiment file has a `base` scenario, a `sweep` (field -> list of values; every combination runs) and the
thesis's finding to put beside ours. Writes DIR/report.md (tables and plots) and DIR/results.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

from . import report as rep, run, scenario as scen

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def expand(exp: dict, name: str) -> list[tuple[dict, scen.Scenario]]:
    keys = list(exp["sweep"])
    out = []
    for combo in itertools.product(*(exp["sweep"][k] for k in keys)):
        params = dict(zip(keys, combo))
        data = dict(exp["base"])
        data.update(params)
        label = "-".join(f"{k}={v}" for k, v in params.items())
        data["name"] = f"{name}[{label}]"
        out.append((params, scen.from_dict(data)))
    return out


def plot(name: str, exp: dict, rows: list[dict], path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    metric = exp.get("metric", "reduction_pct")
    keys = list(exp["sweep"])
    group_key, series_key = (keys[0], keys[1]) if len(keys) > 1 else (keys[0], None)
    groups = list(dict.fromkeys(str(r["params"][group_key]) for r in rows))
    series = list(dict.fromkeys(str(r["params"][series_key]) for r in rows)) if series_key else [metric]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(8, 4))
    for j, ser in enumerate(series):
        vals = []
        for g in groups:
            match = [r for r in rows if str(r["params"][group_key]) == g and
                     (series_key is None or str(r["params"][series_key]) == ser)]
            v = match[0]["report"][metric] if match else 0
            vals.append(v / 1e9 if metric.endswith("bytes") else v)
        ax.bar([i + j * width for i in range(len(groups))], vals, width, label=ser)
    ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(groups))], groups)
    ax.set_xlabel(group_key)
    ax.set_ylabel("GB" if metric.endswith("bytes") else "server reduction vs unicast (%)")
    ax.set_title(f"Fig. {exp['figure']}: {exp['title']}", fontsize=9)
    if series_key:
        ax.legend(title=series_key, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="testbed/run-all", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="out/run-all")
    ap.add_argument("--bin-dir", default=str(run.REPO / "build"))
    ap.add_argument("--only", action="append", default=[], help="run only this experiment (file stem)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        bins = run.binaries(Path(args.bin_dir))
    except run.RunError as e:
        print(f"testbed/run-all: {e}", file=sys.stderr)
        return 2
    files = sorted(EXPERIMENTS.glob("*.json"))
    if args.only:
        files = [f for f in files if f.stem in args.only]
        if not files:
            print("testbed/run-all: no experiment named " + ", ".join(args.only), file=sys.stderr)
            return 2
    netem = run.netshape.has_netem()
    started = time.monotonic()
    results, md = {}, ["# Toast testbed: the thesis's experiments, scaled to this machine", ""]
    md += ["Scaling (see testbed/README.md): 2 Mbps titles of 120 s instead of 57 min, 16 clients arriving every "
           "6 s instead of 300 every 36 s; upload / bitrate and in-order window / title length kept as in the "
           "thesis.", ""]
    if not netem:
        md += ["> This kernel has no netem qdisc: delay scenarios ran without added delay.", ""]
    try:
        for f in files:
            exp = json.loads(f.read_text())
            rows = []
            for params, s in expand(exp, f.stem):
                if s.delay_ms and not netem:
                    s.delay_ms = 0
                print(f"== {s.name}", flush=True)
                r = run.run_once("toast", s, bins, out / f.stem / s.name.split("[", 1)[1].rstrip("]"))
                rows.append({"params": params, "report": {k: v for k, v in r.items() if k != "per_client"}})
            results[f.stem] = rows
            metric = exp.get("metric", "reduction_pct")
            md += [f"## Fig. {exp['figure']}: {exp['title']}", "", f"Thesis: {exp['thesis']}", "",
                   "| " + " | ".join(exp["sweep"]) + " | reduction | ceiling | stalls | completed | total traffic |",
                   "|" + "---|" * (len(exp["sweep"]) + 5)]
            for row in rows:
                r = row["report"]
                md.append("| " + " | ".join(str(row["params"][k]) for k in exp["sweep"]) +
                          f" | {r['reduction_pct']:.1f}% | {r['ceiling_pct']:.1f}% | {r['stalls']['count']} | "
                          f"{r['completed_clients']}/{r['clients']} | {r['total_traffic_bytes'] / 1e6:.0f} MB |")
            if plot(f.stem, exp, rows, out / f"{f.stem}.png"):
                md += ["", f"![{f.stem}]({f.stem}.png)"]
            md.append("")
            (out / "results.json").write_text(json.dumps(results, indent=2))
    except KeyboardInterrupt:
        print("testbed/run-all: interrupted; every process was stopped", file=sys.stderr)
        return 130
    minutes = (time.monotonic() - started) / 60
    md.append(f"run-all took {minutes:.0f} minutes.")
    (out / "report.md").write_text("\n".join(md) + "\n")
    print(f"wrote {out / 'report.md'} ({minutes:.0f} minutes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
