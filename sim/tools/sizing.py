#!/usr/bin/python3
"""sim/tools/sizing.py RUNS_DIR [--img-dir DIR] [--scenarios DIR] [--evening NAME=DIR ...] [--skip-missing]

The operator's sizing page (docs/sizing.md) from the simulator's runs: its tables, printed as markdown, and
its two plots, so that no figure on the page is copied by hand.

RUNS_DIR holds one `toast-sim --out` directory per sizing experiment, named after its file in
sim/scenarios/sizing (RUNS_DIR/base, RUNS_DIR/boxes, ...: sim/tools/sizing-runs.sh makes them); each
`--evening NAME=DIR` names a whole-evening run (DIR/report.json, e.g. sim/scenarios/evening_10k.json).

An experiment's report keeps only the row's overrides (`scenario_config`), so each row's scenario is rebuilt
here as toast-sim expands it (sim/core/experiment.cpp): _base.json's "scenario", then the experiment's "base",
then the row's params, each a shallow update. Rows are stated in words from that shape, by how they differ
from the base, so a table row says what was simulated rather than what its label hoped.

The bill is the server's 95th percentile of 10 s bins (`server_peak_bps`); per 1000 boxes it is
server_peak_bps / boxes * 1000. Everything is read and checked before anything is written; the images are
written under a temporary name and renamed, so a failure leaves the previous ones in place.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "sim" / "scenarios" / "sizing"
# The scenario format is the testbed's (toast-sim reads the same files): its values are read by the testbed's
# own parsers, so a unit the testbed accepts is one this page can state.
sys.path.insert(0, str(REPO / "testbed"))
from toastbed.catalogue_scenario import DEFAULT_PROFILE as PROFILE  # noqa: E402
from toastbed.scenario import parse_bitrate, parse_duration, parse_size  # noqa: E402

# The catalogue scenario's defaults (sim/core/scenario.hpp, CatalogueScenario) for the fields stated here; an
# evening's scenario_config is its whole file, which may leave some out.
DEFAULTS = {"boxes": 150, "titles": 30, "zipf_alpha": 0.9, "title_seconds": 120, "bitrate": "4Mbps",
            "uplink": "1Mbps", "evening": {"seconds": 600}, "peak_viewers_pct": 20, "disk_quota": "4 titles",
            "warm_titles": 3, "cache": "lru", "push": None, "random_seed": 1, "time_limit": 0}

# The tables: (heading, experiments, interleave). The first keeps each experiment's block (one dimension after
# another); the others interleave their experiments' rows by N and titles, so that the rows without and with
# push stand side by side. A sizing file named in none of them gets a table of its own.
TABLES = [("One dimension at a time (boxes, titles, zipf, uplink, storage)",
           ["boxes", "base", "titles", "zipf", "uplink", "storage"], False),
          ("The popularity cache without and with push (popularity, push)", ["popularity", "push"], True),
          ("Without and with push as the boxes grow (boxes_1h, push_1h)", ["boxes_1h", "push_1h"], True)]
# sizing-boxes.png: the series against N.
FAMILIES = ["boxes", "boxes_1h", "push_1h"]


class SizingError(Exception):
    """A missing run or a malformed report: the message names the file and the field."""


def _read(parse, value, what: str) -> float:
    try:
        return float(parse(value))
    except ValueError:
        raise SizingError(f"cannot read {what} {value!r}") from None


def bitrate(v) -> float:
    return _read(parse_bitrate, v, "a bitrate")


def size(v) -> float:
    return _read(parse_size, v, "a size")


def duration(v) -> float:
    return _read(parse_duration, v, "a duration")


def quota_titles(shape: dict) -> float:
    """A box's cache in titles, whether the quota is given as 'N titles' or as bytes."""
    q = shape["disk_quota"]
    if isinstance(q, str) and "title" in q:
        return float(q.split("title")[0])
    return size(q) / (duration(shape["title_seconds"]) * bitrate(shape["bitrate"]) / 8)


def rebuild_shape(base: dict, experiment_base: dict, params: dict) -> dict:
    """The row's whole scenario, as toast-sim's expand_experiment builds it (shallow updates, in order)."""
    shape = {**DEFAULTS, **base}
    shape.update(experiment_base)
    shape.update(params)
    return shape


def _g(x: float) -> str:
    return f"{x:,.0f}" if x == int(x) else f"{x:g}"


def _dur(seconds: float) -> str:
    """Whole hours in hours, anything else in minutes: '70 min', not '1.16667 h'."""
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{_g(seconds / 3600)} h"
    return f"{_g(seconds / 60)} min"


def _rate(bps: float) -> str:
    return f"{_g(bps / 1e6)} Mbps"


def _bytes(b: float) -> str:
    return f"{b / 1e12:.1f} TB" if b >= 1e12 else f"{b / 1e9:.3g} GB"


def _phrases(s: dict) -> dict:
    """Each field of a shape as the words a table row uses for it."""
    s = {**DEFAULTS, **s}
    q = quota_titles(s)
    ratio = bitrate(s["uplink"]) / bitrate(s["bitrate"])
    push = s["push"]
    if push:
        window = push.get("window", [0, 0])
        push_words = (f"push: a {_bytes(size(push.get('quota', 0)))} quota a box fetched at "
                      f"{_rate(bitrate(push.get('rate', 0)))} in the {_dur(window[1] - window[0])} before")
    return {
        "boxes": f"{_g(s['boxes'])} boxes",
        "titles": f"{_g(s['titles'])} titles",
        "title_seconds": f"titles of {_dur(duration(s['title_seconds']))}",
        "bitrate": f"a bitrate of {_rate(bitrate(s['bitrate']))}",
        "zipf_alpha": f"Zipf {_g(s['zipf_alpha'])}",
        "uplink": f"uplink {_rate(bitrate(s['uplink']))} ("
                  + ("the bitrate)" if ratio == 1 else f"{_g(round(ratio, 3))} of the bitrate)"),
        "disk_quota": f"cache of {_g(q)} title{'s' if q != 1 else ''}",
        "warm_titles": f"{s['warm_titles']} warm",
        "cache": f"{s['cache']} cache" if s["cache"] != "lru" else "LRU cache",
        "push": push_words if push else "no push",
        "evening": f"{_dur(duration(s['evening'].get('seconds', 600)))} evening"
                   + (" (its own profile)" if s["evening"].get("profile", PROFILE) != PROFILE else ""),
        "peak_viewers_pct": f"peaking at {_g(s['peak_viewers_pct'])}% watching",
        "random_seed": f"seed {s['random_seed']}",
        "time_limit": f"cut at {_dur(duration(s['time_limit']))}" if duration(s["time_limit"]) else "",
    }


def describe(shape: dict, ref: dict | None = None) -> str:
    """The shape in words; with `ref`, only how it differs from it ('the base' when in nothing)."""
    mine = _phrases(shape)
    if ref is None:
        return ", ".join(p for p in mine.values() if p)
    theirs = _phrases(ref)
    diff = [p for k, p in mine.items() if p and p != theirs[k]]
    # A field with no words of its own (piece_size, abandon, ...) still shows when it differs.
    diff += [f"{k}={json.dumps(shape.get(k))}" for k in sorted(set(shape) | set(ref))
             if k not in mine and k not in ("name", "description") and shape.get(k) != ref.get(k)]
    return ", ".join(diff) if diff else "the base"


@dataclass
class Row:
    """One simulated scenario and the figures the page quotes."""
    name: str          # experiment (or evening) name
    label: str         # the run's label
    shape: dict
    server_peak_bps: float
    unicast_peak_bps: float
    peak_reduction_pct: float
    stalls: int
    sessions: int
    night_bytes: float

    @property
    def boxes(self) -> int:
        return self.shape["boxes"]

    @property
    def bill_per_1000(self) -> float:
        """Mbps of the operator's bill per 1000 boxes."""
        return self.server_peak_bps / self.boxes * 1000 / 1e6

    @property
    def unicast_per_1000(self) -> float:
        return self.unicast_peak_bps / self.boxes * 1000 / 1e6


def read_json(path: Path, what: str):
    if not path.is_file():
        raise SizingError(f"{path}: no such file ({what})")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SizingError(f"{path}: not valid JSON ({e})") from None


def _field(report: dict, key: str, where: str, sub: str | None = None) -> float:
    v = report.get(key) if isinstance(report, dict) else None
    if sub is not None:
        v = v.get(sub) if isinstance(v, dict) else None
        key = f"{key}.{sub}"
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        state = "missing" if v is None else f"not a number ({v!r})"
        raise SizingError(f"{where}: report field '{key}' is {state}")
    return float(v)


def make_row(name: str, label: str, shape: dict, report: dict, where: str) -> Row:
    """Checks the report's fields, the shape's, and that the run simulated the boxes the shape says."""
    if not isinstance(shape["boxes"], int) or shape["boxes"] < 1:
        raise SizingError(f"{where}: 'boxes' is not a positive integer ({shape['boxes']!r})")
    try:
        _phrases(shape)
    except (SizingError, TypeError, ValueError, KeyError, AttributeError, IndexError) as e:
        raise SizingError(f"{where}: cannot read the rebuilt scenario ({e})") from None
    per_box = report.get("per_box") if isinstance(report, dict) else None
    if isinstance(per_box, list) and not shape.get("probe_box", True) and len(per_box) != shape["boxes"]:
        raise SizingError(f"{where}: {len(per_box)} boxes in per_box, but the scenario rebuilt from the "
                          f"sizing files has {shape['boxes']}: was it run from another version of them?")
    return Row(name, label, shape, _field(report, "server_peak_bps", where),
               _field(report, "unicast_peak_bps", where), _field(report, "peak_reduction_pct", where),
               int(_field(report, "stalls", where, "count")), int(_field(report, "clients", where)),
               _field(report, "night_server_bytes", where) if shape["push"] else 0.0)


def expected_params(exp: dict) -> list:
    """The rows an experiment file makes, as toast-sim expands it: every sweep combination, then `also`."""
    sweep = exp.get("sweep", {})
    rows = [dict(zip(sweep, values)) for values in itertools.product(*sweep.values())]
    return rows + list(exp.get("also", []))


def load_experiments(runs_dir: Path, scenarios: Path, skip_missing: bool) -> tuple[dict, dict]:
    """{name: [Row, ...]} for every sizing file with a run in runs_dir, and _base.json's scenario."""
    base = read_json(scenarios / "_base.json", "the sizing experiments' base")
    base = base.get("scenario") if isinstance(base, dict) else None
    if not isinstance(base, dict):
        raise SizingError(f"{scenarios / '_base.json'}: no \"scenario\" object")
    if not runs_dir.is_dir():
        raise SizingError(f"{runs_dir}: no such directory (the runs: sim/tools/sizing-runs.sh {runs_dir})")
    out = {}
    for file in sorted(p for p in scenarios.glob("*.json") if p.name != "_base.json"):
        name = file.stem
        exp = read_json(file, "a sizing experiment")
        exp_base = exp.get("base", {}) if isinstance(exp, dict) else None
        if not isinstance(exp_base, dict) or not isinstance(exp.get("sweep"), dict):
            raise SizingError(f"{file}: expected an object with a \"sweep\" object")
        run = runs_dir / name
        if skip_missing and name != "base" and not (run / "results.json").is_file():
            print(f"sizing.py: skipped {name}: no {run / 'results.json'}", file=sys.stderr)
            continue
        if not run.is_dir():
            raise SizingError(f"{run}: no such directory (toast-sim {file} --out {run} --tick 1000)")
        results = read_json(run / "results.json", f"the rows of {name}")
        if not isinstance(results, list):
            raise SizingError(f"{run / 'results.json'}: expected a list of rows")
        rows = []
        for i, r in enumerate(results):
            where = f"{run / 'results.json'} row {i}"
            if not isinstance(r, dict) or not isinstance(r.get("params"), dict) or "report" not in r:
                raise SizingError(f"{where}: expected {{label, params, report}}")
            label = r.get("label", str(i))
            shape = rebuild_shape(base, exp_base, r["params"])
            rows.append(make_row(name, label, shape, r["report"], f"{where} ({label})"))
        ran = [r["params"] for r in results]
        missing = [",".join(f"{k}={v}" for k, v in p.items()) for p in expected_params(exp) if p not in ran]
        if missing and not (skip_missing and rows):
            raise SizingError(f"{run / 'results.json'}: no row for {'; '.join(missing)} of {file.name} "
                              f"(the run failed or did not run it: {run.parent / (name + '.log')})")
        for label in missing:
            print(f"sizing.py: skipped {name} [{label}]: not in {run / 'results.json'}", file=sys.stderr)
        out[name] = rows
    if "base" not in out:
        raise SizingError(f"{scenarios}: no base.json, the row every dimension is measured from")
    return out, {**DEFAULTS, **base}


def load_evening(spec: str) -> Row:
    """NAME=DIR: a whole-evening run, whose scenario_config is its scenario file whole."""
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise SizingError(f"--evening {spec!r}: expected NAME=DIR")
    file = Path(path) / "report.json"
    report = read_json(file, f"the evening {name}")
    config = report.get("scenario_config") if isinstance(report, dict) else None
    if not isinstance(config, dict):
        raise SizingError(f"{file}: report field 'scenario_config' is missing")
    return make_row(name, name, {**DEFAULTS, **config}, report, str(file))


def _shape_key(row: Row) -> tuple:
    s = row.shape
    return (s["boxes"], s["titles"], bool(s["push"]), s["zipf_alpha"], bitrate(s["uplink"]), quota_titles(s))


def table_rows(experiments: dict, names: list, interleave: bool) -> list:
    """A table's rows: each experiment's rows by shape (N, titles, ...), a scenario met twice once."""
    rows = []
    for name in names:
        rows += sorted(experiments.get(name, []), key=_shape_key)
    if interleave:
        rows.sort(key=_shape_key)
    seen, out = set(), []
    for r in rows:
        key = json.dumps(r.shape, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


HEADER = ("| scenario | the bill per 1000 boxes | for all the boxes | unicast per 1000 | below unicast "
          "at the peak | stalls / sessions | the night's push |\n|---|---|---|---|---|---|---|")


def table_line(row: Row, ref: dict) -> str:
    night = _bytes(row.night_bytes) if row.shape["push"] else "—"
    return (f"| {describe(row.shape, ref)} | {row.bill_per_1000:.1f} Mbps | "
            f"{row.server_peak_bps / 1e6:.1f} Mbps for {row.boxes:,} | {row.unicast_per_1000:.0f} Mbps | "
            f"{row.peak_reduction_pct:.1f}% | {row.stalls:,} / {row.sessions:,} | {night} |")


def tables(experiments: dict, base: dict, evenings: list) -> str:
    out = [f"The base (`_base.json`): {describe(base)}. Each row below states how it differs from it."]
    named = {n for _, names, _ in TABLES for n in names}
    others = [(f"Other sizing files ({name})", [name], False) for name in experiments if name not in named]
    for heading, names, interleave in TABLES + others:
        rows = table_rows(experiments, names, interleave)
        if rows:
            out += ["", f"### {heading}", "", HEADER] + [table_line(r, base) for r in rows]
    if evenings:
        out += ["", "### Whole evenings", "", HEADER] + [table_line(r, base) for r in evenings]
    return "\n".join(out) + "\n"


def _family_label(row: Row) -> str:
    s = _phrases(row.shape)
    return f"{s['evening']}, {s['cache']}" + (", push" if row.shape["push"] else "")


def _values(ax, rows, x, colour, series=0):
    """Each point's bill written beside it (operators read the figure, not the grid); each series on its
    own side, since the series meet where they share a scenario."""
    offset = [(4, 4), (4, -11), (-24, 4)][series % 3]
    for r in rows:
        ax.annotate(f"{r.bill_per_1000:.1f}", (x(r), r.bill_per_1000), textcoords="offset points",
                    xytext=offset, fontsize=7, color=colour)


def plot_boxes(experiments: dict, evenings: list, plt):
    """The bill per 1000 boxes against N, per family; unicast's dotted in the family's colour."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    plotted = list(evenings)
    for series, (name, colour) in enumerate(zip(FAMILIES, ["tab:blue", "tab:orange", "tab:green"])):
        rows = sorted(experiments.get(name, []), key=_shape_key)
        if not rows:
            continue
        plotted += rows
        xs = [r.boxes for r in rows]
        ax.plot(xs, [r.bill_per_1000 for r in rows], "o-", color=colour, label=_family_label(rows[0]))
        ax.plot(xs, [r.unicast_per_1000 for r in rows], ":", color=colour)
        _values(ax, rows, lambda r: r.boxes, colour, series)
    for r, marker in zip(evenings, "D*^vsp"):
        phrases = _phrases(r.shape)
        evening = (f"{phrases['evening']} {phrases['time_limit']}" if phrases["time_limit"]
                   else f"the whole {phrases['evening']}")
        ax.plot([r.boxes], [r.bill_per_1000], marker, color="black", ms=9, ls="none",
                label=f"{r.name}: {evening}, {phrases['cache']}")
        ax.plot([r.boxes], [r.unicast_per_1000], marker, color="black", ms=7, ls="none", mfc="none")
        _values(ax, [r], lambda r: r.boxes, "black")
    ax.plot([], [], ":", color="grey", label="unicast per 1000 (dotted; hollow: an evening's)")
    tenth = all(r.shape["titles"] * 10 == r.boxes for r in plotted)
    ax.set(xscale="log", yscale="log", xlim=(70, 1.5e5),
           ylabel="Mbps per 1000 boxes (95th percentile, 10 s bins)",
           xlabel="boxes" + (" (the catalogue a tenth of them)" if tenth else ""))
    ax.set_title("The server's bill per 1000 boxes", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# The dimension panels: (experiment, x of a shape, axis label, log x).
DIMENSIONS = [
    ("titles", lambda s: s["titles"], "catalogue (titles)", True),
    ("zipf", lambda s: s["zipf_alpha"], "Zipf alpha", False),
    ("uplink", lambda s: bitrate(s["uplink"]) / bitrate(s["bitrate"]), "box uplink / bitrate", False),
    ("storage", quota_titles, "box cache (titles)", True),
]


def plot_dimensions(experiments: dict, plt):
    """Small multiples: the bill per 1000 against each dimension, the base ringed; the popularity cache
    without and with push beside the catalogue's sweep (their cache policy stated in the legend)."""
    base = experiments["base"][0]
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.5), sharey=True)  # one scale: which dimension moves it most
    for ax, (name, x, xlabel, logx) in zip(axes.flat, DIMENSIONS):
        rows = sorted(experiments.get(name, []) + [base], key=lambda r: x(r.shape))
        ax.plot([x(r.shape) for r in rows], [r.bill_per_1000 for r in rows], "o-", color="tab:blue",
                label=_family_label(base))
        ax.plot([x(r.shape) for r in rows], [r.unicast_per_1000 for r in rows], ":", color="grey",
                label="unicast")
        beside = [(1, "popularity", "^--", "tab:purple"), (2, "push", "s--", "tab:green")]
        for series, other, style, colour in beside:
            if name == "titles" and experiments.get(other):
                more = sorted(experiments[other], key=lambda r: x(r.shape))
                ax.plot([x(r.shape) for r in more], [r.bill_per_1000 for r in more], style, color=colour,
                        label=_family_label(more[0]))
                _values(ax, more, lambda r: x(r.shape), colour, series)
        ax.plot([x(base.shape)], [base.bill_per_1000], "o", ms=14, mfc="none", color="tab:red",
                label="the base")
        _values(ax, rows, lambda r: x(r.shape), "tab:blue")
        ax.set(xscale="log" if logx else "linear", yscale="log", xlabel=xlabel, ylabel="Mbps per 1000 boxes")
        ticks = sorted({x(r.shape) for r in rows})
        ax.set_xticks(ticks, [_g(t) for t in ticks], minor=False)
        ax.set_xticks([], minor=True)
        ax.grid(True, which="both", alpha=0.3)
    legend = {}  # one legend under the panels, each series once: none hides a point
    for ax in axes.flat:
        legend.update((label, h) for h, label in zip(*ax.get_legend_handles_labels()))
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=3, fontsize=8)
    fig.suptitle(f"The bill per 1000 boxes, one dimension at a time from the base ({base.boxes} boxes)",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def write_images(figs: dict, img_dir: Path) -> list:
    """Every figure to a temporary name first, then all renamed: a failure leaves the old images whole."""
    img_dir.mkdir(parents=True, exist_ok=True)
    tmps = {img_dir / name: img_dir / f".{name}.{os.getpid()}.tmp" for name in figs}
    try:
        for (final, tmp), fig in zip(tmps.items(), figs.values()):
            fig.savefig(tmp, format="png", dpi=100)
        for final, tmp in tmps.items():
            os.replace(tmp, final)
    finally:
        for tmp in tmps.values():
            tmp.unlink(missing_ok=True)
    return list(tmps)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs_dir", type=Path, help="one toast-sim --out directory per sizing file")
    ap.add_argument("--img-dir", type=Path, help="write sizing-boxes.png and sizing-dimensions.png here")
    ap.add_argument("--scenarios", type=Path, default=SCENARIOS,
                    help="the sizing files (default: %(default)s)")
    ap.add_argument("--evening", action="append", default=[], metavar="NAME=DIR",
                    help="a whole-evening run directory (repeatable)")
    ap.add_argument("--skip-missing", action="store_true",
                    help="leave out the experiments with no results.json yet, and the rows not run, "
                         "instead of failing")
    a = ap.parse_args(argv)
    try:
        experiments, base = load_experiments(a.runs_dir, a.scenarios, a.skip_missing)
        evenings = [load_evening(e) for e in a.evening]
        text = tables(experiments, base, evenings)
        if a.img_dir:
            try:
                import matplotlib
                matplotlib.use("Agg")
                import matplotlib.pyplot as plt
            except ImportError:
                raise SizingError(f"--img-dir needs matplotlib, which {sys.executable} lacks (Debian: "
                                  "python3-matplotlib for /usr/bin/python3)") from None
            figs = {"sizing-boxes.png": plot_boxes(experiments, evenings, plt),
                    "sizing-dimensions.png": plot_dimensions(experiments, plt)}
            for path in write_images(figs, a.img_dir):
                print(f"sizing.py: wrote {path}", file=sys.stderr)
    except SizingError as e:
        print(f"sizing.py: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"sizing.py: cannot write the images: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
