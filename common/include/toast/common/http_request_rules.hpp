// RFC 9112 rules about a request's Host and Transfer-Encoding header fields that HTTP parsers (Beast's among
// them) leave to the application. Shared by every component that answers HTTP requests. Each function returns
// the reason for a 400 or nullopt; after such a 400 the connection must close, because the framing of
// whatever follows on it cannot be trusted.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace toast {

// The fields of a request head that the rules below look at: views into the parsed request, valid while it
// lives. beast_request_head.hpp gathers them from a request Beast parsed.
struct RequestHead {
    unsigned version = 11;                             // 10 for HTTP/1.0, 11 for HTTP/1.1
    std::vector<std::string_view> hosts;               // the value of every Host field line, in order
    std::vector<std::string_view> transfer_encodings;  // the value of every Transfer-Encoding field line
};

// `version` as Beast encodes it: 10 for HTTP/1.0, 11 for HTTP/1.1. `hosts` holds the value of every Host
// field line. RFC 9112 §3.2: an HTTP/1.1 request needs exactly one Host; more than one, or one whose value is
// not a uri-host[:port], is refused whatever the version.
std::optional<std::string> host_problem(unsigned version, std::span<const std::string_view> hosts);

// `codings` holds the value of every Transfer-Encoding field line. RFC 9112 §6.1 and §6.3: a request body is
// framed by a single final `chunked` coding; other codings (which the server cannot decode, and which Beast
// would read as "no body", leaving the body to be parsed as the next request), a repeated `chunked`, or any
// Transfer-Encoding in an HTTP/1.0 request is refused.
std::optional<std::string> transfer_encoding_problem(unsigned version,
                                                     std::span<const std::string_view> codings);
std::optional<std::string> request_framing_problem(const RequestHead& head);

// Both checks, Host first.
std::optional<std::string> request_framing_problem(unsigned version, std::span<const std::string_view> hosts,
                                                   std::span<const std::string_view> codings);
std::optional<std::string> request_framing_problem(const RequestHead& head);

// True when `value` is a syntactically valid Host field value: uri-host [ ":" port ], possibly empty.
bool is_valid_host_value(std::string_view value);

}  // namespace toast
