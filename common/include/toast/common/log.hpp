// One logging set-up for every executable: spdlog to stderr, "[component] level message"; under systemd with
// stderr connected to the journal, "<priority>level message" instead (see make_log_formatter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <spdlog/formatter.h>
#include <spdlog/spdlog.h>

namespace toast {

// "trace", "debug", "info", "warn", "error", "off"; nullopt for anything else.
std::optional<spdlog::level::level_enum> parse_log_level(std::string_view text);

// True when JOURNAL_STREAM's value ("DEVICE:INODE", set by systemd for a service whose stderr goes to the
// journal) names the file whose device and inode are given: then stderr is that stream, not a redirection.
bool is_journal_stream(std::string_view journal_stream, std::uint64_t device, std::uint64_t inode);

// For a terminal or a file: "2024-05-01T12:00:00.123 [component] info message". For the journal: a syslog
// priority prefix (sd-daemon(3): "<6>info message") and no time or name, which journald records itself, so
// `journalctl -p warning -u toast-server` filters by level.
std::unique_ptr<spdlog::formatter> make_log_formatter(bool journal);

// `text` made safe for a log line: bytes outside printable ASCII (controls, DEL, and every byte >= 0x80,
// which includes the C1 controls a terminal may obey) become \xHH, a backslash becomes \\, and text past
// `max` bytes is cut with "...". Every log line that carries request data passes it through this.
std::string log_escape(std::string_view text, std::size_t max = 200);

// Installs the default logger for `component`. Throws std::invalid_argument naming a bad level.
void init_logging(std::string_view component, std::string_view level = "info");

}  // namespace toast
