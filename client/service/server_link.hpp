// What the box tells its operator's server and hears from it besides assignments: a play start
// (POST /catalog/plays, which the server counts in the title's demand) and the catalogue's demand per title
// (GET /catalog, every 30 s), which the popularity cache ranks titles by. Failures are logged at debug
// level and change nothing: the box plays and caches without its server. Runs on the service's io_context.
#pragma once

#include <map>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "client/lt/server_access.hpp"

namespace toast::client {

class ServerLink {
  public:
    // `server`: base URL without a trailing slash. `poll_catalogue`: follow the catalogue's demand. `access`:
    // the box's token and CA for every request.
    ServerLink(boost::asio::io_context& io, std::string server, std::string box_id, bool poll_catalogue,
               ServerAccess access = {});
    void start();
    void stop();
    void report_play(const std::string& info_hash);
    // Sessions per hour the catalogue gave the title at its last answer; 0 when unknown.
    double demand(const std::string& info_hash) const;
    bool has_catalogue() const { return catalogue_answers_ > 0; }

  private:
    void poll();

    boost::asio::io_context& io_;
    std::string server_;
    ServerAccess access_;
    std::string box_id_;
    bool poll_catalogue_;
    boost::asio::steady_timer timer_;
    std::map<std::string, double> demand_;
    std::uint64_t catalogue_answers_ = 0;
    bool stopped_ = false;
};

}  // namespace toast::client
