#include "server/core/access_routes.hpp"

#include "server/core/access_policy.hpp"
#include "toast/common/text.hpp"

namespace toast::server {

namespace {

bool open_server(const HandlerContext& ctx) {
    return !ctx.access || ctx.access->open();
}

bool json_content(std::string_view content_type) {
    auto type = trim_ows(content_type.substr(0, content_type.find(';')));
    return iequals(type, "application/json");
}

}  // namespace

AccessVerdict check_request_access(const HttpRequest& req, const HandlerContext& ctx) {
    if (open_server(ctx)) return {};
    return check_credential(*ctx.access, request_credential(req.authorization, req.target), ctx.unix_now);
}

HttpResponse forbidden(const AccessVerdict& v) {
    auto r = error_response(403, v.reason);
    r.denial = v.denial ? std::string(to_string(*v.denial)) : std::string("?");
    if (v.token) r.subscriber = v.token->subscriber;
    r.headers.push_back({"Cache-Control", "no-store"});
    return r;
}

HttpResponse serve_renew(const HttpRequest& req, HandlerContext& ctx) {
    if (req.method != "POST") return method_not_allowed(req.method, "POST");
    if (open_server(ctx)) return error_response(404, "this server has no access keys: tokens are not needed");
    auto verdict = check_request_access(req, ctx);
    if (!verdict.allowed()) return forbidden(verdict);
    auto fresh = renew_token(*ctx.access, *verdict.token, ctx.unix_now);
    if (!fresh) return error_response(503, "no signing key");
    HttpResponse r;
    r.status = 200;
    r.headers.push_back({"Content-Type", "text/plain; charset=utf-8"});
    // A credential: no cache may keep it.
    r.headers.push_back({"Cache-Control", "no-store"});
    r.body = *fresh + "\n";
    r.subscriber = verdict.token->subscriber;
    r.token_renewed = true;
    return r;
}

HttpResponse serve_telemetry(const HttpRequest& req, HandlerContext& ctx) {
    if (!ctx.telemetry || !ctx.limits.telemetry)
        return error_response(404, "telemetry is not collected here");
    if (req.method != "POST") return method_not_allowed(req.method, "POST");
    auto verdict = check_request_access(req, ctx);
    if (!verdict.allowed()) return forbidden(verdict);
    if (req.body.size() > ctx.limits.telemetry_max_body) {
        auto r = error_response(
            413, "report larger than " + std::to_string(ctx.limits.telemetry_max_body) + " bytes");
        r.close = true;
        return r;
    }
    if (!req.has_content_type || !json_content(req.content_type))
        return error_response(415, "a report is application/json");
    auto parsed = parse_qoe_report(req.body, ctx.limits.telemetry_max_body);
    if (!parsed.report) return error_response(400, "bad report: " + parsed.error);
    const std::string reporter = verdict.token ? "subscriber:" + verdict.token->subscriber
                                               : "address:" + std::string(req.peer_address);
    const auto outcome = ctx.telemetry->submit(reporter, *parsed.report);
    HttpResponse r;
    if (!outcome.accepted) {
        r = error_response(
            429, "too many reports; retry in " + std::to_string(outcome.retry_after.count()) + " s");
        r.headers.push_back({"Retry-After", std::to_string(outcome.retry_after.count())});
    } else {
        r.status = 202;
        r.headers.push_back({"Content-Type", "text/plain; charset=utf-8"});
    }
    if (verdict.token) r.subscriber = verdict.token->subscriber;
    return r;
}

}  // namespace toast::server
