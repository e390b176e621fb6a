"""Private swarms in scenarios: validation of "private" and "ssl", and the credentials the testbed makes."""

import shutil
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toastbed import credentials, scenario  # noqa: E402


class PrivateScenarioTest(unittest.TestCase):
    def test_private_and_ssl_need_toast_seed_and_no_stock_baseline(self):
        s = scenario.from_dict({"ssl": True, "seed_client": "toast"})
        self.assertTrue(s.ssl)
        self.assertFalse(s.private)
        with self.assertRaisesRegex(scenario.ScenarioError, "'ssl': needs seed_client \"toast\""):
            scenario.from_dict({"ssl": True})
        with self.assertRaisesRegex(scenario.ScenarioError, "'private': the \"stock\" baseline"):
            scenario.from_dict({"private": True, "seed_client": "toast", "baselines": ["stock"]})
        with self.assertRaisesRegex(scenario.ScenarioError, "'ssl': expected true or false"):
            scenario.from_dict({"ssl": "yes"})
        self.assertFalse(scenario.from_dict({}).ssl)

    @unittest.skipUnless(shutil.which("openssl"), "needs the openssl tool")
    def test_credentials_give_each_box_a_passkey_and_a_certificate_of_the_ca(self):
        with tempfile.TemporaryDirectory() as tmp:
            c = credentials.SwarmCredentials(Path(tmp), ["seed", "client000"], ssl=True)
            lines = c.passkey_file.read_text().splitlines()
            self.assertEqual(len(lines), 2)
            key, name = lines[0].split(" ")
            self.assertEqual(name, "seed")
            self.assertRegex(key, r"^[A-Za-z0-9_-]{32}$")
            args = c.client_args("client000")
            self.assertEqual(args[:2], ["--passkey", c.passkeys["client000"]])
            self.assertEqual(args[2], "--ssl-cert")
            import subprocess
            verify = subprocess.run(["openssl", "verify", "-CAfile", str(c.ca), args[3]], capture_output=True,
                                    text=True)
            self.assertEqual(verify.returncode, 0, verify.stderr)
            self.assertEqual(c.ingest_args(), ["--private", "--peer-ca", str(c.ca)])
            plain = credentials.SwarmCredentials(Path(tmp) / "plain", ["seed"], ssl=False)
            self.assertEqual(plain.ingest_args(), ["--private"])
            self.assertEqual(plain.client_args("seed"), ["--passkey", plain.passkeys["seed"]])


if __name__ == "__main__":
    unittest.main()
