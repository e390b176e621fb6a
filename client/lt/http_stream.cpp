#include "client/lt/http_stream.hpp"

#include <openssl/ssl.h>

#include <boost/asio/ssl/host_name_verification.hpp>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;

namespace toast::client {

std::shared_ptr<ssl::context> make_client_tls(const std::string& ca_file) {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                     ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression);
    ctx->set_verify_mode(ssl::verify_peer);
    boost::system::error_code ec;
    if (ca_file.empty()) {
        ctx->set_default_verify_paths(ec);
        if (ec) throw std::runtime_error("cannot load the system's CA certificates: " + ec.message());
    } else {
        ctx->load_verify_file(ca_file, ec);
        if (ec)
            throw std::runtime_error("--ca-file " + ca_file +
                                     ": cannot load CA certificates: " + ec.message());
    }
    return ctx;
}

HttpStream::HttpStream(asio::io_context& io, ServerUrl url, std::shared_ptr<ssl::context> tls)
    : io_(io), url_(std::move(url)), context_(std::move(tls)), resolver_(io) {
    reset();
}

void HttpStream::reset() {
    if (url_.tls && context_) {
        // An SSL stream is good for one connection.
        if (tls_) retired_.push_back(std::move(tls_));
        if (retired_.size() > 4) retired_.erase(retired_.begin());
        tls_ = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(io_, *context_);
    } else if (!plain_) {
        // A TCP stream connects again after close().
        plain_ = std::make_unique<beast::tcp_stream>(io_);
    }
}

void HttpStream::close() {
    ++generation_;
    resolver_.cancel();
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
}

void HttpStream::set_no_delay() {
    beast::error_code ignored;
    lowest().socket().set_option(tcp::no_delay(true), ignored);
}

void HttpStream::connect(std::chrono::milliseconds timeout, Handler done) {
    if (url_.tls && !context_) {
        done(beast::error_code(asio::error::operation_not_supported));
        return;
    }
    const auto gen = generation_;
    resolver_.async_resolve(
        url_.host, url_.port,
        [this, gen, timeout, done = std::move(done)](beast::error_code ec,
                                                     tcp::resolver::results_type r) mutable {
            if (gen != generation_) return done(asio::error::operation_aborted);
            if (ec) return done(ec);
            lowest().expires_after(timeout);
            lowest().async_connect(r, [this, gen, timeout, done = std::move(done)](
                                          beast::error_code ec2, const tcp::endpoint&) mutable {
                if (gen != generation_) return done(asio::error::operation_aborted);
                if (ec2 || !tls_) return done(ec2);
                // The name the certificate must carry, and SNI (for a name, never an address: RFC 6066 §3) so
                // a server with several names picks this one.
                beast::error_code not_ip;
                asio::ip::make_address(url_.host, not_ip);
                // SSL_set_tlsext_host_name is a macro casting with C casts; this is its expansion, typed.
                if (not_ip &&
                    SSL_ctrl(tls_->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                             const_cast<char*>(url_.host.c_str())) == 0) {
                    return done(beast::error_code(static_cast<int>(::ERR_get_error()),
                                                  asio::error::get_ssl_category()));
                }
                tls_->set_verify_callback(ssl::host_name_verification(url_.host));
                lowest().expires_after(timeout);
                tls_->async_handshake(ssl::stream_base::client,
                                      [this, gen, done = std::move(done)](beast::error_code ec3) {
                                          if (gen != generation_) return done(asio::error::operation_aborted);
                                          done(ec3);
                                      });
            });
        });
}

}  // namespace toast::client
