"""What the CI check scripts (smoke, shaping, interrupt) share: the command line and the verdict."""

import argparse


def bin_dir(doc: str) -> str:
    """The --bin-dir argument (the CMake build directory holding the executables)."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--bin-dir", required=True)
    return ap.parse_args().bin_dir


def verdict(problems: list[str], ok: str) -> int:
    """Prints every problem (or the OK line) and returns the exit code."""
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print(ok)
    return 1 if problems else 0
