// The HTTP framing rules toast-tracker applies to a request head before answering it, as functions that
// touch no socket (the server's session and the fuzz targets call the same code).
//
// Decisions (RFC 9112):
//  - An HTTP/1.1 request without Host, any request with more than one Host line, or a Host value that is
//    not a valid uri-host[:port] gets 400 (§3.2).
//  - Transfer-Encoding: the tracker takes no request bodies, and the only coding it can frame is a lone
//    "chunked" (an empty chunked body is accepted). Any other coding, a list of codings, or
//    Transfer-Encoding in an HTTP/1.0 request (faulty framing, §6.1) gets 400.
//  - When Beast stops at the header limit, the answer is 414 if the request line alone did not fit (or
//    its target exceeds max_target_length) and 431 otherwise: a long header line is not a long URI.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "tracker/core/result.hpp"

namespace toast::tracker {

struct HttpRefusal {
    int status = 400;
    std::string reason;       // reason phrase and bencoded failure reason
    std::string_view metric;  // toast_tracker_http_malformed_total{reason}
    bool operator==(const HttpRefusal&) const = default;
};

// After Beast reported header_limit. `parsed_target` is the target the parser had already read (empty when
// it had not got past the request line); `unparsed` is what is still in the read buffer.
HttpRefusal header_limit_refusal(std::string_view parsed_target, std::string_view unparsed,
                                 std::size_t max_target_length);

// The answer to a failed read of a request, or nullopt when the connection just ends (closed, reset, timed
// out, or a request cut short by the client).
std::optional<HttpRefusal> read_error_refusal(boost::beast::error_code ec, std::string_view parsed_target,
                                              std::string_view unparsed, std::size_t max_target_length);

// Host and Transfer-Encoding rules on a complete request head; nullopt when the request may be answered.
std::optional<HttpRefusal> check_request_head(const boost::beast::http::request_header<>& head);

struct HttpLimits;

// What the server's session does with the bytes of one request, without a socket: Beast's parser with the
// configured limits, then check_request_head. For fuzzing and tests; the session reads the same way.
struct ParsedHttpRequest {
    std::string method;
    std::string target;
    unsigned version = 11;
    bool keep_alive = false;
};
Result<ParsedHttpRequest, HttpRefusal> parse_http_request(std::string_view bytes, const HttpLimits& limits);

}  // namespace toast::tracker
