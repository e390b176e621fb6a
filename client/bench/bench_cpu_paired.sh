#!/usr/bin/env bash
# Client CPU benchmark (not a test): one swarm in which every other viewer runs another build of toast-client,
# so both builds meet the same peers, the same server and the same machine load at the same moments (a busy
# shared machine moves a client's CPU by more than most changes do: compare within a run, not across runs).
# Even-numbered viewers run OLD_BUILD's client, odd-numbered ones NEW_BUILD's; the server and tracker are
# NEW_BUILD's. Prints each half's median CPU (% of one core over the viewer's life, the testbed's figure),
# the ratio new/old, and each half's stalls and startup. Machine figures are in DIR/report.md.
#   usage: client/bench/bench_cpu_paired.sh OLD_BUILD NEW_BUILD [SCENARIO] [DIR]
#   (SCENARIO defaults to testbed/scenarios/client_cpu.json; DIR, where the run is kept, to a temporary one)
set -euo pipefail
cd "$(dirname "$0")/../.."
old=$(realpath "$1")
new=$(realpath "$2")
scenario=${3:-testbed/scenarios/client_cpu.json}
for b in "$old" "$new"; do
  [[ -x "$b/client/toast-client" ]] || { echo "no $b/client/toast-client" >&2; exit 2; }
done
bins=$(mktemp -d "${TMPDIR:-/tmp}/toast-bench-cpu.XXXXXX")
trap 'rm -rf "$bins"' EXIT
mkdir -p "$bins/client" "$bins/server" "$bins/tracker"
ln -s "$new/server/toast-server" "$bins/server/toast-server"
ln -s "$new/tracker/toast-tracker" "$bins/tracker/toast-tracker"
cat >"$bins/client/toast-client" <<SH
#!/usr/bin/env bash
# The viewer's index is in its --save-dir (.../clientNNN/data); exec keeps the PID the testbed samples.
for a in "\$@"; do
  if [[ \$a =~ client([0-9]+)/data ]]; then n=\$((10#\${BASH_REMATCH[1]})); fi
done
if [[ -n "\${n:-}" && \$((n % 2)) -eq 1 ]]; then exec "$new/client/toast-client" "\$@"; fi
exec "$old/client/toast-client" "\$@"
SH
chmod +x "$bins/client/toast-client"
out=${4:-$bins/run}
testbed/run "$scenario" --out "$out" --bin-dir "$bins" --no-baselines >/dev/null
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1] + "/report.json"))
half = {0: [], 1: []}
for c in r["per_client"]:
    half[int(c["client"]) % 2].append(c)
def med(cs, key):
    xs = [c[key] for c in cs if c.get(key) is not None]
    return statistics.median(xs) if xs else float("nan")
for k, name in ((0, "old"), (1, "new")):
    cs = half[k]
    print(f"{name}: {len(cs)} viewers, CPU median {med(cs, 'cpu_pct'):.2f}% of a core, "
          f"stalls {sum(c.get('stalls') or 0 for c in cs)}, startup median {med(cs, 'startup_ms'):.0f} ms")
print(f"new/old CPU: {med(half[1], 'cpu_pct') / med(half[0], 'cpu_pct'):.3f}")
print(f"the run: {r['reduction_pct']:.1f}% below unicast, {r['stalls']['count']} stalls")
PY
