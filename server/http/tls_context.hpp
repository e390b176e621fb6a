// The server's TLS context (config "tls"): the certificate chain and private key from PEM files, TLS 1.2
// or later, OpenSSL's default cipher suites at Debian's security level. Built at start-up and again on
// SIGHUP, so a renewed certificate applies to new connections.
#pragma once

#include <memory>

#include <boost/asio/ssl/context.hpp>

#include "server/core/server_config.hpp"

namespace toast::server {

// Throws std::runtime_error naming the file and OpenSSL's reason (unreadable, not PEM, a key that does not
// match the certificate).
std::shared_ptr<boost::asio::ssl::context> make_server_tls(const TlsConfig& config);

}  // namespace toast::server
