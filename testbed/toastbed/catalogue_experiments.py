"""run-all for catalogue experiments (testbed/experiments/catalogue): how a catalogue run is estimated,
run, summarised, and the report: per experiment, the cells' medians over their seeds; the table of no cache /
LRU / popularity cache / push at each concurrency; the issue's goals beside the published figures.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from . import catalogue_run
from .catalogue_scenario import CatalogueScenario, from_dict, shape

SETUP_SECONDS = 90  # ingest of 30 titles, 150 boxes started and their warm titles checked, the stop (measured)

# Published peer-assisted VoD figures the issue sets Toast against.
PUBLISHED = [
    ("Zebroid (AT&T IPTV): striping popular titles onto boxes off-peak", "peak-hour VoD server load 50-80% lower; "
     ">70% with 8 GB a box"),
    ("Push-to-Peer (Thomson set-top boxes)", "content pushed to boxes before demand"),
    ("PPLive VoD, ~1 GB cache a peer", "88% of server bandwidth saved on average, 93% at the peak"),
    ("Akamai NetSession", "70-80% offloaded"),
]
PEAK_GOAL_PUSH_10 = 80.0    # peak server bandwidth below unicast, push, 10% watching
BOUND_SHARE_GOAL = 0.85     # of the peak bound at 20% and 30%
SAME_RATE_GOAL = 95.0       # bitrate = uplink
STARTUP_GOAL_MS = 250.0


def is_catalogue(s) -> bool:
    return isinstance(s, CatalogueScenario)


def estimate_seconds(s: CatalogueScenario) -> float:
    return s.night_seconds + s.evening_seconds + s.title_seconds + SETUP_SECONDS


def run(s: CatalogueScenario, bins: dict, out: Path, stop) -> dict:
    r = catalogue_run.run_catalogue(s, bins, out, progress=lambda m: None, stop=stop)
    plots = catalogue_run.catalogue_report.plot(r, out)
    (out / "report.md").write_text(catalogue_run.catalogue_report.render_markdown(r, plots))
    return r


def done_line(r: dict) -> str:
    return (f"peak {_p(r['peak_reduction_pct'])} below unicast (bound {_p(r['peak_bound_pct'])}), bytes "
            f"{_p(r['reduction_pct'])}, stalls {r['stalls']['count']}, {r['sessions_completed']}/{r['sessions']} "
            "sessions completed")


def dry_run_line(row: dict) -> str:
    sh = row["shape"]
    return (f"{sh['sessions']} sessions, {sh['watching_at_once_max']} watching at once at most, peak bound "
            f"{sh['peak_bound_planned_pct']:g}%: {sh['label']}")


def summary(r: dict) -> dict:
    """What results.json keeps of a run's report: no per-session, per-box or per-second rows."""
    keep = {k: v for k, v in r.items() if k not in ("per_session", "per_box", "series", "bins", "scenario_config")}
    if "resources" in keep:
        keep["resources"] = {k: v for k, v in keep["resources"].items() if k not in ("processes", "cpu_series")}
    return keep


def _p(v) -> str:
    return "n/a" if v is None else f"{v:.1f}%"


def _med(values: list) -> float | None:
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def _cell(reps: list[dict], key: str, fmt=_p) -> str:
    values = [r[key] for r in reps if r.get(key) is not None]
    if not values:
        return "n/a"
    med = fmt(statistics.median(values))
    return med if len(values) == 1 else f"{med} ({fmt(min(values))[:-1]}-{fmt(max(values))})"


def cells(rows: list[dict], keys: list[str]) -> list[tuple[dict, list[dict]]]:
    """Rows grouped by their sweep values except the seed: (params, reports)."""
    groups: dict[tuple, tuple[dict, list[dict]]] = {}
    for row in rows:
        if not row.get("report"):
            continue
        params = {k: row["params"][k] for k in keys if k in row["params"] and k != "random_seed"}
        key = tuple(sorted((k, str(v)) for k, v in params.items()))
        groups.setdefault(key, (params, []))[1].append(row["report"])
    return list(groups.values())


def variant(r: dict) -> str:
    config = r.get("scenario_config") or {}
    sh = r.get("shape", {})
    if sh.get("push") or config.get("push"):
        return "push"
    return sh.get("cache") or config.get("cache", "lru")


def comparison(results: dict, exps: list[tuple[str, dict]]) -> list[str]:
    """No cache / LRU / popularity / push at each concurrency, peak reduction (median) and its bound, from
    the experiments marked `"table": true`."""
    table: dict[float, dict[str, list[dict]]] = {}
    for stem, exp in exps:
        if not exp.get("table"):
            continue
        for row in results.get(stem, []):
            r = row.get("report")
            if r:
                table.setdefault(r["shape"]["peak_viewers_pct"], {}).setdefault(variant(r), []).append(r)
    if not table:
        return []
    cols = ["none", "lru", "popularity", "push"]
    md = ["## Peak server bandwidth below unicast: no cache, LRU, popularity cache, push", "",
          "Medians over the seeds (range); the peak bound (every box's upload over the peak's demand) and the "
          "share of it reached.", "", "| watching at the peak | " + " | ".join(cols) + " |",
          "|---|" + "---|" * len(cols)]
    for pct in sorted(table):
        out = []
        for c in cols:
            reps = table[pct].get(c, [])
            if not reps:
                out.append("not run")
                continue
            red = _med([r["peak_reduction_pct"] for r in reps])
            bound = _med([r["peak_bound_pct"] for r in reps])
            share = f", {red / bound:.2f} of bound {bound:.0f}%" if red is not None and bound else ""
            out.append(f"{_cell(reps, 'peak_reduction_pct')}{share}")
        md.append(f"| {pct:g}% | " + " | ".join(out) + " |")
    return md + [""]


def goals(results: dict, exps: list[tuple[str, dict]]) -> list[str]:
    reps_all = [row["report"] for rows in results.values() for row in rows if row.get("report")]
    if not reps_all:
        return []
    md = ["## Goals", "", "| goal | target | Toast here | met |", "|---|---|---|---|"]

    def line(goal, target, ours, met):
        md.append(f"| {goal} | {target} | {ours} | {'-' if met is None else 'yes' if met else '**no**'} |")
    push10 = [r for r in reps_all if variant(r) == "push" and r["shape"]["peak_viewers_pct"] == 10]
    v = _med([r["peak_reduction_pct"] for r in push10])
    line("peak server bandwidth below unicast, push, 10% watching", f">= {PEAK_GOAL_PUSH_10:g}%",
         "not run" if v is None else f"{v:.1f}% (median of {len(push10)})",
         None if v is None else v >= PEAK_GOAL_PUSH_10)
    for pct in (20, 30):
        reps = [r for r in reps_all if r["shape"]["peak_viewers_pct"] == pct
                and r["shape"]["upload_over_bitrate_median"] < 1]
        shares = {}
        for r in reps:
            if r["peak_reduction_pct"] is not None and r["peak_bound_pct"]:
                shares.setdefault(variant(r), []).append(r["peak_reduction_pct"] / r["peak_bound_pct"])
        best = max(((statistics.median(v), k) for k, v in shares.items()), default=None)
        line(f"share of the peak bound, {pct}% watching (best variant)", f">= {BOUND_SHARE_GOAL:g}",
             "not run" if best is None else f"{best[0]:.2f} ({best[1]})",
             None if best is None else best[0] >= BOUND_SHARE_GOAL)
    same = [r for r in reps_all if r["shape"]["upload_over_bitrate_median"] >= 1]
    v = _med([r["peak_reduction_pct"] for r in same])
    line("peak below unicast, bitrate = uplink", f">= {SAME_RATE_GOAL:g}%",
         "not run" if v is None else f"{v:.1f}% (median of {len(same)})", None if v is None else v >= SAME_RATE_GOAL)
    stalls = sum(r["stalls"]["count"] for r in reps_all)
    line("stalls, every run", "0", f"{stalls} in {sum(1 for r in reps_all if r['stalls']['count'])} of "
         f"{len(reps_all)} runs", stalls == 0)
    startups = [r["startup_ms"]["median"] for r in reps_all if r["startup_ms"]["median"] is not None]
    if startups:
        line("startup median, per run", f"<= {STARTUP_GOAL_MS:g} ms",
             f"median {statistics.median(startups):.0f} ms, worst {max(startups):.0f} ms",
             max(startups) <= STARTUP_GOAL_MS)
    return md + [""]


def render(base: dict, exps: list[tuple[str, dict]], results: dict, minutes: float, runs: int) -> str:
    sh = shape(from_dict({**base, "name": "base"}))
    md = ["# Toast testbed: catalogue experiments", "",
          f"{runs} runs, {minutes:.0f} minutes. The base scenario: **{sh['label']}**, {sh['sessions']} sessions "
          f"(planned peak bound {sh['peak_bound_planned_pct']:g}%).", "",
          "Published figures (the issue's references): " +
          "; ".join(f"{who}: {what}" for who, what in PUBLISHED) + ".", ""]
    md += goals(results, exps)
    md += comparison(results, exps)
    for stem, exp in exps:
        rows = results.get(stem, [])
        keys = list(exp["sweep"])
        shown = [k for k in keys if k != "random_seed"]
        md += [f"## {exp['figure']}: {exp['title']}", "", exp["thesis"], "",
               "| " + " | ".join(shown) + " | runs | peak below unicast | peak bound | bytes below unicast | stalls | "
               "startup p50 | seek p50 | idle upload used | push | sessions completed |",
               "|" + "---|" * (len(shown) + 10)]
        for params, reps in cells(rows, keys):
            vals = " | ".join(str(params.get(k, "-")) for k in shown)
            stalls = sum(r["stalls"]["count"] for r in reps)
            md.append(f"| {vals} | {len(reps)} | {_cell(reps, 'peak_reduction_pct')} | "
                      f"{_cell(reps, 'peak_bound_pct')} | {_cell(reps, 'reduction_pct')} | {stalls} | "
                      f"{_ms(_med([r['startup_ms']['median'] for r in reps]))} | "
                      f"{_ms(_med([r['seek_ms']['median'] for r in reps]))} | "
                      f"{_cell(reps, 'idle_upload_used_pct')} | "
                      f"{statistics.median(r['push_bytes'] for r in reps) / 1e6:.0f} MB | "
                      f"{sum(r['sessions_completed'] for r in reps)}/{sum(r['sessions'] for r in reps)} |")
        failed = [row for row in rows if not row.get("report")]
        if failed:
            md += ["", f"{len(failed)} runs failed or were skipped: " +
                   "; ".join(f"{row['label']}: {row.get('skipped')}" for row in failed[:5])]
        md.append("")
    return "\n".join(md) + "\n"


def _ms(v) -> str:
    return "n/a" if v is None else f"{v:.0f} ms"
