#include "tracker/io/http_request_rules.hpp"

#include <boost/asio/error.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>

#include "toast/common/beast_request_head.hpp"
#include "toast/common/text.hpp"
#include "tracker/core/tracker_config.hpp"

namespace toast::tracker {

namespace http = boost::beast::http;

HttpRefusal header_limit_refusal(std::string_view parsed_target, std::string_view unparsed,
                                 std::size_t max_target_length) {
    const HttpRefusal uri{414, "request target too long", "target_too_long"};
    const HttpRefusal headers{431, "request header too large", "header_too_large"};
    // Beast consumes the request line as soon as it has it whole; the target is then in the message.
    if (!parsed_target.empty()) return parsed_target.size() > max_target_length ? uri : headers;
    // Otherwise (a read that ended inside the request line makes Beast wait for the whole header) the
    // buffer still starts with the request line.
    const auto eol = unparsed.find("\r\n");
    if (eol == std::string_view::npos) return uri;
    return eol > max_target_length ? uri : headers;
}

std::optional<HttpRefusal> read_error_refusal(boost::beast::error_code ec, std::string_view parsed_target,
                                              std::string_view unparsed, std::size_t max_target_length) {
    namespace asio = boost::asio;
    if (!ec || ec == http::error::end_of_stream || ec == http::error::partial_message ||
        ec == boost::beast::error::timeout || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset || ec == asio::error::eof) {
        return std::nullopt;
    }
    if (ec == http::error::header_limit)
        return header_limit_refusal(parsed_target, unparsed, max_target_length);
    if (ec == http::error::body_limit || ec == http::error::unexpected_body) {
        return HttpRefusal{400, "requests to this tracker carry no body", "bad_request"};
    }
    return HttpRefusal{400, "malformed HTTP request", "bad_request"};
}

std::optional<HttpRefusal> check_request_head(const http::request_header<>& head) {
    const auto fields = request_head_of(head);
    const auto hosts = fields.hosts.size();
    const auto codings = fields.transfer_encodings.size();
    if (hosts > 1) return HttpRefusal{400, "more than one Host header", "bad_host"};
    if (hosts == 0 && head.version() >= 11)
        return HttpRefusal{400, "HTTP/1.1 request without Host", "bad_host"};
    if (hosts == 1 && !is_valid_host_value(fields.hosts.front()))
        return HttpRefusal{400, "invalid Host header", "bad_host"};
    if (codings > 0) {
        if (head.version() < 11) {
            return HttpRefusal{400, "Transfer-Encoding in an HTTP/1.0 request", "bad_transfer_encoding"};
        }
        if (codings > 1 || !iequals(trim_ows(fields.transfer_encodings.front()), "chunked")) {
            return HttpRefusal{400, "unsupported Transfer-Encoding (only chunked)", "bad_transfer_encoding"};
        }
    }
    return std::nullopt;
}

Result<ParsedHttpRequest, HttpRefusal> parse_http_request(std::string_view bytes, const HttpLimits& limits) {
    http::request_parser<http::empty_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(limits.header_limit));
    parser.body_limit(0);
    parser.eager(true);
    boost::beast::error_code ec;
    std::size_t used = 0;
    while (used < bytes.size() && !parser.is_done()) {
        const auto n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
        used += n;
        if (ec == http::error::need_more) {
            // All of `bytes` is what the client sent: a request that needs more is cut short.
            ec = http::error::partial_message;
            break;
        }
        if (ec) break;
    }
    if (!ec && !parser.is_done()) ec = http::error::partial_message;
    if (ec) {
        const auto& msg = parser.get();
        auto refusal = read_error_refusal(ec, msg.target(), bytes.substr(used), limits.max_target_length);
        if (!refusal) return HttpRefusal{400, "incomplete HTTP request", "bad_request"};
        return *refusal;
    }
    const auto& req = parser.get();
    if (auto refusal = check_request_head(req.base())) return *refusal;
    return ParsedHttpRequest{std::string(req.method_string()), std::string(req.target()), req.version(),
                             req.keep_alive()};
}

}  // namespace toast::tracker
