#include "client/core/server_request.hpp"

#include <algorithm>
#include <charconv>

#include "toast/common/text.hpp"

namespace toast::client {

std::string deadline_header(std::chrono::steady_clock::time_point deadline,
                            std::chrono::steady_clock::time_point now) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    return std::to_string(std::clamp<std::int64_t>(left, 0, 600'000));
}

std::optional<ServerUrl> parse_http_url(std::string_view url) {
    ServerUrl out;
    std::string_view rest;
    if (url.substr(0, 7) == "http://") {
        rest = url.substr(7);
    } else if (url.substr(0, 8) == "https://") {
        rest = url.substr(8);
        out.tls = true;
    } else {
        return std::nullopt;
    }
    const std::string default_port = out.tls ? "443" : "80";
    auto slash = rest.find_first_of("/?");
    std::string_view authority = rest.substr(0, slash);
    out.text = std::string(url);
    out.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
    if (out.target.front() == '?') out.target.insert(0, "/");
    if (authority.empty()) return std::nullopt;
    if (authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        out.host = std::string(authority.substr(1, close - 1));
        authority = authority.substr(close + 1);
        if (!authority.empty() && authority.front() != ':') return std::nullopt;
        out.port = authority.empty() ? default_port : std::string(authority.substr(1));
    } else {
        auto colon = authority.rfind(':');
        out.host = std::string(authority.substr(0, colon));
        out.port = colon == std::string_view::npos ? default_port : std::string(authority.substr(colon + 1));
    }
    if (out.host.empty() || out.port.empty() || out.port.size() > 5 ||
        !std::all_of(out.port.begin(), out.port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoi(out.port) == 0 || std::stoi(out.port) > 65535) {
        return std::nullopt;
    }
    return out;
}

std::string origin_url(const ServerUrl& url) {
    const bool v6 = url.host.find(':') != std::string::npos;
    return std::string(url.tls ? "https://" : "http://") + (v6 ? "[" + url.host + "]" : url.host) + ":" +
           url.port;
}

std::string range_header(const PieceRequest& r) {
    return "bytes=" + std::to_string(r.offset) + "-" + std::to_string(r.offset + r.length - 1);
}

namespace {

// The Content-Range a correct answer carries for `r`: "bytes FIRST-LAST/..." (the total is not checked).
bool content_range_matches(std::string_view value, const PieceRequest& r) {
    std::string expected =
        "bytes " + std::to_string(r.offset) + "-" + std::to_string(r.offset + r.length - 1) + "/";
    return value.substr(0, expected.size()) == expected && value.size() > expected.size();
}

// A number in decimal digits only (from_chars alone would take a sign); nullopt if it is not one or does not
// fit.
std::optional<std::uint64_t> parse_digits(std::string_view digits) {
    if (digits.empty() ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    return v;
}

}  // namespace

FetchFault answer_fault(int status, bool retry_after) {
    if (status == 500 || (status == 503 && !retry_after) || status == 307) return FetchFault::piece;
    return FetchFault::server;
}

std::optional<double> parse_load(std::string_view value) {
    value = trim_ows(value);
    if (value.empty() || value.size() > 24) return std::nullopt;
    double v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || !(v >= 0) || v > 1e12) return std::nullopt;
    return v;
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view value) {
    value = trim_ows(value);
    if (value.size() > 9) return std::nullopt;  // at most 9 digits
    const auto seconds = parse_digits(value);
    if (!seconds) return std::nullopt;
    return std::chrono::seconds(std::min<std::uint64_t>(*seconds, 86'400));
}

std::optional<UnavailableBytes> parse_unavailable(std::string_view value) {
    value = trim_ows(value);
    constexpr std::string_view unit = "bytes ";
    if (value.substr(0, unit.size()) != unit) return std::nullopt;
    value.remove_prefix(unit.size());
    const auto dash = value.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    const auto first = parse_digits(value.substr(0, dash));
    const auto last = parse_digits(value.substr(dash + 1));
    if (!first || !last || *first > *last) return std::nullopt;
    return UnavailableBytes{ByteOffset(*first), ByteOffset(*last)};
}

std::string answer_problem(const PieceRequest& r, int status, std::string_view content_range,
                           std::uint64_t body_size) {
    if (status != 206) return "status " + std::to_string(status) + " (expected 206)";
    if (!content_range_matches(content_range, r))
        return "Content-Range '" + std::string(content_range) + "' does not match";
    if (body_size != r.length)
        return "body of " + std::to_string(body_size) + " bytes (expected " + std::to_string(r.length) + ")";
    return "";
}

}  // namespace toast::client
