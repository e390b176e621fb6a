// How a box reaches the operator's server: its signed-URL token (sent on every request as Authorization:
// Bearer, renewed before it expires) and the TLS context for https:// servers. One ServerAccess is shared by
// everything that talks to the server: the fallback fetcher, the torrent downloads, the renewal and the QoE
// reports. Everything runs on one io_context's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "client/core/server_request.hpp"
#include "toast/common/access_token.hpp"

namespace toast::client {

class AccessCredential {
  public:
    // `file`: where the token came from (--token-file); a renewed token is written back to it, so a box
    // restarted later starts with the fresh one. Empty: kept in memory only.
    AccessCredential(std::string token, std::filesystem::path file = {});
    const std::string& token() const { return token_; }
    // The token's fields (the box never checks its signature: only the server has the key).
    std::optional<AccessToken> fields() const { return parse_access_token(token_).token; }
    // A renewed token. Returns what went wrong writing it to the file (the token is in use regardless).
    std::optional<std::string> replace(std::string token);

  private:
    std::string token_;
    std::filesystem::path file_;
};

// Reads a token file: its first line, without surrounding whitespace. Throws std::runtime_error naming the
// file when it cannot be read or holds no token.
std::string read_token_file(const std::filesystem::path& file);

struct ServerAccess {
    std::shared_ptr<AccessCredential> credential;    // null: requests carry no token
    std::shared_ptr<boost::asio::ssl::context> tls;  // null: https:// servers cannot be used
    // "Bearer TOKEN", or empty without a token.
    std::string authorization() const;
};

// Renews the credential's token at `server` (POST ORIGIN/token/renew) when next_renewal() says, and keeps
// trying while the token is valid. A renewed token must name the same subscriber and scope.
class TokenRenewer {
  public:
    TokenRenewer(boost::asio::io_context& io, ServerAccess access, ServerUrl server);
    ~TokenRenewer();
    void start();
    void stop();
    std::uint64_t renewals() const { return renewals_; }
    std::uint64_t failures() const { return failures_total_; }

  private:
    void schedule();
    void renew();
    void on_answer(int status, const std::string& body, const std::string& error);

    boost::asio::io_context& io_;
    ServerAccess access_;
    ServerUrl server_;
    boost::asio::steady_timer timer_;
    std::shared_ptr<bool> alive_;
    int failures_ = 0;
    std::uint64_t failures_total_ = 0;
    std::uint64_t renewals_ = 0;
    bool stopped_ = true;
};

}  // namespace toast::client
