// One logging set-up for every executable: spdlog to stderr, "[component] level message".
#pragma once

#include <optional>
#include <string_view>

#include <spdlog/spdlog.h>

namespace toast {

// "trace", "debug", "info", "warn", "error", "off"; nullopt for anything else.
std::optional<spdlog::level::level_enum> parse_log_level(std::string_view text);

// Installs the default logger for `component`. Throws std::invalid_argument naming a bad level.
void init_logging(std::string_view component, std::string_view level = "info");

}  // namespace toast
