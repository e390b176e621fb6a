#!/usr/bin/env python3
"""docs/check_docs.py [--bin-dir BUILD]: the docs say what the programs do, and their links lead somewhere.

Checks, and prints every problem with the file, line and the option, field or link it is about:

  options   every option a program's --help prints is in the option table of its reference doc, and every
            option in that table is printed by --help. A table is marked by the comment line
            `<!-- check: options PROGRAM -->` right above it (PROGRAM: toast-server, toast-tracker,
            toast-client, "toast-client serve", testbed/run, testbed/run-all, testbed/drills, toast-sim); its rows name
            their option in backticks in the first column. Several tables may carry the same mark.
  keys      the tracker's config keys that `toast-tracker --help` lists are the keys of the table marked
            `<!-- check: keys toast-tracker -->` (a row `rate_limit.burst` counts for `rate_limit`).
  fields    the testbed's scenario fields (testbed/toastbed/scenario.py) are the rows of the table marked
            `<!-- check: fields scenario -->`, the catalogue scenario's (catalogue_scenario.py) the rows of
            `<!-- check: fields catalogue -->`, and the drills (testbed/toastbed/drills.py) the rows of
            `<!-- check: fields drills -->`.
  commands  every command line in a markdown file that runs one of these programs (in a code block or a
            code span) uses only options its --help prints.
  figures   every figure (a number with % or x) in the second column of a table marked
            `<!-- check: figures docs/results.md -->` (the README's headline) appears in docs/results.md.
  links     every relative link and image in every markdown file of the repository names a file inside the
            repository that exists, and an anchor names a heading of the file it points into.

Exit status 0 when all hold, 1 with the list of problems, 2 when a program could not be run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Each program: the reference doc that must document its options, and how to print its help (the client's
# stream and play print the same text today; both are read so that a split is noticed).
PROGRAMS = {
    "toast-server": ("docs/server.md", [["{bin}/server/toast-server", "--help"]]),
    "toast-tracker": ("docs/tracker.md", [["{bin}/tracker/toast-tracker", "--help"]]),
    "toast-client": ("docs/client.md", [["{bin}/client/toast-client", "--help"],
                                        ["{bin}/client/toast-client", "stream", "--help"],
                                        ["{bin}/client/toast-client", "play", "--help"]]),
    "toast-client serve": ("docs/box.md", [["{bin}/client/toast-client", "serve", "--help"]]),
    "testbed/run": ("testbed/README.md", [["{repo}/testbed/run", "--help"]]),
    "testbed/run-all": ("testbed/README.md", [["{repo}/testbed/run-all", "--help"]]),
    "testbed/drills": ("testbed/README.md", [["{repo}/testbed/drills", "--help"]]),
    "toast-sim": ("sim/README.md", [["{bin}/sim/toast-sim", "--help"]]),
}
MARK = re.compile(r"^<!--\s*check:\s*(options|keys|fields|figures)\s+(.+?)\s*-->\s*$")
FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:%|x)(?!\w)")
OPTION = re.compile(r"--[a-z0-9][a-z0-9-]*")
# A program named in a command line: its path may lead to it (build/client/toast-client).
PROGRAM_IN_TEXT = re.compile(
    r"(?:^|(?<=[\s;&|(`'\"]))(?:[\w.~/$-]*/)?(toast-server|toast-tracker|toast-client|toast-sim|testbed/run-all|testbed/run|"
    r"testbed/drills)(?=\s|$|`)")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
# What may stand before a command in a shell line: a prompt, a separator, or a program that runs the next one.
COMMAND_PREFIXES = {"$", "#", ";", "&&", "||", "|", "&", "(", "--", "sudo", "exec", "nice", "time", "env"}


@dataclass
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


# ---------------------------------------------------------------------------------------------- markdown

@dataclass
class Markdown:
    path: Path
    rel: str
    lines: list[str]
    code: list[bool]  # inside a fenced code block (fences included)

    @staticmethod
    def read(path: Path) -> "Markdown":
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        code, fence = [], None
        for line in lines:
            m = FENCE.match(line)
            if fence is None and m:
                fence = m.group(1)[0] * len(m.group(1))
                code.append(True)
            elif fence is not None:
                code.append(True)
                if m and m.group(1).startswith(fence) and not line.strip()[len(m.group(1)):].strip():
                    fence = None
            else:
                code.append(False)
        return Markdown(path, str(path.relative_to(REPO)), lines, code)

    def prose(self) -> str:
        """The text outside code blocks, code blocks blanked (line numbers kept)."""
        return "\n".join("" if c else line for line, c in zip(self.lines, self.code))

    def code_lines(self) -> list[tuple[int, str]]:
        """Logical lines of the code blocks (a trailing backslash joins the next line), with their numbers."""
        out, pending, start = [], "", 0
        for i, (line, c) in enumerate(zip(self.lines, self.code), 1):
            if not c or FENCE.match(line):
                continue
            if not pending:
                start = i
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            out.append((start, pending + line))
            pending = ""
        return out

    def code_spans(self) -> list[tuple[int, str]]:
        text = self.prose()
        out = []
        for m in re.finditer(r"(?<!`)(`+)(?!`)((?:(?!\n\s*\n).)+?)(?<!`)\1(?!`)", text, re.S):
            out.append((text.count("\n", 0, m.start()) + 1, m.group(2).replace("\n", " ")))
        return out

    def headings(self) -> set[str]:
        """GitHub's anchors for the headings: lower case, punctuation dropped, spaces to hyphens, -N for
        repeats."""
        seen: dict[str, int] = {}
        out = set()
        for line, c in zip(self.lines, self.code):
            m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if c or not m:
                continue
            text = re.sub(r"<[^>]+>", "", m.group(1))
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
            slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
        return out

    def marked_tables(self) -> list[tuple[str, str, int, list[tuple[int, str]]]]:
        """(kind, name, mark line, [(row line, first cell)]) for every table under a check mark."""
        out = []
        for i, line in enumerate(self.lines):
            m = MARK.match(line.strip())
            if not m or self.code[i]:
                continue
            j = i + 1
            while j < len(self.lines) and not self.lines[j].strip():
                j += 1
            rows = []
            while j < len(self.lines) and self.lines[j].lstrip().startswith("|"):
                cells = re.split(r"(?<!\\)\|", self.lines[j].strip().strip("|"))
                rows.append((j + 1, cells[0]))
                j += 1
            # The first row is the header, the second the delimiter.
            out.append((m.group(1), m.group(2), i + 1, rows[2:]))
        return out


def markdown_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard",
                                 "--", "*.md"], capture_output=True, text=True, check=True).stdout.split("\n")
        files = {REPO / f for f in listed if f}
    except (OSError, subprocess.CalledProcessError):
        files = set()
        for root, dirs, names in os.walk(REPO):
            dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build") and d != "out"]
            files |= {Path(root) / n for n in names if n.endswith(".md")}
    return sorted(f for f in files if f.is_file())


# ---------------------------------------------------------------------------------------------- programs

def options_in_help(text: str, program: str) -> set[str]:
    """The options a help text offers: those that begin an indented line (after an optional "-h, "), and those
    in its usage lines (the lines that start with "usage:" or with the program's name) or in brackets."""
    found = set()
    name = program.split()[0].split("/")[-1]
    for line in text.splitlines():
        stripped = line.strip()
        # An option line: the option, then its argument in capitals (or [HOST:]PORT), then its text; a
        # continuation line of a description may start with an option too, followed by words.
        m = re.match(r"^\s*(?:-\w,\s*)?(--[a-z0-9][a-z0-9-]*)(?:[ =][A-Z\[<]\S*(?:\s|$)|\s{2,}|$)", line)
        if m:
            found.add(m.group(1))
        lowered = stripped.lower()
        if lowered.startswith("usage:") or stripped.split(" ")[0].split("/")[-1] == name:
            found |= set(OPTION.findall(stripped))
        found |= set(re.findall(r"\[(--[a-z0-9][a-z0-9-]*)", line))
    return found


def tracker_keys_in_help(text: str) -> set[str]:
    keys, inside = set(), False
    for line in text.splitlines():
        if line.lower().startswith("config keys"):
            inside = True
            continue
        if inside:
            if not line.strip():
                break
            m = re.match(r"^ {2}([a-z_]+)(?:\s|$)", line)
            if m:
                keys.add(m.group(1))
    return keys


def run_help(argv: list[str]) -> str:
    env = dict(os.environ, COLUMNS="200")
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"cannot run {' '.join(argv)}: {e}") from None
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with status {p.returncode}: {p.stderr.strip()[:300]}")
    return p.stdout


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def scenario_fields() -> set[str]:
    scenario = load_module(REPO / "testbed/toastbed/scenario.py", "toast_docs_scenario")
    return set(scenario.Scenario.__dataclass_fields__) | {"description"}


def testbed_module(name: str):
    """A module of the testbed's package (toastbed.NAME), which imports its siblings."""
    sys.path.insert(0, str(REPO / "testbed"))
    try:
        return importlib.import_module(f"toastbed.{name}")
    finally:
        sys.path.pop(0)


def catalogue_fields() -> set[str]:
    return set(testbed_module("catalogue_scenario").CatalogueScenario.__dataclass_fields__) | {"description"}


def drill_names() -> set[str]:
    return set(testbed_module("drills").DRILLS)


# ---------------------------------------------------------------------------------------------- checks

def first_cell_names(cell: str, kind: str) -> list[str]:
    spans = re.findall(r"`([^`]+)`", cell)
    if kind == "options":
        return [m.group(0) for s in spans for m in [OPTION.match(s.strip())] if m]
    names = [s.strip() for s in spans if re.fullmatch(r"[a-z0-9_][a-z0-9_.-]*", s.strip())]
    return [n.split(".")[0] for n in names] if kind == "keys" else names


def check_tables(docs: dict[str, Markdown], wanted: dict[tuple[str, str], tuple[str, set[str], str]]) -> list[Problem]:
    """wanted: (kind, name) -> (doc, the set the code has, what one item is called)."""
    problems = []
    found: dict[tuple[str, str], dict[str, tuple[str, int]]] = {}
    marks: dict[tuple[str, str], tuple[str, int]] = {}
    for md in docs.values():
        for kind, name, mark_line, rows in md.marked_tables():
            key = (kind, name)
            if kind == "figures":
                continue
            if key not in wanted:
                problems.append(Problem(md.rel, mark_line, f"unknown check mark '{kind} {name}' (known: " +
                                        ", ".join(f"{k} {n}" for k, n in sorted(wanted)) + ")"))
                continue
            if not rows:
                problems.append(Problem(md.rel, mark_line, f"the mark '{kind} {name}' is not followed by a table"))
            marks.setdefault(key, (md.rel, mark_line))
            entries = found.setdefault(key, {})
            for line, cell in rows:
                names = first_cell_names(cell, kind)
                # A row of an option table may name a positional argument (`TORRENT`) instead.
                if not names and not (kind == "options" and "`" in cell):
                    problems.append(Problem(md.rel, line, f"a row of the '{kind} {name}' table names no "
                                                          f"{wanted[key][2]} in backticks in its first column"))
                for n in names:
                    entries.setdefault(n, (md.rel, line))
    for key, (doc, actual, what) in sorted(wanted.items()):
        kind, name = key
        if key not in found:
            problems.append(Problem(doc, 0, f"no table marked '<!-- check: {kind} {name} -->': {name}'s "
                                            f"{what}s ({', '.join(sorted(actual))}) are documented nowhere"))
            continue
        documented = found[key]
        source = {"options": f"`{name} --help` prints", "keys": f"`{name} --help` lists",
                  "fields": "the code has"}[kind]
        mark_file, mark_line = marks[key]
        for item in sorted(actual - set(documented)):
            problems.append(Problem(mark_file, mark_line, f"{what} {item} of {name}: {source} it but the table "
                                                          f"marked '{kind} {name}' here does not document it"))
        for item in sorted(set(documented) - actual):
            file, line = documented[item]
            problems.append(Problem(file, line, f"{what} {item} of {name}: documented, but {source} no such "
                                                f"{what}"))
    return problems


def commands_in(text: str) -> list[tuple[str, list[str]]]:
    """(program key, options) of every command line in text that runs one of the programs."""
    out = []
    for m in PROGRAM_IN_TEXT.finditer(text):
        # Only a program in a command's place runs: `journalctl -u toast-tracker --since today` does not.
        before = text[:m.start()].split()
        if before and before[-1] not in COMMAND_PREFIXES and not before[-1].endswith(("(", "`")):
            continue
        program = m.group(1)
        tokens = []
        for tok in text[m.end():].split():
            if tok in ("|", "||", "&&", ";", "&") or tok[0] in "#><`)" or tok.startswith("2>"):
                break
            end = tok[-1] in ";&`)"
            tokens.append(tok.strip("[](){}'\";&`"))
            if end:
                break
        if program == "toast-client" and tokens and tokens[0] == "serve":
            program = "toast-client serve"
        options = [t.split("=")[0] for t in tokens if t.startswith("--") and len(t) > 2]
        out.append((program, [o for o in options if OPTION.fullmatch(o)]))
    return out


def check_figures(docs: dict[str, Markdown]) -> list[Problem]:
    """Every figure (a number with % or x) in the second column of a table marked `<!-- check: figures
    docs/results.md -->` appears in that file: a headline repeats a result, it never has its own."""
    problems = []
    for md in docs.values():
        for kind, name, mark_line, rows in md.marked_tables():
            if kind != "figures":
                continue
            source = docs.get(name)
            if source is None:
                problems.append(Problem(md.rel, mark_line, f"the figures of this table should come from {name}, "
                                                           "which does not exist"))
                continue
            known = set(FIGURE.findall(source.prose()))
            for line, _ in rows:
                cells = re.split(r"(?<!\\)\|", md.lines[line - 1].strip().strip("|"))
                for figure in FIGURE.findall(cells[1] if len(cells) > 1 else ""):
                    if figure not in known:
                        problems.append(Problem(md.rel, line, f"figure {figure} is not in {name}: a headline "
                                                              f"repeats a result from there, with the same figure"))
    return problems


def check_commands(docs: dict[str, Markdown], helps: dict[str, set[str]]) -> list[Problem]:
    problems = []
    for md in docs.values():
        for line, text in md.code_lines() + md.code_spans():
            for program, options in commands_in(text):
                for option in options:
                    if option not in helps[program]:
                        problems.append(Problem(md.rel, line, f"`{program}` has no option {option} (its --help "
                                                              f"does not print it): {text.strip()[:120]}"))
    return problems


def check_links(docs: dict[str, Markdown]) -> list[Problem]:
    problems = []
    anchors: dict[Path, set[str]] = {}

    def headings(path: Path) -> set[str]:
        if path not in anchors:
            anchors[path] = Markdown.read(path).headings()
        return anchors[path]

    for md in docs.values():
        text = md.prose()
        # Links inside code spans are not links.
        text = re.sub(r"(`+)(?:(?!\n\s*\n).)+?\1", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
        targets = [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in LINK.finditer(text)]
        for i, line in enumerate(text.split("\n"), 1):
            m = REFERENCE_LINK.match(line)
            if m:
                targets.append((i, m.group(1)))
        # A path in a code span that starts with ./ or ../ is meant relative to the file, like a link.
        targets += [(line, span.strip()) for line, span in md.code_spans()
                    if re.fullmatch(r"\.\.?/[\w./#-]*", span.strip())]
        for line, target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # http:, https:, mailto: ...
            path_part, _, anchor = target.partition("#")
            if path_part.startswith("/"):
                problems.append(Problem(md.rel, line, f"link '{target}' is an absolute path; use a path relative "
                                                      f"to {md.rel}"))
                continue
            dest = (md.path.parent / path_part).resolve() if path_part else md.path
            try:
                dest.relative_to(REPO)
            except ValueError:
                problems.append(Problem(md.rel, line, f"link '{target}' leads outside the repository (a clone "
                                                      f"does not have it)"))
                continue
            if not dest.exists():
                problems.append(Problem(md.rel, line, f"link '{target}': {dest.relative_to(REPO)} does not exist"))
                continue
            if anchor and dest.suffix == ".md" and anchor.lower() not in headings(dest):
                problems.append(Problem(md.rel, line, f"link '{target}': {dest.relative_to(REPO)} has no heading "
                                                      f"with the anchor #{anchor}"))
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="docs/check_docs.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", default=str(REPO / "build"), help="CMake build directory (default: build/)")
    args = ap.parse_args(argv)
    bin_dir = Path(args.bin_dir).resolve()

    helps: dict[str, set[str]] = {}
    tracker_help = ""
    try:
        for program, (_, commands) in PROGRAMS.items():
            helps[program] = set()
            for command in commands:
                text = run_help([c.format(bin=bin_dir, repo=REPO) for c in command])
                # --help itself works: it just printed this text.
                helps[program] |= options_in_help(text, program) | {"--help"}
                if program == "toast-tracker":
                    tracker_help = text
        fields, drills, catalogue = scenario_fields(), drill_names(), catalogue_fields()
    except (RuntimeError, ImportError, OSError, AttributeError) as e:
        print(f"check_docs: {e}", file=sys.stderr)
        return 2

    docs = {str(p.relative_to(REPO)): Markdown.read(p) for p in markdown_files()}
    wanted = {("options", program): (doc, helps[program], "option") for program, (doc, _) in PROGRAMS.items()}
    wanted[("keys", "toast-tracker")] = ("docs/tracker.md", tracker_keys_in_help(tracker_help), "config key")
    wanted[("fields", "scenario")] = ("testbed/README.md", fields, "scenario field")
    wanted[("fields", "drills")] = ("testbed/README.md", drills, "drill")
    wanted[("fields", "catalogue")] = ("testbed/README.md", catalogue, "catalogue scenario field")

    problems = (check_tables(docs, wanted) + check_figures(docs) + check_commands(docs, helps) +
                check_links(docs))
    for p in problems:
        print(p)
    checked = (f"{sum(len(h) for h in helps.values())} options of {len(helps)} programs, "
               f"{len(wanted[('keys', 'toast-tracker')][1])} tracker config keys, {len(fields)} scenario fields, "
               f"{len(drills)} drills, the links of {len(docs)} markdown files")
    if problems:
        print(f"check_docs: {len(problems)} problem(s) in the docs ({checked} checked)")
        return 1
    print(f"check_docs: the docs match the programs ({checked})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
