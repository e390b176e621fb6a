// The request handler driven directly, without sockets: a fake store with one title ("movie"), requests
// built from a header map. Shared by the handler's tests and the admin routes' tests.
#pragma once

#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <string>

#include "fake_store.hpp"
#include "server/core/access_policy.hpp"
#include "server/core/http_date.hpp"
#include "server/core/request_handler.hpp"

namespace toast::server::testing {

inline std::string sample_bytes(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>('a' + (i * 7 + i / 26) % 26);
    return s;
}

struct Fixture {
    FakeStore store;
    FakeDisks disks{4};
    MetricsRegistry metrics;
    HandlerLimits limits;
    NodeReport node;
    std::string bytes = sample_bytes(10000);
    // Signed URLs and telemetry (access_routes_test.cpp): null, the server is open and collects nothing.
    const AccessPolicy* access = nullptr;
    std::int64_t unix_now = 1'700'000'000;
    TelemetrySink* telemetry = nullptr;

    Fixture() { store.add("movie", bytes); }

    HttpResponse get(std::string target, std::map<std::string, std::string> headers = {},
                     std::string method = "GET", std::string body = "", bool loopback = true,
                     bool admin_listener = false) {
        // The request holds views: keep the strings alive in the fixture.
        held_.push_back(std::move(target));
        const std::string& t = held_.back();
        held_.push_back(std::move(method));
        const std::string& m = held_.back();
        held_.push_back(std::move(body));
        const std::string& b = held_.back();
        HttpRequest req;
        req.method = m;
        req.target = t;
        req.body = b;
        req.peer_is_loopback = loopback;
        req.on_admin_listener = admin_listener;
        // What curl -H 'Content-Type: application/json' sends; tests of the admin POST rules override it.
        if (m == "POST" && !headers.count("Content-Type")) headers["Content-Type"] = "application/json";
        for (auto& [k, v] : headers) {
            held_.push_back(v);
            std::string_view value = held_.back();
            if (k == "Range") {
                req.range = value;
                req.has_range = true;
            } else if (k == "If-Range") {
                req.if_range = value;
                req.has_if_range = true;
            } else if (k == "If-Match") {
                req.if_match = value;
                req.has_if_match = true;
            } else if (k == "If-None-Match") {
                req.if_none_match = value;
                req.has_if_none_match = true;
            } else if (k == "If-Modified-Since") {
                req.if_modified_since = value;
            } else if (k == "If-Unmodified-Since") {
                req.if_unmodified_since = value;
            } else if (k == "Toast-Deadline") {
                req.deadline = value;
            } else if (k == "Cache-Control" || k == "Pragma") {
                req.no_cache =
                    req.no_cache || requests_no_cache(k == "Pragma" ? "" : value, k == "Pragma" ? value : "");
            } else if (k == "Content-Type") {
                req.content_type = value;
                req.has_content_type = true;
            } else if (k == "Origin") {
                req.origin = value;
                req.has_origin = true;
            } else if (k == "Authorization") {
                req.authorization = value;
            } else if (k == "Host") {
                req.host = value;
            } else if (k == "Sec-Fetch-Site") {
                req.sec_fetch_site = value;
            } else if (k == "Toast-Direct") {
                req.direct = value == "1";
            } else if (k == "No-Content-Type") {
                req.has_content_type = false;
            } else {
                FAIL("unknown header in test: " << k);
            }
        }
        req.peer_address = "192.0.2.9";
        HandlerContext ctx{store, disks, metrics, limits, node, access, unix_now, telemetry};
        return handle_request(req, ctx);
    }

    // The body a response stands for, with title parts filled from the title's bytes.
    std::string body_of(const HttpResponse& r) const {
        if (!r.title) return r.body;
        std::string out;
        for (const auto& p : r.parts)
            out += p.prefix + bytes.substr(p.range.first, p.range.length());
        return out + r.trailer;
    }

    std::string last_modified() const { return format_http_date(store.find("movie")->last_modified); }
    std::string etag() const { return store.find("movie")->etag; }

  private:
    std::deque<std::string> held_;
};

}  // namespace toast::server::testing
