#include "server/core/admin_routes.hpp"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "toast/common/config.hpp"
#include "toast/common/text.hpp"

namespace toast::server {
namespace {

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
    if (it == disks.end()) return error_response(404, "no disk " + std::to_string(disk));
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
    if (!ctx.disks.set_fault(disk, fault)) return error_response(404, "no disk " + std::to_string(disk));
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
        const auto origin = trim_ows(req.origin);
        const auto scheme_end = origin.find("://");
        const auto authority =
            scheme_end == std::string_view::npos ? std::string_view{} : origin.substr(scheme_end + 3);
        if (authority.empty() || req.host.empty() || !iequals(authority, trim_ows(req.host))) {
            return error_response(403, "cross-origin admin request refused: Origin " + std::string(origin) +
                                           " is not this server (Host " + std::string(req.host) + ")");
        }
    }
    const auto site = trim_ows(req.sec_fetch_site);
    if (!site.empty() && !iequals(site, "same-origin") && !iequals(site, "none")) {
        return error_response(403, "cross-origin admin request refused: Sec-Fetch-Site " + std::string(site));
    }
    auto media_type = req.content_type.substr(0, req.content_type.find(';'));
    if (!req.has_content_type || !iequals(trim_ows(media_type), "application/json")) {
        auto r = error_response(
            415, req.has_content_type
                     ? "admin POST needs Content-Type application/json, got " + std::string(req.content_type)
                     : "admin POST needs Content-Type application/json");
        r.headers.push_back({"Accept-Post", "application/json"});
        return r;
    }
    return std::nullopt;
}

}  // namespace

HttpResponse serve_admin(const HttpRequest& req, std::string_view path, HandlerContext& ctx) {
    if (ctx.limits.admin_on_separate_listener && !req.on_admin_listener) {
        return error_response(404, "admin routes are served on admin_listen only");
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
        if (!index) return error_response(404, "no such admin resource");
        if (req.method != "POST") return method_not_allowed(req.method, "POST");
        if (auto refused = refuse_unsafe_admin_post(req)) return *refused;
        return set_disk_fault(req, ctx, *index);
    }
    return error_response(404, "no such admin resource");
}

}  // namespace toast::server
