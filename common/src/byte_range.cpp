#include "toast/common/byte_range.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <numeric>
#include <optional>

#include "toast/common/text.hpp"

namespace toast {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// RFC 9110 tchar, for recognising a range unit we do not support (as opposed to garbage).
bool is_tchar(char c) {
    if (std::isalnum(static_cast<unsigned char>(c))) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// 1*DIGIT, saturating at 2^64-1 instead of overflowing; nullopt unless `s` is all digits.
std::optional<std::uint64_t> parse_digits(std::string_view s) {
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (!is_digit(c)) return std::nullopt;
        auto d = static_cast<std::uint64_t>(c - '0');
        v = v > (kMax - d) / 10 ? kMax : v * 10 + d;
    }
    return v;
}

struct Spec {
    bool suffix = false;
    std::uint64_t first = 0;
    std::optional<std::uint64_t> last;  // int-range only
    std::uint64_t suffix_length = 0;    // suffix-range only
};

std::optional<Spec> parse_spec(std::string_view s) {
    auto dash = s.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    Spec spec;
    if (dash == 0) {
        auto n = parse_digits(s.substr(1));
        if (!n) return std::nullopt;
        spec.suffix = true;
        spec.suffix_length = *n;
        return spec;
    }
    auto first = parse_digits(s.substr(0, dash));
    if (!first) return std::nullopt;
    spec.first = *first;
    auto rest = s.substr(dash + 1);
    if (!rest.empty()) {
        auto last = parse_digits(rest);
        if (!last || *last < *first) return std::nullopt;
        spec.last = *last;
    }
    return spec;
}

// The part of `spec` inside a representation of `length` bytes, or nullopt if it is unsatisfiable.
std::optional<ByteRange> resolve(const Spec& spec, std::uint64_t length) {
    if (length == 0) return std::nullopt;
    if (spec.suffix) {
        if (spec.suffix_length == 0) return std::nullopt;
        return ByteRange{length - std::min(spec.suffix_length, length), length - 1};
    }
    if (spec.first >= length) return std::nullopt;
    return ByteRange{spec.first, std::min(spec.last.value_or(kMax), length - 1)};
}

// Coalesces ranges that overlap or are within `gap` bytes; each merged range takes the position of its
// earliest member in the request, so ranges that are not merged keep the client's order.
std::vector<ByteRange> coalesce(const std::vector<ByteRange>& in, std::uint64_t gap) {
    std::vector<std::size_t> order(in.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return in[a].first < in[b].first; });
    struct Group {
        ByteRange range;
        std::size_t position;
    };
    std::vector<Group> groups;
    for (auto i : order) {
        const auto& r = in[i];
        if (!groups.empty()) {
            auto& g = groups.back();
            // last + 1 + gap, saturating (last < 2^64-1 because it lies inside the representation).
            std::uint64_t room = kMax - g.range.last;
            std::uint64_t reach = gap >= room - 1 ? kMax : g.range.last + 1 + gap;
            if (r.first <= reach) {
                g.range.last = std::max(g.range.last, r.last);
                g.position = std::min(g.position, i);
                continue;
            }
        }
        groups.push_back({r, i});
    }
    std::sort(groups.begin(), groups.end(),
              [](const Group& a, const Group& b) { return a.position < b.position; });
    std::vector<ByteRange> out;
    out.reserve(groups.size());
    for (const auto& g : groups)
        out.push_back(g.range);
    return out;
}

}  // namespace

RangeSet parse_range_header(std::string_view value, std::uint64_t length, const RangeLimits& limits) {
    RangeSet result;
    value = trim_ows(value);
    if (value.empty()) return result;

    auto eq = value.find('=');
    auto unit = value.substr(0, eq);
    if (unit.empty() || !std::all_of(unit.begin(), unit.end(), is_tchar)) {
        result.status = RangeStatus::invalid;
        return result;
    }
    if (!iequals(unit, "bytes")) {
        result.status = RangeStatus::unsupported_unit;
        return result;
    }
    if (eq == std::string_view::npos) {
        result.status = RangeStatus::invalid;
        return result;
    }

    std::vector<ByteRange> satisfiable;
    std::size_t specs = 0;
    auto rest = value.substr(eq + 1);
    for (;;) {
        auto comma = rest.find(',');
        auto element = trim_ows(rest.substr(0, comma));
        if (!element.empty()) {  // empty list elements are allowed and skipped (RFC 9110 §5.6.1.2)
            if (++specs > limits.max_ranges) {
                result.status = RangeStatus::too_many_ranges;
                return result;
            }
            auto spec = parse_spec(element);
            if (!spec) {
                result.status = RangeStatus::invalid;
                return result;
            }
            if (auto r = resolve(*spec, length)) satisfiable.push_back(*r);
        }
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    if (specs == 0) {
        result.status = RangeStatus::invalid;
        return result;
    }
    if (satisfiable.empty()) {
        result.status = RangeStatus::unsatisfiable;
        return result;
    }
    result.status = RangeStatus::satisfiable;
    result.ranges =
        satisfiable.size() == 1 ? std::move(satisfiable) : coalesce(satisfiable, limits.coalesce_gap);
    return result;
}

std::string content_range(const ByteRange& range, std::uint64_t length) {
    return "bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) + "/" +
           std::to_string(length);
}

std::string unsatisfied_content_range(std::uint64_t length) {
    return "bytes */" + std::to_string(length);
}

std::string_view to_string(RangeStatus status) {
    switch (status) {
        case RangeStatus::absent:
            return "absent";
        case RangeStatus::unsupported_unit:
            return "unsupported unit";
        case RangeStatus::invalid:
            return "invalid";
        case RangeStatus::too_many_ranges:
            return "too many ranges";
        case RangeStatus::satisfiable:
            return "satisfiable";
        case RangeStatus::unsatisfiable:
            return "unsatisfiable";
    }
    return "?";
}

}  // namespace toast
