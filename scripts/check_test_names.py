#!/usr/bin/env python3
"""Fails naming every Catch2 test case whose name ctest cannot run.

catch_discover_tests hands each name to ctest inside a CMake list, so a ';' in a name splits it in two: ctest
then runs two filters that match no test case, and the test fails with "No tests ran" instead of testing
anything. Run from anywhere: it reads the C++ files under the repository's component folders.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = ["common", "server", "tracker", "client", "sim", "fuzz"]
NAME = re.compile(r'\b(?:TEST_CASE|TEST_CASE_METHOD|SCENARIO)\s*\(\s*(?:\w+\s*,\s*)?"((?:[^"\\]|\\.)*)"')


def bad_names(root):
    found = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.cpp")):
            text = path.read_text(encoding="utf-8", errors="replace")
            for m in NAME.finditer(text):
                if ";" in m.group(1):
                    line = text.count("\n", 0, m.start()) + 1
                    found.append(f"{path.relative_to(root)}:{line}: test name with ';': \"{m.group(1)}\"")
    return found


def main():
    found = bad_names(ROOT)
    for f in found:
        print(f)
    if found:
        print(f"{len(found)} test name(s) ctest would split at ';' (use 'and' or ',')", file=sys.stderr)
        return 1
    print("every test name is one ctest name")
    return 0


if __name__ == "__main__":
    sys.exit(main())
