// The local player endpoint's answer to one request, decided without sockets: which status, which headers,
// which bytes of the title. The session (player_endpoint.cpp) performs it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toast/common/http_request_rules.hpp"

namespace toast::client {

struct PlayerRequest {
    std::string_view method;  // "GET", "HEAD", ...
    std::string_view target;  // request-target, e.g. "/movie.mp4?x=1"
    std::string_view range;   // the Range header value, empty when absent
};

struct PlayerResponse {
    int status = 200;
    std::string reason;  // for error statuses: a short sentence sent as the text/plain body
    // 200 and 206: the bytes [first, first + length) of the title; 206 also sends content_range.
    std::uint64_t first = 0;
    std::uint64_t length = 0;
    std::string content_range;  // 206: "bytes A-B/N"; 416: "bytes */N"
    bool head = false;          // HEAD: header only, no waiting for bytes
    bool body_from_title() const { return status == 200 || status == 206; }
};

// `path` is the title's path ("/movie.mp4"); the query string of the target is ignored. GET and HEAD only
// (405 otherwise), the title's path only (404 otherwise). A Range header with one satisfiable range gives
// 206, an unsatisfiable one 416; a header that is invalid, in another unit, or asks for several disjoint
// ranges is ignored (200, the whole title), as RFC 9110 allows: players ask for one range at a time.
PlayerResponse decide_player_response(const PlayerRequest& request, std::string_view path,
                                      std::uint64_t title_size);

// What the endpoint checks of a request head before it looks at the method and the target (gathered by
// toast::request_head_of).
using PlayerRequestHead = toast::RequestHead;

// The address and port the endpoint is bound to: the only authority a request may name.
struct EndpointIdentity {
    std::string address;  // an IP address; 0.0.0.0 or :: when bound to every address
    std::uint16_t port = 0;
};

// True when a Host value names this endpoint: a localhost name (localhost, *.localhost: they never resolve
// elsewhere), or the bound address (any IP literal when bound to every address), with no port or the bound
// port. Any other name is refused: a web page that rebinds its own DNS name to 127.0.0.1 could otherwise
// read the title through the viewer's browser.
bool host_names_endpoint(std::string_view host, const EndpointIdentity& self);

// The refusal of a request head, or nullopt when it may be answered (RFC 9112):
//  - 400: an HTTP/1.1 request without Host, or any request with more than one Host line (§3.2);
//  - 400: Transfer-Encoding in an HTTP/1.0 request, or any coding but a lone "chunked" (§6.1): the body
//    could not be framed;
//  - 421 (Misdirected Request): a Host that does not name this endpoint (host_names_endpoint).
std::optional<PlayerResponse> refuse_request_head(const PlayerRequestHead& head,
                                                  const EndpointIdentity& self);

// "/" + the file name with every byte outside RFC 3986 unreserved characters percent-encoded.
std::string title_path(std::string_view file_name);
// The Content-Type for a file name's extension (video/mp4, video/mp2t, video/x-matroska, video/webm, ...;
// application/octet-stream when unknown).
std::string content_type_for(std::string_view file_name);

}  // namespace toast::client
