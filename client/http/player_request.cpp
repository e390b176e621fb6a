#include "client/http/player_request.hpp"

#include <algorithm>
#include <cctype>

#include <boost/asio/ip/address.hpp>

#include "toast/common/byte_range.hpp"
#include "toast/common/text.hpp"

namespace toast::client {

PlayerResponse decide_player_response(const PlayerRequest& request, std::string_view path,
                                      std::uint64_t title_size) {
    PlayerResponse r;
    auto error = [&](int status, std::string reason) {
        r.status = status;
        r.reason = std::move(reason);
        return r;
    };
    if (request.method != "GET" && request.method != "HEAD")
        return error(405, "only GET and HEAD are supported");
    r.head = request.method == "HEAD";
    auto target = request.target.substr(0, request.target.find('?'));
    if (target != path) return error(404, "no such title here; this endpoint serves " + std::string(path));
    r.length = title_size;
    if (request.range.empty()) return r;
    auto set = parse_range_header(request.range, title_size);
    if (set.status == RangeStatus::unsatisfiable) {
        r.content_range = unsatisfied_content_range(title_size);
        r.length = 0;
        return error(416,
                     "the requested range is beyond the title's " + std::to_string(title_size) + " bytes");
    }
    if (set.ignored() || set.ranges.size() != 1) return r;
    r.status = 206;
    r.first = set.ranges[0].first;
    r.length = set.ranges[0].length();
    r.content_range = content_range(set.ranges[0], title_size);
    return r;
}

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

// A header value quoted back in an answer: printable ASCII only, at most 100 bytes.
std::string quoted_value(std::string_view v) {
    std::string out;
    for (unsigned char c : v.substr(0, 100))
        out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
    return out;
}

PlayerResponse refusal(int status, std::string reason) {
    PlayerResponse r;
    r.status = status;
    r.reason = std::move(reason);
    return r;
}

}  // namespace

bool host_names_endpoint(std::string_view host, const EndpointIdentity& self) {
    host = trim_ows(host);
    std::string_view name = host;
    std::string_view port;
    bool literal_v6 = false;
    if (!host.empty() && host.front() == '[') {
        auto close = host.find(']');
        if (close == std::string_view::npos) return false;
        name = host.substr(1, close - 1);
        auto rest = host.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') return false;
        port = rest.empty() ? rest : rest.substr(1);
        literal_v6 = true;
    } else if (auto colon = host.find(':'); colon != std::string_view::npos) {
        name = host.substr(0, colon);
        port = host.substr(colon + 1);
    }
    if (!port.empty() && port != std::to_string(self.port)) return false;
    if (name.empty()) return false;
    if (!literal_v6) {
        auto n = lower(name);
        if (n.back() == '.') n.pop_back();
        constexpr std::string_view suffix = ".localhost";
        if (n == "localhost" ||
            (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0))
            return true;
    }
    boost::system::error_code ec;
    auto literal = boost::asio::ip::make_address(std::string(name), ec);
    if (ec || literal.is_v6() != literal_v6) return false;
    auto bound = boost::asio::ip::make_address(self.address, ec);
    if (ec) return false;
    return bound.is_unspecified() || literal == bound;
}

std::optional<PlayerResponse> refuse_request_head(const PlayerRequestHead& head,
                                                  const EndpointIdentity& self) {
    if (head.hosts.size() > 1) return refusal(400, "more than one Host header");
    if (head.hosts.empty() && head.version >= 11)
        return refusal(400, "an HTTP/1.1 request needs a Host header");
    if (!head.transfer_encodings.empty()) {
        if (head.version < 11) return refusal(400, "Transfer-Encoding in an HTTP/1.0 request");
        if (head.transfer_encodings.size() > 1 || lower(trim_ows(head.transfer_encodings[0])) != "chunked") {
            std::string codings;
            for (auto te : head.transfer_encodings)
                codings += (codings.empty() ? "" : ", ") + quoted_value(te);
            return refusal(400, "Transfer-Encoding '" + codings + "' cannot be framed (only chunked)");
        }
    }
    if (!head.hosts.empty() && !host_names_endpoint(head.hosts[0], self)) {
        return refusal(421, "Host '" + quoted_value(trim_ows(head.hosts[0])) +
                                "' does not name this endpoint; use localhost or the address it listens on");
    }
    return std::nullopt;
}

std::string title_path(std::string_view file_name) {
    static const char* hex = "0123456789ABCDEF";
    std::string out = "/";
    for (unsigned char c : file_name) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string content_type_for(std::string_view file_name) {
    auto dot = file_name.rfind('.');
    std::string ext = dot == std::string_view::npos ? "" : std::string(file_name.substr(dot + 1));
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (ext == "mp4" || ext == "m4v") return "video/mp4";
    if (ext == "mov") return "video/quicktime";
    if (ext == "ts" || ext == "m2ts" || ext == "mts") return "video/mp2t";
    if (ext == "mkv") return "video/x-matroska";
    if (ext == "webm") return "video/webm";
    if (ext == "avi") return "video/x-msvideo";
    if (ext == "mpg" || ext == "mpeg") return "video/mpeg";
    if (ext == "mp3") return "audio/mpeg";
    if (ext == "m4a") return "audio/mp4";
    return "application/octet-stream";
}

}  // namespace toast::client
