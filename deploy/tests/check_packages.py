#!/usr/bin/python3
"""Builds the Debian packages with CPack and checks what an operator gets from them.

For toast-server, toast-tracker and toast-client: the exact file list with owners and modes, the control
fields (dependencies found by dpkg-shlibdeps), conffiles, the maintainer scripts (POSIX sh syntax, the
service user, the systemd snippets), the default configs (accepted by the binaries themselves), and the
systemd units: the hardening every unit must keep, `systemd-analyze verify` in a root made of the packages,
and `systemd-analyze security` below an exposure of 2.0.

Usage: check_packages.py --build-dir BUILD --out DIR. Exit 0 when everything holds, 1 listing each problem.
The packages are left in DIR for the install check (install_check.sh).
"""

import argparse
import glob
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

UNIT_DIR = "/lib/systemd/system"
HARDENING = {
    "NoNewPrivileges": "yes",
    "ProtectSystem": "strict",
    "ProtectHome": "yes",
    "PrivateTmp": "yes",
    "PrivateDevices": "yes",
    "ProtectKernelTunables": "yes",
    "ProtectKernelModules": "yes",
    "ProtectControlGroups": "yes",
    "RestrictNamespaces": "yes",
    "RestrictSUIDSGID": "yes",
    "MemoryDenyWriteExecute": "yes",
    "LockPersonality": "yes",
    "CapabilityBoundingSet": "",
    "SystemCallArchitectures": "native",
}
MAX_EXPOSURE = 20  # systemd-analyze security's scale in tenths: 2.0 of 10

PACKAGES = {
    "toast-server": {
        "files": {
            "/usr/bin/toast-server": 0o755,
            f"{UNIT_DIR}/toast-server.service": 0o644,
            "/etc/toast/server.json": 0o644,
            "/usr/share/doc/toast-server/operations.md": 0o644,
            "/usr/share/doc/toast-server/server.md": 0o644,
            "/usr/share/doc/toast-server/server-storage.md": 0o644,
            "/usr/share/doc/toast-server/server-catalogue.md": 0o644,
            "/usr/share/toast-server/grafana/dashboards/toast.json": 0o644,
            "/usr/share/toast-server/grafana/provisioning/toast.yaml": 0o644,
            "/usr/share/toast-server/prometheus/toast-alerts.yml": 0o644,
        },
        "conffiles": ["/etc/toast/server.json"],
        "exec_start": "/usr/bin/toast-server --config /etc/toast/server.json serve",
        "state_directory": "toast/server",
        "families": {"AF_INET", "AF_INET6", "AF_UNIX"},
        "state_dirs": ["/var/lib/toast/server/disk0", "/var/lib/toast/server/disk1"],
        "purge_dirs": ["/var/lib/toast/server"],
    },
    "toast-tracker": {
        "files": {
            "/usr/bin/toast-tracker": 0o755,
            f"{UNIT_DIR}/toast-tracker.service": 0o644,
            "/etc/toast/tracker.json": 0o644,
            "/etc/toast/tracker.env": 0o644,
            "/usr/share/doc/toast-tracker/operations.md": 0o644,
            "/usr/share/doc/toast-tracker/tracker.md": 0o644,
        },
        "conffiles": ["/etc/toast/tracker.env", "/etc/toast/tracker.json"],
        "exec_start": "/usr/bin/toast-tracker $TOAST_TRACKER_OPTS",
        "state_directory": "toast/tracker",
        "families": {"AF_INET", "AF_INET6", "AF_UNIX"},
        "state_dirs": ["/var/lib/toast/tracker"],
        "purge_dirs": ["/var/lib/toast/tracker"],
    },
    "toast-client": {
        "files": {
            "/usr/bin/toast-client": 0o755,
            f"{UNIT_DIR}/toast-client.service": 0o644,
            "/etc/toast/client.json": 0o644,
            "/usr/share/doc/toast-client/operations.md": 0o644,
        },
        "conffiles": ["/etc/toast/client.json"],
        "exec_start": "/usr/bin/toast-client serve --config /etc/toast/client.json",
        "state_directory": "toast/client",
        "families": {"AF_INET", "AF_INET6", "AF_UNIX", "AF_NETLINK"},
        "state_dirs": ["/var/lib/toast/client"],
        "purge_dirs": ["/var/lib/toast/client"],
    },
}
DEPENDS = ["adduser", "init-system-helpers", "libtorrent-rasterbar2.0", "libspdlog1.10"]


def run(cmd, text=True, timeout=300, **kw):
    return subprocess.run(cmd, capture_output=True, text=text, timeout=timeout, **kw)


def parse_unit(text):
    """INI sections of a unit file; a key given twice keeps every value, in order."""
    sections, current = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def parents(path):
    p = Path(path).parent
    while str(p) != "/":
        yield str(p)
        p = p.parent


class Checker:
    def __init__(self):
        self.problems = []

    def expect(self, ok, message):
        if not ok:
            self.problems.append(message)
        return ok

    def package_contents(self, name, spec, deb):
        listing = tarfile.open(fileobj=io.BytesIO(run(["dpkg-deb", "--fsys-tarfile", deb],
                                                      text=False).stdout))
        entries = {m.name.lstrip(".").rstrip("/") or "/": m for m in listing.getmembers()}
        entries.pop("/", None)
        dirs = {p for f in spec["files"] for p in parents(f)}
        expected = set(spec["files"]) | dirs
        self.expect(set(entries) == expected,
                    f"{name}: contents differ: extra {sorted(set(entries) - expected)}, "
                    f"missing {sorted(expected - set(entries))}")
        for path, m in entries.items():
            self.expect(m.uname == "root" and m.gname == "root", f"{name}: {path} owned by {m.uname}:{m.gname}")
            want = 0o755 if path in dirs else spec["files"].get(path)
            if want is not None:
                self.expect(stat.S_IMODE(m.mode) == want,
                            f"{name}: {path} has mode {stat.S_IMODE(m.mode):o}, expected {want:o}")

    def control(self, name, spec, deb, version):
        fields = {}
        for key in ["Package", "Version", "Architecture", "Depends", "Maintainer", "Description", "Section"]:
            fields[key] = run(["dpkg-deb", "-f", deb, key]).stdout.strip()
        self.expect(fields["Package"] == name, f"{name}: Package is {fields['Package']!r}")
        self.expect(fields["Version"] == version, f"{name}: Version {fields['Version']!r}, expected {version}")
        arch = run(["dpkg", "--print-architecture"]).stdout.strip()
        self.expect(fields["Architecture"] == arch, f"{name}: Architecture {fields['Architecture']!r}")
        depends = [d.strip().split(" ")[0] for d in fields["Depends"].split(",")]
        for d in DEPENDS:
            self.expect(any(x.startswith(d) for x in depends), f"{name}: Depends lacks {d}: {fields['Depends']}")
        self.expect("<" in fields["Maintainer"], f"{name}: Maintainer {fields['Maintainer']!r}")
        self.expect(fields["Description"].count("\n") >= 1, f"{name}: Description has no long text")

        ctrl = tarfile.open(fileobj=io.BytesIO(run(["dpkg-deb", "--ctrl-tarfile", deb], text=False).stdout))
        members = {m.name.lstrip("./"): m for m in ctrl.getmembers() if m.isfile()}
        self.expect({"control", "md5sums", "conffiles", "postinst", "prerm", "postrm"} <= set(members),
                    f"{name}: control files {sorted(members)}")
        read = lambda n: ctrl.extractfile(members[n]).read().decode() if n in members else ""  # noqa: E731
        conffiles = read("conffiles").split()
        self.expect(sorted(conffiles) == sorted(spec["conffiles"]),
                    f"{name}: conffiles {conffiles}, expected {spec['conffiles']}")
        unit = f"{name}.service"
        for script in ["postinst", "prerm", "postrm"]:
            if script not in members:
                continue
            text = read(script)
            self.expect(stat.S_IMODE(members[script].mode) == 0o755, f"{name}: {script} is not mode 755")
            self.expect(text.startswith("#!/bin/sh\n"), f"{name}: {script} does not start with #!/bin/sh")
            self.expect("set -e" in text, f"{name}: {script} lacks set -e")
            self.expect("@" not in text, f"{name}: {script} has an unsubstituted @VARIABLE@")
            syntax = run(["sh", "-n"], input=text)
            self.expect(syntax.returncode == 0, f"{name}: {script} is not valid sh: {syntax.stderr.strip()}")
            self.expect(f"'{unit}'" in text, f"{name}: {script} does not name {unit}")
        postinst, prerm, postrm = read("postinst"), read("prerm"), read("postrm")
        self.expect(f"adduser --system --group" in postinst and postinst.rstrip().endswith("exit 0")
                    and f" {name}\n" in postinst, f"{name}: postinst does not create the system user {name}")
        for d in spec["state_dirs"]:
            self.expect(d in postinst, f"{name}: postinst does not create {d}")
        self.expect(f"deb-systemd-helper enable '{unit}'" in postinst, f"{name}: postinst does not enable {unit}")
        self.expect(f"deb-systemd-invoke $action '{unit}'" in postinst, f"{name}: postinst does not start {unit}")
        self.expect(f"deb-systemd-invoke stop '{unit}'" in prerm, f"{name}: prerm does not stop {unit}")
        self.expect(f"deb-systemd-helper purge '{unit}'" in postrm, f"{name}: postrm does not purge {unit}")
        for d in spec["purge_dirs"]:
            self.expect(f"for dir in {d}" in postrm, f"{name}: postrm purge does not remove {d}")

    def unit(self, name, spec, root):
        path = root / UNIT_DIR.lstrip("/") / f"{name}.service"
        sections = parse_unit(path.read_text())
        service = sections.get("Service", {})
        one = lambda key: (service.get(key) or [None])[-1]  # noqa: E731
        self.expect(one("User") == name and one("Group") == name, f"{name}: unit runs as {one('User')}")
        self.expect(one("ExecStart") == spec["exec_start"], f"{name}: ExecStart is {one('ExecStart')!r}")
        for key, value in HARDENING.items():
            self.expect(one(key) == value, f"{name}: unit has {key}={one(key)!r}, expected {value!r}")
        families = set((one("RestrictAddressFamilies") or "").split())
        self.expect(families == spec["families"], f"{name}: RestrictAddressFamilies={sorted(families)}")
        self.expect("@system-service" in (service.get("SystemCallFilter") or []),
                    f"{name}: no SystemCallFilter=@system-service")
        self.expect(one("StateDirectory") == spec["state_directory"],
                    f"{name}: StateDirectory={one('StateDirectory')!r}")
        self.expect(one("Restart") == "on-failure", f"{name}: Restart={one('Restart')!r}")
        self.expect(sections.get("Install", {}).get("WantedBy") == ["multi-user.target"],
                    f"{name}: not WantedBy=multi-user.target")

        verify = run(["systemd-analyze", "verify", f"--root={root}", f"{name}.service"])
        self.expect(verify.returncode == 0 and not verify.stderr.strip(),
                    f"{name}: systemd-analyze verify: {verify.stderr.strip() or verify.returncode}")
        security = run(["systemd-analyze", "security", "--offline=true", f"--root={root}",
                        f"--threshold={MAX_EXPOSURE}", f"{name}.service"])
        last = (security.stdout.strip().splitlines() or ["(no output)"])[-1]
        self.expect(security.returncode == 0, f"{name}: systemd-analyze security above {MAX_EXPOSURE / 10}: {last}")


def system_root(root):
    """Completes the packages' files into what systemd-analyze needs of a Debian system: the targets the units
    order against and the tools they run besides the package's own binary."""
    (root / "bin").symlink_to("usr/bin")
    units = root / UNIT_DIR.lstrip("/")
    for target in glob.glob(f"{UNIT_DIR}/*.target"):
        shutil.copy(target, units)
    shutil.copy(shutil.which("kill"), root / "usr/bin/kill")


def check_configs(c, root):
    for conf in ["server.json", "tracker.json", "client.json"]:
        try:
            json.loads((root / "etc/toast" / conf).read_text())
        except ValueError as e:
            c.expect(False, f"/etc/toast/{conf} is not JSON: {e}")
    # The server's own check, with the default store's disks made here.
    with tempfile.TemporaryDirectory() as tmp:
        config = json.loads((root / "etc/toast/server.json").read_text())
        config["disks"] = [str(Path(tmp) / Path(d).name) for d in config["disks"]]
        for d in config["disks"]:
            os.mkdir(d)
        Path(tmp, "server.json").write_text(json.dumps(config))
        r = run([str(root / "usr/bin/toast-server"), "--config", f"{tmp}/server.json", "check"], timeout=60)
        c.expect(r.returncode == 0 and "config OK: 2 disks, policy rda" in r.stdout,
                 f"server.json: toast-server check says {r.stdout.strip()} {r.stderr.strip()}")
    # The tracker's options from tracker.env, on a free port instead of 6969.
    env = (root / "etc/toast/tracker.env").read_text()
    opts = next(l.split("=", 1)[1].strip('"') for l in env.splitlines() if l.startswith("TOAST_TRACKER_OPTS="))
    args = opts.replace("0.0.0.0:6969", "127.0.0.1:0").replace("/etc/toast/", f"{root}/etc/toast/").split()
    p = subprocess.Popen([str(root / "usr/bin/toast-tracker")] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()
        c.expect(first.startswith("toast-tracker: http 127.0.0.1:"), f"tracker.env/tracker.json: tracker said "
                 f"{first.strip()!r} {p.stderr.read() if p.poll() is not None else ''}")
    finally:
        p.terminate()
        p.wait(timeout=10)
    r = run([str(root / "usr/bin/toast-client"), "--help"], timeout=30)
    c.expect(r.returncode == 0, f"toast-client --help failed: {r.stderr.strip()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args()
    a.build_dir, a.out = a.build_dir.resolve(), a.out.resolve()

    shutil.rmtree(a.out, ignore_errors=True)
    a.out.mkdir(parents=True)
    cpack = run(["cpack", "-G", "DEB", "-B", str(a.out), "--config", str(a.build_dir / "CPackConfig.cmake")],
                cwd=a.build_dir, timeout=600)
    if cpack.returncode != 0:
        print(f"cpack failed ({cpack.returncode}):\n{cpack.stdout}\n{cpack.stderr}")
        return 1
    shutil.rmtree(a.out / "_CPack_Packages", ignore_errors=True)
    cache = (a.build_dir / "CMakeCache.txt").read_text()
    version = next(l.split("=", 1)[1] for l in cache.splitlines() if l.startswith("CMAKE_PROJECT_VERSION:"))

    c = Checker()
    debs = sorted(glob.glob(str(a.out / "*.deb")))
    c.expect(len(debs) == len(PACKAGES), f"expected {len(PACKAGES)} packages, cpack made {debs}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, spec in PACKAGES.items():
            found = glob.glob(str(a.out / f"{name}_{version}-1_*.deb"))
            if not c.expect(len(found) == 1, f"{name}: no package {name}_{version}-1_*.deb in {debs}"):
                continue
            c.package_contents(name, spec, found[0])
            c.control(name, spec, found[0], f"{version}-1")
            subprocess.run(["dpkg-deb", "-x", found[0], str(root)], check=True)
        system_root(root)
        for name, spec in PACKAGES.items():
            if (root / UNIT_DIR.lstrip("/") / f"{name}.service").exists():
                c.unit(name, spec, root)
        check_configs(c, root)

    for p in c.problems:
        print(f"PROBLEM: {p}")
    print(f"packages: {len(debs)} built in {a.out}, {len(c.problems)} problems")
    return 1 if c.problems else 0


if __name__ == "__main__":
    sys.exit(main())
