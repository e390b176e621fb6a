"""run-all's report of the thesis's experiments (testbed/experiments and its large/ and thesis/ sets): the
issue's targets, the headline table beside the thesis's stated figures, the baselines, and one table and plot
per figure. The catalogue experiments have their own (catalogue_experiments.render).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from . import scenario as scen


# ---- the headline table: the thesis's stated numbers beside ours ----

def _cells(results: dict, exp: str, **where) -> list[dict]:
    return [row for row in results.get(exp, [])
            if row.get("report") and all(str(row["params"].get(k)) == str(v) for k, v in where.items())]


def _pct(rows: list[dict]) -> list[float]:
    return [row["report"]["reduction_pct"] for row in rows]


def _span(values: list[float]) -> str:
    if not values:
        return "not run"
    lo, hi = min(values), max(values)
    return f"{lo:.0f}%" if abs(hi - lo) < 0.5 else f"{lo:.0f}-{hi:.0f}%"


def headline(results: dict) -> list[tuple[str, str, str]]:
    """(claim, thesis, ours) rows for the claims the thesis states with numbers or orderings."""
    out = []
    toast = ("inorder", "beta", "hybrid")
    f55, f56 = "fig5_5_behaviour_2mbps", "fig5_6_behaviour_1mbps"
    vals = [v for b in ("download", "stream") for p in toast for v in _pct(_cells(results, f55, behavior=b, picker=p))]
    out.append(("2 Mbps upload, download and stream, Toast's pickers", ">= 70%", _span(vals)))
    out.append(("2 Mbps upload, seed, hybrid", "up to 90%", _span(_pct(_cells(results, f55, behavior="seed",
                                                                            picker="hybrid")))))
    stream1 = _pct(_cells(results, f56, behavior="stream"))
    out.append(("1 Mbps upload, stream, best picker (ceiling 50%)", "at most 45%",
                f"{max(stream1):.0f}%" if stream1 else "not run"))
    seed1 = _pct(_cells(results, f56, behavior="seed"))
    out.append(("1 Mbps upload, seed, best picker", "71%", f"{max(seed1):.0f}%" if seed1 else "not run"))
    f53 = "fig5_3_pickers_upload"
    rarest = _pct(_cells(results, f53, upload_limit="2Mbps", picker="rarest"))
    best = [v for p in toast for v in _pct(_cells(results, f53, upload_limit="2Mbps", picker=p))]
    if rarest and best:
        out.append(("2 Mbps stream: rarest-first vs best Toast picker", "Toast's pickers better",
                    f"rarest {rarest[0]:.0f}% vs best {max(best):.0f}%"))
    # The adaptive picker against every fixed one, upload by upload (medians over the repeats).
    for up in ("1Mbps", "1.5Mbps", "2Mbps"):
        adaptive = _pct(_cells(results, f53, upload_limit=up, picker="adaptive"))
        fixed = {p: _pct(_cells(results, f53, upload_limit=up, picker=p)) for p in scen.PICKERS if p != "adaptive"}
        fixed = {p: statistics.median(v) for p, v in fixed.items() if v}
        if adaptive and fixed:
            best = max(fixed, key=lambda p: fixed[p])
            a = statistics.median(adaptive)
            # How much of the viewers' upload the runs at this upload used: near all of it, no picker can
            # carry much more than another.
            used = [row["report"]["upload_used_pct"] for row in _cells(results, f53, upload_limit=up)
                    if row["report"].get("upload_used_pct") is not None]
            out.append((f"{up[:-4]} Mbps upload, stream: adaptive vs the best fixed picker", "- (not in the thesis)",
                        f"adaptive {a:.1f}% vs {best} {fixed[best]:.1f}% ({a - fixed[best]:+.1f} points, "
                        f"median of {len(adaptive)})"
                        + (f"; the viewers used {statistics.median(used):.0f}% of their upload" if used else "")))
    f57 = "fig5_7_choker"
    wins, total = 0, 0
    for p in scen.PICKERS:
        tft, sc = _pct(_cells(results, f57, choker="tit-for-tat", picker=p)), _pct(_cells(results, f57, choker="seed",
                                                                                        picker=p))
        if tft and sc:
            total += 1
            wins += tft[0] > sc[0]
    if total:
        out.append(("tit-for-tat beats the seed-style choker", "for every picker", f"for {wins} of {total} pickers"))
    f58 = "fig5_8_buffer"
    buf = {b: _pct(_cells(results, f58, buffer_limit=b, picker="hybrid")) for b in ("25%", "50%", "75%", "100%")}
    if all(buf.values()):
        out.append(("hybrid with a buffer of 25 / 50 / 75 / 100% of the title", "drops, sharply from 50% to 25%",
                    " / ".join(f"{buf[b][0]:.0f}%" for b in ("25%", "50%", "75%", "100%"))))
    f59 = "fig5_9_delay"
    delayed = _cells(results, f59, delay_ms=4)
    if delayed:
        diffs = []
        for row in delayed:
            ref = _cells(results, f59, delay_ms=0, upload_limit=row["params"]["upload_limit"])
            if ref:
                diffs.append(abs(row["report"]["reduction_pct"] - ref[0]["report"]["reduction_pct"]))
        out.append(("4 ms added one-way delay", "changes reduction < 2.1%", f"changes it by up to {max(diffs):.1f}%"
                    if diffs else "not run"))
    elif results.get(f59):
        out.append(("4 ms added one-way delay", "changes reduction < 2.1%", "not measured: no netem on this kernel"))
    # The same seed runs with every client in its own namespace (veth, bridge) against plain loopback.
    pairs = []
    for row in _cells(results, f59, delay_ms=0):
        rate = row["params"]["upload_limit"]
        loop = _cells(results, f55 if rate == "2Mbps" else f56, behavior="seed", picker=row["params"]["picker"])
        if loop:
            pairs.append(f"{rate}: {row['report']['reduction_pct']:.0f}% vs {loop[0]['report']['reduction_pct']:.0f}%")
    if pairs:
        out.append(("clients in network namespaces vs loopback (seed, hybrid)", "-", "; ".join(pairs)))
    sizes = [(row["params"]["clients"], row["params"]["behavior"], row["report"]["reduction_pct"])
             for row in results.get("swarm_size", []) if row.get("report")]
    if sizes:
        out.append(("viewers present at once (hybrid, 2 Mbps)", "about 95: >= 70% stream, 90% seed",
                    ", ".join(f"{n} {b}: {v:.0f}%" for n, b, v in sizes)))
    uni = _pct(_cells(results, "arrivals", arrival="uniform"))
    for kind, thesis in (("all-at-once", "21% worse than uniform"), ("poisson", "within 2% of uniform")):
        v = _pct(_cells(results, "arrivals", arrival=kind))
        if uni and v and uni[0]:
            rel = 100.0 * (uni[0] - v[0]) / uni[0]
            out.append((f"{kind} arrivals vs uniform", thesis,
                        f"{abs(rel):.0f}% {'worse' if rel >= 0 else 'better'} ({v[0]:.0f}% vs {uni[0]:.0f}%)"))
    return out


# ---- the issue's targets: one table, each figure beside the thesis's and the target ----

# (key, claim, the thesis's figure, the target, the reduction it needs or None for a stall-only target)
TARGETS = [
    ("stream_full_upload", "upload = bitrate, stream, about 95 watching at once", ">= 70%", ">= 85%", 85.0),
    ("seed_span3", "seeding, arrivals spanning 3x the title, upload = bitrate", "up to 90%", ">= 90%", 90.0),
    ("stream_half_upload", "upload = bitrate / 2, stream (ceiling 50%)", "at most 45%", ">= 45%", 45.0),
    ("seed_half_upload", "upload = bitrate / 2, seed", "71%", ">= 71%", 71.0),
    ("present_200", "200 viewers present at once", "-", "0 stalls", None),
    ("present_500", "500 viewers present at once, half a piece-time apart (at a quarter of the bitrate)", "-",
     ">= 87.6% (the 96-viewer run), 0 stalls", 87.6),
]
WASTED_TARGET_PCT = 2.0
STARTUP_TARGET_MS = 250.0


def target_rows(exps: list[tuple[str, dict]], results: dict) -> dict[str, list[dict]]:
    """The runs each target is measured on: an experiment's `targets` names, per target, the sweep values of
    its rows (e.g. {"stream_full_upload": {"upload_limit": "2Mbps"}})."""
    out: dict[str, list[dict]] = {}
    for stem, exp in exps:
        for key, where in exp.get("targets", {}).items():
            out.setdefault(key, []).extend(_cells(results, stem, **where))
    return out


def issue_targets(exps: list[tuple[str, dict]], results: dict) -> list[dict]:
    """One row per target: the thesis's figure, the target, ours (median over the runs that measure it), its
    shape, and whether it is met; then the targets that hold for every run (stalls, wasted server bytes,
    startup). A target not met says by how much."""
    rows = []
    measured = target_rows(exps, results)
    for key, claim, thesis, target, need in TARGETS:
        runs = measured.get(key, [])
        shapes = " / ".join(dict.fromkeys(r["shape"]["label"] for r in runs if r.get("shape"))) or "-"
        if not runs:
            rows.append({"key": key, "claim": claim, "thesis": thesis, "target": target, "ours": "not run",
                         "met": None, "shape": shapes})
            continue
        reps = [r["report"] for r in runs]
        stalls = sum(r["stalls"]["count"] for r in reps)
        incomplete = sum(r["clients"] - r["completed_clients"] for r in reps)
        pct = statistics.median(r["reduction_pct"] for r in reps)
        if need is None:
            present = max(r.get("shape", {}).get("present_at_once", 0) for r in runs)
            met = stalls == 0 and incomplete == 0
            ours = f"{present} present, {stalls} stalls, {pct:.1f}% below unicast"
            if incomplete:
                ours += f", {incomplete} viewers did not complete"
        else:
            met = pct >= need and stalls == 0
            ours = f"{pct:.1f}%" + ("" if pct >= need else f" ({need - pct:.1f} points short)")
            if stalls:
                ours += f", {stalls} stalls"
        rows.append({"key": key, "claim": claim, "thesis": thesis, "target": target, "ours": ours, "met": met,
                     "shape": shapes})
    reps = [row["report"] for rs in results.values() for row in rs if row.get("report")]
    if reps:
        stalls = sum(r["stalls"]["count"] for r in reps)
        stalled = sum(1 for r in reps if r["stalls"]["count"])
        rows.append({"key": "stalls", "claim": "stalls, every run", "thesis": "-", "target": "0",
                     "ours": f"{stalls} in {stalled} of {len(reps)} runs", "met": stalls == 0, "shape": "all runs"})
        wasted = [r.get("server_wasted_pct", 0.0) for r in reps]
        rows.append({"key": "wasted", "claim": "wasted server bytes (share of what the server sent the viewers)",
                     "thesis": "-", "target": f"<= {WASTED_TARGET_PCT:g}%",
                     "ours": f"median {statistics.median(wasted):.1f}%, worst {max(wasted):.1f}%",
                     "met": max(wasted) <= WASTED_TARGET_PCT, "shape": "all runs"})
        startups = [r["startup_ms"]["median"] for r in reps if r["startup_ms"]["median"] is not None]
        if startups:
            worst = max(startups)
            rows.append({"key": "startup", "claim": "startup median (launch to playback), per run",
                         "thesis": "-", "target": f"<= {STARTUP_TARGET_MS:g} ms",
                         "ours": f"median of runs {statistics.median(startups):.0f} ms, worst {worst:.0f} ms"
                         + ("" if worst <= STARTUP_TARGET_MS else f" ({worst - STARTUP_TARGET_MS:.0f} ms over)"),
                         "met": worst <= STARTUP_TARGET_MS, "shape": "all runs"})
    return rows


def render_targets(rows: list[dict]) -> list[str]:
    md = ["## Issue targets", "", "| target | thesis | issue target | Toast here | met | shape of the runs |",
          "|---|---|---|---|---|---|"]
    for r in rows:
        met = {True: "yes", False: "**no**", None: "-"}[r["met"]]
        md.append(f"| {r['claim']} | {r['thesis']} | {r['target']} | {r['ours']} | {met} | {r['shape']} |")
    return md + [""]


# ---- report ----

def plot(exp: dict, rows: list[dict], path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in rows if r.get("report")]
    if not rows:
        return False
    metric = exp.get("metric", "reduction_pct")
    keys = list(exp["sweep"])
    # The last sweep field makes the series, the others the groups; an `also` row without them is its own group.
    group_keys, series_key = (keys[:-1], keys[-1]) if len(keys) > 1 else (keys, None)

    def label(r):
        return " ".join(str(r["params"][k]) for k in group_keys if k in r["params"]) or r["label"]

    def series_of(r):
        return str(r["params"].get(series_key, r["label"])) if series_key else metric
    groups = list(dict.fromkeys(label(r) for r in rows))
    series = list(dict.fromkeys(series_of(r) for r in rows))
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(8, 4))
    for j, ser in enumerate(series):
        vals = []
        for g in groups:
            match = [r for r in rows if label(r) == g and series_of(r) == ser]
            v = match[0]["report"][metric] if match else 0
            vals.append(v / 1e6 if metric.endswith("bytes") else v)
        ax.bar([i + j * width for i in range(len(groups))], vals, width, label=ser)
    ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(groups))], groups, fontsize=8)
    ax.set_xlabel(" / ".join(group_keys))
    ax.set_ylabel("MB" if metric.endswith("bytes") else "server reduction vs unicast (%)")
    ax.set_title(f"Fig. {exp['figure']}: {exp['title']}", fontsize=9)
    if series_key:
        ax.legend(title=series_key, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def render(base: dict, exps: list[tuple[str, dict]], results: dict, baselines: dict, minutes: float, netem: bool,
           runs: int, out: Path) -> str:
    n = base["clients"]
    sh = scen.shape(scen.from_dict({**base, "name": "base"}))
    md = ["# Toast testbed: the thesis's experiments (ch. 5) on this machine", ""]
    md += [f"{runs} runs, {minutes:.0f} minutes. The base scenario: {n} clients, a {base['bitrate']} title of "
           f"{base['title_seconds']}, a client every {base['arrival_interval']}. Its shape: **{sh['label']}** "
           f"(arrivals {sh['gap_piece_times']:g} piece-times apart, {sh['watching_at_once']} watching at once, "
           f"arrival span {sh['span_over_title']:g}x the title; the thesis: 36, ~95, 3.15x). Upload / bitrate is "
           f"kept. With {n} clients no run can exceed 1 - 1/{n} = {100 * (1 - 1 / n):.1f}% (the thesis's 300: "
           "99.7%), and the seed's upload counts as server traffic.", ""]
    skipped = [row for rows in results.values() for row in rows if (row.get("skipped") or "").startswith("not run")]
    if not netem and skipped:
        md += ["> This kernel has no netem qdisc: the rows with added delay were not run.", ""]
    md += render_targets(issue_targets(exps, results))
    md += ["## Headline: the thesis beside this run", "", "| claim | thesis | Toast here |", "|---|---|---|"]
    md += [f"| {c} | {t} | {o} |" for c, t, o in headline(results)]
    md.append("")
    if baselines:
        md += ["## Baselines on the base scenario", "",
               "| system | server bytes | reduction | stalls | completed |", "|---|---|---|---|---|"]
        for kind, b in baselines.items():
            md.append(f"| {kind} | {b['server_bytes'] / 1e6:.1f} MB | {b['reduction_pct']:.1f}% | "
                      f"{b['stalls']['count']} ({b['stalls']['seconds']:.1f} s) | "
                      f"{b['completed_clients']}/{b['clients']} |")
        md.append("")
    for stem, exp in exps:
        rows = results.get(stem, [])
        keys = list(exp["sweep"])
        labels = list(dict.fromkeys(row["shape"]["label"] for row in rows if row.get("shape")))
        md += [f"## Fig. {exp['figure']}: {exp['title']}", "", f"Thesis: {exp['thesis']}", ""]
        if labels and labels != [sh["label"]]:
            md += ["Shape: " + " / ".join(labels), ""]
        md += ["| " + " | ".join(keys) + " | reduction | ceiling | VoD / seed share | stalls | startup p50 | "
               "completed | total traffic |", "|" + "---|" * (len(keys) + 7)]
        for row in rows:
            cells = " | ".join(str(row["params"].get(k, "-")) for k in keys)
            if row.get("skipped"):
                md.append(f"| {cells} | {row['skipped']} |" + " |" * 6)
                continue
            r = row["report"]
            startup = r["startup_ms"]["median"]
            md.append(f"| {cells} | {r['reduction_pct']:.1f}% | {r['ceiling_pct']:.1f}% | "
                      f"{r['vod_share_pct']:.0f}% / {r['seed_share_pct']:.0f}% | {r['stalls']['count']} "
                      f"({r['stalls']['seconds']:.1f} s) | {'n/a' if startup is None else f'{startup:.0f} ms'} | "
                      f"{r['completed_clients']}/{r['clients']} | {r['total_traffic_bytes'] / 1e6:.0f} MB |")
        if plot(exp, rows, out / f"{stem}.png"):
            md += ["", f"![{stem}]({stem}.png)"]
        md.append("")
    return "\n".join(md) + "\n"
