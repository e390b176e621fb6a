#include "server/http/request_view.hpp"

#include "toast/common/beast_request_head.hpp"

namespace toast::server {

namespace http = boost::beast::http;

std::optional<HttpResponse> framing_rejection(const BeastRequest& message) {
    auto problem = request_framing_problem(request_head_of(message));
    if (!problem) return std::nullopt;
    auto r = error_response(400, *problem);
    r.close = true;
    return r;
}

HttpRequest request_view(const BeastRequest& message, bool peer_is_loopback, bool on_admin_listener,
                         std::string_view peer_address) {
    HttpRequest req;
    req.method = message.method_string();
    req.target = message.target();
    auto field = [&](http::field f, std::string_view& out) {
        auto it = message.find(f);
        if (it == message.end()) return false;
        out = it->value();
        return true;
    };
    req.has_range = field(http::field::range, req.range);
    req.has_if_range = field(http::field::if_range, req.if_range);
    req.has_if_match = field(http::field::if_match, req.if_match);
    req.has_if_none_match = field(http::field::if_none_match, req.if_none_match);
    field(http::field::if_modified_since, req.if_modified_since);
    field(http::field::if_unmodified_since, req.if_unmodified_since);
    field(http::field::host, req.host);
    field(http::field::authorization, req.authorization);
    req.peer_address = peer_address;
    req.has_content_type = field(http::field::content_type, req.content_type);
    req.has_origin = field(http::field::origin, req.origin);
    if (auto it = message.find("Sec-Fetch-Site"); it != message.end()) req.sec_fetch_site = it->value();
    if (auto it = message.find("Toast-Deadline"); it != message.end()) req.deadline = it->value();
    if (auto it = message.find("Toast-Direct"); it != message.end()) req.direct = it->value() == "1";
    for (auto [it, end] = message.equal_range(http::field::cache_control); it != end; ++it)
        req.no_cache = req.no_cache || requests_no_cache(it->value(), {});
    for (auto [it, end] = message.equal_range(http::field::pragma); it != end; ++it)
        req.no_cache = req.no_cache || requests_no_cache({}, it->value());
    req.body = message.body();
    req.peer_is_loopback = peer_is_loopback;
    req.on_admin_listener = on_admin_listener;
    return req;
}

}  // namespace toast::server
