#include "server/http/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <stdexcept>
#include <string>

namespace toast::server {

namespace ssl = boost::asio::ssl;

std::shared_ptr<ssl::context> make_server_tls(const TlsConfig& config) {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                     ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression |
                     ssl::context::single_dh_use);
    boost::system::error_code ec;
    ctx->use_certificate_chain_file(config.certificate_chain.string(), ec);
    if (ec) {
        throw std::runtime_error("tls.certificate_chain " + config.certificate_chain.string() + ": " +
                                 ec.message());
    }
    ctx->use_private_key_file(config.private_key.string(), ssl::context::pem, ec);
    if (ec) throw std::runtime_error("tls.private_key " + config.private_key.string() + ": " + ec.message());
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
        throw std::runtime_error("tls.private_key " + config.private_key.string() +
                                 " does not match the certificate in " + config.certificate_chain.string());
    }
    // Sessions resumed across connections of one box spare it full handshakes.
    SSL_CTX_set_session_cache_mode(ctx->native_handle(), SSL_SESS_CACHE_SERVER);
    return ctx;
}

}  // namespace toast::server
