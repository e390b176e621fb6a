#include "server/core/request_handler.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "server/core/access_routes.hpp"
#include "server/core/admin_routes.hpp"
#include "server/core/catalog_handler.hpp"
#include "server/core/http_date.hpp"
#include "server/core/push_routes.hpp"
#include "toast/common/config.hpp"
#include "toast/common/text.hpp"

namespace toast::server {
namespace {

constexpr std::string_view kOctetStream = "application/octet-stream";

// One entity-tag from a list: `opaque` keeps its quotes.
struct EntityTag {
    bool weak = false;
    std::string_view opaque;
};

// Parses "*" (returns true in `any`) or a comma-separated list of entity-tags. Elements that are not
// entity-tags make the whole list unusable (nullopt), so a malformed condition never matches.
std::optional<std::vector<EntityTag>> parse_etag_list(std::string_view value, bool& any) {
    any = false;
    value = trim_ows(value);
    if (value == "*") {
        any = true;
        return std::vector<EntityTag>{};
    }
    std::vector<EntityTag> tags;
    while (!value.empty()) {
        value = trim_ows(value);
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
        value = trim_ows(value);
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
    value = trim_ows(value);
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
                         const HandlerLimits& limits, std::string_view path) {
    if (auto pre = evaluate_preconditions(req, *title)) return std::move(*pre);

    RangeSet ranges;
    // Range handling is defined for GET only (RFC 9110 §14.2); HEAD gets the 200 head.
    if (req.has_range && req.method == "GET" && (!req.has_if_range || if_range_holds(req.if_range, *title))) {
        ranges = parse_range_header(req.range, title->size, RangeLimits{limits.max_ranges, 80});
    }

    // A client that maps pieces to nodes asks for blocks here: one this node does not hold is answered with
    // where it is, not relayed.
    if (req.direct && title->tier && ranges.status != RangeStatus::unsatisfiable) {
        std::vector<ByteRange> wanted =
            ranges.status == RangeStatus::satisfiable ? ranges.ranges : std::vector<ByteRange>{};
        if (ranges.status != RangeStatus::satisfiable && title->size > 0)
            wanted.push_back({0, title->size - 1});
        for (const auto& w : wanted)
            for (auto b = w.first / title->block_size; b <= w.last / title->block_size; ++b)
                if (!title->tier->holds(b)) return misdirected(*title, b, path);
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
        auto date = parse_http_date(trim_ows(req.if_unmodified_since));
        if (date && *modified > *date) return error_response(412, "modified since If-Unmodified-Since");
    }
    bool not_modified = false;
    if (req.has_if_none_match) {
        not_modified = weak_match(req.if_none_match, etag);
    } else if (!req.if_modified_since.empty() && modified) {
        auto date = parse_http_date(trim_ows(req.if_modified_since));
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

HttpResponse misdirected(const TitleInfo& title, std::uint64_t block, std::string_view path) {
    const auto& tier = *title.tier;
    const auto& holders = tier.holders.at(block);
    std::string nodes;
    for (auto h : holders)
        nodes += (nodes.empty() ? "" : ", ") + tier.layout.node(h).url;
    const auto& first = tier.layout.node(holders.front());
    auto r = error_response(307, "block " + std::to_string(block) + " of " + title.name + " is held by " +
                                     nodes + ", not by this node (" + tier.layout.node(tier.self).id + ")");
    r.headers.push_back({"Location", first.url + std::string(path)});
    r.headers.push_back({"Toast-Nodes", nodes});
    return r;
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

HttpResponse method_not_allowed(std::string_view method, std::string_view allow) {
    auto r = error_response(405, "method " + std::string(method) + " not allowed here");
    r.headers.push_back({"Allow", std::string(allow)});
    return r;
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
    } else if (*path == "/tier") {
        if (!ctx.node.tier_status) return not_found("this server is not a node of a tier");
        if (!get_or_head) return method_not_allowed(req.method, "GET, HEAD");
        r.status = 200;
        r.headers.push_back({"Content-Type", "application/json"});
        r.headers.push_back({"Cache-Control", "no-store"});
        r.body = ctx.node.tier_status().dump();
    } else if (*path == "/token/renew") {
        return serve_renew(req, ctx);
    } else if (*path == "/telemetry") {
        return serve_telemetry(req, ctx);
    } else if (*path == "/catalog") {
        if (!get_or_head) return method_not_allowed(req.method, "GET, HEAD");
        // Signed URLs: refused before anything is looked up or read.
        auto access = check_request_access(req, ctx);
        if (access.token) require_scope(access, scope_covers_catalog(access.token->scope), "the catalogue");
        if (!access.allowed()) return forbidden(access);
        r = serve_catalog(req, ctx.titles, ctx.push ? ctx.push->demand() : std::map<std::string, double>{});
        if (access.token) r.subscriber = access.token->subscriber;
    } else if (*path == "/catalog/plays" || path->substr(0, 6) == "/push/") {
        // Boxes' own routes: any valid token (a box with one title's token reports its plays too); the whole
        // plan lists every title, so it needs the catalogue's.
        auto access = check_request_access(req, ctx);
        if (access.token && *path == "/push/plan")
            require_scope(access, scope_covers_catalog(access.token->scope), "the push plan");
        if (!access.allowed()) return forbidden(access);
        r = serve_push(req, *path, ctx.push);
        if (access.token) r.subscriber = access.token->subscriber;
    } else if (path->substr(0, 8) == "/titles/" || path->substr(0, 8) == "/stream/" ||
               path->substr(0, 10) == "/torrents/") {
        const bool torrent = path->substr(0, 10) == "/torrents/";
        auto raw = path->substr(torrent ? 10 : 8);
        if (raw.find('/') != std::string_view::npos) return not_found("no such resource");
        auto name = percent_decode(raw);
        if (!name) return error_response(400, "malformed percent-encoding in title name");
        if (auto why = invalid_name(*name)) return error_response(400, *why);
        if (!get_or_head) return method_not_allowed(req.method, "GET, HEAD");
        auto access = check_request_access(req, ctx);
        if (!access.allowed()) return forbidden(access);
        if (torrent) {
            constexpr std::string_view kSuffix = ".torrent";
            if (name->size() <= kSuffix.size() || name->substr(name->size() - kSuffix.size()) != kSuffix)
                return not_found("torrents are at /torrents/NAME.torrent");
            const auto stem = std::string_view(*name).substr(0, name->size() - kSuffix.size());
            if (access.token)
                require_scope(access, scope_covers_title(access.token->scope, stem),
                              "title '" + std::string(stem) + "'");
            if (!access.allowed()) return forbidden(access);
            // A token that came in the URL goes into the torrent's url-list, so that a stock client given
            // the torrent's URL fetches from the server with it too.
            const bool token_in_url = access.token && access.from_query;
            r = serve_torrent(req, ctx.titles, stem,
                              token_in_url ? format_access_token(*access.token) : std::string());
        } else {
            auto title = find_title(ctx.titles, *name);
            if (access.token) {
                // The name a token covers is the title's, also when the request names the torrent's file.
                const std::string_view covered =
                    title ? std::string_view(title->name) : std::string_view(*name);
                require_scope(access, scope_covers_title(access.token->scope, covered),
                              "title '" + *name + "'");
                if (!access.allowed()) return forbidden(access);
            }
            if (!title) return not_found("no title named '" + *name + "'");
            r = path->substr(0, 8) == "/titles/" ? serve_title(req, std::move(title), ctx.limits, *path)
                                                 : serve_stream(req, std::move(title));
            if (!r.paced) r.deadline = parse_deadline(req.deadline);
            r.revalidate = req.no_cache;
            // Every answer about a title says how loaded this node is: a client choosing between a block's
            // holders asks the less loaded one.
            if (ctx.node.load_ms) {
                char load[32];
                std::snprintf(load, sizeof load, "%.1f", ctx.node.load_ms());
                r.headers.push_back({"Toast-Load", load});
            }
        }
        if (access.token) r.subscriber = access.token->subscriber;
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
            auto item = trim_ows(list.substr(0, comma));
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
