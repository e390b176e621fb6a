#include "server/http/request_view.hpp"

namespace toast::server {

namespace http = boost::beast::http;

HttpRequest request_view(const BeastRequest& msg, bool peer_is_loopback, bool on_admin_listener) {
    HttpRequest req;
    req.method = msg.method_string();
    req.target = msg.target();
    auto field = [&](http::field f, std::string_view& out) {
        auto it = msg.find(f);
        if (it == msg.end()) return false;
        out = it->value();
        return true;
    };
    req.has_range = field(http::field::range, req.range);
    req.has_if_range = field(http::field::if_range, req.if_range);
    req.has_if_match = field(http::field::if_match, req.if_match);
    req.has_if_none_match = field(http::field::if_none_match, req.if_none_match);
    field(http::field::if_modified_since, req.if_modified_since);
    field(http::field::if_unmodified_since, req.if_unmodified_since);
    req.body = msg.body();
    req.peer_is_loopback = peer_is_loopback;
    req.on_admin_listener = on_admin_listener;
    return req;
}

}  // namespace toast::server
