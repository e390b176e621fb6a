#!/usr/bin/env bash
# Runs the packaged services under systemd itself, with every sandboxing option of their units in force: boots
# systemd as PID 1 of private PID, mount, network, UTS and IPC namespaces on a throwaway overlay of this
# machine's root (overlay_root.sh) where the packages are installed, up to a target that wants only Toast's
# units. Checks that the server and the tracker start as their users with no capabilities, no new
# privileges and a seccomp filter; that they answer; that the journal gets their lines with the right
# priorities; that `systemctl reload` keeps the tracker running; and that `systemctl stop` stops cleanly.
#
# Usage: systemd_check.sh PACKAGE_DIR. Exit 0 when everything holds, 1 listing each problem, 77 (skipped)
# without root, namespaces, overlayfs, or when systemd cannot boot in a namespace here.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" = "--boot" ]; then
    # Inside the namespaces, as their PID 1: prepare the root, install, and become systemd.
    pkgs=$2 work=$3
    . "$here/overlay_root.sh"
    status=0
    overlay_root "$work" || status=$?
    [ $status -eq 0 ] || exit $status
    mount --rbind /sys "$root/sys"
    ip link set lo up
    mkdir "$root/tmp/debs"
    cp "$pkgs"/toast-server_*.deb "$pkgs"/toast-tracker_*.deb "$pkgs"/toast-client_*.deb "$root/tmp/debs/"
    chroot "$root" sh -c 'dpkg -i /tmp/debs/*.deb' >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; exit 1; }
    cat >"$root/etc/systemd/system/toast-check.target" <<'EOF'
[Unit]
Description=Toast's services and what they need, nothing else
Wants=toast-server.service toast-tracker.service toast-client.service
EOF
    exec chroot "$root" env container=toast-check /lib/systemd/systemd --system --unit=toast-check.target \
        --log-target=console --log-level=warning
fi

[ $# -eq 1 ] || { echo "usage: $0 PACKAGE_DIR" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "systemd check skipped: needs root"; exit 77; }
[ -x /lib/systemd/systemd ] || { echo "systemd check skipped: no /lib/systemd/systemd"; exit 77; }
pkgs=$(realpath "$1")
work=$(mktemp -d /tmp/toast-systemd-check.XXXXXX)
unshare --mount --net --pid --uts --ipc --fork bash "$0" --boot "$pkgs" "$work" >"$work.log" 2>&1 &
unshare_pid=$!
init=""
cleanup() {
    # Killing the namespace's PID 1 kills every process in it; the mounts go with the namespace.
    [ -z "$init" ] || kill -KILL "$init" 2>/dev/null || true
    kill -KILL "$unshare_pid" 2>/dev/null || true
    wait "$unshare_pid" 2>/dev/null || true
    rmdir "$work" 2>/dev/null || true
    rm -f "$work.log"
}
trap cleanup EXIT

inside() { nsenter -t "$init" -m -n -p -u -i -r -w "$@"; }
state=""
for _ in $(seq 600); do  # up to 60 s for the install and the boot
    init=$(pgrep -P "$unshare_pid" || true)
    if [ -n "$init" ] && [ "$(cat /proc/"$init"/comm 2>/dev/null)" = systemd ]; then
        state=$(inside systemctl is-system-running 2>/dev/null || true)
        case "$state" in initializing | starting | running | degraded) break ;; esac
    fi
    if ! kill -0 "$unshare_pid" 2>/dev/null; then
        wait "$unshare_pid" && status=0 || status=$?
        if [ $status -eq 77 ]; then echo "systemd check skipped: overlayfs over / is not available"; exit 77; fi
        echo "PROBLEM: the boot in the namespace ended with status $status:"
        cat "$work.log"
        exit 1
    fi
    sleep 0.1
done
case "$state" in
    initializing | starting | running | degraded) ;;
    *) echo "systemd check skipped: systemd did not come up in a namespace here (${state:-no answer})"
        tail -20 "$work.log"
        exit 77 ;;
esac

problems=0
problem() { echo "PROBLEM: $*"; problems=$((problems + 1)); }
wait_active() {  # UNIT: up to 20 s
    for _ in $(seq 200); do
        [ "$(inside systemctl is-active "$1")" = active ] && return 0
        sleep 0.1
    done
    return 1
}
wait_http() {  # URL: up to 10 s
    for _ in $(seq 100); do inside curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
    return 1
}
sandbox() {  # UNIT USER: the main process's user and what the kernel says of its privileges
    local pid status
    pid=$(inside systemctl show -p MainPID --value "$1" || true)
    [ "${pid:-0}" != 0 ] || { problem "$1 has no main process"; return; }
    status=$(inside cat /proc/"$pid"/status || true)
    [ "$(inside ps -o user= -p "$pid")" = "$2" ] || problem "$1 runs as $(inside ps -o user= -p "$pid")"
    grep -q '^NoNewPrivs:[[:space:]]*1$' <<<"$status" || problem "$1: NoNewPrivs is not set"
    grep -q '^Seccomp:[[:space:]]*2$' <<<"$status" || problem "$1: no seccomp filter"
    grep -q '^CapEff:[[:space:]]*0*$' <<<"$status" || problem "$1: has capabilities: $(grep ^CapEff <<<"$status")"
    grep -q '^CapBnd:[[:space:]]*0*$' <<<"$status" || problem "$1: capability bounding set is not empty"
}
journal_priority() {  # UNIT TEXT: the PRIORITY field journald stored for the first line containing TEXT
    inside journalctl -u "$1" -o json --no-pager |
        /usr/bin/python3 -c 'import json,sys; t=sys.argv[1]
print(next((e["PRIORITY"] for e in map(json.loads, sys.stdin) if t in str(e.get("MESSAGE",""))), "none"))' "$2"
}

if wait_active toast-server.service; then
    sandbox toast-server.service toast-server
    wait_http http://127.0.0.1:8080/healthz || problem "toast-server does not answer /healthz"
    [ "$(journal_priority toast-server.service 'serving HTTP on 127.0.0.1:8080')" = 6 ] ||
        problem "journal: 'serving HTTP' is not at priority 6 (info)"
    [ "$(journal_priority toast-server.service 'config OK: 2 disks')" = 6 ] ||
        problem "journal: the ExecStartPre check's output is missing"
else
    problem "toast-server.service is $(inside systemctl is-active toast-server.service):"
    inside journalctl -u toast-server.service --no-pager | tail -5
fi

if wait_active toast-tracker.service; then
    sandbox toast-tracker.service toast-tracker
    wait_http http://127.0.0.1:6969/metrics || problem "toast-tracker does not answer /metrics"
    before=$(inside systemctl show -p MainPID --value toast-tracker.service)
    inside systemctl reload toast-tracker.service || problem "systemctl reload toast-tracker failed"
    for _ in $(seq 50); do
        [ "$(journal_priority toast-tracker.service 'nothing to reload')" = none ] || break
        sleep 0.1
    done
    [ "$(journal_priority toast-tracker.service 'nothing to reload')" = 6 ] ||
        problem "journal: the tracker did not log its reload at info"
    [ "$(inside systemctl show -p MainPID --value toast-tracker.service)" = "$before" ] ||
        problem "reload restarted the tracker"
else
    problem "toast-tracker.service is $(inside systemctl is-active toast-tracker.service):"
    inside journalctl -u toast-tracker.service --no-pager | tail -5
fi

inside systemctl stop toast-server.service toast-tracker.service || problem "systemctl stop failed"
for unit in toast-server.service toast-tracker.service; do
    [ "$(inside systemctl show -p Result --value $unit)" = success ] ||
        problem "$unit stopped with result $(inside systemctl show -p Result --value $unit)"
done
# toast-client serve is the set-top-box service still to come; its unit is checked statically for now.
echo "toast-client.service: $(inside systemctl is-active toast-client.service) ($(inside journalctl \
    -u toast-client.service --no-pager -o cat | grep -m1 toast-client: || true))"

echo "systemd check: $problems problems"
[ $problems -eq 0 ]
