#include "toast/common/config.hpp"

#include <sstream>

#include "toast/common/read_file.hpp"

namespace toast {
namespace {

std::string show(const nlohmann::json& v) {
    std::string s = v.dump();
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}

}  // namespace

nlohmann::json load_json_file(const std::filesystem::path& path) {
    std::string text;
    try {
        text = read_file(path);
    } catch (const FileReadError& e) {
        throw ConfigError("cannot read config file '" + path.string() + "': " + e.reason());
    }
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw ConfigError("config file '" + path.string() + "' is not valid JSON: " + e.what());
    }
}

ConfigReader::ConfigReader(const nlohmann::json& object, std::string path)
    : object_(&object), path_(std::move(path)) {
    if (!object.is_object()) {
        throw ConfigError((path_.empty() ? std::string("config") : "config field '" + path_ + "'") +
                          ": expected a JSON object, got " + show(object));
    }
}

std::string ConfigReader::field(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void ConfigReader::fail(std::string_view key, std::string_view problem) const {
    throw ConfigError("config field '" + field(key) + "': " + std::string(problem));
}

bool ConfigReader::has(std::string_view key) const {
    return object_->contains(key);
}

const nlohmann::json* ConfigReader::find(std::string_view key) {
    auto it = object_->find(key);
    if (it == object_->end() || it->is_null()) return nullptr;
    seen_.emplace(key);
    return &*it;
}

template <class T>
T ConfigReader::required_or(std::string_view key, const std::optional<T>& fallback) {
    if (!fallback) fail(key, "is required");
    return *fallback;
}

std::string ConfigReader::string(std::string_view key, std::optional<std::string> fallback) {
    const auto* v = find(key);
    if (!v) return required_or(key, fallback);
    if (!v->is_string()) fail(key, "expected a string, got " + show(*v));
    return v->get<std::string>();
}

std::uint64_t ConfigReader::uint(std::string_view key, std::optional<std::uint64_t> fallback,
                                 std::uint64_t min, std::uint64_t max) {
    const auto* v = find(key);
    if (!v) return required_or(key, fallback);
    // A document built in code holds positive numbers as signed integers; parsed text holds them unsigned.
    if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<std::int64_t>() < 0))
        fail(key, "expected a non-negative integer, got " + show(*v));
    auto n = v->get<std::uint64_t>();
    if (n < min || n > max) {
        fail(key, "value " + std::to_string(n) + " is outside [" + std::to_string(min) + ", " +
                      std::to_string(max) + "]");
    }
    return n;
}

double ConfigReader::number(std::string_view key, std::optional<double> fallback, double min, double max) {
    const auto* v = find(key);
    if (!v) return required_or(key, fallback);
    if (!v->is_number()) fail(key, "expected a number, got " + show(*v));
    auto n = v->get<double>();
    if (n < min || n > max) {
        std::ostringstream msg;
        msg << "value " << n << " is outside [" << min << ", " << max << "]";
        fail(key, msg.str());
    }
    return n;
}

bool ConfigReader::boolean(std::string_view key, std::optional<bool> fallback) {
    const auto* v = find(key);
    if (!v) return required_or(key, fallback);
    if (!v->is_boolean()) fail(key, "expected true or false, got " + show(*v));
    return v->get<bool>();
}

BitRate ConfigReader::bitrate(std::string_view key, std::optional<BitRate> fallback, BitRate min,
                              BitRate max) {
    const auto* v = find(key);
    if (!v) return required_or(key, fallback);
    std::optional<BitRate> r;
    if (v->is_number_unsigned()) r = BitRate(v->get<std::uint64_t>());
    if (v->is_string()) r = parse_bitrate(v->get<std::string>());
    if (!r) fail(key, "expected a bitrate such as \"2Mbps\" or a number of bits/s, got " + show(*v));
    if (*r < min || *r > max) {
        fail(key,
             "value " + show(*v) + " is outside [" + format_bitrate(min) + ", " + format_bitrate(max) + "]");
    }
    return *r;
}

Bytes ConfigReader::bytes(std::string_view key, std::optional<Bytes> fallback, Bytes min, Bytes max) {
    const auto* v = find(key);
    if (!v) return required_or(key, fallback);
    std::optional<Bytes> r;
    if (v->is_number_unsigned()) r = Bytes(v->get<std::uint64_t>());
    if (v->is_string()) r = parse_bytes(v->get<std::string>());
    if (!r) fail(key, "expected a size such as \"256KiB\" or a number of bytes, got " + show(*v));
    if (*r < min || *r > max) {
        fail(key, "value " + show(*v) + " is outside [" + format_bytes(min) + ", " + format_bytes(max) + "]");
    }
    return *r;
}

std::chrono::nanoseconds ConfigReader::duration(std::string_view key,
                                                std::optional<std::chrono::nanoseconds> fallback,
                                                std::chrono::nanoseconds min, std::chrono::nanoseconds max) {
    const auto* v = find(key);
    if (!v) return required_or(key, fallback);
    const auto outside = [&] {
        fail(key, "value " + show(*v) + " is outside [" + format_duration(min) + ", " + format_duration(max) +
                      "]");
    };
    std::optional<std::chrono::nanoseconds> r;
    if (v->is_number()) {
        const double seconds = v->get<double>();
        r = seconds_to_duration(seconds);
        // A number too large for a nanosecond count is a well-formed value out of range, not a type error.
        if (!r && seconds > 0) outside();
    }
    if (v->is_string()) r = parse_duration(v->get<std::string>());
    if (!r) fail(key, "expected a duration such as \"8ms\" or a number of seconds, got " + show(*v));
    if (*r < min || *r > max) outside();
    return *r;
}

std::vector<std::string> ConfigReader::strings(std::string_view key,
                                               std::optional<std::vector<std::string>> fallback) {
    const auto* v = find(key);
    if (!v) return required_or(key, fallback);
    if (!v->is_array()) fail(key, "expected an array of strings, got " + show(*v));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v->size(); ++i) {
        const auto& e = (*v)[i];
        if (!e.is_string()) {
            fail(std::string(key) + "[" + std::to_string(i) + "]", "expected a string, got " + show(e));
        }
        out.push_back(e.get<std::string>());
    }
    return out;
}

ConfigReader ConfigReader::object(std::string_view key) {
    static const nlohmann::json empty = nlohmann::json::object();
    const auto* v = find(key);
    if (!v) return ConfigReader(empty, field(key));
    return ConfigReader(*v, field(key));
}

std::vector<ConfigReader> ConfigReader::objects(std::string_view key) {
    const auto* v = find(key);
    if (!v) fail(key, "is required");
    if (!v->is_array()) fail(key, "expected an array, got " + show(*v));
    std::vector<ConfigReader> out;
    for (std::size_t i = 0; i < v->size(); ++i) {
        out.emplace_back((*v)[i], field(key) + "[" + std::to_string(i) + "]");
    }
    return out;
}

const nlohmann::json& ConfigReader::raw(std::string_view key) {
    const auto* v = find(key);
    if (!v) fail(key, "is required");
    return *v;
}

void ConfigReader::finish() const {
    for (const auto& [key, value] : object_->items()) {
        if (!seen_.contains(key)) {
            throw ConfigError("config field '" + field(key) + "': unknown field (value " + show(value) + ")");
        }
    }
}

}  // namespace toast
