#include "client/service/torrent_download.hpp"

#include "client/lt/http_request.hpp"

namespace toast::client {

void http_call(boost::asio::io_context& io, const std::string& method, const std::string& url,
               std::size_t body_limit, std::chrono::milliseconds timeout, const ServerAccess& access,
               std::function<void(HttpCallResult)> done) {
    auto parsed = parse_http_url(url);
    // A URL may carry a signed token: messages show that it did, not the token.
    const auto shown = redact_token(url);
    if (!parsed) {
        HttpCallResult r;
        r.error = "'" + shown + "' is not an http:// or https:// URL";
        done(std::move(r));
        return;
    }
    HttpRequestSpec spec;
    spec.method = method;
    spec.url = *parsed;
    spec.body_limit = body_limit;
    spec.timeout = timeout;
    if (auto auth = access.authorization(); !auth.empty()) spec.headers.push_back({"Authorization", auth});
    http_request(io, std::move(spec), access.tls, [shown, done = std::move(done)](HttpAnswer a) {
        HttpCallResult r;
        r.status = a.status;
        r.reason = std::move(a.reason);
        r.body = std::move(a.body);
        if (a.status == 0) r.error = "cannot fetch " + shown + ": " + a.error;
        done(std::move(r));
    });
}

void download_torrent(boost::asio::io_context& io, const std::string& url, std::size_t body_limit,
                      std::chrono::milliseconds timeout, const ServerAccess& access,
                      std::function<void(TorrentDownloadResult)> done) {
    http_call(io, "GET", url, body_limit, timeout, access,
              [shown = redact_token(url), done = std::move(done)](HttpCallResult r) {
                  if (r.status == 0) return done({false, {}, r.error});
                  if (r.status != 200) {
                      return done({false,
                                   {},
                                   "cannot fetch " + shown + ": the server answered " +
                                       std::to_string(r.status) + " " + r.reason});
                  }
                  done({true, std::move(r.body), {}});
              });
}

}  // namespace toast::client
