#include "client/service/torrent_download.hpp"

#include "client/lt/http_request.hpp"

namespace toast::client {

void download_torrent(boost::asio::io_context& io, const std::string& url, std::size_t body_limit,
                      std::chrono::milliseconds timeout, const ServerAccess& access,
                      std::function<void(TorrentDownloadResult)> done) {
    auto parsed = parse_http_url(url);
    const auto shown = redact_token(url);
    if (!parsed) {
        done({false, {}, "'" + shown + "' is not an http:// or https:// URL"});
        return;
    }
    HttpRequestSpec spec;
    spec.url = *parsed;
    spec.body_limit = body_limit;
    spec.timeout = timeout;
    if (auto auth = access.authorization(); !auth.empty()) spec.headers.push_back({"Authorization", auth});
    http_request(io, std::move(spec), access.tls, [shown, done = std::move(done)](HttpAnswer a) {
        TorrentDownloadResult r;
        if (a.status == 0) {
            r.error = "cannot fetch " + shown + ": " + a.error;
        } else if (a.status != 200) {
            r.error = "cannot fetch " + shown + ": the server answered " + std::to_string(a.status) + " " +
                      a.reason;
        } else {
            r.ok = true;
            r.body = std::move(a.body);
        }
        done(std::move(r));
    });
}

}  // namespace toast::client
