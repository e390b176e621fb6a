#include "server/core/request_handler.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "server/core/catalog_handler.hpp"
#include "server/core/http_date.hpp"
#include "toast/common/config.hpp"

namespace toast::server {
namespace {

constexpr std::string_view kOctetStream = "application/octet-stream";

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// One entity-tag from a list: `opaque` keeps its quotes.
struct EntityTag {
    bool weak = false;
    std::string_view opaque;
};

// Parses "*" (returns true in `any`) or a comma-separated list of entity-tags. Elements that are not
// entity-tags make the whole list unusable (nullopt), so a malformed condition never matches.
std::optional<std::vector<EntityTag>> parse_etag_list(std::string_view value, bool& any) {
    any = false;
    value = trim(value);
    if (value == "*") {
        any = true;
        return std::vector<EntityTag>{};
    }
    std::vector<EntityTag> tags;
    while (!value.empty()) {
        value = trim(value);
        if (!value.empty() && value.front() == ',') {
            value.remove_prefix(1);
            continue;
        }
        EntityTag tag;
        if (value.substr(0, 2) == "W/") {
            tag.weak = true;
            value.remove_prefix(2);
        }
        if (value.empty() || value.front() != '"') return std::nullopt;
        auto close = value.find('"', 1);
        if (close == std::string_view::npos) return std::nullopt;
        tag.opaque = value.substr(0, close + 1);
        value.remove_prefix(close + 1);
        value = trim(value);
        if (!value.empty() && value.front() != ',') return std::nullopt;
        tags.push_back(tag);
    }
    if (tags.empty()) return std::nullopt;
    return tags;
}

// Strong comparison (RFC 9110 §8.8.3.2): both strong and identical. Our own ETags are always strong.
bool strong_match(std::string_view value, std::string_view etag) {
    bool any = false;
    auto tags = parse_etag_list(value, any);
    if (!tags) return false;
    if (any) return true;
    return std::any_of(tags->begin(), tags->end(),
                       [&](const EntityTag& t) { return !t.weak && t.opaque == etag; });
}

// Weak comparison: opaque tags equal, weakness ignored.
bool weak_match(std::string_view value, std::string_view etag) {
    bool any = false;
    auto tags = parse_etag_list(value, any);
    if (!tags) return false;
    if (any) return true;
    return std::any_of(tags->begin(), tags->end(), [&](const EntityTag& t) { return t.opaque == etag; });
}

SysTime to_seconds(SysTime t) {
    return std::chrono::time_point_cast<std::chrono::seconds>(t);
}

// If-Range (RFC 9110 §13.1.5): true when the Range may be honoured.
bool if_range_holds(std::string_view value, const TitleInfo& title) {
    value = trim(value);
    if (value.substr(0, 2) == "W/") return false;  // a weak tag never validates a range
    if (!value.empty() && value.front() == '"') {
        return value == title.etag;
    }
    auto date = parse_http_date(value);
    return date && *date == to_seconds(title.last_modified);
}

HttpResponse not_found(std::string reason) {
    return error_response(404, std::move(reason));
}

HttpResponse method_not_allowed(std::string_view method, std::string_view allow) {
    auto r = error_response(405, "method " + std::string(method) + " not allowed here");
    r.headers.push_back({"Allow", std::string(allow)});
    return r;
}

void add_validators(HttpResponse& r, const TitleInfo& title) {
    toast::server::add_validators(r, title.etag, title.last_modified);
}

std::optional<HttpResponse> evaluate_preconditions(const HttpRequest& req, const TitleInfo& title) {
    return toast::server::evaluate_preconditions(req, title.etag, title.last_modified);
}

HttpResponse whole_title(std::shared_ptr<const TitleInfo> title) {
    HttpResponse r;
    r.status = 200;
    r.headers.push_back({"Content-Type", std::string(kOctetStream)});
    if (title->size > 0) r.parts.push_back({"", ByteRange{0, title->size - 1}});
    r.title = std::move(title);
    return r;
}

HttpResponse serve_title(const HttpRequest& req, std::shared_ptr<const TitleInfo> title,
                         const HandlerLimits& limits) {
    if (auto pre = evaluate_preconditions(req, *title)) return std::move(*pre);

    RangeSet ranges;
    // Range handling is defined for GET only (RFC 9110 §14.2); HEAD gets the 200 head.
    if (req.has_range && req.method == "GET" && (!req.has_if_range || if_range_holds(req.if_range, *title))) {
        ranges = parse_range_header(req.range, title->size, RangeLimits{limits.max_ranges, 80});
    }

    HttpResponse r;
    if (ranges.status == RangeStatus::unsatisfiable) {
        r = error_response(416, "range '" + std::string(req.range) + "' is outside " + title->name + " (" +
                                    std::to_string(title->size) + " bytes)");
        r.headers.push_back({"Content-Range", unsatisfied_content_range(title->size)});
    } else if (ranges.status == RangeStatus::satisfiable && ranges.ranges.size() == 1) {
        r.status = 206;
        r.headers.push_back({"Content-Type", std::string(kOctetStream)});
        r.headers.push_back({"Content-Range", content_range(ranges.ranges.front(), title->size)});
        r.parts.push_back({"", ranges.ranges.front()});
        r.title = title;
    } else if (ranges.status == RangeStatus::satisfiable) {
        auto boundary = multipart_boundary(*title);
        r.status = 206;
        r.headers.push_back({"Content-Type", "multipart/byteranges; boundary=" + boundary});
        for (std::size_t i = 0; i < ranges.ranges.size(); ++i) {
            const auto& br = ranges.ranges[i];
            std::string prefix = i == 0 ? "--" : "\r\n--";
            prefix += boundary;
            prefix += "\r\nContent-Type: ";
            prefix += kOctetStream;
            prefix += "\r\nContent-Range: ";
            prefix += content_range(br, title->size);
            prefix += "\r\n\r\n";
            r.parts.push_back({std::move(prefix), br});
        }
        r.trailer = "\r\n--" + boundary + "--\r\n";
        r.title = title;
        if (r.content_length() > limits.max_multipart_bytes) r = whole_title(title);  // too big: ignore Range
    } else {
        r = whole_title(title);
    }
    r.headers.push_back({"Accept-Ranges", "bytes"});
    add_validators(r, *title);
    return r;
}

HttpResponse serve_stream(const HttpRequest& req, std::shared_ptr<const TitleInfo> title) {
    if (auto pre = evaluate_preconditions(req, *title)) return std::move(*pre);
    auto r = whole_title(title);
    r.paced = title->bitrate.value() > 0;
    r.headers.push_back({"Accept-Ranges", "none"});
    add_validators(r, *title);
    return r;
}

std::string format_duration(std::chrono::nanoseconds d) {
    return std::to_string(d.count()) + "ns";
}

nlohmann::json fault_json(const DiskFault& f) {
    return {{"stutter_pct", f.stutter_pct},
            {"added_latency", format_duration(f.added_latency)},
            {"offline", f.offline}};
}

nlohmann::json disk_json(const DiskStatus& d) {
    return {{"index", d.index},
            {"path", d.path},
            {"fault", fault_json(d.fault)},
            {"queue_depth", d.queue_depth},
            {"service_seconds_per_mb", d.service_seconds_per_mb},
            {"bytes_read", d.bytes_read},
            {"reads", d.reads}};
}

HttpResponse json_response(const nlohmann::json& j) {
    HttpResponse r;
    r.status = 200;
    r.headers.push_back({"Content-Type", "application/json"});
    r.body = j.dump(2) + "\n";
    return r;
}

std::optional<std::size_t> parse_index(std::string_view s) {
    if (s.empty() || s.size() > 6) return std::nullopt;
    std::size_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::size_t>(c - '0');
    }
    return v;
}

// Merges the JSON body into the disk's current fault: absent fields keep their value.
HttpResponse set_disk_fault(const HttpRequest& req, HandlerContext& ctx, std::size_t disk) {
    auto disks = ctx.disks.disk_status();
    auto it = std::find_if(disks.begin(), disks.end(), [&](const DiskStatus& d) { return d.index == disk; });
    if (it == disks.end()) return not_found("no disk " + std::to_string(disk));
    auto json = nlohmann::json::parse(req.body, nullptr, false);
    if (json.is_discarded() || !json.is_object()) {
        return error_response(400, "fault body must be a JSON object like {\"offline\":true}");
    }
    DiskFault fault = it->fault;
    try {
        ConfigReader r(json, "fault");
        read_disk_fault(r, fault);
        r.finish();
    } catch (const ConfigError& e) {
        return error_response(400, e.what());
    }
    if (!ctx.disks.set_fault(disk, fault)) return not_found("no disk " + std::to_string(disk));
    for (const auto& d : ctx.disks.disk_status()) {
        if (d.index == disk) return json_response(disk_json(d));
    }
    return json_response({{"index", disk}, {"fault", fault_json(fault)}});
}

// A browser on the server's host can send a POST to a loopback address from any web page, and a form or a
// text/plain fetch needs no CORS preflight. A change of state therefore needs a JSON body (which a page can
// only send cross-origin after a preflight this server never grants) and no sign of another origin: an
// `Origin` whose host[:port] is not the request's `Host`, or `Sec-Fetch-Site` other than same-origin/none.
// Tools like curl send neither header.
std::optional<HttpResponse> refuse_unsafe_admin_post(const HttpRequest& req) {
    if (req.has_origin) {
        const auto origin = trim(req.origin);
        const auto scheme_end = origin.find("://");
        const auto authority =
            scheme_end == std::string_view::npos ? std::string_view{} : origin.substr(scheme_end + 3);
        if (authority.empty() || req.host.empty() || !iequals(authority, trim(req.host))) {
            return error_response(403, "cross-origin admin request refused: Origin " + std::string(origin) +
                                           " is not this server (Host " + std::string(req.host) + ")");
        }
    }
    const auto site = trim(req.sec_fetch_site);
    if (!site.empty() && !iequals(site, "same-origin") && !iequals(site, "none")) {
        return error_response(403, "cross-origin admin request refused: Sec-Fetch-Site " + std::string(site));
    }
    auto media_type = req.content_type.substr(0, req.content_type.find(';'));
    if (!req.has_content_type || !iequals(trim(media_type), "application/json")) {
        auto r = error_response(
            415, req.has_content_type
                     ? "admin POST needs Content-Type application/json, got " + std::string(req.content_type)
                     : "admin POST needs Content-Type application/json");
        r.headers.push_back({"Accept-Post", "application/json"});
        return r;
    }
    return std::nullopt;
}

HttpResponse serve_admin(const HttpRequest& req, std::string_view path, HandlerContext& ctx) {
    if (ctx.limits.admin_on_separate_listener && !req.on_admin_listener) {
        return not_found("admin routes are served on admin_listen only");
    }
    if (!req.peer_is_loopback) return error_response(403, "admin routes answer loopback peers only");
    if (path == "/admin/disks") {
        if (req.method != "GET" && req.method != "HEAD") return method_not_allowed(req.method, "GET, HEAD");
        auto j = nlohmann::json::array();
        for (const auto& d : ctx.disks.disk_status())
            j.push_back(disk_json(d));
        auto r = json_response(j);
        r.head_only = req.method == "HEAD";
        return r;
    }
    constexpr std::string_view prefix = "/admin/disks/";
    constexpr std::string_view suffix = "/fault";
    if (path.size() > prefix.size() + suffix.size() && path.substr(0, prefix.size()) == prefix &&
        path.substr(path.size() - suffix.size()) == suffix) {
        auto index = parse_index(path.substr(prefix.size(), path.size() - prefix.size() - suffix.size()));
        if (!index) return not_found("no such admin resource");
        if (req.method != "POST") return method_not_allowed(req.method, "POST");
        if (auto refused = refuse_unsafe_admin_post(req)) return *refused;
        return set_disk_fault(req, ctx, *index);
    }
    return not_found("no such admin resource");
}

// The path of an origin-form or absolute-form target, without the query; nullopt if it is neither.
std::optional<std::string_view> target_path(std::string_view target) {
    if (target.substr(0, 7) == "http://" || target.substr(0, 8) == "https://") {
        auto authority = target.find("//") + 2;
        auto slash = target.find('/', authority);
        target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }
    if (target.empty() || target.front() != '/') return std::nullopt;
    return target.substr(0, target.find_first_of("?#"));
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Names are looked up as they are; these can never name a title and are refused outright.
std::optional<std::string> invalid_name(std::string_view name) {
    if (name.empty()) return "empty title name";
    if (name == "." || name == "..") return "title name '" + std::string(name) + "' is a path component";
    for (char c : name) {
        auto u = static_cast<unsigned char>(c);
        if (c == '/' || c == '\\') return std::string("title name contains a path separator");
        if (u < 0x20 || u == 0x7f) return std::string("title name contains a control character");
    }
    return std::nullopt;
}

}  // namespace

void add_validators(HttpResponse& r, std::string_view etag, std::optional<SysTime> last_modified) {
    r.headers.push_back({"ETag", std::string(etag)});
    if (last_modified) r.headers.push_back({"Last-Modified", format_http_date(*last_modified)});
}

// RFC 9110 §13.2.2 order: If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since.
std::optional<HttpResponse> evaluate_preconditions(const HttpRequest& req, std::string_view etag,
                                                   std::optional<SysTime> last_modified) {
    std::optional<SysTime> modified;
    if (last_modified) modified = to_seconds(*last_modified);
    if (req.has_if_match) {
        if (!strong_match(req.if_match, etag)) {
            return error_response(412, "If-Match does not match " + std::string(etag));
        }
    } else if (!req.if_unmodified_since.empty() && modified) {
        auto date = parse_http_date(trim(req.if_unmodified_since));
        if (date && *modified > *date) return error_response(412, "modified since If-Unmodified-Since");
    }
    bool not_modified = false;
    if (req.has_if_none_match) {
        not_modified = weak_match(req.if_none_match, etag);
    } else if (!req.if_modified_since.empty() && modified) {
        auto date = parse_http_date(trim(req.if_modified_since));
        not_modified = date && *modified <= *date;
    }
    if (not_modified) {
        HttpResponse r;
        r.status = 304;
        add_validators(r, etag, last_modified);
        return r;
    }
    return std::nullopt;
}

std::uint64_t HttpResponse::content_length() const {
    if (!title) return body.size();
    std::uint64_t n = trailer.size();
    for (const auto& p : parts)
        n += p.prefix.size() + p.range.length();
    return n;
}

std::string_view HttpResponse::header(std::string_view name) const {
    for (const auto& h : headers) {
        if (iequals(h.name, name)) return h.value;
    }
    return {};
}

std::optional<std::string> percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        if (i + 2 >= text.size()) return std::nullopt;
        int hi = hex_value(text[i + 1]);
        int lo = hex_value(text[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

std::string multipart_boundary(const TitleInfo& title) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (char c : title.etag + "/" + title.name) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "toast-%016" PRIx64, h);
    return buf;
}

std::string_view reason_phrase(unsigned status) {
    switch (status) {
        case 200:
            return "OK";
        case 206:
            return "Partial Content";
        case 304:
            return "Not Modified";
        case 400:
            return "Bad Request";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 408:
            return "Request Timeout";
        case 412:
            return "Precondition Failed";
        case 413:
            return "Content Too Large";
        case 415:
            return "Unsupported Media Type";
        case 416:
            return "Range Not Satisfiable";
        case 431:
            return "Request Header Fields Too Large";
        case 500:
            return "Internal Server Error";
        case 501:
            return "Not Implemented";
        case 503:
            return "Service Unavailable";
        case 505:
            return "HTTP Version Not Supported";
    }
    return "Unknown";
}

HttpResponse error_response(unsigned status, std::string reason) {
    HttpResponse r;
    r.status = status;
    r.headers.push_back({"Content-Type", "text/plain; charset=utf-8"});
    r.body = std::to_string(status) + " " + std::string(reason_phrase(status)) + ": " + reason + "\n";
    r.reason = std::move(reason);
    return r;
}

HttpResponse handle_request(const HttpRequest& req, HandlerContext& ctx) {
    auto path = target_path(req.target);
    if (!path) return error_response(400, "request target is not a path");
    const bool get_or_head = req.method == "GET" || req.method == "HEAD";

    HttpResponse r;
    if (path->substr(0, 7) == "/admin/" || *path == "/admin") {
        r = serve_admin(req, *path, ctx);
    } else if (req.on_admin_listener && *path != "/metrics" && *path != "/healthz") {
        r = not_found("the admin listener serves /admin, /metrics and /healthz only");
    } else if (*path == "/healthz" || *path == "/metrics") {
        if (!get_or_head) return method_not_allowed(req.method, "GET, HEAD");
        r.status = 200;
        if (*path == "/healthz") {
            r.headers.push_back({"Content-Type", "text/plain; charset=utf-8"});
            r.body = "ok\n";
        } else {
            r.headers.push_back({"Content-Type", "text/plain; version=0.0.4; charset=utf-8"});
            r.body = ctx.metrics.render();
        }
    } else if (*path == "/catalog") {
        if (!get_or_head) return method_not_allowed(req.method, "GET, HEAD");
        r = serve_catalog(req, ctx.titles);
    } else if (path->substr(0, 8) == "/titles/" || path->substr(0, 8) == "/stream/" ||
               path->substr(0, 10) == "/torrents/") {
        const bool torrent = path->substr(0, 10) == "/torrents/";
        auto raw = path->substr(torrent ? 10 : 8);
        if (raw.find('/') != std::string_view::npos) return not_found("no such resource");
        auto name = percent_decode(raw);
        if (!name) return error_response(400, "malformed percent-encoding in title name");
        if (auto why = invalid_name(*name)) return error_response(400, *why);
        if (!get_or_head) return method_not_allowed(req.method, "GET, HEAD");
        if (torrent) {
            constexpr std::string_view kSuffix = ".torrent";
            if (name->size() <= kSuffix.size() || name->substr(name->size() - kSuffix.size()) != kSuffix)
                return not_found("torrents are at /torrents/NAME.torrent");
            r = serve_torrent(req, ctx.titles,
                              std::string_view(*name).substr(0, name->size() - kSuffix.size()));
        } else {
            auto title = find_title(ctx.titles, *name);
            if (!title) return not_found("no title named '" + *name + "'");
            r = path->substr(0, 8) == "/titles/" ? serve_title(req, std::move(title), ctx.limits)
                                                 : serve_stream(req, std::move(title));
            if (!r.paced) r.deadline = parse_deadline(req.deadline);
            r.revalidate = req.no_cache;
        }
    } else {
        return not_found("no such resource");
    }
    if (req.method == "HEAD") r.head_only = true;
    return r;
}

std::optional<std::chrono::milliseconds> parse_deadline(std::string_view value) {
    constexpr std::uint64_t kMaxMs = 600'000;
    if (value.empty() || value.size() > 6) return std::nullopt;
    std::uint64_t ms = 0;
    for (char c : value) {
        if (c < '0' || c > '9') return std::nullopt;
        ms = ms * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (ms > kMaxMs) return std::nullopt;
    return std::chrono::milliseconds(ms);
}

bool requests_no_cache(std::string_view cache_control, std::string_view pragma) {
    auto has_token = [](std::string_view list) {
        while (!list.empty()) {
            const auto comma = list.find(',');
            auto item = trim(list.substr(0, comma));
            if (iequals(item, "no-cache")) return true;
            if (comma == std::string_view::npos) break;
            list.remove_prefix(comma + 1);
        }
        return false;
    };
    return has_token(cache_control) || has_token(pragma);
}

std::string serialize_head(const HttpResponse& r, bool keep_alive, std::string_view date) {
    std::string out;
    out.reserve(256);
    out += "HTTP/1.1 ";
    out += std::to_string(r.status);
    out += ' ';
    out += reason_phrase(r.status);
    out += "\r\nServer: toast\r\nDate: ";
    out += date;
    out += "\r\n";
    for (const auto& h : r.headers) {
        out += h.name;
        out += ": ";
        out += h.value;
        out += "\r\n";
    }
    if (r.status != 304) {
        out += "Content-Length: ";
        out += std::to_string(r.content_length());
        out += "\r\n";
    }
    out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
    return out;
}

}  // namespace toast::server
