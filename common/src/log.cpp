#include "toast/common/log.hpp"

#include <stdexcept>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace toast {

std::optional<spdlog::level::level_enum> parse_log_level(std::string_view text) {
    if (text == "trace") return spdlog::level::trace;
    if (text == "debug") return spdlog::level::debug;
    if (text == "info") return spdlog::level::info;
    if (text == "warn" || text == "warning") return spdlog::level::warn;
    if (text == "error") return spdlog::level::err;
    if (text == "off") return spdlog::level::off;
    return std::nullopt;
}

void init_logging(std::string_view component, std::string_view level) {
    auto parsed = parse_log_level(level);
    if (!parsed) {
        throw std::invalid_argument("unknown log level '" + std::string(level) +
                                    "' (expected trace, debug, info, warn, error or off)");
    }
    auto logger = spdlog::stderr_color_mt(std::string(component));
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e [%n] %^%l%$ %v");
    logger->set_level(*parsed);
    spdlog::set_default_logger(std::move(logger));
    spdlog::flush_on(spdlog::level::warn);
}

}  // namespace toast
