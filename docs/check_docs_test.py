"""Tests of docs/check_docs.py on made-up docs and help texts: each kind of problem is found, and named."""

import tempfile
import textwrap
import unittest
from pathlib import Path

import check_docs as cd

CLIENT_HELP = textwrap.dedent("""\
    Usage:
      toast-client stream TORRENT --save-dir DIR --listen [HOST:]PORT --stats FILE [options]
      toast-client play   TORRENT --save-dir DIR [--http HOST:PORT] [options]

    Options:
      --picker P                  rarest|inorder (default: adaptive); until they are measured,
                                  --upload-limit over the bitrate
      --player-arg ARG            play: one more argument, e.g.
                                  --player-arg=--vo=null --player-arg=--volume=50
      -h, --help                  show this text
    """)

SERVER_HELP = textwrap.dedent("""\
    usage: toast-server --config CONFIG <command> [args]
           toast-server --help
    commands:
      ingest NAME MEDIA_FILE [--torrent OUT.torrent] [options]
          --policy P        naive | rda
    """)

TRACKER_HELP = textwrap.dedent("""\
    usage: toast-tracker --listen HOST:PORT

    config keys (default):
      interval          re-announce interval ("300s")
      rate_limit        {"per_second": 20,
                         "burst": 100}
      log_level         trace, debug ("info")

    signals: SIGHUP re-reads CONFIG
    """)


class Repo:
    """A throwaway repository of markdown files, with check_docs pointed at it."""

    def __init__(self, files: dict):
        self.dir = tempfile.TemporaryDirectory()
        self.root = Path(self.dir.name).resolve()
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
        self.saved = cd.REPO
        cd.REPO = self.root

    def docs(self) -> dict:
        return {name: cd.Markdown.read(self.root / name) for name in
                sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*.md"))}

    def close(self):
        cd.REPO = self.saved
        self.dir.cleanup()


class HelpTextTest(unittest.TestCase):
    def test_options_come_from_option_lines_usage_lines_and_brackets_only(self):
        self.assertEqual(cd.options_in_help(CLIENT_HELP, "toast-client"),
                         {"--save-dir", "--listen", "--stats", "--http", "--picker", "--player-arg", "--help"})

    def test_a_bracketed_option_of_a_command_line_counts(self):
        self.assertEqual(cd.options_in_help(SERVER_HELP, "toast-server"),
                         {"--config", "--help", "--torrent", "--policy"})

    def test_tracker_config_keys_are_the_two_space_indented_names(self):
        self.assertEqual(cd.tracker_keys_in_help(TRACKER_HELP), {"interval", "rate_limit", "log_level"})


class CommandLineTest(unittest.TestCase):
    def test_options_of_a_command_stop_at_a_shell_separator(self):
        self.assertEqual(cd.commands_in("toast-client serve --api 127.0.0.1:1 --bogus x 2> log & curl --x"),
                         [("toast-client serve", ["--api", "--bogus"])])

    def test_a_path_to_the_program_and_bracketed_placeholders(self):
        self.assertEqual(cd.commands_in("build/client/toast-client stream t --save-dir d [--picker rarest|beta]"),
                         [("toast-client", ["--save-dir", "--picker"])])

    def test_an_option_value_after_equals_is_not_an_option(self):
        self.assertEqual(cd.commands_in("toast-client play t --player-arg=--vo=null"),
                         [("toast-client", ["--player-arg"])])

    def test_other_programs_and_file_names_are_not_commands(self):
        self.assertEqual(cd.commands_in("apt install ./toast-client_0.1.0-1_amd64.deb; mpv --vo=null"), [])

    def test_a_program_named_as_an_argument_does_not_run(self):
        self.assertEqual(cd.commands_in("journalctl -u toast-tracker --since today"), [])
        self.assertEqual(cd.commands_in("runuser -u toast-server -- toast-server --config c check"),
                         [("toast-server", ["--config"])])


class TableTest(unittest.TestCase):
    def setUp(self):
        self.repo = Repo({"docs/client.md": """\
            # toast-client

            <!-- check: options toast-client -->
            | option | meaning |
            |---|---|
            | `TORRENT` | the torrent |
            | `--save-dir DIR` | where |
            | `--gone N` | no longer there |

            Text.

            <!-- check: fields scenario -->
            | field | meaning |
            |---|---|
            | `clients` | viewers |
            | nothing in backticks | |
            """})

    def tearDown(self):
        self.repo.close()

    def test_missing_and_stale_options_are_named_with_the_program_and_the_file(self):
        wanted = {("options", "toast-client"): ("docs/client.md", {"--save-dir", "--listen"}, "option"),
                  ("fields", "scenario"): ("testbed/README.md", {"clients"}, "scenario field")}
        problems = [str(p) for p in cd.check_tables(self.repo.docs(), wanted)]
        self.assertEqual(problems, [
            "docs/client.md:16: a row of the 'fields scenario' table names no scenario field in backticks in its "
            "first column",
            "docs/client.md:3: option --listen of toast-client: `toast-client --help` prints it but the table "
            "marked 'options toast-client' here does not document it",
            "docs/client.md:8: option --gone of toast-client: documented, but `toast-client --help` prints no such "
            "option",
        ])

    def test_a_program_without_a_marked_table_is_reported(self):
        wanted = {("options", "toast-tracker"): ("docs/tracker.md", {"--listen"}, "option")}
        problems = [str(p) for p in cd.check_tables(self.repo.docs(), wanted)]
        self.assertIn("docs/tracker.md: no table marked '<!-- check: options toast-tracker -->': toast-tracker's "
                      "options (--listen) are documented nowhere", problems)
        self.assertTrue(any("unknown check mark 'options toast-client'" in p for p in problems))


class FigureTest(unittest.TestCase):
    def setUp(self):
        self.repo = Repo({
            "README.md": """\
                <!-- check: figures docs/results.md -->
                | what | figure | how |
                |---|---|---|
                | offload at 50% upload | 93.1% below unicast, 1.25x nginx | `x` |
                | the same | 93.6% below unicast | `y` |
                """,
            "docs/results.md": "| a | 93.1% and 1.25x |\n",
        })

    def tearDown(self):
        self.repo.close()

    def test_a_headline_figure_missing_from_the_results_is_named(self):
        self.assertEqual([str(p) for p in cd.check_figures(self.repo.docs())], [
            "README.md:5: figure 93.6% is not in docs/results.md: a headline repeats a result from there, with "
            "the same figure"])


class LinkTest(unittest.TestCase):
    def setUp(self):
        self.repo = Repo({
            "README.md": """\
                # Toast

                See [the server](docs/server.md#get-metrics-get-healthz), [twice](docs/server.md#notes-1),
                [style](../shared/STYLE.md), [gone](docs/gone.md), [anchor](docs/server.md#nope),
                [web](https://example.org/x), [abs](/etc/passwd) and `../outside.md`.

                ```sh
                echo [not a link](nowhere.md)
                ```
                """,
            "docs/server.md": """\
                # toast-server

                ## GET /metrics, GET /healthz

                ## Notes

                ## Notes

                ```sh
                # not a heading
                ```

                [back](../README.md#toast) and [self](#notes)
                """,
        })

    def tearDown(self):
        self.repo.close()

    def test_every_broken_link_is_named_and_good_ones_pass(self):
        problems = [str(p) for p in cd.check_links(self.repo.docs())]
        self.assertEqual(problems, [
            "README.md:4: link '../shared/STYLE.md' leads outside the repository (a clone does not have it)",
            "README.md:4: link 'docs/gone.md': docs/gone.md does not exist",
            "README.md:4: link 'docs/server.md#nope': docs/server.md has no heading with the anchor #nope",
            "README.md:5: link '/etc/passwd' is an absolute path; use a path relative to README.md",
            "README.md:5: link '../outside.md' leads outside the repository (a clone does not have it)",
        ])

    def test_headings_in_code_blocks_are_not_anchors(self):
        self.assertEqual(self.repo.docs()["docs/server.md"].headings(),
                         {"toast-server", "get-metrics-get-healthz", "notes", "notes-1"})


if __name__ == "__main__":
    unittest.main()
