// Strong quantity types shared by every component, so a bitrate can never be passed as a byte count,
// and the parsers for the human forms operators write on command lines and in configs ("2Mbps", "256KiB",
// "5s").
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace toast {

// A non-negative quantity of one unit; arithmetic only with the same unit.
template <class Tag>
class Quantity {
  public:
    constexpr Quantity() = default;
    constexpr explicit Quantity(std::uint64_t value) : value_(value) {}
    constexpr std::uint64_t value() const { return value_; }
    constexpr auto operator<=>(const Quantity&) const = default;
    constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
    constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
    constexpr Quantity& operator+=(Quantity o) {
        value_ += o.value_;
        return *this;
    }

  private:
    std::uint64_t value_ = 0;
};

using Bytes = Quantity<struct BytesTag>;
using BitRate = Quantity<struct BitRateTag>;  // bits per second

constexpr double bytes_per_second(BitRate r) {
    return static_cast<double>(r.value()) / 8.0;
}

// Bytes a stream at `rate` consumes in `d` (rounded down).
constexpr Bytes bytes_in(BitRate rate, std::chrono::nanoseconds d) {
    return Bytes(static_cast<std::uint64_t>(static_cast<long double>(rate.value()) / 8.0L *
                                            static_cast<long double>(d.count()) / 1e9L));
}

// Time a stream at `rate` takes to consume `b`.
constexpr std::chrono::nanoseconds duration_of(Bytes b, BitRate rate) {
    if (rate.value() == 0) return std::chrono::nanoseconds::max();
    return std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<long double>(b.value()) * 8.0L *
                                                              1e9L / static_cast<long double>(rate.value())));
}

// "2Mbps", "1.5Mbit", "800kbps", "2000000" (bits/s), "2M". Decimal prefixes (k=1000), as bitrates are quoted.
std::optional<BitRate> parse_bitrate(std::string_view text);
// "256KiB", "4MiB", "1GiB", "1000", "64k" (binary), "1MB" (decimal).
std::optional<Bytes> parse_bytes(std::string_view text);
// "5s", "250ms", "15min", "1h", "2.5s", "100us". A bare number is seconds.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);
// A number of seconds (a JSON number) as nanoseconds; nullopt when it is negative, not finite, or beyond what
// a nanosecond count holds (about 292 years), so it can never wrap to a negative time.
std::optional<std::chrono::nanoseconds> seconds_to_duration(double seconds);

std::string format_bytes(Bytes b);      // "256 KiB", "1.50 MiB"
std::string format_bitrate(BitRate r);  // "2.00 Mbps"
// The largest unit that states `d` exactly: "1h", "15min", "30s", "250ms", "100us", "7ns".
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace toast
