#!/usr/bin/env bash
# Installs the three packages the way an operator would (dpkg -i), runs what they installed, then removes and
# purges them, all inside a throwaway copy-on-write view of this machine's root: a private mount and network
# namespace with an overlay whose upper layer is a tmpfs, so nothing reaches the host and everything vanishes
# with the namespace. Checks the service users, state directories, conffiles (an edited one survives a
# reinstall), unit enablement, `systemd-analyze verify` against the installed system, the server (check,
# ingest, serve a title byte for byte) and the tracker run as their users with the shipped configs, and what
# remove and purge leave behind.
#
# Usage: install_check.sh PACKAGE_DIR. Exit 0 when everything holds, 1 listing each problem, 77 (skipped)
# without root or without namespaces and overlayfs.
set -euo pipefail

if [ -z "${TOAST_INSTALL_CHECK_INNER:-}" ]; then
    [ $# -eq 1 ] || { echo "usage: $0 PACKAGE_DIR" >&2; exit 2; }
    [ "$(id -u)" -eq 0 ] || { echo "install check skipped: needs root"; exit 77; }
    unshare --mount --net --pid --fork true 2>/dev/null || { echo "install check skipped: no mount/network namespaces"; exit 77; }
    pkgs=$(realpath "$1")
    ls "$pkgs"/toast-server_*.deb "$pkgs"/toast-tracker_*.deb "$pkgs"/toast-client_*.deb >/dev/null
    # --mount makes every mount below private to the new namespace (unshare's default propagation); --pid ends
    # every process started inside when the check ends.
    exec timeout --kill-after=10 240 unshare --mount --net --pid --fork \
        env TOAST_INSTALL_CHECK_INNER=1 bash "$0" "$pkgs"
fi

pkgs=$1
work=$(mktemp -d /tmp/toast-install-check.XXXXXX)
# Leaving the namespace drops every mount below; only the empty mount point is left to remove.
trap 'cd /; umount -R "$work" || true; rmdir "$work" || true' EXIT
. "$(dirname "$0")/overlay_root.sh"
status=0
overlay_root "$work" || status=$?
[ $status -ne 77 ] || { echo "install check skipped: overlayfs over / is not available"; exit 77; }
[ $status -eq 0 ] || exit 1
ip link set lo up
mkdir "$root/tmp/debs"
cp "$pkgs"/toast-server_*.deb "$pkgs"/toast-tracker_*.deb "$pkgs"/toast-client_*.deb "$root/tmp/debs/"

chroot "$root" /bin/bash -s <<'INNER'
set -uo pipefail
problems=0
problem() { echo "PROBLEM: $*"; problems=$((problems + 1)); }
expect_eq() { [ "$2" = "$3" ] || problem "$1: got '$2', expected '$3'"; }
as() { local user=$1; shift; setpriv --reuid="$user" --regid="$user" --init-groups -- "$@"; }  # foreground only
wait_http() {  # URL: up to 10 s for an answer
    for _ in $(seq 100); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
    return 1
}

out=$(dpkg -i /tmp/debs/*.deb 2>&1) || problem "dpkg -i failed: $out"
for p in toast-server toast-tracker toast-client; do
    expect_eq "$p status" "$(dpkg-query -W -f='${Status}' $p 2>&1)" "install ok installed"
    entry=$(getent passwd $p) || { problem "no user $p"; continue; }
    IFS=: read -r _ _ uid gid _ home shell <<<"$entry"
    [ "$uid" -lt 1000 ] || problem "$p: uid $uid is not a system uid"
    expect_eq "$p group" "$(getent group "$gid" | cut -d: -f1)" "$p"
    expect_eq "$p shell" "$shell" "/usr/sbin/nologin"
    [ -L /etc/systemd/system/multi-user.target.wants/$p.service ] || problem "$p.service is not enabled"
    out=$(systemd-analyze verify $p.service 2>&1) || problem "systemd-analyze verify $p.service: $out"
    [ -z "$out" ] || problem "systemd-analyze verify $p.service: $out"
done
expect_eq "toast-server home" "$(getent passwd toast-server | cut -d: -f6)" "/var/lib/toast/server"
for d in /var/lib/toast/server /var/lib/toast/server/disk0 /var/lib/toast/server/disk1; do
    expect_eq "$d" "$(stat -c '%U:%G %a' $d 2>&1)" "toast-server:toast-server 750"
done
expect_eq /var/lib/toast/client "$(stat -c '%U:%G %a' /var/lib/toast/client 2>&1)" "toast-client:toast-client 750"
expect_eq /var/lib/toast/tracker "$(stat -c '%U:%G %a' /var/lib/toast/tracker 2>&1)" \
    "toast-tracker:toast-tracker 750"
expect_eq /var/lib/toast "$(stat -c '%U:%G %a' /var/lib/toast 2>&1)" "root:root 755"
expect_eq "server conffiles" "$(dpkg-query -W -f='${Conffiles}' toast-server | awk '{print $1}' | xargs)" \
    "/etc/toast/server.json"
expect_eq "tracker conffiles" "$(dpkg-query -W -f='${Conffiles}' toast-tracker | awk '{print $1}' | xargs)" \
    "/etc/toast/tracker.env /etc/toast/tracker.json"
expect_eq "client conffiles" "$(dpkg-query -W -f='${Conffiles}' toast-client | awk '{print $1}' | xargs)" \
    "/etc/toast/client.json"

# The server, as its user with the shipped config: check, ingest, serve the title byte for byte.
out=$(as toast-server toast-server --config /etc/toast/server.json check 2>&1)
case "$out" in *"config OK: 2 disks, policy rda, listen 127.0.0.1:8080, 0 titles"*) ;;
    *) problem "toast-server check: $out" ;; esac
head -c 3000000 /dev/urandom >/tmp/title.bin
chmod 644 /tmp/title.bin
out=$(as toast-server toast-server --config /etc/toast/server.json ingest demo /tmp/title.bin \
    --torrent /var/lib/toast/server/demo.torrent 2>&1) || problem "ingest as toast-server: $out"
# With stderr on the journal (JOURNAL_STREAM names it, as systemd sets it) lines carry syslog priorities.
: >/tmp/server.log
JOURNAL_STREAM=$(stat -c '%d:%i' /tmp/server.log) setpriv --reuid=toast-server --regid=toast-server \
    --init-groups -- toast-server --config /etc/toast/server.json serve 2>>/tmp/server.log &
server=$!
if wait_http http://127.0.0.1:8080/healthz; then
    expect_eq "title bytes" "$(curl -sf http://127.0.0.1:8080/titles/demo | sha256sum)" "$(sha256sum </tmp/title.bin)"
    # Read the whole page before matching: under pipefail, grep -q quitting at its first match fails curl's
    # write (exit 23) whenever the page outgrows the pipe's buffer.
    metrics=$(curl -sf http://127.0.0.1:8080/metrics) || metrics=""
    grep -q '^toast_http_requests_total' <<<"$metrics" || problem "server /metrics: $(head -c 300 <<<"$metrics")"
else
    problem "toast-server serve did not answer: $(cat /tmp/server.log)"
fi
kill -TERM $server; wait $server || problem "toast-server serve exited $? after SIGTERM"
grep -q '^<6>info serving HTTP on 127.0.0.1:8080' /tmp/server.log || problem "journal log lines: $(head -3 /tmp/server.log)"

# The tracker, as its user with the options from tracker.env.
set -a; . /etc/toast/tracker.env; set +a
# shellcheck disable=SC2086 # the options are words, as systemd splits $TOAST_TRACKER_OPTS
setpriv --reuid=toast-tracker --regid=toast-tracker --init-groups -- \
    toast-tracker $TOAST_TRACKER_OPTS >/dev/null 2>/tmp/tracker.log &
tracker=$!
if wait_http http://127.0.0.1:6969/metrics; then
    metrics=$(curl -sf http://127.0.0.1:6969/metrics) || metrics=""
    grep -q '^toast_tracker_swarms' <<<"$metrics" || problem "tracker /metrics: $(head -c 300 <<<"$metrics")"
else
    problem "toast-tracker did not answer: $(cat /tmp/tracker.log)"
fi
kill -TERM $tracker; wait $tracker || problem "toast-tracker exited $? after SIGTERM"
# It saved its swarms at the stop, where the shipped config says.
grep -q '"format": *"toast-tracker-state"' /var/lib/toast/tracker/swarms.json ||
    problem "no tracker state saved at stop: $(ls -l /var/lib/toast/tracker 2>&1) $(cat /tmp/tracker.log)"
as toast-client toast-client --help >/dev/null || problem "toast-client --help as toast-client"

# An edited conffile survives reinstalling the package.
sed -i 's/"log_level": "info"/"log_level": "warn"/' /etc/toast/server.json
out=$(dpkg -i /tmp/debs/toast-server_*.deb 2>&1) || problem "reinstall failed: $out"
grep -q '"log_level": "warn"' /etc/toast/server.json || problem "reinstall replaced the edited server.json"

# remove: programs and units go, configs and state stay, the units are masked.
out=$(dpkg -r toast-server toast-tracker toast-client 2>&1) || problem "dpkg -r failed: $out"
for p in toast-server toast-tracker toast-client; do
    [ ! -e /usr/bin/$p ] || problem "/usr/bin/$p left after remove"
    [ ! -e /lib/systemd/system/$p.service ] || problem "$p.service left after remove"
    expect_eq "$p.service mask" "$(readlink /etc/systemd/system/$p.service)" "/dev/null"
done
for f in server.json tracker.json tracker.env client.json; do
    [ -f /etc/toast/$f ] || problem "/etc/toast/$f removed by dpkg -r (conffiles stay until purge)"
done
[ -f /var/lib/toast/server/demo.torrent ] || problem "dpkg -r removed the server's state"

# purge: configs, state, masks and enablement go; the users stay.
out=$(dpkg -P toast-server toast-tracker toast-client 2>&1) || problem "dpkg -P failed: $out"
for path in /etc/toast /var/lib/toast /etc/systemd/system/toast-server.service \
    /etc/systemd/system/multi-user.target.wants/toast-server.service; do
    [ ! -e "$path" ] && [ ! -L "$path" ] || problem "$path left after purge"
done
getent passwd toast-server >/dev/null || problem "purge removed the user toast-server"

echo "install check: $problems problems"
[ $problems -eq 0 ]
INNER
