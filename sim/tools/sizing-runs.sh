#!/usr/bin/env bash
# sim/tools/sizing-runs.sh OUT [TOAST_SIM]: every sizing experiment (sim/scenarios/sizing/*.json) simulated
# into OUT/NAME, one after the other, at the scale tick (--tick 1000), for sim/tools/sizing.py to tabulate:
#
#   sim/tools/sizing-runs.sh out/sizing && sim/tools/sizing.py out/sizing --img-dir docs/img
#
# TOAST_SIM defaults to build/sim/toast-sim. Tens of CPU-minutes in all (the 10^4-box rows of boxes_1h and
# push_1h most of it, so they run last): not a CI test. Each run's output goes to OUT/NAME.log, and
# OUT/NAME.done marks an experiment whose every row ran: it is skipped next time, so an interrupted sweep
# resumes where it stopped (delete OUT/NAME.done to run it again). Exit status 1 if any experiment failed
# (the others still run), 2 on bad usage.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "${1:0:1}" = - ]; then
  echo "usage: $0 OUT [TOAST_SIM]" >&2
  exit 2
fi
out=$1
sim=${2:-$repo/build/sim/toast-sim}
if [ ! -x "$sim" ]; then
  echo "$0: $sim is not an executable (build it: cmake --build build --target toast-sim)" >&2
  exit 2
fi
mkdir -p "$out" || exit 2

# The short ones first, so the tables fill in early; the one-hour evenings to 10^4 boxes last.
files=()
for f in "$repo"/sim/scenarios/sizing/*.json; do
  case $(basename "$f") in _base.json | *_1h.json) ;; *) files+=("$f") ;; esac
done
files+=("$repo"/sim/scenarios/sizing/*_1h.json)

failed=()
for f in "${files[@]}"; do
  name=$(basename "$f" .json)
  if [ -f "$out/$name.done" ]; then
    echo "$name: done before ($out/$name.done), skipped"
    continue
  fi
  echo "$name: running ($out/$name.log)"
  start=$SECONDS
  if "$sim" "$f" --out "$out/$name" --tick 1000 >"$out/$name.log" 2>&1; then
    echo "$name: done in $((SECONDS - start)) s" | tee "$out/$name.done"
  else
    echo "$name: FAILED after $((SECONDS - start)) s, see $out/$name.log" >&2
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "$0: failed: ${failed[*]}" >&2
  exit 1
fi
