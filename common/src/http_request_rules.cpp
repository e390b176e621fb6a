#include "toast/common/http_request_rules.hpp"

#include <algorithm>
#include <cctype>

#include "toast/common/log.hpp"
#include "toast/common/text.hpp"

namespace toast {

namespace {

bool unreserved_or_sub_delim(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("-._~!$&'()*+,;=").find(c) != std::string_view::npos;
}

bool hex(char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// reg-name = *( unreserved / pct-encoded / sub-delims ); IPv4 addresses are reg-names syntactically.
bool is_reg_name(std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%') {
            if (i + 2 >= s.size() || !hex(s[i + 1]) || !hex(s[i + 2])) return false;
            i += 2;
        } else if (!unreserved_or_sub_delim(s[i])) {
            return false;
        }
    }
    return true;
}

// IP-literal = "[" ( IPv6address / IPvFuture ) "]", checked for its alphabet only.
bool is_ip_literal(std::string_view s) {
    if (s.size() < 3 || s.front() != '[' || s.back() != ']') return false;
    auto inner = s.substr(1, s.size() - 2);
    return std::all_of(inner.begin(), inner.end(),
                       [](char c) { return hex(c) || c == ':' || c == '.' || c == 'v' || c == 'V'; });
}

}  // namespace

bool is_valid_host_value(std::string_view value) {
    value = trim_ows(value);
    std::string_view host = value;
    std::string_view port;
    if (!value.empty() && value.front() == '[') {
        auto close = value.find(']');
        if (close == std::string_view::npos) return false;
        host = value.substr(0, close + 1);
        auto rest = value.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return false;
            port = rest.substr(1);
        }
        if (!is_ip_literal(host)) return false;
    } else {
        auto colon = value.rfind(':');
        if (colon != std::string_view::npos) {
            host = value.substr(0, colon);
            port = value.substr(colon + 1);
        }
        if (!is_reg_name(host)) return false;
    }
    return port.size() <= 5 &&
           std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::string> host_problem(unsigned version, std::span<const std::string_view> hosts) {
    if (hosts.size() > 1) return "more than one Host header";
    if (hosts.empty()) {
        if (version >= 11) return std::string("HTTP/1.1 request without a Host header");
        return std::nullopt;
    }
    if (!is_valid_host_value(hosts.front()))
        return "invalid Host header '" + log_escape(hosts.front(), 80) + "'";
    return std::nullopt;
}

std::optional<std::string> transfer_encoding_problem(unsigned version,
                                                     std::span<const std::string_view> codings) {
    if (codings.empty()) return std::nullopt;
    std::string all;
    std::size_t count = 0;
    bool only_chunked = true;
    for (auto line : codings) {
        std::size_t start = 0;
        while (start <= line.size()) {
            auto comma = line.find(',', start);
            auto coding = trim_ows(
                line.substr(start, comma == std::string_view::npos ? line.size() - start : comma - start));
            if (!coding.empty()) {
                ++count;
                if (!iequals(coding, "chunked")) only_chunked = false;
                if (!all.empty()) all += ", ";
                all += coding;
            }
            if (comma == std::string_view::npos) break;
            start = comma + 1;
        }
    }
    if (version < 11) return "Transfer-Encoding in an HTTP/1.0 request";
    if (count != 1 || !only_chunked) {
        return "Transfer-Encoding '" + log_escape(all, 80) + "' is not supported (only a single chunked)";
    }
    return std::nullopt;
}

std::optional<std::string> request_framing_problem(unsigned version, std::span<const std::string_view> hosts,
                                                   std::span<const std::string_view> codings) {
    if (auto p = host_problem(version, hosts)) return p;
    return transfer_encoding_problem(version, codings);
}

std::optional<std::string> request_framing_problem(const RequestHead& head) {
    return request_framing_problem(head.version, head.hosts, head.transfer_encodings);
}

}  // namespace toast
