// The set-top-box service's control API, decided purely: an HTTP request (method, target, content type,
// body) in, the action it asks for or the 4xx answer that says what is wrong out. The server adapter
// (client/service/control_server) only moves bytes; every route and every check lives here.
//
// Nothing a request carries names a local path: a title is added from the torrent's bytes in the body or
// from an http:// or https:// URL, and a title is named by its info-hash (40 hex digits), never by a file
// name, so no request can make the service read outside its save dir.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace toast::client {

enum class ApiAction {
    piece_map,       // GET /                       the live piece map page
    service_status,  // GET /api/status             the service and every title
    list_titles,     // GET /api/titles             every title
    add_torrent,     // POST /api/titles            body: the .torrent (application/x-bittorrent)
    add_url,         // POST /api/titles            body: {"url": "http(s)://..."} (application/json)
    title_status,    // GET /api/titles/ID
    play,            // POST /api/titles/ID/play
    stop,            // POST /api/titles/ID/stop
    remove,          // DELETE /api/titles/ID
    events,          // GET /api/events             status events (text/event-stream)
};

struct ApiRequest {
    ApiAction action = ApiAction::service_status;
    std::string title_id;  // play, stop, remove, title_status: 40 lower-case hex digits
    std::string url;       // add_url
    std::string torrent;   // add_torrent: the body
};

struct ApiError {
    int status = 400;
    std::string message;
    std::string allow;  // 405: the methods the path accepts
};

struct ApiParse {
    std::optional<ApiRequest> request;  // set on success
    ApiError error;                     // set otherwise
};

struct ApiInput {
    std::string_view method{};
    std::string_view target{};
    std::string_view content_type{};
    std::string_view body{};
    std::string_view host{};    // the Host header (the adapter has checked it names the API's address)
    std::string_view origin{};  // the Origin header, empty when absent
};

// A request that changes titles (POST, DELETE) and carries an Origin other than the API's own is refused
// (403): browsers send simple cross-origin POSTs without asking first, so any web page could otherwise start
// playback or add titles on the box. Pages served by the API itself (the piece map) are same-origin.
//
// A torrent larger than this is refused (413) before it is parsed; a title's torrent is a few hundred KiB.
inline constexpr std::size_t kMaxTorrentBytes = 4 * 1024 * 1024;

ApiParse parse_api_request(const ApiInput& in);

// 40 lower-case hex digits (a v1 info-hash as the API names titles).
bool is_title_id(std::string_view text);

// {"error": message} as the body of every 4xx/5xx answer.
std::string api_error_body(std::string_view message);

}  // namespace toast::client
