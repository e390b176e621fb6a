#!/usr/bin/env bash
# Installs everything Toast needs to build, test and benchmark, from Debian 12 packages only.
# Idempotent: packages already present are skipped; apt-get runs only when something is missing.
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build pkg-config clang-format-14
  # fuzzing (scripts/fuzz): clang with libFuzzer and the sanitizer runtimes
  clang-14 libclang-rt-14-dev
  # libraries
  libtorrent-rasterbar-dev libboost-dev libboost-system-dev catch2 libspdlog-dev nlohmann-json3-dev
  # the simulator (sim/): SimGrid 3.32, its s4u C++ API
  libsimgrid-dev
  # signed URLs (HMAC-SHA256), TLS and the certificate checks of SSL swarms; openssl makes the tests' and
  # testbed's CAs and certificates
  libssl-dev openssl
  # tests, benchmarks and the testbed
  curl nginx-light opentracker wrk ffmpeg python3 python3-libtorrent python3-matplotlib python3-yaml iproute2 procps
  # Debian packages: cpack's DEB generator runs dpkg-shlibdeps; the package test runs systemd-analyze and
  # installs the packages (adduser, deb-systemd-helper) in a throwaway overlay (unshare, setpriv)
  dpkg-dev systemd adduser init-system-helpers util-linux
  # stock peers: the client's interop tests (Transmission; aria2 against private SSL swarms), the tier's
  # stock-client test (aria2)
  transmission-daemon aria2
  # home routers (NAT namespaces) in the real-network checks (testbed/nat-drill)
  nftables
  # the browser test of the client service's live piece map (headless)
  chromium
  # the real-player playback test (mpv with --vo=null --ao=null, driven through its JSON IPC)
  mpv
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# nginx-light's package starts a system nginx on port 80 and opentracker's one on 6969; benchmarks run their
# own instances.
for service in nginx opentracker; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$service" 2>/dev/null; then
    "${sudo_cmd[@]}" systemctl stop "$service" || true
  fi
done
echo "install-deps: done"
