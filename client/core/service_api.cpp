#include "client/core/service_api.hpp"

#include <cctype>
#include <vector>

#include <nlohmann/json.hpp>

namespace toast::client {

namespace {

ApiParse fail(int status, std::string message, std::string allow = {}) {
    ApiParse r;
    r.error = ApiError{status, std::move(message), std::move(allow)};
    return r;
}

ApiParse ok(ApiAction action, std::string id = {}) {
    ApiParse r;
    r.request = ApiRequest{action, std::move(id), {}, {}};
    return r;
}

ApiParse wrong_method(std::string_view method, std::string_view path, std::string allow) {
    return fail(405,
                std::string(method) + " is not allowed on " + std::string(path) + " (allowed: " + allow + ")",
                allow);
}

// "application/json; charset=utf-8" -> "application/json"
std::string media_type(std::string_view content_type) {
    auto semi = content_type.find(';');
    auto t = content_type.substr(0, semi);
    while (!t.empty() && t.back() == ' ')
        t.remove_suffix(1);
    while (!t.empty() && t.front() == ' ')
        t.remove_prefix(1);
    std::string out(t);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::vector<std::string_view> split_path(std::string_view path) {
    std::vector<std::string_view> parts;
    std::size_t at = 1;  // after the leading '/'
    while (at <= path.size()) {
        auto end = path.find('/', at);
        if (end == std::string_view::npos) end = path.size();
        parts.push_back(path.substr(at, end - at));
        at = end + 1;
    }
    return parts;
}

bool valid_http_url(std::string_view url) {
    std::string_view rest;
    if (url.substr(0, 7) == "http://") {
        rest = url.substr(7);
    } else if (url.substr(0, 8) == "https://") {
        rest = url.substr(8);
    } else {
        return false;
    }
    auto host_end = rest.find_first_of("/?#");
    auto host = rest.substr(0, host_end);
    if (host.empty() || host.front() == ':') return false;
    for (char c : url) {
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
    }
    return true;
}

ApiParse parse_add(const ApiInput& in) {
    auto type = media_type(in.content_type);
    if (type == "application/x-bittorrent") {
        if (in.body.empty()) return fail(400, "the body is empty: send the .torrent file's bytes");
        if (in.body.size() > kMaxTorrentBytes)
            return fail(413, "the torrent is larger than " + std::to_string(kMaxTorrentBytes) + " bytes");
        ApiParse r = ok(ApiAction::add_torrent);
        r.request->torrent = std::string(in.body);
        return r;
    }
    if (type == "application/json") {
        auto j = nlohmann::json::parse(in.body, nullptr, false);
        if (j.is_discarded()) return fail(400, "the body is not valid JSON");
        if (!j.is_object())
            return fail(400, "the body must be a JSON object such as {\"url\": \"http://...\"}");
        auto it = j.find("url");
        if (it == j.end())
            return fail(400, "missing \"url\": the http:// or https:// URL of the title's .torrent");
        if (!it->is_string()) return fail(400, "\"url\" must be a string");
        for (auto& [key, value] : j.items()) {
            if (key != "url") return fail(400, "unknown field \"" + key + "\" (only \"url\" is accepted)");
        }
        auto url = it->get<std::string>();
        if (!valid_http_url(url))
            return fail(400, "\"url\": '" + url + "' is not an http:// or https:// URL");
        ApiParse r = ok(ApiAction::add_url);
        r.request->url = url;
        return r;
    }
    if (type.empty())
        return fail(415,
                    "missing Content-Type: use application/x-bittorrent (the .torrent) or application/json");
    return fail(415,
                "unsupported Content-Type '" + type +
                    "': use application/x-bittorrent (the .torrent) or application/json ({\"url\": ...})");
}

}  // namespace

bool is_title_id(std::string_view text) {
    if (text.size() != 40) return false;
    for (char c : text) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

std::string api_error_body(std::string_view message) {
    return nlohmann::json{{"error", std::string(message)}}.dump();
}

ApiParse parse_api_request(const ApiInput& in) {
    auto path = in.target.substr(0, in.target.find('?'));
    if (path.empty() || path.front() != '/')
        return fail(400, "the request target must be a path starting with '/'");
    const auto& m = in.method;
    if ((m == "POST" || m == "DELETE") && !in.origin.empty() &&
        in.origin != "http://" + std::string(in.host)) {
        return fail(403, "a request from another origin (" + std::string(in.origin) +
                             ") may not change the service's titles");
    }
    if (path == "/" || path == "/index.html") {
        if (m != "GET") return wrong_method(m, path, "GET");
        return ok(ApiAction::piece_map);
    }
    auto parts = split_path(path);
    if (parts.size() < 2 || parts[0] != "api") return fail(404, "no such page: " + std::string(path));
    if (parts.size() == 2 && parts[1] == "status") {
        if (m != "GET") return wrong_method(m, path, "GET");
        return ok(ApiAction::service_status);
    }
    if (parts.size() == 2 && parts[1] == "events") {
        if (m != "GET") return wrong_method(m, path, "GET");
        return ok(ApiAction::events);
    }
    if (parts[1] != "titles") return fail(404, "no such API path: " + std::string(path));
    if (parts.size() == 2) {
        if (m == "GET") return ok(ApiAction::list_titles);
        if (m == "POST") return parse_add(in);
        return wrong_method(m, path, "GET, POST");
    }
    auto id = parts[2];
    if (!is_title_id(id)) {
        return fail(400, "'" + std::string(id) +
                             "' is not a title id (the 40 lower-case hex digits of its info-hash)");
    }
    if (parts.size() == 3) {
        if (m == "GET") return ok(ApiAction::title_status, std::string(id));
        if (m == "DELETE") return ok(ApiAction::remove, std::string(id));
        return wrong_method(m, path, "GET, DELETE");
    }
    if (parts.size() == 4 && (parts[3] == "play" || parts[3] == "stop")) {
        if (m != "POST") return wrong_method(m, path, "POST");
        return ok(parts[3] == "play" ? ApiAction::play : ApiAction::stop, std::string(id));
    }
    return fail(404, "no such API path: " + std::string(path));
}

}  // namespace toast::client
