// What toast-server answers to one parsed HTTP request, decided without touching a socket (like Beast's
// handle_request): routing, title-name decoding, conditional requests, byte ranges, the admin routes.
// The adapter (server/http) parses requests, sends what this returns, and streams title bytes from the store.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/core/disk_control.hpp"
#include "server/core/http_date.hpp"
#include "server/core/title_store.hpp"
#include "toast/common/byte_range.hpp"
#include "toast/common/http_status.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

// The parts of a request the handler looks at. Views into the adapter's parsed message.
struct HttpRequest {
    std::string_view method;
    std::string_view target;
    std::string_view range;
    std::string_view if_range;
    std::string_view if_match;
    std::string_view if_none_match;
    std::string_view if_modified_since;
    std::string_view if_unmodified_since;
    std::string_view host;
    std::string_view content_type;
    std::string_view origin;
    std::string_view sec_fetch_site;
    std::string_view deadline;  // Toast-Deadline: milliseconds until the client needs the bytes
    std::string_view body;
    std::string_view authorization;  // the Authorization field (a signed URL's token as "Bearer TOKEN")
    std::string_view peer_address;   // the client's address, without the port
    bool has_range = false;
    bool has_if_range = false;
    bool has_if_match = false;
    bool has_if_none_match = false;
    bool has_content_type = false;
    bool has_origin = false;
    bool peer_is_loopback = false;
    bool on_admin_listener = false;
    bool no_cache = false;  // a Cache-Control or Pragma field line asks for no-cache (requests_no_cache)
    // Toast-Direct: 1 (a toast-client that maps pieces to nodes, or another node relaying): answer a range
    // only from this node's own blocks, else say where they are (307).
    bool direct = false;
};

struct HttpHeader {
    std::string name;
    std::string value;
};

// A piece of a title's body: literal framing bytes, then one range of the title.
struct BodyPart {
    std::string prefix;
    ByteRange range;
};

// The answer. Content-Length, Connection, Date and Server are added when the head is serialized.
struct HttpResponse {
    unsigned status = 200;
    std::vector<HttpHeader> headers;
    std::string body;  // literal body, when `title` is null

    std::shared_ptr<const TitleInfo> title;  // set when the body is made of title bytes
    std::vector<BodyPart> parts;             // in order
    std::string trailer;                     // literal bytes after the last part (multipart close)

    bool head_only = false;  // HEAD: the same head as GET, no body
    bool paced = false;      // /stream: send the parts at the title's bitrate
    // Reads for this answer are due this long after the request (a valid Toast-Deadline header on a
    // /titles request); none: best effort. Disk queues ordered by deadline (`disk_order` edf) use it.
    std::optional<std::chrono::milliseconds> deadline;
    // The client asked the server not to trust what it verified before (Cache-Control: no-cache): every
    // byte of this answer is checked against the manifest again (ReadRequest::revalidate).
    bool revalidate = false;
    bool close = false;          // close the connection after this response
    std::string reason;          // why a 4xx/5xx was chosen, for the log line
    std::string subscriber;      // whose signed token allowed the request (the access log's user), else empty
    std::string denial;          // a 403 of the access check: why (to_string(AccessDenial)), else empty
    bool token_renewed = false;  // POST /token/renew issued a token

    std::uint64_t content_length() const;
    // Value of the first header with this (case-insensitive) name, or "".
    std::string_view header(std::string_view name) const;
};

struct HandlerLimits {
    std::size_t max_ranges = 16;
    bool telemetry = true;                  // POST /telemetry is served
    std::size_t telemetry_max_body = 8192;  // larger reports: 413
    std::uint64_t max_multipart_bytes = 64ull * 1024 * 1024;
    bool admin_on_separate_listener = false;  // admin_listen configured: admin routes only there
};

// What the node says about itself: its load on every title answer (Toast-Load), its status on GET /tier.
struct NodeReport {
    std::function<double()> load_ms;  // null: no Toast-Load header
    // Null: the server is not on a tier and GET /tier is 404.
    std::function<nlohmann::json()> tier_status;
};

class TelemetrySink;  // access_routes.hpp
struct AccessPolicy;  // access_policy.hpp
class PushControl;    // push_routes.hpp

// What the handler may consult. find() is the only way a title name is resolved.
struct HandlerContext {
    const TitleStore& titles;
    DiskControl& disks;
    const MetricsRegistry& metrics;
    HandlerLimits limits;
    NodeReport node{};
    const AccessPolicy* access = nullptr;  // null, or no keys: content routes answer everyone
    std::int64_t unix_now = 0;             // the time tokens are judged at (Unix seconds)
    TelemetrySink* telemetry = nullptr;    // null: /telemetry is not served
    PushControl* push = nullptr;  // catalogue demand and pre-placement; null: no demand, push not enabled
};

HttpResponse handle_request(const HttpRequest& request, HandlerContext& context);

// RFC 9110 §13.2.2 preconditions (If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since, in that
// order) against a representation's validators: the 412 or 304 to send, or nullopt to answer normally.
std::optional<HttpResponse> evaluate_preconditions(const HttpRequest& request, std::string_view etag,
                                                   std::optional<SysTime> last_modified);
// ETag and, if given, Last-Modified.
void add_validators(HttpResponse& response, std::string_view etag, std::optional<SysTime> last_modified);

// A plain error answer whose body states the reason (also used by the adapter for 400/408/413/431/503).
HttpResponse error_response(unsigned status, std::string reason);
// 405 naming the method, with the Allow header.
HttpResponse method_not_allowed(std::string_view method, std::string_view allow);

// Status line and header block, ending with the blank line. `date` is an IMF-fixdate.
std::string serialize_head(const HttpResponse& response, bool keep_alive, std::string_view date);

// The Toast-Deadline header: a whole number of milliseconds, 0..600000; anything else is ignored (nullopt).
std::optional<std::chrono::milliseconds> parse_deadline(std::string_view value);

// RFC 9111 §5.2.1.4: a request's Cache-Control has the no-cache directive (tokens are case-insensitive; a
// no-cache=... with an argument is a response directive and does not count), or, for HTTP/1.0 clients, its
// Pragma is no-cache (§5.4).
bool requests_no_cache(std::string_view cache_control, std::string_view pragma);

// RFC 3986 percent-decoding; nullopt for a malformed escape.
std::optional<std::string> percent_decode(std::string_view text);

// A Toast-Direct request for bytes of a tier title this node does not hold: 307 to a holder of `block` (the
// first one not held), Location = its url + `path`, and Toast-Nodes listing every holder's url.
HttpResponse misdirected(const TitleInfo& title, std::uint64_t block, std::string_view path);

// The boundary of a title's multipart/byteranges answers (deterministic, derived from the ETag).
std::string multipart_boundary(const TitleInfo& title);

}  // namespace toast::server
