// HTTP-date (RFC 9110 §5.6.7): formatting as IMF-fixdate and parsing all three formats a recipient must
// accept. Pure: calendar arithmetic only, no locale or time zone.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace toast::server {

using SysTime = std::chrono::system_clock::time_point;

// "Sun, 06 Nov 1994 08:49:37 GMT" (sub-second precision is dropped).
std::string format_http_date(SysTime t);
// Accepts IMF-fixdate, RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime ("Sun Nov  6 08:49:37 1994");
// nullopt for anything else, including impossible dates and dates the system clock cannot hold (before
// 1677-09-22 or after 2262-04-11), which a caller ignores like any invalid date.
std::optional<SysTime> parse_http_date(std::string_view text);

}  // namespace toast::server
