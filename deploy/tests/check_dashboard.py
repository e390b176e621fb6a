#!/usr/bin/python3
"""Keeps the Grafana dashboard true to what the programs export.

Runs toast-server (a title ingested, then whole, ranged and missing GETs) and toast-tracker (HTTP announce and
scrape, a malformed announce, a UDP connect and announce), reads their /metrics, and checks that every metric
the dashboard queries (panels and variables) is one of theirs, histogram series only on histograms, and every
label a query selects, groups by or names in a legend is a label of the metrics it queries. Also checks the
dashboard's structure (unique panel ids, a 24-column grid without overlaps, queries through the
${datasource} variable, every $variable defined) and the provisioning file.

Usage: check_dashboard.py --bin-dir BUILD --dashboard JSON --provisioning YAML. Exit 0 when everything holds,
1 listing each problem. Metrics on /metrics that no panel shows are listed, not failed.
"""

import argparse
import json
import os
import re
import secrets
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

PROMETHEUS_LABELS = {"instance", "job", "le"}  # added by Prometheus at scrape time, or a histogram's buckets
BUILTIN_VARIABLES = {"__rate_interval", "__interval", "__range", "__range_s"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
PACKAGED_PATH = "/usr/share/toast-server/grafana/dashboards"


def http_get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def wait_for(pattern, path, proc, seconds=15):
    """The first match of `pattern` in the file `path` that `proc` writes, or None if it exits or times out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        m = re.search(pattern, Path(path).read_text(errors="replace"))
        if m:
            return m
        if proc.poll() is not None:
            return None
        time.sleep(0.05)
    return None


def parse_metrics(text):
    """{family: {"type": TYPE, "labels": set of label names}} from Prometheus text format."""
    families = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(None, 3)
            families.setdefault(name, {"type": kind, "labels": set()})["type"] = kind
        elif line and not line.startswith("#"):
            m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s", line)
            if not m:
                continue
            name = m.group(1)
            for suffix in HISTOGRAM_SUFFIXES:
                base = name[: -len(suffix)]
                if name.endswith(suffix) and families.get(base, {}).get("type") == "histogram":
                    name = base
            labels = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(3) or ""))
            families.setdefault(name, {"type": "untyped", "labels": set()})["labels"] |= labels
    return families


def server_metrics(bin_dir, tmp, extra_config=None):
    """toast-server's /metrics after a few requests; `extra_config` is merged into its config."""
    disks = [tmp / "d0", tmp / "d1"]
    for d in disks:
        d.mkdir()
    config = tmp / "server.json"
    config.write_text(json.dumps({"listen": "127.0.0.1:0", "disks": [str(d) for d in disks], **(extra_config or {})}))
    media = tmp / "title.bin"
    media.write_bytes(secrets.token_bytes(600_000))
    server = str(bin_dir / "server/toast-server")
    subprocess.run([server, "--config", str(config), "ingest", "demo", str(media), "--torrent",
                    str(tmp / "demo.torrent"), "--block-size", "256KiB"], check=True, capture_output=True, timeout=60)
    log = tmp / "server.log"
    with open(log, "w") as err:
        proc = subprocess.Popen([server, "--config", str(config), "serve"], stdout=subprocess.DEVNULL, stderr=err)
    try:
        m = wait_for(r"serving HTTP on 127\.0\.0\.1:(\d+)", log, proc)
        if not m:
            raise RuntimeError(f"toast-server did not start: {log.read_text()}")
        base = f"http://127.0.0.1:{m.group(1)}"
        assert http_get(f"{base}/titles/demo")[0] == 200
        assert http_get(f"{base}/titles/demo", {"Range": "bytes=1000-300000"})[0] == 206
        assert http_get(f"{base}/titles/nothing")[0] == 404
        status, body = http_get(f"{base}/metrics")
        assert status == 200
        return body.decode()
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def tracker_metrics(bin_dir, tmp):
    out = tmp / "tracker.out"
    with open(out, "w") as o:
        proc = subprocess.Popen([str(bin_dir / "tracker/toast-tracker"), "--listen", "127.0.0.1:0", "--udp",
                                 "127.0.0.1:0"], stdout=o, stderr=subprocess.DEVNULL)
    try:
        if not wait_for(r"udp 127\.0\.0\.1:(\d+)", out, proc):
            raise RuntimeError("toast-tracker did not start")
        http_port = re.search(r"http 127\.0\.0\.1:(\d+)", out.read_text()).group(1)
        udp_port = int(re.search(r"udp 127\.0\.0\.1:(\d+)", out.read_text()).group(1))
        base = f"http://127.0.0.1:{http_port}"
        info_hash = "%AA" * 20
        assert http_get(f"{base}/announce?info_hash={info_hash}&peer_id={'-TS0001-' + 'x' * 12}&port=6881"
                        "&uploaded=0&downloaded=0&left=100&event=started")[0] == 200
        assert http_get(f"{base}/scrape?info_hash={info_hash}")[0] == 200
        assert http_get(f"{base}/announce?info_hash=short")[0] == 400
        # BEP 15: connect, then announce with the connection id.
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            s.sendto(struct.pack(">QII", 0x41727101980, 0, 7), ("127.0.0.1", udp_port))
            action, tid, conn = struct.unpack(">IIQ", s.recv(16))
            assert (action, tid) == (0, 7)
            s.sendto(struct.pack(">QII20s20sQQQIIIiH", conn, 1, 8, b"\xbb" * 20, b"-TS0001-yyyyyyyyyyyy", 0, 100, 0,
                                 2, 0, 0, -1, 6882), ("127.0.0.1", udp_port))
            assert struct.unpack(">II", s.recv(2048)[:8]) == (1, 8)
        status, body = http_get(f"{base}/metrics")
        assert status == 200
        return body.decode()
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def selectors(expr):
    """(metric, {label names in its braces}) for every toast_ metric in a PromQL expression."""
    for m in re.finditer(r"\b(toast_[a-zA-Z0-9_]+)\s*(\{([^}]*)\})?", expr):
        yield m.group(1), set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", m.group(3) or ""))


def resolve(name, families):
    """The family a series name belongs to, and whether that use is valid."""
    if name in families:
        return name, families[name]["type"] != "histogram"  # a histogram is queried by its series
    for suffix in HISTOGRAM_SUFFIXES:
        base = name[: -len(suffix)]
        if name.endswith(suffix) and families.get(base, {}).get("type") == "histogram":
            return base, True
    return None, False


def check_queries(where, expr, families, problems, used, legend=""):
    metrics = []
    for name, labels in selectors(expr):
        family, ok = resolve(name, families)
        if family is None:
            problems.append(f"{where}: queries {name}, which neither toast-server's nor toast-tracker's /metrics has")
            continue
        if not ok:
            problems.append(f"{where}: queries histogram {name} without _bucket, _sum or _count")
        used.add(family)
        metrics.append(family)
        for label in labels - PROMETHEUS_LABELS - families[family]["labels"]:
            problems.append(f"{where}: selects label {label!r} of {name}, which has {sorted(families[family]['labels'])}")
    if not metrics:
        return
    known = set().union(*(families[f]["labels"] for f in metrics)) | PROMETHEUS_LABELS
    grouped = {l.strip() for g in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr) for l in g.split(",") if l.strip()}
    for label in sorted(grouped - known):
        problems.append(f"{where}: groups by {label!r}, not a label of {sorted(set(metrics))}")
    for label in sorted(set(re.findall(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}", legend)) - known):
        problems.append(f"{where}: legend names {label!r}, not a label of {sorted(set(metrics))}")


def check_structure(dash, problems):
    variables = {v["name"] for v in dash.get("templating", {}).get("list", [])}
    if "datasource" not in variables:
        problems.append("no 'datasource' variable: queries must not name one Grafana's data source")
    if not re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", dash.get("uid", "")):
        problems.append(f"dashboard uid {dash.get('uid')!r} is not a valid uid")
    for key in ["title", "schemaVersion", "panels", "time"]:
        if key not in dash:
            problems.append(f"dashboard has no {key!r}")
    ids, cells = set(), {}
    for p in dash.get("panels", []):
        title = p.get("title", "?")
        if p.get("id") in ids:
            problems.append(f"panel {title!r}: id {p.get('id')} used twice")
        ids.add(p.get("id"))
        g = p.get("gridPos", {})
        if not (g.get("w", 0) > 0 and g.get("h", 0) > 0 and 0 <= g.get("x", -1) and g["x"] + g["w"] <= 24 and g.get("y", -1) >= 0):
            problems.append(f"panel {title!r}: gridPos {g} is outside the 24-column grid")
            continue
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                if (x, y) in cells:
                    problems.append(f"panel {title!r} overlaps {cells[(x, y)]!r}")
                    break
                cells[(x, y)] = title
            else:
                continue
            break
        if p.get("type") == "row":
            continue
        targets = p.get("targets", [])
        if not targets:
            problems.append(f"panel {title!r} has no queries")
        if p.get("datasource", {}).get("uid") != "${datasource}":
            problems.append(f"panel {title!r}: data source is {p.get('datasource')}, not ${{datasource}}")
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs) or None in refs:
            problems.append(f"panel {title!r}: refIds {refs} are not unique")
        for t in targets:
            for var in re.findall(r"\$\{?([a-zA-Z_][a-zA-Z0-9_]*)", t.get("expr", "")):
                if var not in variables | BUILTIN_VARIABLES:
                    problems.append(f"panel {title!r}: uses ${var}, which the dashboard does not define")


def check_provisioning(path, problems):
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as e:
        problems.append(f"{path}: not YAML: {e}")
        return
    providers = doc.get("providers") if isinstance(doc, dict) else None
    if not (isinstance(doc, dict) and doc.get("apiVersion") == 1 and isinstance(providers, list) and providers):
        problems.append(f"{path}: expected apiVersion 1 and a list of providers")
        return
    p = providers[0]
    if p.get("type") != "file" or p.get("options", {}).get("path") != PACKAGED_PATH:
        problems.append(f"{path}: provider must be type 'file' with options.path {PACKAGED_PATH}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True, type=Path)
    ap.add_argument("--dashboard", required=True, type=Path)
    ap.add_argument("--provisioning", required=True, type=Path)
    a = ap.parse_args()
    problems = []
    try:
        dash = json.loads(a.dashboard.read_text())
    except ValueError as e:
        print(f"PROBLEM: {a.dashboard} is not JSON: {e}")
        return 1
    check_structure(dash, problems)
    check_provisioning(a.provisioning, problems)

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "server").mkdir()
        (Path(tmp) / "tracker").mkdir()
        families = parse_metrics(server_metrics(a.bin_dir, Path(tmp) / "server"))
        tracker = parse_metrics(tracker_metrics(a.bin_dir, Path(tmp) / "tracker"))
    overlap = set(families) & set(tracker)
    if overlap:
        problems.append(f"server and tracker export the same metrics {sorted(overlap)}: panels cannot tell them apart")
    families.update(tracker)

    used, queries = set(), 0
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        expr = q.get("query", "") if isinstance(q, dict) else (q if v.get("type") == "query" else "")
        if expr:
            check_queries(f"variable ${v['name']}", expr, families, problems, used)
    for p in dash.get("panels", []):
        for t in p.get("targets", []):
            queries += 1
            check_queries(f"panel {p.get('title')!r} query {t.get('refId')}", t.get("expr", ""), families, problems,
                          used, t.get("legendFormat", ""))

    for p in problems:
        print(f"PROBLEM: {p}")
    unshown = sorted(f for f in families if f.startswith("toast_") and f not in used)
    if unshown:
        print(f"note: on /metrics but on no panel: {', '.join(unshown)}")
    print(f"dashboard: {queries} queries over {len(used)} of {len(families)} metrics, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
