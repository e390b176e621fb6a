// The testbed's scenario value syntax (testbed/toastbed/scenario.py), read the same way: bitrates ("2Mbps",
// "1.5M", 2000000), sizes ("256KiB", "4MiB", 262144), durations ("250ms", "15min", 5). One file runs on both
// the testbed and the simulator, so a value one accepts the other accepts, with the same number. Rounding is
// Python's round() (half to even).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace toast::sim {

// Bits per second; nullopt when `value` is not a bitrate (a negative number, a bool, bad text).
std::optional<double> bitrate_value(const nlohmann::json& value);
// Bytes.
std::optional<double> size_value(const nlohmann::json& value);
// Seconds.
std::optional<double> duration_value(const nlohmann::json& value);

// Python's round(x) to an integer: half to even.
double python_round(double x);

// What json.dumps(value) writes, for error messages that quote the bad value as the testbed does.
std::string quoted(const nlohmann::json& value);

}  // namespace toast::sim
