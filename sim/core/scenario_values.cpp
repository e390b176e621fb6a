#include "sim/core/scenario_values.hpp"

#include <cmath>
#include <regex>

namespace toast::sim {

namespace {

bool plain_number(const nlohmann::json& v) {
    return v.is_number() && !v.is_boolean();
}

// `^\s*(\d+(?:\.\d+)?)\s*(UNITS)?\s*$`, case-insensitive: the number and the lower-cased unit.
std::optional<std::pair<double, std::string>> number_and_unit(const std::string& text,
                                                              const std::string& units) {
    const std::regex re("^\\s*(\\d+(?:\\.\\d+)?)\\s*(" + units + ")?\\s*$", std::regex::icase);
    std::smatch m;
    if (!std::regex_match(text, m, re)) return std::nullopt;
    std::string unit = m[2].str();
    for (auto& c : unit)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return std::pair{std::stod(m[1].str()), unit};
}

std::string as_text(const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

double python_round(double x) {
    return std::nearbyint(x);  // the default rounding mode rounds half to even, as Python does
}

std::string quoted(const nlohmann::json& value) {
    // json.dumps's separators: ", " between items, ": " after a key.
    std::string out;
    if (value.is_array()) {
        for (const auto& x : value)
            out += (out.empty() ? "" : ", ") + quoted(x);
        return "[" + out + "]";
    }
    if (value.is_object()) {
        for (const auto& [k, x] : value.items())
            out += (out.empty() ? "" : ", ") + nlohmann::json(k).dump() + ": " + quoted(x);
        return "{" + out + "}";
    }
    return value.dump();
}

std::optional<double> bitrate_value(const nlohmann::json& v) {
    if (plain_number(v)) {
        const double d = v.get<double>();
        if (d < 0) return std::nullopt;
        return std::trunc(d);  // int(text) in the testbed
    }
    auto nu = number_and_unit(as_text(v), "bps|kbps|mbps|gbps|k|m|g");
    if (!nu) return std::nullopt;
    const auto& [n, unit] = *nu;
    double scale = 1;
    if (unit == "k" || unit == "kbps") scale = 1e3;
    if (unit == "m" || unit == "mbps") scale = 1e6;
    if (unit == "g" || unit == "gbps") scale = 1e9;
    return python_round(n * scale);
}

std::optional<double> size_value(const nlohmann::json& v) {
    if (v.is_number_integer() || v.is_number_unsigned()) {
        if (v.is_number_integer() && v.get<std::int64_t>() < 0) return std::nullopt;
        return v.get<double>();
    }
    if (v.is_boolean()) return std::nullopt;
    auto nu = number_and_unit(as_text(v), "b|kib|mib|gib|kb|mb|gb|k|m|g");
    if (!nu) return std::nullopt;
    const auto& [n, unit] = *nu;
    double scale = 1;
    if (unit == "k" || unit == "kib") scale = 1024;
    if (unit == "m" || unit == "mib") scale = 1 << 20;
    if (unit == "g" || unit == "gib") scale = 1 << 30;
    if (unit == "kb") scale = 1e3;
    if (unit == "mb") scale = 1e6;
    if (unit == "gb") scale = 1e9;
    return python_round(n * scale);
}

std::optional<double> duration_value(const nlohmann::json& v) {
    if (plain_number(v)) {
        const double d = v.get<double>();
        if (d < 0) return std::nullopt;
        return d;
    }
    auto nu = number_and_unit(as_text(v), "ms|s|min|m|h");
    if (!nu) return std::nullopt;
    const auto& [n, unit] = *nu;
    double scale = 1;
    if (unit == "ms") scale = 1e-3;
    if (unit == "min" || unit == "m") scale = 60;
    if (unit == "h") scale = 3600;
    return n * scale;
}

}  // namespace toast::sim
