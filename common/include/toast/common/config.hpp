// Typed reading of JSON configuration files. Every component keeps one config struct and fills it through a
// ConfigReader, so every bad value is reported the same way: the full field path and the offending value.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "toast/common/units.hpp"

namespace toast {

class ConfigError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Reads and parses a JSON file; errors name the file and, for syntax errors, the byte position.
nlohmann::json load_json_file(const std::filesystem::path& path);

// Reads typed fields out of one JSON object. A field that is present but of the wrong type or out of range
// throws ConfigError naming the field ("disks[1].t_a") and the value. finish() rejects fields nobody read,
// so a misspelt key is an error rather than a silent default.
class ConfigReader {
  public:
    // `path` prefixes field names in messages ("" for the top level).
    explicit ConfigReader(const nlohmann::json& object, std::string path = "");

    bool has(std::string_view key) const;
    std::string string(std::string_view key, std::optional<std::string> fallback = std::nullopt);
    std::uint64_t uint(std::string_view key, std::optional<std::uint64_t> fallback = std::nullopt,
                       std::uint64_t min = 0, std::uint64_t max = std::numeric_limits<std::uint64_t>::max());
    double number(std::string_view key, std::optional<double> fallback = std::nullopt,
                  double min = std::numeric_limits<double>::lowest(),
                  double max = std::numeric_limits<double>::max());
    bool boolean(std::string_view key, std::optional<bool> fallback = std::nullopt);
    // Accept a number (base unit; seconds for durations) or a string with a unit ("2Mbps", "256KiB", "8ms").
    // Every quantity has bounds: a value outside [min, max] is refused with both named, so no setting can
    // be zero where that breaks the component, or so large that arithmetic on it overflows.
    BitRate bitrate(std::string_view key, std::optional<BitRate> fallback, BitRate min, BitRate max);
    Bytes bytes(std::string_view key, std::optional<Bytes> fallback, Bytes min, Bytes max);
    std::chrono::nanoseconds duration(std::string_view key, std::optional<std::chrono::nanoseconds> fallback,
                                      std::chrono::nanoseconds min, std::chrono::nanoseconds max);
    std::vector<std::string> strings(std::string_view key,
                                     std::optional<std::vector<std::string>> fallback = std::nullopt);
    // A nested object; an absent key reads as an empty object.
    ConfigReader object(std::string_view key);
    // An array of objects; each element gets its own reader, named "key[i]" in messages.
    std::vector<ConfigReader> objects(std::string_view key);
    // The raw value of a present key (marks it read).
    const nlohmann::json& raw(std::string_view key);

    // Throws for any key that no accessor asked for.
    void finish() const;

    // The full name of `key` for messages, e.g. "disks[1].t_a".
    std::string field(std::string_view key) const;
    [[noreturn]] void fail(std::string_view key, std::string_view problem) const;
    const nlohmann::json& json() const { return *object_; }

  private:
    const nlohmann::json* find(std::string_view key);
    template <class T>
    T required_or(std::string_view key, const std::optional<T>& fallback);

    const nlohmann::json* object_;
    std::string path_;
    std::set<std::string, std::less<>> seen_;
};

}  // namespace toast
