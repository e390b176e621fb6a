#!/usr/bin/python3
"""Keeps the Prometheus alert rules (deploy/prometheus/toast-alerts.yml) true to what toast-server exports.

Checks that the file is YAML in Prometheus's rule-file shape (groups with unique names, rules with a unique
alert name, an expression, a duration in `for`, a severity label, a summary annotation), that each expression
is balanced and uses only PromQL's functions and aggregations, and, against a running toast-server (admission
control and signed URLs on, so that their metrics exist), that every metric an expression reads is on its
/metrics, histograms only through their series, and every label selected, grouped by or named in an
annotation is a label of the metrics the expression reads (check_dashboard.py's rules).

Usage: check_alerts.py --bin-dir BUILD --rules YAML. Exit 0 when everything holds, 1 listing each problem.
"""

import argparse
import re
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_dashboard  # noqa: E402

DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")
PROMQL_WORDS = {
    "sum", "avg", "min", "max", "count", "rate", "irate", "increase", "histogram_quantile", "by", "without",
    "and", "or", "unless", "offset", "on", "ignoring", "group_left", "group_right", "bool", "abs", "clamp_min",
    "clamp_max", "absent", "topk", "bottomk", "quantile", "label_replace", "vector", "scalar", "time",
}
SEVERITIES = {"critical", "warning", "info"}


def balanced(expr):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    in_string = False
    for c in expr:
        if c == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif c in "([{":
            stack.append(c)
        elif c in pairs:
            if not stack or stack.pop() != pairs[c]:
                return False
    return not stack and not in_string


def check_rule(where, rule, families, problems, used):
    for key in ("alert", "expr", "labels", "annotations"):
        if key not in rule:
            problems.append(f"{where}: no {key!r}")
            return
    expr = rule["expr"]
    if not isinstance(expr, str) or not expr.strip():
        problems.append(f"{where}: expr is not a non-empty string")
        return
    if not balanced(expr):
        problems.append(f"{where}: expr has unbalanced brackets or quotes")
    if "for" in rule and not DURATION.match(str(rule["for"])):
        problems.append(f"{where}: 'for' {rule['for']!r} is not a Prometheus duration")
    for window in re.findall(r"\[([^\]]+)\]", expr):
        if not DURATION.match(window):
            problems.append(f"{where}: range {window!r} is not a Prometheus duration")
    bare = re.sub(r'"[^"]*"', '""', expr)
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]", "", bare)
    for word in re.findall(r"\b([a-z_][a-z0-9_]*)\s*\(", bare):
        if word not in PROMQL_WORDS:
            problems.append(f"{where}: {word}() is not a PromQL function or aggregation this file expects")
    if rule["labels"].get("severity") not in SEVERITIES:
        problems.append(f"{where}: severity {rule['labels'].get('severity')!r} is not one of {sorted(SEVERITIES)}")
    if "summary" not in rule["annotations"]:
        problems.append(f"{where}: no summary annotation")
    legend = " ".join(str(v) for v in rule["annotations"].values())
    legend = re.sub(r"\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)", r"{{\1}}", legend)
    legend = re.sub(r"\{\{[^}]*\$value[^}]*\}\}", "", legend)
    check_dashboard.check_queries(where, expr, families, problems, used, legend)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True, type=Path)
    ap.add_argument("--rules", required=True, type=Path)
    a = ap.parse_args()
    problems = []
    try:
        doc = yaml.safe_load(a.rules.read_text())
    except yaml.YAMLError as e:
        print(f"PROBLEM: {a.rules} is not YAML: {e}")
        return 1
    groups = doc.get("groups") if isinstance(doc, dict) else None
    if not isinstance(groups, list) or not groups:
        print(f"PROBLEM: {a.rules}: expected a non-empty list of groups")
        return 1
    extra = {"admission": {"enabled": True}}
    with tempfile.TemporaryDirectory() as tmp:
        families = check_dashboard.parse_metrics(check_dashboard.server_metrics(a.bin_dir, Path(tmp), extra))
    names, used, rules = set(), set(), 0
    group_names = set()
    for g in groups:
        if g.get("name") in group_names:
            problems.append(f"group {g.get('name')!r} named twice")
        group_names.add(g.get("name"))
        for rule in g.get("rules", []):
            rules += 1
            name = rule.get("alert", "?")
            if name in names:
                problems.append(f"alert {name!r} defined twice")
            names.add(name)
            check_rule(f"alert {name!r}", rule, families, problems, used)
    for p in problems:
        print(f"PROBLEM: {p}")
    print(f"alerts: {rules} rules over {len(used)} metrics, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
