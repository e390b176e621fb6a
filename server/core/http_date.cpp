#include "server/core/http_date.hpp"

#include <array>
#include <cstdint>
#include <cstdio>

namespace toast::server {
namespace {

constexpr std::array<std::string_view, 7> kDays{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr std::array<std::string_view, 7> kLongDays{"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                    "Thursday", "Friday", "Saturday"};
constexpr std::array<std::string_view, 12> kMonths{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Howard Hinnant's days_from_civil / civil_from_days: proleptic Gregorian calendar, days since 1970-01-01.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Civil {
    std::int64_t y;
    unsigned m, d;
};

Civil civil_from_days(std::int64_t z) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    return {static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

unsigned days_in_month(std::int64_t y, unsigned m) {
    static constexpr std::array<unsigned, 12> n{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : n[m - 1];
}

// A tiny cursor over the text: each step either matches exactly or fails the whole parse.
class Cursor {
  public:
    explicit Cursor(std::string_view s) : s_(s) {}
    bool literal(std::string_view lit) {
        if (s_.substr(0, lit.size()) != lit) return false;
        s_.remove_prefix(lit.size());
        return true;
    }
    // Exactly `n` digits.
    std::optional<unsigned> digits(std::size_t n) {
        if (s_.size() < n) return std::nullopt;
        unsigned v = 0;
        for (std::size_t i = 0; i < n; ++i) {
            char c = s_[i];
            if (c < '0' || c > '9') return std::nullopt;
            v = v * 10 + static_cast<unsigned>(c - '0');
        }
        s_.remove_prefix(n);
        return v;
    }
    template <std::size_t N>
    std::optional<unsigned> one_of(const std::array<std::string_view, N>& names) {
        for (std::size_t i = 0; i < N; ++i) {
            if (literal(names[i])) return static_cast<unsigned>(i);
        }
        return std::nullopt;
    }
    bool done() const { return s_.empty(); }

  private:
    std::string_view s_;
};

std::optional<SysTime> make_time(std::int64_t y, unsigned mon /*1-12*/, unsigned d, unsigned h, unsigned mi,
                                 unsigned s, std::optional<unsigned> weekday) {
    if (mon < 1 || mon > 12 || d < 1 || d > days_in_month(y, mon) || h > 23 || mi > 59 || s > 60)
        return std::nullopt;
    auto days = days_from_civil(y, mon, d);
    if (weekday) {
        auto wd = static_cast<unsigned>(((days % 7) + 7 + 4) % 7);  // 1970-01-01 was a Thursday
        if (wd != *weekday) return std::nullopt;
    }
    std::int64_t secs = days * 86400 + h * 3600 + mi * 60 + std::min(s, 59u);
    // The system clock counts nanoseconds in 64 bits (1677-09-21 .. 2262-04-11): a valid date outside that
    // cannot be compared with a title's time and is treated like an invalid one (the condition is ignored).
    using Limit = std::chrono::duration<std::int64_t>;
    constexpr auto kMax = std::chrono::duration_cast<Limit>(SysTime::duration::max()).count();
    constexpr auto kMin = std::chrono::duration_cast<Limit>(SysTime::duration::min()).count();
    if (secs > kMax || secs < kMin) return std::nullopt;
    return SysTime(std::chrono::seconds(secs));
}

bool clock(Cursor& c, unsigned& h, unsigned& mi, unsigned& s) {
    auto hh = c.digits(2);
    if (!hh || !c.literal(":")) return false;
    auto mm = c.digits(2);
    if (!mm || !c.literal(":")) return false;
    auto ss = c.digits(2);
    if (!ss) return false;
    h = *hh;
    mi = *mm;
    s = *ss;
    return true;
}

std::optional<SysTime> parse_imf(std::string_view text) {
    Cursor c(text);
    unsigned h, mi, s;
    auto wd = c.one_of(kDays);
    if (!wd || !c.literal(", ")) return std::nullopt;
    auto d = c.digits(2);
    if (!d || !c.literal(" ")) return std::nullopt;
    auto mon = c.one_of(kMonths);
    if (!mon || !c.literal(" ")) return std::nullopt;
    auto y = c.digits(4);
    if (!y || !c.literal(" ") || !clock(c, h, mi, s) || !c.literal(" GMT") || !c.done()) return std::nullopt;
    return make_time(*y, *mon + 1, *d, h, mi, s, *wd);
}

std::optional<SysTime> parse_rfc850(std::string_view text) {
    Cursor c(text);
    unsigned h, mi, s;
    auto wd = c.one_of(kLongDays);
    if (!wd || !c.literal(", ")) return std::nullopt;
    auto d = c.digits(2);
    if (!d || !c.literal("-")) return std::nullopt;
    auto mon = c.one_of(kMonths);
    if (!mon || !c.literal("-")) return std::nullopt;
    auto yy = c.digits(2);
    if (!yy || !c.literal(" ") || !clock(c, h, mi, s) || !c.literal(" GMT") || !c.done()) return std::nullopt;
    // Two-digit years: RFC 9110 says to pick the most recent past year with those digits; without a clock
    // we use the usual 1970-2069 window, which agrees for any date a server will see before 2070.
    std::int64_t y = *yy < 70 ? 2000 + *yy : 1900 + *yy;
    return make_time(y, *mon + 1, *d, h, mi, s, *wd);
}

std::optional<SysTime> parse_asctime(std::string_view text) {
    Cursor c(text);
    unsigned h, mi, s;
    auto wd = c.one_of(kDays);
    if (!wd || !c.literal(" ")) return std::nullopt;
    auto mon = c.one_of(kMonths);
    if (!mon || !c.literal(" ")) return std::nullopt;
    std::optional<unsigned> d;
    if (c.literal(" ")) {
        d = c.digits(1);
    } else {
        d = c.digits(2);
    }
    if (!d || !c.literal(" ") || !clock(c, h, mi, s) || !c.literal(" ")) return std::nullopt;
    auto y = c.digits(4);
    if (!y || !c.done()) return std::nullopt;
    return make_time(*y, *mon + 1, *d, h, mi, s, *wd);
}

}  // namespace

std::string format_http_date(SysTime t) {
    auto secs = std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
    std::int64_t days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
    std::int64_t rem = secs - days * 86400;
    auto civil = civil_from_days(days);
    auto wd = static_cast<std::size_t>(((days % 7) + 7 + 4) % 7);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s, %02u %s %04lld %02lld:%02lld:%02lld GMT", kDays[wd].data(), civil.d,
                  kMonths[civil.m - 1].data(), static_cast<long long>(civil.y),
                  static_cast<long long>(rem / 3600), static_cast<long long>(rem / 60 % 60),
                  static_cast<long long>(rem % 60));
    return buf;
}

std::optional<SysTime> parse_http_date(std::string_view text) {
    if (auto t = parse_imf(text)) return t;
    if (auto t = parse_rfc850(text)) return t;
    return parse_asctime(text);
}

}  // namespace toast::server
