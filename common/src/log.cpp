#include "toast/common/log.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace toast {

namespace {

// The "<N>" prefix journald reads as the line's syslog priority.
class JournalPriority final : public spdlog::custom_flag_formatter {
  public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        char digit = '6';  // info
        switch (msg.level) {
            case spdlog::level::trace:
            case spdlog::level::debug:
                digit = '7';
                break;
            case spdlog::level::warn:
                digit = '4';
                break;
            case spdlog::level::err:
                digit = '3';
                break;
            case spdlog::level::critical:
                digit = '2';
                break;
            default:
                break;
        }
        const char prefix[] = {'<', digit, '>'};
        dest.append(prefix, prefix + sizeof prefix);
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<JournalPriority>();
    }
};

bool stderr_is_journal() {
    const char* value = std::getenv("JOURNAL_STREAM");
    struct stat st {};
    if (value == nullptr || ::fstat(STDERR_FILENO, &st) != 0) return false;
    return is_journal_stream(value, st.st_dev, st.st_ino);
}

}  // namespace

std::optional<spdlog::level::level_enum> parse_log_level(std::string_view text) {
    if (text == "trace") return spdlog::level::trace;
    if (text == "debug") return spdlog::level::debug;
    if (text == "info") return spdlog::level::info;
    if (text == "warn" || text == "warning") return spdlog::level::warn;
    if (text == "error") return spdlog::level::err;
    if (text == "off") return spdlog::level::off;
    return std::nullopt;
}

bool is_journal_stream(std::string_view journal_stream, std::uint64_t device, std::uint64_t inode) {
    const auto colon = journal_stream.find(':');
    if (colon == std::string_view::npos) return false;
    auto number = [](std::string_view text, std::uint64_t& out) {
        const auto* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, out);
        return ec == std::errc() && ptr == end && !text.empty();
    };
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    return number(journal_stream.substr(0, colon), dev) && number(journal_stream.substr(colon + 1), ino) &&
           dev == device && ino == inode;
}

std::unique_ptr<spdlog::formatter> make_log_formatter(bool journal) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    if (journal) {
        formatter->add_flag<JournalPriority>('*').set_pattern("%*%l %v");
    } else {
        formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e [%n] %^%l%$ %v");
    }
    return formatter;
}

std::string log_escape(std::string_view text, std::size_t max) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(std::min(text.size(), max) + 8);
    for (char c : text.substr(0, max)) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x7f) {
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else if (c == '\\') {
            out += "\\\\";
        } else {
            out += c;
        }
    }
    if (text.size() > max) out += "...";
    return out;
}

void init_logging(std::string_view component, std::string_view level) {
    auto parsed = parse_log_level(level);
    if (!parsed) {
        throw std::invalid_argument("unknown log level '" + std::string(level) +
                                    "' (expected trace, debug, info, warn, error or off)");
    }
    auto logger = spdlog::stderr_color_mt(std::string(component));
    logger->set_formatter(make_log_formatter(stderr_is_journal()));
    logger->set_level(*parsed);
    spdlog::set_default_logger(std::move(logger));
    spdlog::flush_on(spdlog::level::warn);
}

}  // namespace toast
