"""Private swarms in the testbed: a scenario with "private": true ingests the title private (BEP 27) and has
the tracker admit only the passkeys it issues, one per box; "ssl": true also makes the operator's CA with
the openssl command line, ingests the title with it (--peer-ca) and signs a certificate for every box, so
that peers authenticate each other over TLS (libtorrent's SSL torrents). This is what docs/operations.md
tells an operator to do, on a small scale."""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path


class CredentialsError(RuntimeError):
    pass


def _openssl(args: list[str]) -> None:
    r = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise CredentialsError(f"openssl {args[0]} failed: {r.stderr.strip()}")


class SwarmCredentials:
    """Passkeys (and with `ssl` a CA and certificates) for the boxes named `boxes`, in `work`/pki."""

    def __init__(self, work: Path, boxes: list[str], ssl: bool):
        self.dir = work / "pki"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ssl = ssl
        self.passkeys = {name: secrets.token_urlsafe(24) for name in boxes}
        self.passkey_file = self.dir / "passkeys"
        self.passkey_file.write_text("".join(f"{key} {name}\n" for name, key in self.passkeys.items()))
        self.ca = self.dir / "ca.pem"
        if ssl:
            _openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                      "-days", "30", "-subj", "/CN=testbed operator CA", "-keyout", str(self.dir / "ca.key"),
                      "-out", str(self.ca)])
            ext = self.dir / "box.ext"
            ext.write_text("subjectAltName=DNS:*\nbasicConstraints=CA:FALSE\n")
            for name in boxes:
                self._sign(name, ext)

    def _sign(self, name: str, ext: Path) -> None:
        key, csr, cert = (self.dir / f"{name}{suffix}" for suffix in (".key", ".csr", ".pem"))
        _openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
                  f"/CN={name}", "-keyout", str(key), "-out", str(csr)])
        _openssl(["x509", "-req", "-in", str(csr), "-CA", str(self.ca), "-CAkey", str(self.dir / "ca.key"),
                  "-CAcreateserial", "-extfile", str(ext), "-days", "30", "-out", str(cert)])

    def ingest_args(self) -> list[str]:
        return ["--private"] + (["--peer-ca", str(self.ca)] if self.ssl else [])

    def tracker_config(self) -> dict:
        return {"passkeys": str(self.passkey_file)}

    def client_args(self, name: str) -> list[str]:
        """toast-client's --passkey (and --ssl-cert, --ssl-key) for box `name`."""
        args = ["--passkey", self.passkeys[name]]
        if self.ssl:
            args += ["--ssl-cert", str(self.dir / f"{name}.pem"), "--ssl-key", str(self.dir / f"{name}.key")]
        return args
