"""Unit tests of what a run asks of the machine: the measuring threads' priority."""

import os
import sys
import threading
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toastbed import host  # noqa: E402


class MeasuringPriorityTest(unittest.TestCase):
    def test_a_measuring_thread_runs_ahead_and_only_it(self):
        main_nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        seen = {}

        def measure():
            seen["note"] = host.raise_this_thread()
            seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

        t = threading.Thread(target=measure)
        t.start()
        t.join(10)
        self.assertFalse(t.is_alive())
        if os.geteuid() == 0:
            self.assertIsNone(seen["note"])
            self.assertEqual(seen["nice"], host.MEASURING_NICE)
        else:  # raising a priority needs root: the run goes on and says so
            self.assertIn(f"raising it to nice {host.MEASURING_NICE}", seen["note"])
            self.assertEqual(seen["nice"], main_nice)
        self.assertEqual(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), main_nice)


if __name__ == "__main__":
    unittest.main()
