// What the server fallback sends and what it accepts, apart from the transport (client/lt/http_fetcher):
// the server's URL, one piece's Range request with its headers, and the checks an answer must pass before
// its bytes go to the torrent. Pure: the caller passes the time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "client/core/piece_types.hpp"

namespace toast::client {

struct ServerUrl {
    std::string text;    // as given
    std::string host;    // without brackets
    std::string port;    // "80" (http) or "443" (https) when absent
    std::string target;  // path and query, "/" when absent
    bool tls = false;    // https://: TLS, the certificate verified for `host`
};

// "http://host[:port][/path]" or "https://..."; nullopt for anything else.
std::optional<ServerUrl> parse_http_url(std::string_view url);
// "http://host:port" (or https): where the server's own routes (/token/renew, /telemetry) are.
std::string origin_url(const ServerUrl& url);

struct PieceRequest {
    PieceIndex piece{0};
    std::uint64_t offset = 0;  // of the piece in the title
    std::uint32_t length = 0;
    bool revalidate = false;  // sent with Cache-Control: no-cache (FallbackFetch::revalidate)
    // When the playhead needs the piece: sent as Toast-Deadline (milliseconds left when the request goes
    // out, 0 once passed) so a server ordering its reads by deadline serves it in time; none: best effort.
    std::optional<std::chrono::steady_clock::time_point> deadline{};
};

// The Range header of `r`: "bytes=FIRST-LAST". `r.length` is at least 1.
std::string range_header(const PieceRequest& r);

// The Toast-Deadline value for a request sent at `now`: whole milliseconds until `deadline`, 0 once it has
// passed, at most 600000 (what the server accepts).
std::string deadline_header(std::chrono::steady_clock::time_point deadline,
                            std::chrono::steady_clock::time_point now);

// What is wrong with an answer to `r`, or empty when its body is exactly the piece: status 206, a
// Content-Range "bytes FIRST-LAST/TOTAL" naming the requested range (the total is not checked), a body of
// the piece's length. A server that ignores Range (200 and the whole file) or answers another range must
// not have its bytes written as the piece: they would fail the hash check at best.
std::string answer_problem(const PieceRequest& r, int status, std::string_view content_range,
                           std::uint64_t body_size);

// Whose fault a failed fetch is, which decides what backs off.
//   piece   the server answered 500 or 503 without Retry-After: it is up and cannot read this piece now (a
//           block with no readable replica is a 503, a failed disk read a 500); or 307: a node of a tier
//           asked directly for a block it does not hold (the piece goes to another holder). Only the piece
//           waits before its next try, and peers are asked for it meanwhile; the server keeps serving the
//           others. Backing the whole server off for one lost block would hold every other piece back and
//           stall viewers whose pieces the server can serve.
//   server  anything else: no answer (connect, write, read, timeout), a status that holds for the whole
//           title (404, 403, a 200 with the whole file, a proxy's 502 or 504), a 206 that is not the piece,
//           or a 503 with Retry-After (overloaded: it said when to come back). The server backs off, and
//           with none left the whole zone goes to peers early.
enum class FetchFault { piece, server };
// For an answer answer_problem() refused: its status, and whether it carried a Retry-After.
FetchFault answer_fault(int status, bool retry_after);

// A Retry-After in delta-seconds ("1", "120"); nullopt for an HTTP date or anything else (the caller's own
// backoff then applies). At most a day.
std::optional<std::chrono::seconds> parse_retry_after(std::string_view value);

// A server's Toast-Load ("12.5": milliseconds of reads queued on its average disk); nullopt for anything
// else.
std::optional<double> parse_load(std::string_view value);

// The bytes of the title a 503 says cannot be served (the Toast server's "Toast-Unavailable: bytes
// FIRST-LAST": a block with no readable replica left), [first, last]; nullopt for anything else.
struct UnavailableBytes {
    ByteOffset first;
    ByteOffset last;
    bool operator==(const UnavailableBytes&) const = default;
};
std::optional<UnavailableBytes> parse_unavailable(std::string_view value);

}  // namespace toast::client
