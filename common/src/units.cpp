#include "toast/common/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace toast {
namespace {

struct Suffix {
    std::string_view text;
    long double factor;
};

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

// Splits "1.5Mbps" into 1.5 and "mbps"; rejects negatives, NaN, empty numbers.
std::optional<std::pair<long double, std::string>> split_number(std::string_view text) {
    text = trim(text);
    std::size_t i = 0;
    bool digits = false, dot = false;
    while (i < text.size()) {
        char c = text[i];
        if (std::isdigit(static_cast<unsigned char>(c))) {
            digits = true;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            break;
        }
        ++i;
    }
    if (!digits) return std::nullopt;
    double number = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, number);
    if (ec != std::errc() || ptr != text.data() + i || !std::isfinite(number)) return std::nullopt;
    return std::pair{static_cast<long double>(number), lower(trim(text.substr(i)))};
}

template <std::size_t N>
std::optional<long double> scaled(std::string_view text, const std::array<Suffix, N>& suffixes) {
    auto parts = split_number(text);
    if (!parts) return std::nullopt;
    for (const auto& s : suffixes) {
        if (parts->second == s.text) {
            // Rounded here so that the callers' integer conversions can never overflow.
            long double v = std::round(parts->first * s.factor);
            if (!(v < 0x1p64L)) return std::nullopt;
            return v;
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<BitRate> parse_bitrate(std::string_view text) {
    static constexpr std::array<Suffix, 16> suffixes{{{"", 1},
                                                      {"bps", 1},
                                                      {"bit", 1},
                                                      {"k", 1e3},
                                                      {"kbps", 1e3},
                                                      {"kbit", 1e3},
                                                      {"kb/s", 1e3},
                                                      {"m", 1e6},
                                                      {"mbps", 1e6},
                                                      {"mbit", 1e6},
                                                      {"mb/s", 1e6},
                                                      {"g", 1e9},
                                                      {"gbps", 1e9},
                                                      {"gbit", 1e9},
                                                      {"gb/s", 1e9},
                                                      {"b/s", 1}}};
    auto v = scaled(text, suffixes);
    if (!v) return std::nullopt;
    return BitRate(static_cast<std::uint64_t>(*v));
}

std::optional<Bytes> parse_bytes(std::string_view text) {
    static constexpr std::array<Suffix, 14> suffixes{{{"", 1},
                                                      {"b", 1},
                                                      {"k", 1024.0L},
                                                      {"kib", 1024.0L},
                                                      {"kb", 1e3},
                                                      {"m", 1024.0L * 1024},
                                                      {"mib", 1024.0L * 1024},
                                                      {"mb", 1e6},
                                                      {"g", 1024.0L * 1024 * 1024},
                                                      {"gib", 1024.0L * 1024 * 1024},
                                                      {"gb", 1e9},
                                                      {"t", 1024.0L * 1024 * 1024 * 1024},
                                                      {"tib", 1024.0L * 1024 * 1024 * 1024},
                                                      {"tb", 1e12}}};
    auto v = scaled(text, suffixes);
    if (!v) return std::nullopt;
    return Bytes(static_cast<std::uint64_t>(*v));
}

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
    static constexpr std::array<Suffix, 9> suffixes{{{"", 1e9},
                                                     {"s", 1e9},
                                                     {"sec", 1e9},
                                                     {"ms", 1e6},
                                                     {"us", 1e3},
                                                     {"ns", 1},
                                                     {"min", 60e9},
                                                     {"m", 60e9},
                                                     {"h", 3600e9}}};
    auto v = scaled(text, suffixes);
    if (!v || !(*v < 0x1p63L)) return std::nullopt;
    return std::chrono::nanoseconds(static_cast<std::int64_t>(*v));
}

std::optional<std::chrono::nanoseconds> seconds_to_duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return std::nullopt;
    long double ns = std::round(static_cast<long double>(seconds) * 1e9L);
    if (!(ns < 0x1p63L)) return std::nullopt;
    return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}

std::string format_bytes(Bytes b) {
    static constexpr std::array<const char*, 5> units{"B", "KiB", "MiB", "GiB", "TiB"};
    long double v = static_cast<long double>(b.value());
    std::size_t u = 0;
    while (v >= 1024 && u + 1 < units.size()) {
        v /= 1024;
        ++u;
    }
    char buf[64];
    if (u == 0 || v == std::floor(v)) {
        std::snprintf(buf, sizeof buf, "%.0Lf %s", v, units[u]);
    } else {
        std::snprintf(buf, sizeof buf, "%.2Lf %s", v, units[u]);
    }
    return buf;
}

std::string format_duration(std::chrono::nanoseconds d) {
    static constexpr std::array<std::pair<std::int64_t, std::string_view>, 5> units{{{3'600'000'000'000, "h"},
                                                                                     {60'000'000'000, "min"},
                                                                                     {1'000'000'000, "s"},
                                                                                     {1'000'000, "ms"},
                                                                                     {1'000, "us"}}};
    const auto n = d.count();
    if (n == 0) return "0s";
    for (const auto& [factor, name] : units) {
        if (n % factor == 0) return std::to_string(n / factor) + std::string(name);
    }
    return std::to_string(n) + "ns";
}

std::string format_bitrate(BitRate r) {
    char buf[64];
    long double v = static_cast<long double>(r.value());
    if (v >= 1e9) {
        std::snprintf(buf, sizeof buf, "%.2Lf Gbps", v / 1e9);
    } else if (v >= 1e6) {
        std::snprintf(buf, sizeof buf, "%.2Lf Mbps", v / 1e6);
    } else if (v >= 1e3) {
        std::snprintf(buf, sizeof buf, "%.2Lf kbps", v / 1e3);
    } else {
        std::snprintf(buf, sizeof buf, "%.0Lf bps", v);
    }
    return buf;
}

}  // namespace toast
