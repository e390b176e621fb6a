#include "client/service/server_link.hpp"

#include <spdlog/spdlog.h>

#include "client/core/cache_policy.hpp"
#include "client/service/torrent_download.hpp"

namespace toast::client {

namespace {

constexpr auto kCatalogueRefresh = std::chrono::seconds(30);
constexpr auto kTimeout = std::chrono::seconds(10);
constexpr std::size_t kMaxCatalogue = 16 * 1024 * 1024;

}  // namespace

ServerLink::ServerLink(boost::asio::io_context& io, std::string server, std::string box_id,
                       bool poll_catalogue, ServerAccess access)
    : io_(io),
      server_(std::move(server)),
      access_(std::move(access)),
      box_id_(std::move(box_id)),
      poll_catalogue_(poll_catalogue),
      timer_(io) {}

void ServerLink::start() {
    if (poll_catalogue_) poll();
}

void ServerLink::stop() {
    stopped_ = true;
    timer_.cancel();
}

void ServerLink::report_play(const std::string& info_hash) {
    http_call(io_, "POST", server_ + "/catalog/plays?info_hash=" + info_hash + "&box=" + box_id_, 4096,
              kTimeout, access_, [info_hash](HttpCallResult r) {
                  if (r.status != 204)
                      spdlog::debug("play of {} not reported: {} {}", info_hash, r.status, r.error);
              });
}

double ServerLink::demand(const std::string& info_hash) const {
    auto it = demand_.find(info_hash);
    return it == demand_.end() ? 0.0 : it->second;
}

void ServerLink::poll() {
    http_call(io_, "GET", server_ + "/catalog", kMaxCatalogue, kTimeout, access_, [this](HttpCallResult r) {
        if (stopped_) return;
        if (r.status == 200) {
            if (auto d = parse_catalog_demand(r.body)) {
                demand_ = std::move(*d);
                ++catalogue_answers_;
            }
        } else {
            spdlog::debug("no catalogue from {}: {} {}", server_, r.status, r.error);
        }
        timer_.expires_after(kCatalogueRefresh);
        timer_.async_wait([this](const boost::system::error_code& ec) {
            if (!ec && !stopped_) poll();
        });
    });
}

}  // namespace toast::client
